// Exact k-nearest-neighbour search over an EmbeddingTable: the scalar reference.
//
// knn_reference() is the slow twin every fast path (SIMD, int8, BLAS, HNSW) is tested against:
// plain float64 accumulation over all rows, one query at a time. Results are sorted by score
// descending, ties broken by smaller id, so they never depend on thread count.
//
// Cosine: score = <q, r> / (|q| |r|); rows with zero norm or a non-finite score are skipped
// (they are never returned, so results never contain NaN). Dot: <q, r>. L2: score = -|q - r|
// (larger is nearer, so every metric sorts descending); reported distances are -score.
//
//   std::vector<Neighbor> nn = knn_reference(table, query, {.k = 10});
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "embedscope/core/embedding_table.h"

namespace embedscope {

enum class Metric { kCosine, kDot, kL2 };

struct Neighbor {
  TokenId id;
  float score;
  bool operator==(const Neighbor&) const = default;
};

struct KnnOptions {
  size_t k = 10;
  Metric metric = Metric::kCosine;
  std::vector<TokenId> exclude;                 // ids never returned (e.g. the query's own rows)
  const std::vector<uint8_t>* allow = nullptr;  // if set: row i eligible iff (*allow)[i] != 0
  size_t n_rows_limit = 0;                      // if > 0: only rows [0, n_rows_limit) are searched
};

// query.size() must equal table.dim() (Error(kInvalidArgument) otherwise); k == 0 is
// Error(kInvalidArgument). Returns min(k, eligible rows) neighbours.
std::vector<Neighbor> knn_reference(const EmbeddingTable& table, std::span<const float> query,
                                    const KnnOptions& options);

// True when a sorts before b: higher score first, then smaller id.
inline bool neighbor_before(const Neighbor& a, const Neighbor& b) {
  return a.score > b.score || (a.score == b.score && a.id < b.id);
}

}  // namespace embedscope
