// api::similarity / rank / doesnt_match: relations between words with gensim's semantics
// (search/analogy.h) on a ModelHandle, with their JSON documents, the ones `embedscope
// similarity|rank|doesnt-match --json` print:
//   similarity   {a, b, inputs, model, similarity}
//   rank         {a, b, inputs, model, similarity, rank}
//   doesnt_match {words, odd_one_out, scores: [{word, score}], inputs, model}
// `inputs` lists how each word resolved ({word, how, ids, pieces}); a word split into several
// tokens uses the mean of its rows. rank's similarity and rank come from the same float32 scan
// (term_similarity and term_rank agree on every comparison).
//
// Errors (thrown): Error(kNotFound) for a word not in the vocabulary (the message names it),
// Error(kInvalidArgument) for doesnt_match with fewer than two words.
//
// Thread-safety: safe from many threads (the handle's shared searcher runs one call at a time).
//
//   auto h = ModelHandle::open("");
//   api::PairResult r = api::word_pair(*h, {.a = "king", .b = "queen", .rank = true});
#pragma once

#include <string>
#include <vector>

#include "embedscope/api/common.h"

namespace embedscope::api {

struct PairRequest {
  std::string a, b;
  bool rank = false;  // also compute gensim's rank of b among a's neighbours
  bool center = false;
};

struct PairResult {
  PairRequest request;
  json inputs;  // how a and b resolved
  float similarity = 0;
  size_t rank = 0;  // with request.rank
};

PairResult word_pair(const ModelHandle& h, const PairRequest& r);
json to_json(const ModelHandle& h, const PairResult& r);

struct DoesntMatchRequest {
  std::vector<std::string> words;
  bool center = false;
};

struct DoesntMatchResult {
  DoesntMatchRequest request;
  json inputs;
  size_t odd = 0;             // index of the odd one out in request.words
  std::vector<float> scores;  // each word's cosine to the mean direction
};

DoesntMatchResult doesnt_match(const ModelHandle& h, const DoesntMatchRequest& r);
json to_json(const ModelHandle& h, const DoesntMatchResult& r);

}  // namespace embedscope::api
