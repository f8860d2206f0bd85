// api::neighbors: top-k nearest rows for one query or a batch (a word, "#id", a row id, a
// vector, or an expression "king - man + woman"), on a ModelHandle, with its JSON document
// (the CLI's `neighbors --json` and `--batch --json` lines, the server's POST /v1/neighbors).
//
// Word queries resolve through the handle's WordLookup (handle/word_lookup.h); a word of several
// tokens queries the mean of their rows. The query's own rows and their variants are left out
// unless include_query. Batches of two or more queries run as one sgemm (Searcher::search_batch);
// one query runs the fused scan. A query that fails to resolve (a word out of vocabulary, an id
// out of range) is reported in its answer's `error` and does not fail the batch.
//
// Errors (thrown): Error(kInvalidArgument) for no queries, k == 0, a bad metric / mode / filter,
// a vector of the wrong size or with non-finite values.
//
// Thread-safety: safe from many threads (the handle's shared searcher runs one call at a time).
//
//   auto h = ModelHandle::open("");
//   NeighborsResult r = api::neighbors(*h, {.queries = {NeighborQuery::word("computer")}, .k = 5});
//   r.answers[0].neighbors[0].id;
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "embedscope/api/common.h"
#include "embedscope/search/filters.h"
#include "embedscope/search/knn.h"
#include "embedscope/search/searcher.h"

namespace embedscope::api {

struct NeighborQuery {
  enum class Kind { kWord, kId, kVector, kExpr };
  Kind kind = Kind::kWord;
  std::string text;           // kWord: the word ("#12" = row 12); kExpr: the expression
  int64_t id = -1;            // kId
  std::vector<float> vector;  // kVector: dim values (raw space; centred when center)
  std::string label;          // kVector: what to call it in the document ("" = "vector")

  static NeighborQuery word(std::string w) { return {Kind::kWord, std::move(w), -1, {}, {}}; }
  static NeighborQuery row(int64_t id) { return {Kind::kId, {}, id, {}, {}}; }
  static NeighborQuery vec(std::vector<float> v, std::string label = "") {
    return {Kind::kVector, {}, -1, std::move(v), std::move(label)};
  }
  static NeighborQuery expr(std::string e) { return {Kind::kExpr, std::move(e), -1, {}, {}}; }
};

struct NeighborsRequest {
  std::vector<NeighborQuery> queries;
  size_t k = 10;
  std::string metric = "cosine";  // cosine, dot, l2
  std::string mode = "exact";     // exact, fast
  bool include_query = false;
  bool center = false;  // subtract the mean row (anisotropy correction)
  size_t csls_k = 0;    // > 0: CSLS re-ranking (single queries, cosine)
  FilterSpec filter;
  bool force_batch = false;  // answer one query through the batch path too
  // Answers a batch in place of Searcher::search_batch (same arguments, same result): how the
  // MPI front end spreads the rows over processes (dist/mpi_job.h). Empty: the searcher's own.
  std::function<std::vector<std::vector<Neighbor>>(
      const Searcher&, std::span<const float> queries, size_t n_queries, const SearchOptions&,
      const std::vector<std::vector<TokenId>>* exclude_per_query)>
      batch_search;
};

struct NeighborsAnswer {
  json query;     // as given: the word, id, expression, or vector label
  json resolved;  // null, or {how, ids, pieces} (words), or a list (expressions)
  std::vector<Neighbor> neighbors;
  std::string error;  // non-empty: this query failed (neighbors empty)
};

struct NeighborsResult {
  std::vector<NeighborsAnswer> answers;
  Metric metric = Metric::kCosine;
  SearchMode mode = SearchMode::kExact;
  size_t k = 0, threads = 0, csls_k = 0;
  bool centered = false, batch = false;
  double elapsed_ms = 0;  // the search itself (not the resolution)
};

NeighborsResult neighbors(const ModelHandle& h, const NeighborsRequest& r);

// One query resolved without searching: its vector in search space, its own rows (what
// neighbors() leaves out unless include_query), and its `query` / `resolved` JSON. Throws what
// a single-query neighbors() throws (Error kNotFound for a word out of vocabulary, kOutOfRange
// for an id, kInvalidArgument for a bad vector or expression).
struct ResolvedQuery {
  std::vector<float> vec;
  std::vector<TokenId> own;
  json query, resolved;
};
ResolvedQuery resolve_query(const ModelHandle& h, const NeighborQuery& q, bool center = false);

// {id, token, score} (+ distance for L2: score = -distance).
json neighbors_json(const ModelHandle& h, const std::vector<Neighbor>& nn, Metric metric);
// Single query: {query, model, metric, k, threads, resolved?, mode, elapsed_ms, csls_k?,
// centered?, neighbors}. Batch: {model, metric, mode, k, threads, elapsed_ms, results: [one
// batch line per query]}.
json to_json(const ModelHandle& h, const NeighborsResult& r);
// One answer as a `neighbors --batch --json` line: {query, mode, metric, resolved, neighbors}
// or {query, mode, metric, error}.
json batch_line_json(const ModelHandle& h, const NeighborsResult& r, const NeighborsAnswer& a);
json resolved_json(const ResolvedWord& w);

// Query files (src/api/query_files.cpp):
// A vector of `dim` numbers from a text file ("-" = stdin), separated by spaces, commas or
// brackets ("[1, 2, 3]"). Error(kNotFound) for a file that cannot be opened,
// Error(kInvalidArgument) naming the value that is not a finite number or the count found.
std::vector<float> read_query_vector(const std::string& path, size_t dim);
// One word (or "#id") query per line; blank lines skipped, a trailing CR dropped.
// Error(kNotFound) for a file that cannot be opened, Error(kInvalidArgument) when it holds none.
std::vector<NeighborQuery> read_batch_queries(const std::string& path);

}  // namespace embedscope::api
