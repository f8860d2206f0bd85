// embedscope stats: norms, anisotropy, hubness, PCA spectrum of one table.
#include <cmath>
#include <cstdio>
#include <memory>

#include "command.h"
#include "common.h"
#include "embedscope/api/stats.h"
#include "embedscope/core/thread_pool.h"

namespace embedscope::cli {
namespace {

struct Opts {
  std::string model;
  StatsOptions s;
  bool json = false;
};

int run(Opts o) {
  if (o.s.n_threads == 0) o.s.n_threads = process_threads();
  ModelHandlePtr h = open_handle(o.model);
  const Model& m = h->model();
  TableStats s = api::stats(*h, o.s);
  const auto& v = m.emb.vocab;
  auto name = [&](TokenId id) {
    return size_t(id) < v.size() ? printable(v.token(id)) : "#" + std::to_string(id);
  };
  if (o.json) {
    print_json(api::to_json(*h, s));
    return kExitOk;
  }
  std::printf("%s: %zu rows x %zu dims\n", m.ref.c_str(), s.n_rows, s.dim);
  std::printf(
      "norms: mean %.4g sd %.4g  min %.4g p50 %.4g p99 %.4g max %.4g  (%zu zero, %zu non-finite)\n",
      s.norms.mean, s.norms.sd, s.norms.min, s.norms.p50, s.norms.p99, s.norms.max, s.n_zero,
      s.n_nonfinite);
  std::printf(
      "anisotropy: mean cosine to the mean row %.3f; random pairs %.3f +- %.3f (random vectors: 0 "
      "+- %.3f)\n",
      s.mean_cos_to_mean, s.pair_cos.mean, s.pair_cos.sd, 1.0 / std::sqrt(double(s.dim)));
  std::printf(
      "hubness (k=%zu, %zu queries): k-occurrence skew %.2f, %.1f%% of rows never a neighbour\n",
      s.hub_k, s.n_queries, s.k_occurrence_skew, 100 * s.antihub_share);
  std::string hubs;
  for (auto& [id, c] : s.top_hubs)
    hubs += (hubs.empty() ? "" : ", ") + name(id) + " " + std::to_string(c);
  std::printf("  top hubs: %s\n", hubs.c_str());
  std::string pca;
  double cum = 0;
  for (double x : s.pca_explained) {
    cum += x;
    char b[32];
    std::snprintf(b, sizeof b, "%s%.1f%%", pca.empty() ? "" : " ", 100 * x);
    pca += b;
  }
  std::printf("PCA: top %zu components explain %s (together %.1f%%)\n", s.pca_explained.size(),
              pca.c_str(), 100 * cum);
  return kExitOk;
}

Command reg(
    "stats", "Norms, anisotropy, hubness and PCA spectrum of an embedding table",
    [](CLI::App& app) -> Runner {
      auto o = std::make_shared<Opts>();
      app.add_option("MODEL", o->model,
                     "model: file, folder or hub id (default: the embedded default model)");
      app.add_option("-k", o->s.hub_k, "neighbours for hubness")->capture_default_str();
      app.add_option("--queries", o->s.n_queries, "hubness query rows (seeded sample)")
          ->capture_default_str();
      app.add_option("--pairs", o->s.n_pairs, "random pairs for the pair-cosine distribution")
          ->capture_default_str();
      app.add_option("--components", o->s.n_components, "PCA components to report")
          ->capture_default_str();
      app.add_option("--seed", o->s.seed, "sampling seed")->capture_default_str();
      app.add_option("--threads", o->s.n_threads, "search threads")->capture_default_str();
      app.add_flag("--json", o->json, "machine-readable output");
      app.footer("Examples:\n  embedscope stats vectors.bin\n  embedscope stats gpt2 --json");
      return [o] { return run(*o); };
    },
    60);

}  // namespace
}  // namespace embedscope::cli
