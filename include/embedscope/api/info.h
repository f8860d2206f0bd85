// api::model_info: what a loaded model is — the matrix chosen and why, shape and type,
// vocabulary, tied weights, tokenizer plan, row-norm statistics — with its JSON document, the
// one `embedscope info --json` prints.
//
// Norm statistics: a matrix over 32 MB (and over 4,096 rows) is sampled unless full_stats is
// set: 64 evenly spaced runs of 64 consecutive rows, in one thread, dropping the pages it read
// behind itself, so a quick look at a multi-GB file neither reads it whole nor grows the
// resident memory with it. full_stats reads every row in one parallel pass (at most 4 threads,
// merged by thread index: deterministic for a thread count), also dropping what it read.
//
// Errors: none beyond what reading the mapped table can raise (a truncated mapping is caught
// when the model loads).
//
// Thread-safety: model_info only reads the model; safe to call concurrently.
//
//   Model m = load_model("gpt2");
//   api::ModelInfo i = api::model_info(m, {.matrix = "input"});
//   std::puts(api::dump_json(api::to_json(i)).c_str());
#pragma once

#include <cstdint>
#include <string>

#include "embedscope/api/common.h"
#include "embedscope/formats/model.h"

namespace embedscope::api {

inline constexpr size_t kInfoSampleAboveBytes = size_t(32) << 20;
inline constexpr size_t kInfoSampleRows = 4096;

struct NormStats {
  double min = std::nan(""), mean = std::nan(""), max = std::nan("");
  uint64_t nonfinite = 0;  // elements that are NaN or Inf
  size_t rows = 0;         // rows the statistics cover
  bool sampled = false;    // 64 runs of 64 rows starting at b * (n_rows - 64) / 63
};

struct InfoRequest {
  std::string matrix = "input";  // recorded in the document ("input" or "output")
  bool full_stats = false;       // norms over every row even for a large matrix
  double load_ms = 0;            // the caller's measured load time, reported as is
};

struct ModelInfo {
  const Model* model = nullptr;  // not owned; outlives the info
  InfoRequest request;
  NormStats norms;
  TokenizerPlan tokenizer;
};

// Row-norm statistics as described above (sampled when the matrix is large and !full).
NormStats norm_stats(const EmbeddingTable& t, bool full);

ModelInfo model_info(const Model& m, const InfoRequest& r);

// {ref, path, dir, format, model_type, tensor, tensor_reason, matrix, rows, dim, dtype,
//  source_dtype, vocab_size, n_search_rows, padded_rows, zero_copy, tied, tokenizer_files,
//  tokenizer {source, name}, norms {min, mean, max, rows, sampled}, nonfinite, init_hint,
//  load_ms, warnings, metadata}
json to_json(const ModelInfo& i);

}  // namespace embedscope::api
