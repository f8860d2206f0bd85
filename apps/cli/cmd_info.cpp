// embedscope info: what a file, folder or hub id resolves to: the matrix chosen and why, its
// shape and type, vocabulary, tied weights, tokenizer files, norm statistics and load time.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <thread>
#include <vector>

#include "command.h"
#include "common.h"
#include "embedscope/core/error.h"
#include "embedscope/core/thread_pool.h"

namespace embedscope::cli {
namespace {

struct InfoOpts {
  std::string file, model, matrix = "input", tensor;
  bool json = false;
};

struct NormStats {
  double min = std::nan(""), mean = std::nan(""), max = std::nan("");
  uint64_t nonfinite = 0;  // elements that are NaN or Inf
};

// Row-norm statistics over the whole table in one parallel pass. EmbeddingTable::norms() keeps
// every norm in double precision for the search code; info only needs min / mean / max, and on a
// GPT-2-sized table that pass dominates the command, so this one sums squares in 8 float lanes
// (vectorisable) per row, merged in double, by thread index (deterministic for a thread count).
NormStats norm_stats(const EmbeddingTable& t) {
  struct Part {
    double min = std::numeric_limits<double>::infinity(), max = -std::numeric_limits<double>::infinity(), sum = 0;
    size_t n_finite = 0;
    uint64_t nonfinite = 0;
  };
  ThreadPool pool(std::min<size_t>(4, std::max<size_t>(1, std::thread::hardware_concurrency())));
  std::vector<Part> parts(pool.size());
  const size_t dim = t.dim();
  // Rows per block after which the pass drops what it read from the process (mapped tables):
  // ~4 MB, so peak RSS stays flat instead of growing to the file size.
  const size_t block = std::max<size_t>(1, (size_t(4) << 20) / std::max<size_t>(1, t.row_bytes()));
  pool.parallel_for(t.n_rows(), [&](size_t begin, size_t end, size_t thread) {
    Part& p = parts[thread];
    std::vector<float> buf(dim);
    size_t done = begin;
    for (size_t r = begin; r < end; ++r) {
      if (r - done >= block) {
        t.drop_resident(done, r);
        done = r;
      }
      const float* x;
      if (t.dtype() == DType::kF32) {
        x = t.f32() + r * dim;
      } else {
        t.row_f32(r, buf.data());
        x = buf.data();
      }
      float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      size_t j = 0;
      for (; j + 8 <= dim; j += 8)
        for (int k = 0; k < 8; ++k) lane[k] += x[j + k] * x[j + k];
      double s = 0;
      for (; j < dim; ++j) s += double(x[j]) * x[j];
      for (float l : lane) s += l;
      if (!std::isfinite(s)) {
        // Only rows whose sum is not finite need the element count (overflow alone is not one).
        for (size_t k = 0; k < dim; ++k) p.nonfinite += !std::isfinite(x[k]);
        continue;
      }
      double n = std::sqrt(s);
      p.min = std::min(p.min, n);
      p.max = std::max(p.max, n);
      p.sum += n;
      ++p.n_finite;
    }
    t.drop_resident(done, end);
  });
  NormStats out;
  Part all;
  for (const Part& p : parts) {
    all.min = std::min(all.min, p.min);
    all.max = std::max(all.max, p.max);
    all.sum += p.sum;
    all.n_finite += p.n_finite;
    out.nonfinite += p.nonfinite;
  }
  if (all.n_finite) {
    out.min = all.min;
    out.max = all.max;
    out.mean = all.sum / double(all.n_finite);
  }
  return out;
}

int run_info(const InfoOpts& o) {
  if (!o.file.empty() && !o.model.empty())
    throw Error(ErrorCode::kInvalidArgument, "give either FILE or --model, not both");
  ModelOptions mo;
  if (o.matrix == "output") mo.matrix = MatrixKind::kOutput;
  else if (o.matrix != "input")
    throw Error(ErrorCode::kInvalidArgument, "--matrix must be 'input' or 'output', got '" + o.matrix + "'");
  mo.tensor = o.tensor;
  std::string ref = !o.model.empty() ? o.model : o.file;
  double t0 = now_ms();
  Model m = load_model_ref(ref, mo);
  double load_ms = now_ms() - t0;

  const EmbeddingTable& t = m.emb.table;
  NormStats ns = norm_stats(t);
  double mn = ns.min, mx = ns.max, mean = ns.mean;
  uint64_t nonfinite = ns.nonfinite;
  size_t padded = t.n_rows() - m.n_search_rows;
  std::string format(format_name(m.emb.format));
  std::string dtype(dtype_name(t.dtype()));
  std::string source = m.emb.source_dtype.empty() ? dtype : m.emb.source_dtype;

  if (o.json) {
    json j;
    j["ref"] = m.ref;
    j["path"] = m.path;
    j["dir"] = m.dir;
    j["format"] = format;
    j["model_type"] = m.model_type;
    j["tensor"] = m.tensor;
    j["tensor_reason"] = m.tensor_reason;
    j["matrix"] = o.matrix;
    j["rows"] = t.n_rows();
    j["dim"] = t.dim();
    j["dtype"] = dtype;
    j["source_dtype"] = source;
    j["vocab_size"] = m.emb.vocab.size();
    j["n_search_rows"] = m.n_search_rows;
    j["padded_rows"] = padded;
    j["zero_copy"] = t.zero_copy();
    j["tied"] = m.tied ? json(*m.tied) : json(nullptr);
    j["tokenizer_files"] = m.tokenizer_files;
    j["norms"] = {{"min", finite_or_null(mn)}, {"mean", finite_or_null(mean)}, {"max", finite_or_null(mx)}};
    j["nonfinite"] = nonfinite;
    j["init_hint"] = m.init_hint;
    j["load_ms"] = load_ms;
    j["warnings"] = m.emb.warnings;
    j["metadata"] = m.emb.metadata;  // GGUF general.* / <arch>.* facts, safetensors __metadata__
    print_json(j);
    return kExitOk;
  }
  auto line = [](const char* k, const std::string& v) { std::printf("%-13s %s\n", k, v.c_str()); };
  line("model", m.ref.empty() ? m.path : m.ref);
  line("file", m.path);
  line("format", format);
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
  std::string tok;
  for (const std::string& f : m.tokenizer_files) tok += (tok.empty() ? "" : " ") + f;
  line("tokenizer", tok.empty() ? "none found" : tok);
  char b[160];
  std::snprintf(b, sizeof b, "min %.4g  mean %.4g  max %.4g  (non-finite values: %llu)", mn, mean,
                mx, static_cast<unsigned long long>(nonfinite));
  line("row norms", b);
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
      return [o] { return run_info(*o); };
    },
    20);

}  // namespace
}  // namespace embedscope::cli
