#include "embedscope/api/analogy.h"

#include <chrono>

#include "embedscope/api/neighbors.h"
#include "embedscope/core/error.h"

namespace embedscope::api {

AnalogyResult analogy(const ModelHandle& h, const AnalogyRequest& r) {
  if (r.k == 0) throw Error(ErrorCode::kInvalidArgument, "analogy: k must be at least 1");
  AnalogyResult res;
  res.request = r;
  res.method = parse_analogy_method(r.method);
  res.mode = parse_search_mode(r.mode);
  SearchOptions so;
  so.k = r.k;
  so.metric = Metric::kCosine;
  so.mode = res.mode;
  so.n_rows_limit = h.words().n_rows();
  const WordLookup& words = h.words();
  std::optional<std::vector<uint8_t>> allow = build_filter(r.filter, words);
  if (allow) so.allow = &*allow;
  std::vector<Term> terms;
  res.inputs = json::array();
  const float weights[3] = {-1.0f, 1.0f, 1.0f};  // gensim: positive=[b, c], negative=[a]
  const std::string* w[3] = {&r.a, &r.b, &r.c};
  for (size_t i = 0; i < 3; ++i) {
    ResolvedWord rw = resolve_word(h, *w[i]);
    terms.push_back(Term{rw.ids, weights[i]});
    json p = resolved_json(rw);
    p["word"] = *w[i];
    res.inputs.push_back(p);
    if (!r.include_query) so.exclude.insert(so.exclude.end(), rw.exclude.begin(), rw.exclude.end());
  }
  auto ss = shared_searcher(h, r.center);
  auto t0 = std::chrono::steady_clock::now();
  res.neighbors =
      ss->with([&](const Searcher& s) { return embedscope::analogy(s, terms, res.method, so); });
  res.elapsed_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

json to_json(const ModelHandle& h, const AnalogyResult& r) {
  return json{{"a", r.request.a},
              {"b", r.request.b},
              {"c", r.request.c},
              {"method", analogy_method_name(r.method)},
              {"mode", search_mode_name(r.mode)},
              {"inputs", r.inputs},
              {"model", h.model().path},
              {"elapsed_ms", r.elapsed_ms},
              {"neighbors", neighbors_json(h, r.neighbors, Metric::kCosine)}};
}

}  // namespace embedscope::api
