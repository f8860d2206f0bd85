// api text output: how each result reads for a person (the CLI prints these when --json is not
// given). The JSON documents are the to_json overloads beside each operation; these are the
// one text rendering of the same results, so every front end that shows text shows the same.
//
// Each function returns whole lines (ending in '\n'); tokens are escaped with printable()
// (no control bytes, no newlines). Nothing here prints, throws on a well-formed result, or
// touches the model beyond reading it.
//
//   api::ExploreResult r = api::explore(*h, {.word = "computer"});
//   std::fputs(api::to_text(*h, r).c_str(), stdout);
#pragma once

#include <string>
#include <vector>

#include "embedscope/analysis/evaluate.h"
#include "embedscope/analysis/explore.h"
#include "embedscope/analysis/table_stats.h"
#include "embedscope/api/analogy.h"
#include "embedscope/api/compare.h"
#include "embedscope/api/hnsw.h"
#include "embedscope/api/info.h"
#include "embedscope/api/lookup.h"
#include "embedscope/api/neighbors.h"
#include "embedscope/api/projection.h"
#include "embedscope/api/relations.h"

namespace embedscope::api {

// "  1  ␣queen              0.8123  #4567" per neighbour (L2: the distance).
std::string neighbor_lines(const ModelHandle& h, const std::vector<Neighbor>& nn, Metric metric);
// A single query: a heading with metric, mode and time, how the word resolved, the neighbours.
std::string to_text(const ModelHandle& h, const NeighborsResult& r);
// neighbors --index: as above, plus "recall@k vs exact" and the misses with check_recall.
std::string to_text(const ModelHandle& h, const HnswResult& r);
// index query: "neighbors of 'w' (hnsw, ef E, T ms):", the neighbours, the recall line.
std::string index_query_text(const ModelHandle& h, const HnswResult& r);
// A batch: "query: tok(score) tok(score) ..." or "query: error: ..." per answer.
std::string batch_text(const ModelHandle& h, const NeighborsResult& r);
// The batch's stderr line: "batch: N queries in T ms (mode, K threads, json|text)", N answered.
std::string batch_summary(const NeighborsResult& r, bool as_json);
// "a : b :: c : ?   (3CosAdd, T ms)" and the neighbours.
std::string to_text(const ModelHandle& h, const AnalogyResult& r);
// similarity: the cosine; rank: "rank of 'b' among the neighbours of 'a': R (cosine C)".
// (The handle only mirrors to_json's signature, so one print(r, handle) serves both.)
std::string to_text(const ModelHandle& h, const PairResult& r);
std::string to_text(const ModelHandle& h, const DoesntMatchResult& r);  // the odd word

// The labelled table, the baseline and the verdict.
std::string to_text(const ModelHandle& h, const ExploreResult& r);
std::string to_text(const ModelHandle& h, const SampleResult& r);

// `info`: one "key  value" line per field of the model and the info.
std::string to_text(const ModelInfo& i);
std::string to_text(const ModelHandle& h, const TableStats& s);
std::string to_text(const ModelHandle& h, const embedscope::AnalogyResult& r);  // eval analogy
std::string to_text(const ModelHandle& h, const PairsResult& r);                // eval similarity
std::string to_text(const CompareReport& r);
// out: where the coordinates were written.
std::string to_text(const ProjectionResult& r, const std::string& out);
// One line per row: "id <TAB> token <TAB> v0 v1 ..." (%.9g, float32 round-trips).
std::string to_text(const ModelHandle& h, const LookupResult& r);

}  // namespace embedscope::api
