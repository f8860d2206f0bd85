// embedscope info: what a file, folder or hub id resolves to: the matrix chosen and why, its
// shape and type, vocabulary, tied weights, tokenizer files, norm statistics and load time.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <thread>
#include <vector>

#include "command.h"
#include "common.h"
#include "embedscope/core/error.h"
#include "embedscope/core/mapped_file.h"
#include "embedscope/core/thread_pool.h"
#include "embedscope/handle/model_handle.h"

namespace embedscope::cli {
namespace {

struct InfoOpts {
  std::string file, model, matrix = "input", tensor;
  bool json = false, full_stats = false;
};

// Above this size info samples rows for its norm statistics: a quick look must not read a whole
// multi-GB matrix, and its resident memory must not grow with the file. `--full-stats` (or
// `embedscope stats`) reads every row.
constexpr size_t kSampleAboveBytes = size_t(32) << 20;
constexpr size_t kSampleRows = 4096;
constexpr size_t kRunRows = 64;  // sampled in kSampleRows / kRunRows runs of consecutive rows

struct NormStats {
  double min = std::nan(""), mean = std::nan(""), max = std::nan("");
  uint64_t nonfinite = 0;  // elements that are NaN or Inf
  size_t rows = 0;         // rows the statistics cover
  bool sampled = false;    // 64 runs of 64 rows starting at b * (n_rows - 64) / 63 (deterministic)
};

// Forgets the pages around one sampled run (mapped tables only): the kernel may map a whole
// large folio (up to 2 MB) around each fault, so the run's rows +- 2 MB are dropped to keep the
// peak RSS flat.
void drop_around(const EmbeddingTable& t, size_t run_start) {
  const std::byte* lo = t.data();
  const std::byte* hi = t.data() + t.byte_size();
  const std::byte* a = t.row_data(run_start);
  const std::byte* e = a + kRunRows * t.row_bytes();
  const size_t pad = size_t(2) << 20;
  a = size_t(a - lo) > pad ? a - pad : lo;
  e = size_t(hi - e) > pad ? e + pad : hi;
  MappedFile::drop_resident(a, size_t(e - a));
}

// Norm statistics over kSampleRows rows in evenly spaced runs, in one thread: ~12 MB of the
// mapping for GPT-2's wte.
NormStats sampled_norm_stats(const EmbeddingTable& t) {
  NormStats out;
  out.sampled = true;
  out.rows = kSampleRows;
  double mn = std::numeric_limits<double>::infinity(), mx = -mn, sum = 0;
  size_t n_finite = 0;
  std::vector<float> x(t.dim());
  // 64 evenly spaced runs of 64 consecutive rows: scattered single rows would each fault in a
  // 64 KB neighbourhood (fault-around) and map the whole file; runs touch ~4096 rows' pages.
  const size_t n = t.n_rows(), span = n - kRunRows;
  size_t prev_start = 0;
  for (size_t i = 0; i < kSampleRows; ++i) {
    const size_t b = i / kRunRows, j = i % kRunRows, runs = kSampleRows / kRunRows;
    // start = b * span / (runs - 1), split so that it cannot overflow for any n.
    const size_t start = b * (span / (runs - 1)) + b * (span % (runs - 1)) / (runs - 1);
    const size_t r = start + j;
    if (j == 0 && b > 0) drop_around(t, prev_start);
    if (j == 0) prev_start = start;
    t.row_f32(r, x.data());
    const double s = sum_of_squares(x.data(), x.size());
    if (!std::isfinite(s)) {
      for (float v : x) out.nonfinite += !std::isfinite(v);
      continue;
    }
    const double norm = std::sqrt(s);
    mn = std::min(mn, norm);
    mx = std::max(mx, norm);
    sum += norm;
    ++n_finite;
  }
  drop_around(t, prev_start);
  if (n_finite) {
    out.min = mn;
    out.max = mx;
    out.mean = sum / double(n_finite);
  }
  return out;
}

// Row-norm statistics over the whole table in one parallel pass (core's sum_of_squares per row),
// merged by thread index (deterministic for a thread count). EmbeddingTable::norms() would keep
// every norm for the search code; info only needs min / mean / max, and drops what it has read
// behind itself so RSS stays flat on a mapped table.
NormStats norm_stats(const EmbeddingTable& t) {
  struct Part {
    double min = std::numeric_limits<double>::infinity(),
           max = -std::numeric_limits<double>::infinity(), sum = 0;
    size_t n_finite = 0;
    uint64_t nonfinite = 0;
  };
  ThreadPool pool(std::min<size_t>(4, process_threads()));
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
      const double s = sum_of_squares(x, dim);
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
  out.rows = t.n_rows();
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
  const bool sample =
      !o.full_stats && t.byte_size() > kSampleAboveBytes && t.n_rows() > kSampleRows;
  NormStats ns = sample ? sampled_norm_stats(t) : norm_stats(t);
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
    TokenizerPlan tp = plan_tokenizer(m);
    j["tokenizer"] = {{"source", tp.source}, {"name", tp.name}};
    j["norms"] = {{"min", finite_or_null(mn)},
                  {"mean", finite_or_null(mean)},
                  {"max", finite_or_null(mx)},
                  {"rows", ns.rows},
                  {"sampled", ns.sampled}};
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
  TokenizerPlan tp = plan_tokenizer(m);
  line("tokenizer", tp.source == "none"       ? "none found"
                    : tp.source == "metadata" ? tp.name + " (named in the model's metadata)"
                    : tp.source == "folder"   ? tp.name
                    : tp.source == "gguf"     ? "the GGUF file's vocabulary (tokenizer.ggml.*)"
                                              : "gpt2 (GPT-2-shaped matrix)");
  char b[160];
  std::snprintf(b, sizeof b, "min %.4g  mean %.4g  max %.4g  (non-finite values: %llu)", mn, mean,
                mx, static_cast<unsigned long long>(nonfinite));
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
