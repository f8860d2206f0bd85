#include "embedscope/api/compare.h"

#include "embedscope/core/thread_pool.h"

namespace embedscope::api {

CompareReport compare(const ModelHandle& a, const ModelHandle& b, CompareOptions options) {
  if (options.n_threads == 0) options.n_threads = process_threads();
  CompareReport r;
  r.a = a.model().ref;
  r.b = b.model().ref;
  r.dim_a = a.table().dim();
  r.dim_b = b.table().dim();
  r.options = options;
  r.result = compare_tables(a.model().emb, b.model().emb, options);
  return r;
}

json to_json(const CompareReport& rep) {
  const CompareResult& r = rep.result;
  json ov = json::array(), mv = json::array();
  for (const WordOverlap& w : r.overlaps)
    ov.push_back({{"word", printable(w.word)}, {"overlap", w.overlap}});
  for (const RowDrift& w : r.moved)
    mv.push_back({{"word", printable(w.word)}, {"drift", finite_or_null(w.drift)}});
  json j = {{"a", rep.a},
            {"b", rep.b},
            {"shared_rows", r.n_shared},
            {"matched_by", r.matched_by},
            {"k", rep.options.k},
            {"mean_overlap", finite_or_null(r.mean_overlap)},
            {"overlaps", std::move(ov)},
            {"aligned", r.aligned}};
  if (r.aligned) {
    j["mean_drift"] = finite_or_null(r.mean_drift);
    j["median_drift"] = finite_or_null(r.median_drift);
    j["moved"] = std::move(mv);
  }
  return j;
}

}  // namespace embedscope::api
