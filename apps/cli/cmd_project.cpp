// embedscope project: PCA or UMAP coordinates of every row, written as .npy (api/projection.h).
#include <unistd.h>

#include <cstdio>
#include <memory>

#include "command.h"
#include "common.h"
#include "embedscope/api/projection.h"
#include "embedscope/core/error.h"
#include "embedscope/core/progress.h"
#include "embedscope/core/thread_pool.h"
#include "embedscope/formats/npy.h"

namespace embedscope::cli {
namespace {

struct Opts {
  std::string model, out;
  api::ProjectionRequest r;
  size_t threads = 0;
  bool json = false, quiet = false, no_cache = false;
};

int run(const Opts& o) {
  if (o.out.empty() && !o.json)
    throw Error(ErrorCode::kInvalidArgument, "project: give -o FILE.npy, --json, or both");
  if (o.threads) set_process_threads(o.threads);
  ModelHandlePtr h = open_handle(o.model);
  const bool tty = ::isatty(2);
  ProgressFn progress;
  if (!o.quiet)
    progress = [tty](const ProgressInfo& p) {
      if (tty) {
        std::fprintf(stderr, "\r%s\033[K", format_progress(p).c_str());
      } else {
        json j = {{"event", "progress"},
                  {"stage", p.what},
                  {"done", p.done},
                  {"total", p.total},
                  {"unit", p.unit},
                  {"rate", p.rate},
                  {"eta_seconds", p.eta_seconds}};
        std::fprintf(stderr, "%s\n", j.dump().c_str());
      }
    };
  api::ProjectionResult res = api::project(*h, o.r, progress, !o.no_cache);
  if (!o.quiet && tty && !res.from_cache) std::fprintf(stderr, "\n");
  const Projection& p = res.projection;
  if (!o.out.empty()) save_npy(o.out, EmbeddingTable::from_f32(p.n_rows, p.dims, p.coords));
  if (o.json) {
    print_json(api::to_json(res), false);
    return kExitOk;
  }
  std::string cached = res.from_cache ? " (from the cache " + res.cache_path + ")" : "";
  std::printf("%s: %s of %zu rows to %zu dims in %.2f s%s -> %s\n", res.model.c_str(),
              res.method.c_str(), p.n_rows, p.dims, res.seconds, cached.c_str(), o.out.c_str());
  if (!p.variance.empty() && p.total_variance > 0) {
    std::printf("explained variance:");
    for (double v : p.variance) std::printf(" %.2f%%", 100 * v / p.total_variance);
    std::printf("\n");
  }
  return kExitOk;
}

Command reg(
    "project", "PCA or UMAP coordinates of every row (for plotting), as .npy",
    [](CLI::App& app) -> Runner {
      auto o = std::make_shared<Opts>();
      app.add_option("MODEL", o->model,
                     "model: file, folder or hub id (default: the embedded default model)");
      app.add_option("--method", o->r.method, "pca (exact) or umap")
          ->check(CLI::IsMember({"pca", "umap"}))
          ->capture_default_str();
      app.add_option("--dims", o->r.dims, "output dimensions")
          ->check(CLI::IsMember({2, 3}))
          ->capture_default_str();
      app.add_option("-o,--output", o->out, "write the n_rows x dims float32 .npy here (atomic)");
      app.add_option("--n-neighbors", o->r.n_neighbors, "UMAP: neighbours of the kNN graph")
          ->check(CLI::Range(2, 200))
          ->capture_default_str();
      app.add_flag("--exact-knn", o->r.exact_knn,
                   "UMAP: the exact kNN graph (default: NN-descent above 4096 rows)");
      app.add_option("--min-dist", o->r.min_dist, "UMAP: minimum distance in the layout")
          ->check(CLI::Range(0.0, 1.0))
          ->capture_default_str();
      app.add_option("--seed", o->r.seed, "UMAP: random seed (same seed and threads: same output)")
          ->capture_default_str();
      app.add_option("--threads", o->threads, "threads (default: all cores)");
      app.add_flag("--no-cache", o->no_cache,
                   "compute afresh instead of reading the disk cache the server shares");
      app.add_flag("-q,--quiet", o->quiet, "no progress line");
      app.add_flag("--json", o->json,
                   "print {model, method, dims, rows, coords} (GET /v1/projection's document)");
      app.footer(
          "Examples:\n  embedscope project --method pca -o pca.npy\n"
          "  embedscope project gpt2 --method umap --dims 2 -o umap.npy\n"
          "  python3 -c \"import numpy; print(numpy.load('umap.npy').shape)\"   # (50257, 2)");
      return [o] { return run(*o); };
    },
    65);

}  // namespace
}  // namespace embedscope::cli
