// embedscope lookup: rows of a table as vectors (ids -> vectors), the nn.Embedding forward;
// embedscope convert: a matrix in another format.
#include <filesystem>

#include "common.h"

namespace embedscope::cli {
namespace {

struct Opts {
  std::string file, model, npy;
  api::LookupRequest r;
  bool json = false;
};

int run(Opts& o) {
  // With --model every positional is the word: `lookup --model FILE war`.
  std::string& word = o.r.word;
  if (!o.model.empty() && !o.file.empty()) {
    if (!word.empty())
      throw Error(ErrorCode::kInvalidArgument,
                  "give the model once: either FILE or --model, then WORD");
    word = std::exchange(o.file, "");
  }
  // One positional that is no path and no --ids: the word, on the default model
  // (`lookup computer`).
  if (o.model.empty() && !o.file.empty() && word.empty() && o.r.ids.empty() &&
      !std::filesystem::exists(o.file))
    word = std::exchange(o.file, "");
  ModelHandlePtr h = open_handle(!o.model.empty() ? o.model : o.file);
  if (!o.r.ids.empty()) word.clear();
  api::LookupResult r = api::lookup(*h, o.r);
  if (o.npy.empty()) return print(o.json, r, *h);
  api::save_rows_npy(o.npy, r, h->table().dim());
  return kExitOk;
}

void flags(CLI::App& app, Opts& o) {
  app.add_option("FILE", o.file, "embedding file or model (default: --model)");
  app.add_option("WORD", o.r.word, "word to look up");
  add_model_flag(app, o.model);
  api::describe(Bind{app}, o.r);
  add_json_flag(app, o.json, "print JSON {dim, rows:[{id, token, vector}]}");
  app.add_option("--npy", o.npy, "write the rows as a float32 .npy file instead");
}

Cmd<Opts> reg("lookup", flags, run);

int run_convert(api::ConvertRequest& o) {
  api::ConvertResult r = api::convert(o);
  std::fprintf(stderr, "wrote %s: %zu x %zu\n", o.out.c_str(), r.rows, r.dim);
  return kExitOk;
}

void convert_flags(CLI::App& app, api::ConvertRequest& o) {
  app.add_option("IN", o.in, "input file or model")->required();
  app.add_option("OUT", o.out, "output file (written atomically)")->required();
  api::describe(Bind{app}, o);
}

Cmd<api::ConvertRequest> reg_convert("convert", convert_flags, run_convert);

}  // namespace
}  // namespace embedscope::cli
