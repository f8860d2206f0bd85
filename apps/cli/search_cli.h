// Shared flags of the search subcommands (neighbors, analogy, similarity, rank, doesnt-match,
// index): the model among the positionals, the filter flags, an HNSW query. Parsing only; the
// work is in embedscope/api.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "common.h"
#include "embedscope/api/hnsw.h"
#include "embedscope/search/filters.h"

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

// Splits positionals into the model reference and the words: with --model every positional is
// a word; otherwise the first is the model when there are more than n_words of them (or, when
// n_words < 0, when it names an existing path). No model at all -> the default model.
std::string take_model_ref(SearchFlags& f, int n_words);
// The model of the flags (take_model_ref(f, n_words)), with --threads applied.
ModelHandlePtr open_search(SearchFlags& f, int n_words);
// The filter flags as a FilterSpec (--ids parsed).
FilterSpec filter_spec(const SearchFlags& f);
// Error(kInvalidArgument) "WHAT ranks by cosine; drop --metric M" unless --metric is cosine.
void require_cosine(const SearchFlags& f, const std::string& what);

// Loads the index at `index` (checked against the table's content hash) and answers `q` from
// it with the flags' k, centring, include-query and filters (api/hnsw.h); the load time is
// recorded.
api::HnswResult hnsw_query(const ModelHandle& h, const SearchFlags& f, const std::string& index,
                           api::NeighborQuery q, size_t ef, bool check_recall);

}  // namespace embedscope::cli
