// api::neighbors_hnsw: one neighbour query answered from an HNSW index (search/hnsw_index.h)
// instead of the exact scan, optionally checked against the exact answer (recall@k and the rows
// it missed), with its JSON document: the one `embedscope neighbors --index` and `embedscope
// index query` print, and the server's POST /v1/neighbors with mode "hnsw":
//   {query, model, metric: "cosine", k, threads, resolved?, mode: "hnsw", ef, elapsed_ms,
//    index_load_ms?, recall?, missed?: [{id, token, score}], exact_ms?, centered?, neighbors}
//
// The recall check compares like with like: an index holding only the trained rows (index
// build's default for tables with counts) is compared with an exact search over those rows.
//
// Errors (thrown): what resolve_query throws for the query; Error(kInvalidArgument) for a
// request that is not one cosine query, or k == 0.
//
// Thread-safety: one call at a time per index (hnswlib's search width is index state); the
// handle may serve other calls meanwhile.
//
//   HnswIndex ix = HnswIndex::load("v.hnsw", table_content_hash(h->table()));
//   api::HnswResult r = api::neighbors_hnsw(*h, ix, {.query = api::NeighborQuery::word("king")});
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "embedscope/api/neighbors.h"
#include "embedscope/search/hnsw_index.h"

namespace embedscope::api {

struct HnswRequest {
  NeighborQuery query;
  size_t k = 10;
  size_t ef = 64;
  bool include_query = false;
  bool center = false;
  FilterSpec filter;
  bool check_recall = false;
};

struct HnswResult {
  HnswRequest request;
  ResolvedQuery resolved;
  std::vector<Neighbor> neighbors;
  double elapsed_ms = 0;
  std::optional<double> index_load_ms;  // set by a caller that loaded the index for this query
  // With check_recall:
  double recall = 1, exact_ms = 0;
  std::vector<Neighbor> missed;  // exact neighbours the index did not return
  size_t threads = 0;
  bool centered = false;
};

HnswResult neighbors_hnsw(const ModelHandle& h, const HnswIndex& ix, const HnswRequest& r);
// The same on the index file `index_path`, loaded for this query (HnswIndex::load, refused when
// its content hash is not h's table's); index_load_ms is set.
HnswResult neighbors_hnsw(const ModelHandle& h, const std::string& index_path,
                          const HnswRequest& r);
json to_json(const ModelHandle& h, const HnswResult& r);

// Exact search restricted to the rows an index holds (when it holds only the trained rows of a
// table with counts) on top of any filter in so.allow; `storage` keeps the mask alive.
// index build: an HNSW index of a model's search rows written atomically to `out` with the
// table's content hash. Rows never trained (count below the trainer's min_count) keep their
// random initial vectors, noise that only costs graph quality, so a table with counts indexes
// only its trained rows unless all_rows. Errors: HnswIndex::build's and save's.
struct IndexBuildRequest {
  std::string out;
  size_t M = 16, ef_construction = 200;
  size_t n_threads = 0;  // 0: process_threads()
  bool all_rows = false;
};
struct IndexBuildResult {
  IndexBuildRequest request;
  std::string model;  // the model's path
  size_t rows = 0, indexed_rows = 0, dim = 0;
  bool trained_only = false;
  uint64_t model_hash = 0;
  double build_ms = 0;
};
IndexBuildResult build_index(const Model& m, const IndexBuildRequest& r);
// {index, model, rows, indexed_rows, rows_selected, dim, M, ef_construction, model_hash,
//  build_ms} (the CLI adds total_ms)
json to_json(const IndexBuildResult& r);
// "wrote OUT: N of R rows (trained), M m, ef_construction E, built in T ms"
std::string to_text(const IndexBuildResult& r);

void restrict_to_indexed_rows(const ModelHandle& h, size_t n_indexed, SearchOptions& so,
                              std::vector<uint8_t>& storage);

}  // namespace embedscope::api
