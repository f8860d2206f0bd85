// api::explore: a word's labelled neighbours against a random baseline (analysis/explore.h),
// on a ModelHandle, with its JSON document (the CLI's `explore --json`, the server's
// POST /v1/explore, Python's explore()).
//
// Tokenizer: the handle's. A one-shot caller (the CLI) may pass lazy_tokenizer: when the
// tokenizer is not loaded yet and the vocabulary holds the word as one token (" word", "Ġword",
// "▁word" or "word"), the explorer runs without it, which saves GPT-2's ~100 ms of merges; the
// rows and neighbours found are the same.
//
// Thread-safety: safe from many threads; explorers are built once per (all_tokens, init,
// tokenizer) and shared, and run one query at a time.
//
//   auto h = ModelHandle::open("");
//   ExploreResult r = api::explore(*h, {.word = "computer", .k = 10});
//   std::string doc = api::dump_json(api::to_json(*h, r));
#pragma once

#include <string>

#include "embedscope/analysis/explore.h"
#include "embedscope/api/common.h"

namespace embedscope::api {

struct ExploreRequest {
  std::string word;  // the query (ignored when sample > 0)
  size_t k = 10;
  uint64_t seed = 42;       // baseline seed; --sample's word choice
  bool all_tokens = false;  // every row is a candidate, not only whole words
  std::string init;         // baseline init override ("normal:0.02"); "" = the model's
  size_t sample = 0;        // > 0: explore this many frequent words instead of `word`
  bool lazy_tokenizer = false;
};

// Error(kInvalidArgument) for k == 0, an empty word without sample; the Explorer's errors.
ExploreResult explore(const ModelHandle& h, const ExploreRequest& r);
SampleResult explore_sample(const ModelHandle& h, const ExploreRequest& r);

json to_json(const ModelHandle& h, const ExploreResult& r);
json to_json(const ModelHandle& h, const SampleResult& r);
json to_json(const LabelledNeighbor& n);
json to_json(const LabelCounts& c);

}  // namespace embedscope::api
