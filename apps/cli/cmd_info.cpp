// embedscope info: what a file, folder or hub id resolves to: the matrix chosen and why, its
// shape and type, vocabulary, tied weights, tokenizer files, norm statistics and load time.
#include "command.h"
#include "common.h"
#include "embedscope/api/text_output.h"

namespace embedscope::cli {
namespace {

struct InfoOpts {
  std::string file, model, matrix = "input", tensor;
  bool json = false, full_stats = false;
};

int run_info(const InfoOpts& o) {
  if (!o.file.empty() && !o.model.empty())
    throw Error(ErrorCode::kInvalidArgument, "give either FILE or --model, not both");
  ModelOptions mo;
  mo.matrix = o.matrix == "output" ? MatrixKind::kOutput : MatrixKind::kInput;
  mo.tensor = o.tensor;
  double t0 = now_ms();
  Model m = load_model_ref(!o.model.empty() ? o.model : o.file, mo);
  api::ModelInfo info = api::model_info(
      m, {.matrix = o.matrix, .full_stats = o.full_stats, .load_ms = now_ms() - t0});
  o.json ? print_json(api::to_json(info)) : print_text(api::to_text(info));
  return kExitOk;
}

static Command reg(
    "info", "Show what a file, model folder or hub id contains (tensor, shape, dtype, tied, ...)",
    [](CLI::App& app) -> Runner {
      auto o = std::make_shared<InfoOpts>();
      app.description(
          "Show what a file, model folder or hub id contains: the embedding tensor chosen and "
          "why, shape, dtype or quantisation, vocabulary, tied input/output embeddings, "
          "tokenizer files, row-norm statistics and load time.\n\nAccepted references: "
          ".safetensors, .bin/.pt (PyTorch zip), .gguf, .npy, word2vec / GloVe / fastText .vec "
          "files; a Hugging Face model folder; a hub id (gpt2, org/name) found in the local "
          "Hugging Face cache (never downloaded).");
      app.footer(
          "Examples:\n  embedscope info model.safetensors\n  embedscope info --model gpt2 --json\n"
          "  embedscope info --model ./llama-folder --matrix output\n  embedscope info "
          "model.gguf --tensor output.weight");
      app.add_option("FILE", o->file, "file or folder to inspect");
      app.add_option("--model,-m", o->model, "model reference (file, folder or hub id)");
      app.add_option("--matrix", o->matrix, "input (default) or output embedding")
          ->check(CLI::IsMember({"input", "output"}));
      app.add_option("--tensor", o->tensor, "take this tensor instead of discovering one");
      app.add_flag("--json", o->json, "print one JSON object");
      app.add_flag(
          "--full-stats", o->full_stats,
          "norm statistics over every row (default: 4096 rows in 64 evenly spaced runs when "
          "the matrix is over 32 MB)");
      return [o] { return run_info(*o); };
    },
    20);

}  // namespace
}  // namespace embedscope::cli
