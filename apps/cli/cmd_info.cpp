// embedscope info: what a file, folder or hub id resolves to: the matrix chosen and why, its
// shape and type, vocabulary, tied weights, tokenizer files, norm statistics and load time.
#include "common.h"

namespace embedscope::cli {
namespace {

struct Opts {
  std::string file, model, tensor;
  api::InfoRequest r;
  bool json = false;
};

int run(Opts& o) {
  if (!o.file.empty() && !o.model.empty())
    throw Error(ErrorCode::kInvalidArgument, "give either FILE or --model, not both");
  ModelOptions mo;
  mo.matrix = o.r.matrix == "output" ? MatrixKind::kOutput : MatrixKind::kInput;
  mo.tensor = o.tensor;
  double t0 = now_ms();
  Model m = load_model_or_default(!o.model.empty() ? o.model : o.file, mo, stderr_progress());
  end_stderr_progress(true);  // the default model's first-use training line, if any
  o.r.load_ms = now_ms() - t0;
  return print(o.json, api::model_info(m, o.r));
}

void flags(CLI::App& app, Opts& o) {
  app.add_option("FILE", o.file, "file or folder to inspect");
  add_model_flag(app, o.model);
  api::describe(Bind{app}, o.r);
  app.add_option("--tensor", o.tensor, "take this tensor instead of discovering one");
  add_json_flag(app, o.json, "print one JSON object");
}

Cmd<Opts> reg("info", flags, run);

}  // namespace
}  // namespace embedscope::cli
