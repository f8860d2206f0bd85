// Searcher: exact and fast top-k nearest-neighbour search over an EmbeddingTable.
//
// A Searcher wraps one table and answers top-k queries by cosine (default), dot product or L2
// (score -|q - r|, so every metric sorts descending). Scoring runs the Highway kernels of
// src/simd fused with a per-thread top-k heap over blocks of rows; the per-thread heaps are
// merged with ties broken by smaller id, so results never depend on the thread count.
//
// Modes (SearchMode):
//   kExact  float32 arithmetic over the stored dtype (F32, F16 or BF16 widened on the fly).
//   kFast   int8 scan of every row (a copy with one scale per row, built on first use), then
//           exact float32 re-ranking of the best max(k * rerank_factor, kMinFastCandidates)
//           candidates. Returned scores are always exact; only membership can differ from
//           kExact, and tests/search check it does not on trained embeddings.
// Batches (search_batch) of two or more queries go through OpenBLAS sgemm over blocks of rows,
// keeping the top k per query; a batch of one is search(). Options: mean-centering (an
// anisotropy correction: rows and queries have the mean row subtracted) and CSLS re-ranking
// (2 cos(q, y) - r(q) - r(y), r = mean cosine to the csls_k nearest rows; applied to the best
// cosine candidates).
//
// Queries live in "search space": when centering, subtract mean() from raw vectors first
// (to_search_space does it); row() returns rows already in search space.
//
// Thread-safety: every const member may be called from many threads at once. A query runs on
// the process pool (core/thread_pool.h) cut into n_threads tasks; concurrent queries share
// the pool's threads, and each caller runs its own query's unclaimed tasks. The table is
// shared, never copied (unless centering, which owns a float32 centered copy).
//
// Exact single queries (kExact) on a large table switch after a few queries to a bounded int8
// scan (ExactScan) that returns the identical answer while reading a quarter of the bytes.
//
//   Searcher s(table, {.n_threads = 2});
//   std::vector<Neighbor> nn = s.search(s.row(42), {.k = 10, .exclude = {42}});
//   auto batch = s.search_batch(queries, n_queries, {.k = 10});   // sgemm or int8 + bound
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "embedscope/core/embedding_table.h"
#include "embedscope/search/knn.h"

namespace embedscope {

enum class SearchMode { kExact, kFast };

std::string_view search_mode_name(SearchMode m);  // "exact", "fast"
std::string_view metric_name(Metric m);           // "cosine", "dot", "l2"
// Parse flag values; Error(kInvalidArgument) listing the accepted names.
SearchMode parse_search_mode(std::string_view s);
Metric parse_metric(std::string_view s);

// How kExact answers (search(), search_batch()); the answer is the same whichever is used.
//   kFloat    scan every float row (batches: sgemm).
//   kBounded  scan the int8 copy (built on first use, as for kFast) with a per-row error bound,
//             then rescore in float32 every row whose upper bound reaches the k-th best lower
//             bound: ids, scores, order and ties identical to kFloat, about 4x less memory
//             read. Falls back to kFloat for a zero query or rows too large for the bounds.
//             Batches: the same with 8-bit queries through an AVX-512 VNNI u8 x i8 kernel
//             (batch_prefilter_available(); else sgemm); each query's answer is then search()'s,
//             bit for bit (sgemm's scores can differ from search()'s in the last bits).
//   kAuto     kFloat for the first kPrefilterAfterQueries queries (and on tables under
//             kPrefilterMinRows rows), kBounded after, and at once for a batch of
//             kPrefilterMinBatch queries: one-shot queries do not pay for the copy.
enum class ExactScan { kAuto, kFloat, kBounded };
inline constexpr size_t kPrefilterMinRows = 4096;
inline constexpr size_t kPrefilterAfterQueries = 8;
inline constexpr size_t kPrefilterMinBatch = 256;  // kAuto: a batch this large switches at once

struct SearcherOptions {
  // Tasks a query is cut into on process_pool(); 1 = the calling thread alone, 0 = the pool's
  // size. Answers do not depend on it.
  size_t n_threads = 1;
  bool center = false;  // subtract the mean row from rows and queries
  ExactScan exact_scan = ExactScan::kAuto;
};

struct SearchOptions {
  size_t k = 10;
  Metric metric = Metric::kCosine;
  SearchMode mode = SearchMode::kExact;
  std::vector<TokenId> exclude;                 // ids never returned
  const std::vector<uint8_t>* allow = nullptr;  // if set: row i eligible iff (*allow)[i] != 0
  size_t n_rows_limit = 0;                      // if > 0: only rows [0, n_rows_limit)
  size_t rerank_factor = 10;                    // kFast: candidates = k * rerank_factor ...
  size_t csls_k = 0;                            // > 0: CSLS re-ranking (cosine only)
};

// kFast re-ranks at least this many candidates whatever k is.
inline constexpr size_t kMinFastCandidates = 100;

class Searcher {
 public:
  // Throws Error(kInvalidArgument) for an
  // empty table.
  explicit Searcher(EmbeddingTable table, const SearcherOptions& options = {});
  ~Searcher();
  Searcher(Searcher&&) noexcept;
  Searcher& operator=(Searcher&&) noexcept;

