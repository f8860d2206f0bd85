#include "embedscope/api/stats.h"

#include <cstdio>

#include "embedscope/core/thread_pool.h"

namespace embedscope::api {

namespace {

json dist_json(const Distribution& d) {
  return {{"mean", finite_or_null(d.mean)}, {"sd", finite_or_null(d.sd)},
          {"min", finite_or_null(d.min)},   {"p01", finite_or_null(d.p01)},
          {"p50", finite_or_null(d.p50)},   {"p99", finite_or_null(d.p99)},
          {"max", finite_or_null(d.max)}};
}

}  // namespace

TableStats stats(const ModelHandle& h, StatsOptions options) {
  if (options.n_rows_limit == 0) options.n_rows_limit = h.model().n_search_rows;
  return table_stats(h.table(), options);
}

std::shared_ptr<const TableStats> stats_cached(const ModelHandle& h) {
  return h.resource<TableStats>("api.stats.default", [&] {
    StatsOptions o;
    o.n_threads = process_threads();  // the result does not depend on it
    return std::make_shared<TableStats>(stats(h, o));
  });
}

json to_json(const ModelHandle& h, const TableStats& s) {
  const Vocabulary& v = h.vocab();
  auto name = [&](TokenId id) {
    return size_t(id) < v.size() ? printable(v.token(id)) : "#" + std::to_string(id);
  };
  json hubs = json::array();
  for (auto& [id, c] : s.top_hubs)
    hubs.push_back({{"id", id}, {"token", name(id)}, {"k_occurrence", c}});
  json pca = json::array();
  for (double x : s.pca_explained) pca.push_back(finite_or_null(x));
  return json{{"model", h.model().ref},
              {"rows", s.n_rows},
              {"dim", s.dim},
              {"norms", dist_json(s.norms)},
              {"zero_rows", s.n_zero},
              {"nonfinite_rows", s.n_nonfinite},
              {"anisotropy",
               {{"mean_cos_to_mean", finite_or_null(s.mean_cos_to_mean)},
                {"random_pair_cos", dist_json(s.pair_cos)}}},
              {"hubness",
               {{"k", s.hub_k},
                {"queries", s.n_queries},
                {"k_occurrence_skew", finite_or_null(s.k_occurrence_skew)},
                {"antihub_share", finite_or_null(s.antihub_share)},
                {"top_hubs", hubs}}},
              {"pca_explained", pca}};
}

}  // namespace embedscope::api
