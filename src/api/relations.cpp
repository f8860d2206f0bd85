#include "embedscope/api/relations.h"

#include "embedscope/api/neighbors.h"
#include "embedscope/core/error.h"
#include "embedscope/search/analogy.h"

namespace embedscope::api {
namespace {

std::vector<Term> terms_of(const ModelHandle& h, const std::vector<std::string>& words,
                           json& inputs) {
  std::vector<Term> t;
  inputs = json::array();
  for (const std::string& w : words) {
    ResolvedWord r = resolve_word(h, w);
    t.push_back(Term{r.ids, 1.0f});
    json p = resolved_json(r);
    p["word"] = w;
    inputs.push_back(std::move(p));
  }
  return t;
}

}  // namespace

PairResult word_pair(const ModelHandle& h, const PairRequest& r) {
  PairResult res;
  res.request = r;
  std::vector<Term> t = terms_of(h, {r.a, r.b}, res.inputs);
  shared_searcher(h, r.center)->with([&](const Searcher& s) {
    res.similarity = term_similarity(s, t[0], t[1]);
    if (r.rank) res.rank = term_rank(s, t[0], t[1]);
    return 0;
  });
  return res;
}

json to_json(const ModelHandle& h, const PairResult& r) {
  json j{{"a", r.request.a},
         {"b", r.request.b},
         {"inputs", r.inputs},
         {"model", h.model().path},
         {"similarity", finite_or_null(r.similarity)}};
  if (r.request.rank) j["rank"] = r.rank;
  return j;
}

DoesntMatchResult doesnt_match(const ModelHandle& h, const DoesntMatchRequest& r) {
  if (r.words.size() < 2)
    throw Error(ErrorCode::kInvalidArgument,
                "doesnt-match needs at least two words, got " + std::to_string(r.words.size()));
  DoesntMatchResult res;
  res.request = r;
  std::vector<Term> t = terms_of(h, r.words, res.inputs);
  DoesntMatch d = shared_searcher(h, r.center)->with([&](const Searcher& s) {
    return embedscope::doesnt_match(s, t);
  });
  res.odd = d.index;
  res.scores = std::move(d.scores);
  return res;
}

json to_json(const ModelHandle& h, const DoesntMatchResult& r) {
  json scores = json::array();
  for (size_t i = 0; i < r.request.words.size(); ++i)
    scores.push_back({{"word", r.request.words[i]}, {"score", finite_or_null(r.scores[i])}});
  return json{{"words", r.request.words},
              {"odd_one_out", r.request.words[r.odd]},
              {"scores", std::move(scores)},
              {"inputs", r.inputs},
              {"model", h.model().path}};
}

}  // namespace embedscope::api
