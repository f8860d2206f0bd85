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

int run(Opts& o) {
  if (o.out.empty() && !o.json)
    throw Error(ErrorCode::kInvalidArgument, "project: give -o FILE.npy, --json, or both");
  ModelHandlePtr h = open_handle(o.model, "auto", o.threads);
  api::ProjectionResult res =
      api::project(*h, o.r, o.quiet ? nullptr : stderr_progress(), !o.no_cache);
  if (!res.from_cache && !o.quiet) end_stderr_progress();
  const Projection& p = res.projection;
  if (!o.out.empty()) save_npy(o.out, EmbeddingTable::from_f32(p.n_rows, p.dims, p.coords));
  o.json ? print_json(api::to_json(res), false) : print_text(api::to_text(res, o.out));
  return kExitOk;
}

void flags(CLI::App& app, Opts& o) {
  app.add_option("MODEL", o.model,
                 "model: file, folder or hub id (default: the embedded default model)");
  api::describe(Bind{app}, o.r);
  app.add_option("-o,--output", o.out, "write the n_rows x dims float32 .npy here (atomic)");
  add_threads_flag(app, o.threads);
  app.add_flag("--no-cache", o.no_cache,
               "compute afresh instead of reading the disk cache the server shares");
  app.add_flag("-q,--quiet", o.quiet, "no progress line");
  add_json_flag(app, o.json,
                "print {model, method, dims, rows, coords} (GET /v1/projection's document)");
}

Cmd<Opts> reg("project", flags, run);

}  // namespace
}  // namespace embedscope::cli
