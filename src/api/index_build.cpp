// api::build_index: `embedscope index build` as one call (api/hnsw.h).
#include <chrono>
#include <cstdio>

#include "embedscope/api/hnsw.h"
#include "embedscope/search/filters.h"

namespace embedscope::api {

IndexBuildResult build_index(const Model& m, const IndexBuildRequest& r) {
  IndexBuildResult out{.request = r, .model = m.path, .dim = m.emb.table.dim()};
  out.rows = m.n_search_rows ? m.n_search_rows : m.emb.table.n_rows();
  std::optional<std::vector<uint8_t>> seen;
  if (!r.all_rows) seen = trained_rows(m.emb.vocab.counts(), m.emb.metadata);
  out.trained_only = seen.has_value();
  const auto t0 = std::chrono::steady_clock::now();
  HnswIndex ix = HnswIndex::build(m.emb.table, {.M = r.M,
                                                .ef_construction = r.ef_construction,
                                                .n_threads = r.n_threads,
                                                .n_rows = out.rows,
                                                .allow = seen ? &*seen : nullptr});
  out.build_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  out.indexed_rows = ix.n_indexed();
  out.model_hash = table_content_hash(m.emb.table);
  ix.save(r.out, out.model_hash);
  return out;
}

json to_json(const IndexBuildResult& r) {
  return {{"index", r.request.out},
          {"model", r.model},
          {"rows", r.rows},
          {"indexed_rows", r.indexed_rows},
          {"rows_selected", r.trained_only ? "trained (count >= min_count)" : "all"},
          {"dim", r.dim},
          {"M", r.request.M},
          {"ef_construction", r.request.ef_construction},
          {"model_hash", hash_hex(r.model_hash)},
          {"build_ms", r.build_ms}};
}

std::string to_text(const IndexBuildResult& r) {
  char b[1024];
  std::snprintf(b, sizeof b,
                "wrote %s: %zu of %zu rows%s, M %zu, ef_construction %zu, built in "
                "%.0f ms\n",
                r.request.out.c_str(), r.indexed_rows, r.rows, r.trained_only ? " (trained)" : "",
                r.request.M, r.request.ef_construction, r.build_ms);
  return b;
}

}  // namespace embedscope::api
