// embedscope info: what a file, folder or hub id resolves to: the matrix chosen and why, its
// shape and type, vocabulary, tied weights, tokenizer files, norm statistics and load time.
#include <cstdio>

#include "command.h"
#include "common.h"
#include "embedscope/api/info.h"
#include "embedscope/core/error.h"
#include "embedscope/handle/model_handle.h"

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
  if (o.matrix == "output")
    mo.matrix = MatrixKind::kOutput;
  else if (o.matrix != "input")
    throw Error(ErrorCode::kInvalidArgument,
                "--matrix must be 'input' or 'output', got '" + o.matrix + "'");
  mo.tensor = o.tensor;
  std::string ref = !o.model.empty() ? o.model : o.file;
  double t0 = now_ms();
  Model m = load_model_ref(ref, mo);
  double load_ms = now_ms() - t0;

  const EmbeddingTable& t = m.emb.table;
  api::ModelInfo info =
      api::model_info(m, {.matrix = o.matrix, .full_stats = o.full_stats, .load_ms = load_ms});
  if (o.json) {
    print_json(api::to_json(info));
    return kExitOk;
  }
  const api::NormStats& ns = info.norms;
  const size_t padded = t.n_rows() - m.n_search_rows;
  const std::string dtype(dtype_name(t.dtype()));
  const std::string source = m.emb.source_dtype.empty() ? dtype : m.emb.source_dtype;
  auto line = [](const char* k, const std::string& v) { std::printf("%-13s %s\n", k, v.c_str()); };
  line("model", m.ref.empty() ? m.path : m.ref);
  line("file", m.path);
  line("format", std::string(format_name(m.emb.format)));
  if (!m.model_type.empty()) line("model type", m.model_type);
  line("tensor", m.tensor.empty() ? "-" : m.tensor);
  if (!m.tensor_reason.empty()) line("  chosen by", m.tensor_reason);
  line("shape", std::to_string(t.n_rows()) + " x " + std::to_string(t.dim()));
  line("dtype", source == dtype ? dtype : dtype + " (on disk " + source + ")");
  line("vocabulary", m.emb.vocab.empty() ? "none" : std::to_string(m.emb.vocab.size()) + " tokens");
  line("search rows", std::to_string(m.n_search_rows) +
                          (padded ? " (" + std::to_string(padded) + " padded rows excluded)" : ""));
  line("zero copy", t.zero_copy() ? "yes (mapped)" : "no (copied / converted)");
  line("tied", m.tied ? (*m.tied ? "yes" : "no") : "unknown");
  const TokenizerPlan& tp = info.tokenizer;
  line("tokenizer", tp.source == "none"       ? "none found"
                    : tp.source == "metadata" ? tp.name + " (named in the model's metadata)"
                    : tp.source == "folder"   ? tp.name
                    : tp.source == "gguf"     ? "the GGUF file's vocabulary (tokenizer.ggml.*)"
                                              : "gpt2 (GPT-2-shaped matrix)");
  char b[160];
  std::snprintf(b, sizeof b, "min %.4g  mean %.4g  max %.4g  (non-finite values: %llu)", ns.min,
                ns.mean, ns.max, static_cast<unsigned long long>(ns.nonfinite));
  line("row norms", b);
  if (ns.sampled)
    line("", "  over " + std::to_string(ns.rows) + " of " + std::to_string(t.n_rows()) +
                 " rows (64 evenly spaced runs); --full-stats reads every row");
  if (!m.init_hint.empty()) line("init hint", m.init_hint);
  for (const auto& [k, v] : m.emb.metadata)
    if (k.rfind("embedscope.", 0) != 0) line("metadata", k + " = " + printable(v.substr(0, 120)));
  std::snprintf(b, sizeof b, "%.1f ms", load_ms);
  line("load time", b);
  for (const std::string& w : m.emb.warnings) line("warning", w);
  return kExitOk;
}

static Command reg(
    "info", "Show what a file, model folder or hub id contains (tensor, shape, dtype, tied, ...)",
    [](CLI::App& app) -> Runner {
      auto o = std::make_shared<InfoOpts>();
      app.description(
          "Show what a file, model folder or hub id contains: the embedding tensor chosen and "
          "why, shape, dtype or quantisation, vocabulary, tied input/output embeddings, "
          "tokenizer files, row-norm statistics and load time.\n\n"
          "Accepted references: .safetensors, .bin/.pt (PyTorch zip), .gguf, .npy, word2vec / "
          "GloVe / fastText .vec files; a Hugging Face model folder; a hub id (gpt2, org/name) "
          "found in the local Hugging Face cache (never downloaded).");
      app.footer(
          "Examples:\n"
          "  embedscope info model.safetensors\n"
          "  embedscope info --model gpt2 --json\n"
          "  embedscope info --model ./llama-folder --matrix output\n"
          "  embedscope info model.gguf --tensor output.weight");
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
