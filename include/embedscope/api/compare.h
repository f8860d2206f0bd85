// api::compare: how two tables of the same vocabulary (or the same tokenizer) differ
// (analysis/table_stats.h compare_tables): neighbour overlap@k over sampled shared rows and,
// when the dimensions agree, Procrustes-aligned drift per row. Its JSON document is the one
// `embedscope compare --json` prints:
//   {a, b, shared_rows, matched_by, k, mean_overlap, overlaps: [{word, overlap}], aligned,
//    mean_drift?, median_drift?, moved?: [{word, drift}]}   (drift fields only when aligned)
//
// Errors: what compare_tables throws (Error(kInvalidArgument) when the tables share no rows).
// options.n_threads == 0 means process_threads().
//
// Thread-safety: reads both handles only; safe to call concurrently.
//
//   auto a = ModelHandle::open("before.bin"), b = ModelHandle::open("after.bin");
//   api::CompareReport r = api::compare(*a, *b, {.k = 10});
#pragma once

#include "embedscope/analysis/table_stats.h"
#include "embedscope/api/common.h"

namespace embedscope::api {

struct CompareReport {
  std::string a, b;             // the references as given
  size_t dim_a = 0, dim_b = 0;  // the tables' widths (named when they differ)
  CompareOptions options;
  CompareResult result;
};

CompareReport compare(const ModelHandle& a, const ModelHandle& b, CompareOptions options = {});
json to_json(const CompareReport& r);

}  // namespace embedscope::api
