// embedscope stats: norms, anisotropy, hubness, PCA spectrum of one table.
#include "command.h"
#include "common.h"
#include "embedscope/api/stats.h"
#include "embedscope/api/text_output.h"
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
  TableStats s = api::stats(*h, o.s);
  o.json ? print_json(api::to_json(*h, s)) : print_text(api::to_text(*h, s));
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
      add_json_flag(app, o->json);
      app.footer("Examples:\n  embedscope stats vectors.bin\n  embedscope stats gpt2 --json");
      return [o] { return run(*o); };
    },
    60);

}  // namespace
}  // namespace embedscope::cli
