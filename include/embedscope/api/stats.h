// api::stats: norms, anisotropy, hubness and PCA spectrum of a handle's table
// (analysis/table_stats.h), with its JSON document: the one `embedscope stats --json` prints;
// the server's GET /v1/stats.
//
// The result depends only on the table and the options, so stats_cached() computes the default
// options' result once per handle (a shared resource) and returns it to every later caller.
//
// Thread-safety: safe from many threads.
//
//   auto h = ModelHandle::open("");
//   std::string doc = api::dump_json(api::to_json(*h, *api::stats_cached(*h)));
#pragma once

#include <memory>

#include "embedscope/analysis/table_stats.h"
#include "embedscope/api/common.h"

namespace embedscope::api {

// options.n_rows_limit == 0 means the handle's search rows.
TableStats stats(const ModelHandle& h, StatsOptions options = {});
std::shared_ptr<const TableStats> stats_cached(const ModelHandle& h);

// {model, rows, dim, norms, zero_rows, nonfinite_rows, anisotropy, hubness, pca_explained};
// tokens as the CLI shows them (control bytes as <0xNN>).
json to_json(const ModelHandle& h, const TableStats& s);

}  // namespace embedscope::api
