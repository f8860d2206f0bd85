#include "embedscope/api/info.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "embedscope/core/mapped_file.h"
#include "embedscope/core/thread_pool.h"

namespace embedscope::api {
namespace {

constexpr size_t kRunRows = 64;  // sampled in kInfoSampleRows / kRunRows runs of consecutive rows

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

// Norm statistics over kInfoSampleRows rows in evenly spaced runs, in one thread: ~12 MB of the
// mapping for GPT-2's wte.
NormStats sampled_norm_stats(const EmbeddingTable& t) {
  NormStats out;
  out.sampled = true;
  out.rows = kInfoSampleRows;
  double mn = std::numeric_limits<double>::infinity(), mx = -mn, sum = 0;
  size_t n_finite = 0;
  std::vector<float> x(t.dim());
  // 64 evenly spaced runs of 64 consecutive rows: scattered single rows would each fault in a
  // 64 KB neighbourhood (fault-around) and map the whole file; runs touch ~4096 rows' pages.
  const size_t n = t.n_rows(), span = n - kRunRows;
  size_t prev_start = 0;
  for (size_t i = 0; i < kInfoSampleRows; ++i) {
    const size_t b = i / kRunRows, j = i % kRunRows, runs = kInfoSampleRows / kRunRows;
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
NormStats full_norm_stats(const EmbeddingTable& t) {
  struct Part {
    double min = std::numeric_limits<double>::infinity(),
           max = -std::numeric_limits<double>::infinity(), sum = 0;
    size_t n_finite = 0;
    uint64_t nonfinite = 0;
  };
  const size_t n_tasks = std::min<size_t>(4, process_pool().size());
  std::vector<Part> parts(n_tasks);
  const size_t dim = t.dim();
  // Rows per block after which the pass drops what it read from the process (mapped tables):
  // ~4 MB, so peak RSS stays flat instead of growing to the file size.
  const size_t block = std::max<size_t>(1, (size_t(4) << 20) / std::max<size_t>(1, t.row_bytes()));
  process_pool().parallel_for(
      t.n_rows(),
      [&](size_t begin, size_t end, size_t thread) {
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
      },
      n_tasks);
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

}  // namespace

NormStats norm_stats(const EmbeddingTable& t, bool full) {
  const bool sample =
      !full && t.byte_size() > kInfoSampleAboveBytes && t.n_rows() > kInfoSampleRows;
  return sample ? sampled_norm_stats(t) : full_norm_stats(t);
}

ModelInfo model_info(const Model& m, const InfoRequest& r) {
  ModelInfo i;
  i.model = &m;
  i.request = r;
  i.norms = norm_stats(m.emb.table, r.full_stats);
  i.tokenizer = plan_tokenizer(m);
  return i;
}

json to_json(const ModelInfo& i) {
  const Model& m = *i.model;
  const EmbeddingTable& t = m.emb.table;
  const std::string dtype(dtype_name(t.dtype()));
  json j;
  j["ref"] = m.ref;
  j["path"] = m.path;
  j["dir"] = m.dir;
  j["format"] = std::string(format_name(m.emb.format));
  j["model_type"] = m.model_type;
  j["tensor"] = m.tensor;
  j["tensor_reason"] = m.tensor_reason;
  j["matrix"] = i.request.matrix;
  j["rows"] = t.n_rows();
  j["dim"] = t.dim();
  j["dtype"] = dtype;
  j["source_dtype"] = m.emb.source_dtype.empty() ? dtype : m.emb.source_dtype;
  j["vocab_size"] = m.emb.vocab.size();
  j["n_search_rows"] = m.n_search_rows;
  j["padded_rows"] = t.n_rows() - m.n_search_rows;
  j["zero_copy"] = t.zero_copy();
  j["tied"] = m.tied ? json(*m.tied) : json(nullptr);
  j["tokenizer_files"] = m.tokenizer_files;
  j["tokenizer"] = {{"source", i.tokenizer.source}, {"name", i.tokenizer.name}};
  j["norms"] = {{"min", finite_or_null(i.norms.min)},
                {"mean", finite_or_null(i.norms.mean)},
                {"max", finite_or_null(i.norms.max)},
                {"rows", i.norms.rows},
                {"sampled", i.norms.sampled}};
  j["nonfinite"] = i.norms.nonfinite;
  j["init_hint"] = m.init_hint;
  j["load_ms"] = i.request.load_ms;
  j["warnings"] = m.emb.warnings;
  j["metadata"] = m.emb.metadata;  // GGUF general.* / <arch>.* facts, safetensors __metadata__
  return j;
}

}  // namespace embedscope::api