  // The table searched (the centered float32 copy when centering).
  const EmbeddingTable& table() const;
  size_t n_rows() const;
  size_t dim() const;
  size_t n_threads() const;
  bool centered() const;
  // Mean row of the original table (all zeros unless centering).
  const std::vector<float>& mean() const;

  // Row `id` in search space. Error(kOutOfRange) when id is not a row.
  std::vector<float> row(TokenId id) const;
  // Subtracts mean() when centering; Error(kInvalidArgument) when v.size() != dim().
  std::vector<float> to_search_space(std::span<const float> v) const;

  // Top-k for one query (dim floats, search space). Returns min(k, eligible rows) neighbours,
  // sorted by score descending, ties by smaller id; rows whose score is not finite (zero-norm
  // rows under cosine, NaN rows) are never returned. Error(kInvalidArgument) for k == 0, a
  // wrong query size, CSLS with a metric other than cosine.
  std::vector<Neighbor> search(std::span<const float> query, const SearchOptions& options) const;

  // n_queries queries, row-major (n_queries x dim). kExact runs sgemm over blocks of rows, or
  // the bounded int8 batch (ExactScan); kFast, CSLS and a batch of one query answer each query
  // with search(). exclude_per_query,
  // when given, has n_queries entries added to options.exclude for that query.
  std::vector<std::vector<Neighbor>> search_batch(
      std::span<const float> queries, size_t n_queries, const SearchOptions& options,
      const std::vector<std::vector<TokenId>>* exclude_per_query = nullptr) const;

  // Exact score of one row for a query under a metric (same arithmetic as search()).
  float score(std::span<const float> query, TokenId id, Metric metric) const;

  // Scores of every row for one query (n_rows() floats; NaN where the metric is undefined,
  // e.g. a zero-norm row under cosine). Used by 3CosMul and rank, which need all scores.
  std::vector<float> score_all(std::span<const float> query, Metric metric) const;

  // Builds the int8 copy now (otherwise the first kFast query does). Idempotent.
  void prepare_fast() const;

  // A Searcher over the same data (table, norms, centering, int8 copy: shared, not copied)
  // whose queries are cut into n_threads tasks (0 = the process pool's size). Cheap: no
  // threads of its own. All give the same answers.
  Searcher lane(size_t n_threads) const;

  // kBounded queries answered so far by this searcher and its lanes, and the rows they
  // rescored in float32 in all (the price of exactness; a few dozen per query is typical).
  struct PrefilterStats {
    uint64_t queries = 0;
    uint64_t candidates = 0;
  };
  PrefilterStats prefilter_stats() const;
  // Whether search_batch's kExact can use the int8 copy on this CPU (it needs AVX-512 VNNI;
  // otherwise batches always run sgemm).
  static bool batch_prefilter_available();

 private:
  struct Impl;
  Searcher(std::shared_ptr<Impl> impl, size_t n_threads);
  std::vector<Neighbor> exact(std::span<const float> query, const SearchOptions& options, size_t k,
                              const std::vector<TokenId>& exclude) const;
  // Whether the next n_queries exact queries go through the int8 copy (ExactScan).
  bool use_bounded(size_t n_queries) const;
  std::shared_ptr<Impl> impl_;  // immutable after construction but for its once-built caches
  size_t n_tasks_ = 1;
};

}  // namespace embedscope
