// embedscope lookup: rows of a table as vectors (ids -> vectors), the nn.Embedding forward;
// embedscope convert: a matrix in another format.
#include <filesystem>

#include "command.h"
#include "common.h"
#include "embedscope/api/text_output.h"

namespace embedscope::cli {
namespace {

struct LookupOpts {
  std::string file, model, word, ids, npy;
  bool json = false;
};

int run_lookup(LookupOpts o) {
  // With --model every positional is the word: `lookup --model FILE war`.
  if (!o.model.empty() && !o.file.empty()) {
    if (!o.word.empty())
      throw Error(ErrorCode::kInvalidArgument,
                  "give the model once: either FILE or --model, then WORD");
    o.word = std::exchange(o.file, "");
  }
  // One positional that is no path and no --ids: the word, on the default model
  // (`lookup computer`).
  if (o.model.empty() && !o.file.empty() && o.word.empty() && o.ids.empty() &&
      !std::filesystem::exists(o.file))
    o.word = std::exchange(o.file, "");
  ModelHandlePtr h = open_handle(!o.model.empty() ? o.model : o.file);
  api::LookupResult r = api::lookup(
      *h, {.word = o.ids.empty() ? o.word : "",
           .ids = o.ids.empty() ? std::vector<TokenId>{} : api::parse_id_list(o.ids, "--ids")});
  if (!o.npy.empty())
    api::save_rows_npy(o.npy, r, h->table().dim());
  else
    o.json ? print_json(api::to_json(*h, r)) : print_text(api::to_text(*h, r));
  return kExitOk;
}

Command reg(
    "lookup", "Look rows up: a word or ids -> vectors (like nn.Embedding's forward)",
    [](CLI::App& app) -> Runner {
      auto o = std::make_shared<LookupOpts>();
      app.add_option("FILE", o->file, "embedding file or model (default: --model)");
      app.add_option("WORD", o->word, "word to look up");
      app.add_option("--model,-m", o->model, "model reference (file, folder, hub id)");
      app.add_option("--ids", o->ids, "comma-separated row ids, e.g. 1,2,3");
      add_json_flag(app, o->json, "print JSON {dim, rows:[{id, token, vector}]}");
      app.add_option("--npy", o->npy, "write the rows as a float32 .npy file instead");
      app.footer(
          "Examples:\n  embedscope lookup vectors.bin king\n  embedscope lookup computer         "
          "   # the default model's row(s)\n  embedscope lookup model.safetensors --ids 1,2,3 "
          "--npy rows.npy");
      return [o] { return run_lookup(*o); };
    },
    30);

int run_convert(const api::ConvertRequest& o) {
  api::ConvertResult r = api::convert(o);
  std::fprintf(stderr, "wrote %s: %zu x %zu\n", o.out.c_str(), r.rows, r.dim);
  return kExitOk;
}

Command reg_convert(
    "convert", "Convert an embedding matrix between formats",
    [](CLI::App& app) -> Runner {
      auto o = std::make_shared<api::ConvertRequest>();
      app.add_option("IN", o->in, "input file or model")->required();
      app.add_option("OUT", o->out, "output file (written atomically)")->required();
      app.add_option("--to", o->to,
                     "safetensors | npy | word2vec | word2vec-bin (default: from OUT's extension)");
      app.add_option("--tensor", o->tensor, "tensor to take from IN");
      app.footer(
          "Example:\n  embedscope convert vectors.bin vectors.safetensors\n  embedscope convert "
          "model.safetensors out.txt --to word2vec");
      return [o] { return run_convert(*o); };
    },
    40);

}  // namespace
}  // namespace embedscope::cli
