// embedscope project: PCA or UMAP coordinates of every row, written as .npy (api/projection.h).
#include "command.h"
#include "common.h"
#include "embedscope/api/text_output.h"
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
  ModelHandlePtr h = open_handle(o.model, "auto", o.threads);
  api::ProjectionResult res = api::project(*h, o.r, progress_printer(o.quiet), !o.no_cache);
  if (!res.from_cache) end_progress(o.quiet);
  const Projection& p = res.projection;
  if (!o.out.empty()) save_npy(o.out, EmbeddingTable::from_f32(p.n_rows, p.dims, p.coords));
  o.json ? print_json(api::to_json(res), false) : print_text(api::to_text(res, o.out));
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
      add_threads_flag(app, o->threads);
      app.add_flag("--no-cache", o->no_cache,
                   "compute afresh instead of reading the disk cache the server shares");
      app.add_flag("-q,--quiet", o->quiet, "no progress line");
      add_json_flag(app, o->json,
                    "print {model, method, dims, rows, coords} (GET /v1/projection's document)");
      app.footer(
          "Examples:\n  embedscope project --method pca -o pca.npy\n  embedscope project gpt2 "
          "--method umap --dims 2 -o umap.npy\n  python3 -c \"import numpy; "
          "print(numpy.load('umap.npy').shape)\"   # (50257, 2)");
      return [o] { return run(*o); };
    },
    65);

}  // namespace
}  // namespace embedscope::cli
