#include "embedscope/api/neighbors.h"

#include <cmath>

#include "embedscope/core/error.h"
#include "embedscope/core/progress.h"
#include "embedscope/search/analogy.h"

namespace embedscope::api {

namespace {

struct Prepared {
  std::vector<float> vec;    // search space
  std::vector<TokenId> own;  // the query's rows and variants
};

Prepared prepare(const ModelHandle& h, const Searcher& s, const NeighborQuery& q,
                 NeighborsAnswer& a) {
  Prepared p;
  switch (q.kind) {
    case NeighborQuery::Kind::kId:
    case NeighborQuery::Kind::kWord: {
      std::string word = q.kind == NeighborQuery::Kind::kId ? "#" + std::to_string(q.id) : q.text;
      if (q.kind == NeighborQuery::Kind::kId && q.id < 0)
        throw Error(ErrorCode::kOutOfRange, "row id " + std::to_string(q.id) +
                                                " is out of range (" +
                                                std::to_string(h.n_search_rows()) + " rows)");
      ResolvedWord r = resolve_word(h, word);
      a.resolved = resolved_json(r);
      p.own = r.exclude;
      if (r.ids.size() == 1) {
        p.vec = s.row(r.ids[0]);
      } else {  // pieces: their mean
        p.vec.assign(s.dim(), 0.0f);
        for (TokenId id : r.ids) {
          auto row = s.row(id);
          for (size_t j = 0; j < row.size(); ++j) p.vec[j] += row[j] / float(r.ids.size());
        }
      }
      return p;
    }
    case NeighborQuery::Kind::kVector: {
      if (q.vector.size() != s.dim())
        throw Error(ErrorCode::kInvalidArgument,
                    "query vector has " + std::to_string(q.vector.size()) +
                        " values, the model's dim is " + std::to_string(s.dim()));
      for (size_t i = 0; i < q.vector.size(); ++i)
        if (!std::isfinite(q.vector[i]))
          throw Error(ErrorCode::kInvalidArgument,
                      "query vector value " + std::to_string(i) + " is not a finite number");
      p.vec = s.to_search_space(q.vector);
      return p;
    }
    case NeighborQuery::Kind::kExpr: {
      std::vector<Term> terms;
      json parts = json::array();
      for (const ExpressionTerm& e : parse_expression(q.text)) {
        ResolvedWord r = resolve_word(h, e.word);
        terms.push_back(Term{r.ids, e.weight});
        json part = resolved_json(r);
        part["word"] = e.word;
        part["weight"] = e.weight;
        parts.push_back(part);
        p.own.insert(p.own.end(), r.exclude.begin(), r.exclude.end());
      }
      a.resolved = parts;
      p.vec = compose_terms(s, terms);
      return p;
    }
  }
  return p;
}

json query_json(const NeighborQuery& q) {
  switch (q.kind) {
    case NeighborQuery::Kind::kWord:
    case NeighborQuery::Kind::kExpr:
      return q.text;
    case NeighborQuery::Kind::kId:
      return "#" + std::to_string(q.id);
    case NeighborQuery::Kind::kVector:
      return q.label.empty() ? std::string("vector") : q.label;
  }
  return nullptr;
}

}  // namespace

ResolvedQuery resolve_query(const ModelHandle& h, const NeighborQuery& q, bool center) {
  auto ss = shared_searcher(h, center);
  NeighborsAnswer a;
  a.query = query_json(q);
  Prepared p = prepare(h, ss->unlocked(), q, a);
  return ResolvedQuery{std::move(p.vec), std::move(p.own), std::move(a.query),
                       std::move(a.resolved)};
}

json resolved_json(const ResolvedWord& r) {
  return json{{"how", r.how}, {"ids", r.ids}, {"pieces", r.pieces}};
}

NeighborsResult neighbors(const ModelHandle& h, const NeighborsRequest& r) {
  if (r.queries.empty()) throw Error(ErrorCode::kInvalidArgument, "neighbors: no query given");
  if (r.k == 0) throw Error(ErrorCode::kInvalidArgument, "neighbors: k must be at least 1");
  NeighborsResult res;
  res.metric = parse_metric(r.metric);
  res.mode = parse_search_mode(r.mode);
  res.k = r.k;
  res.csls_k = r.csls_k;
  res.batch = r.force_batch || r.queries.size() > 1;
  auto ss = shared_searcher(h, r.center);
  const Searcher& s = ss->unlocked();  // row(), dim(), to_search_space(): immutable state
  res.threads = s.n_threads();
  res.centered = s.centered();
  SearchOptions so;
  so.k = r.k;
  so.metric = res.metric;
  so.mode = res.mode;
  so.csls_k = r.csls_k;
  so.n_rows_limit = h.n_search_rows();
  std::optional<std::vector<uint8_t>> allow = build_filter(r.filter, h.words());
  if (allow) so.allow = &*allow;

  res.answers.resize(r.queries.size());
  std::vector<Prepared> prepared(r.queries.size());
  std::vector<size_t> ok;
  for (size_t i = 0; i < r.queries.size(); ++i) {
    NeighborsAnswer& a = res.answers[i];
    a.query = query_json(r.queries[i]);
    try {
      prepared[i] = prepare(h, s, r.queries[i], a);
      ok.push_back(i);
    } catch (const Error& e) {
      // A single query's failure is the request's failure; a batch reports it per line.
      if (!res.batch) throw;
      if (e.code() != ErrorCode::kNotFound && e.code() != ErrorCode::kOutOfRange &&
          e.code() != ErrorCode::kInvalidArgument)
        throw;
      a.error = e.what();
    }
  }
  double t0 = now_ms();
  if (!res.batch) {
    if (!r.include_query) so.exclude = prepared[0].own;
    res.answers[0].neighbors =
        ss->with([&](const Searcher& x) { return x.search(prepared[0].vec, so); });
  } else if (!ok.empty()) {
    std::vector<float> mat;
    mat.reserve(ok.size() * s.dim());
    std::vector<std::vector<TokenId>> excl;
    for (size_t i : ok) {
      mat.insert(mat.end(), prepared[i].vec.begin(), prepared[i].vec.end());
      excl.push_back(r.include_query ? std::vector<TokenId>{} : prepared[i].own);
    }
    auto out = ss->with([&](const Searcher& x) {
      return r.batch_search ? r.batch_search(x, mat, ok.size(), so, &excl)
                            : x.search_batch(mat, ok.size(), so, &excl);
    });
    for (size_t j = 0; j < ok.size(); ++j) res.answers[ok[j]].neighbors = std::move(out[j]);
  }
  res.elapsed_ms = now_ms() - t0;
  return res;
}

json neighbors_json(const ModelHandle& h, const std::vector<Neighbor>& nn, Metric metric) {
  const WordLookup& w = h.words();
  json a = json::array();
  for (const Neighbor& n : nn) {
    json e{{"id", n.id}, {"token", w.display(n.id)}, {"score", finite_or_null(n.score)}};
    if (metric == Metric::kL2) e["distance"] = finite_or_null(-n.score);
    a.push_back(std::move(e));
  }
  return a;
}

json batch_line_json(const ModelHandle& h, const NeighborsResult& r, const NeighborsAnswer& a) {
  json j{{"query", a.query}, {"mode", search_mode_name(r.mode)}, {"metric", metric_name(r.metric)}};
  if (a.error.empty()) {
    j["resolved"] = a.resolved;
    j["neighbors"] = neighbors_json(h, a.neighbors, r.metric);
  } else {
    j["error"] = a.error;
  }
  return j;
}

json to_json(const ModelHandle& h, const NeighborsResult& r) {
  if (r.batch) {
    json lines = json::array();
    for (const auto& a : r.answers) lines.push_back(batch_line_json(h, r, a));
    json j{{"model", h.model().path},
           {"metric", metric_name(r.metric)},
           {"mode", search_mode_name(r.mode)},
           {"k", r.k},
           {"threads", r.threads},
           {"elapsed_ms", r.elapsed_ms},
           {"results", lines}};
    if (r.centered) j["centered"] = true;
    return j;
  }
  const NeighborsAnswer& a = r.answers.at(0);
  json j{{"query", a.query},
         {"model", h.model().path},
         {"metric", metric_name(r.metric)},
         {"k", r.k},
         {"threads", r.threads}};
  if (!a.resolved.is_null()) j["resolved"] = a.resolved;
  j["mode"] = search_mode_name(r.mode);
  j["elapsed_ms"] = r.elapsed_ms;
  if (r.csls_k) j["csls_k"] = r.csls_k;
  if (r.centered) j["centered"] = true;
  j["neighbors"] = neighbors_json(h, a.neighbors, r.metric);
  return j;
}

}  // namespace embedscope::api
