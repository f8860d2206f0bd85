#include "embedscope/api/hnsw.h"

#include <chrono>

#include "embedscope/core/error.h"

namespace embedscope::api {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

void restrict_to_indexed_rows(const ModelHandle& h, size_t n_indexed, SearchOptions& so,
                              std::vector<uint8_t>& storage) {
  const Vocabulary& v = h.vocab();
  if (n_indexed >= h.table().n_rows() || !v.has_counts()) return;
  std::optional<std::vector<uint8_t>> trained = trained_rows(v.counts(), h.model().emb.metadata);
  if (!trained) return;
  storage.clear();
  for (size_t i = 0; i < trained->size(); ++i)
    storage.push_back((*trained)[i] && (!so.allow || (i < so.allow->size() && (*so.allow)[i])));
  so.allow = &storage;
}

HnswResult neighbors_hnsw(const ModelHandle& h, const HnswIndex& ix, const HnswRequest& r) {
  if (r.k == 0) throw Error(ErrorCode::kInvalidArgument, "neighbors: k must be at least 1");
  HnswResult res;
  res.request = r;
  res.resolved = resolve_query(h, r.query, r.center);
  std::optional<std::vector<uint8_t>> allow = build_filter(r.filter, h.words());
  SearchOptions so;
  so.k = r.k;
  so.metric = Metric::kCosine;
  so.n_rows_limit = h.words().n_rows();
  if (allow) so.allow = &*allow;
  if (!r.include_query) so.exclude = res.resolved.own;
  auto t0 = std::chrono::steady_clock::now();
  res.neighbors =
      ix.search(res.resolved.vec, {.k = r.k, .ef = r.ef, .exclude = so.exclude, .allow = so.allow});
  res.elapsed_ms = ms_since(t0);
  auto ss = shared_searcher(h, r.center);
  res.threads = ss->unlocked().n_threads();
  res.centered = ss->unlocked().centered();
  if (r.check_recall) {
    std::vector<uint8_t> both;
    restrict_to_indexed_rows(h, ix.n_indexed(), so, both);
    t0 = std::chrono::steady_clock::now();
    std::vector<Neighbor> exact =
        ss->with([&](const Searcher& s) { return s.search(res.resolved.vec, so); });
    res.exact_ms = ms_since(t0);
    size_t hit = 0;
    for (const Neighbor& e : exact) {
      bool found = false;
      for (const Neighbor& a : res.neighbors) found = found || a.id == e.id;
      if (found)
        ++hit;
      else
        res.missed.push_back(e);
    }
    res.recall = exact.empty() ? 1.0 : double(hit) / double(exact.size());
  }
  return res;
}

HnswResult neighbors_hnsw(const ModelHandle& h, const std::string& index_path,
                          const HnswRequest& r) {
  auto t0 = std::chrono::steady_clock::now();
  HnswIndex ix = HnswIndex::load(index_path, table_content_hash(h.table()));
  const double load_ms = ms_since(t0);
  HnswResult res = neighbors_hnsw(h, ix, r);
  res.index_load_ms = load_ms;
  return res;
}

json to_json(const ModelHandle& h, const HnswResult& r) {
  json j{{"query", r.resolved.query}, {"model", h.model().path},   {"metric", "cosine"},
         {"k", r.request.k},          {"threads", r.threads},      {"mode", "hnsw"},
         {"ef", r.request.ef},        {"elapsed_ms", r.elapsed_ms}};
  if (!r.resolved.resolved.is_null()) j["resolved"] = r.resolved.resolved;
  if (r.index_load_ms) j["index_load_ms"] = *r.index_load_ms;
  if (r.request.check_recall) {
    json missed = json::array();
    for (const Neighbor& e : r.missed)
      missed.push_back(
          {{"id", e.id}, {"token", h.words().display(e.id)}, {"score", finite_or_null(e.score)}});
    j["recall"] = r.recall;
    j["missed"] = std::move(missed);
    j["exact_ms"] = r.exact_ms;
  }
  if (r.centered) j["centered"] = true;
  j["neighbors"] = neighbors_json(h, r.neighbors, Metric::kCosine);
  return j;
}

}  // namespace embedscope::api
