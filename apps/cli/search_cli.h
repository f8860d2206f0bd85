// Shared plumbing of the search subcommands (neighbors, analogy, similarity, rank,
// doesnt-match, index): model + word lookup + searcher loading, filter flags, word -> term,
// neighbour list formatting. Parsing and formatting only; the work is in embedscope/search.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "common.h"
#include "embedscope/api/common.h"
#include "embedscope/api/hnsw.h"
#include "embedscope/handle/model_handle.h"
#include "embedscope/handle/word_lookup.h"
#include "embedscope/search/analogy.h"
#include "embedscope/search/filters.h"
#include "embedscope/search/searcher.h"

namespace embedscope::cli {

struct SearchFlags {
  std::vector<std::string> args;  // [FILE] words...
  std::string model;
  size_t threads = 0;  // 0: all cores
  size_t k = 10;
  bool json = false, center = false, include_query = false;
  std::string metric = "cosine", mode = "exact";
  // filters
  std::string ids, words_file, regex, token_class = "any";
  uint64_t min_count = 0;
  size_t top_n = 0;
};

// --model, --threads, --json, --center; with_query adds -k, --metric, --mode,
// --include-query and the filter flags.
void add_search_flags(CLI::App& app, SearchFlags& f, bool with_query);

// A handle and views of its shared parts (the pointers live as long as `handle`).
struct LoadedSearch {
  ModelHandlePtr handle;
  const Model* model = nullptr;
  const WordLookup* words = nullptr;
  std::shared_ptr<api::SharedSearcher> shared;
  const Searcher* searcher = nullptr;  // one thread at a time: the CLI is single-threaded
  double load_ms = 0;
};

// Splits positionals into the model reference and the words: with --model every positional is
// a word; otherwise the first is the model when there are more than n_words of them (or, when
// n_words < 0, when it names an existing path). No model at all -> the default model.
std::string take_model_ref(SearchFlags& f, int n_words);
LoadedSearch load_search(const std::string& ref, const SearchFlags& f);

// Word (or "#id") -> a term; Error(kNotFound) naming the model when out of vocabulary.
Term resolve_term(const LoadedSearch& ls, const std::string& word, float weight,
                  ResolvedWord* info = nullptr);
// SearchOptions from the flags (filters built into *allow_storage).
// spec_out, when given, receives the filter spec too (for api requests).
SearchOptions search_options(const LoadedSearch& ls, const SearchFlags& f,
                             std::optional<std::vector<uint8_t>>* allow_storage,
                             FilterSpec* spec_out = nullptr);

// Loads the index at `index` (checked against the table's content hash) and answers `q` from
// it with the flags' k, centring and include-query (api/hnsw.h); the load time is recorded.
api::HnswResult hnsw_query(const LoadedSearch& ls, const SearchFlags& f, const FilterSpec& spec,
                           const std::string& index, api::NeighborQuery q, size_t ef,
                           bool check_recall);

json neighbors_json(const LoadedSearch& ls, const std::vector<Neighbor>& nn, Metric metric);
json resolved_json(const ResolvedWord& r);
// "  1  ␣queen              0.8123  #4567" lines.
void print_neighbors(const LoadedSearch& ls, const std::vector<Neighbor>& nn, Metric metric);

}  // namespace embedscope::cli
