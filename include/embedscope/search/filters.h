// Restricting neighbour lists: which rows a search may return.
//
// A FilterSpec combines (all must hold) an id list, a word-list file, a regex over the readable
// token, a minimum count, a token class and "the N most frequent rows". build_filter turns it
// into the allow-mask SearchOptions::allow takes.
//
// Token classes (over the token's raw bytes):
//   kNoSpecial  not a tokenizer special token, valid UTF-8 (no byte / partial tokens), no
//               control characters
//   kAlpha      kNoSpecial and, after one optional leading space, only letters (ASCII letters
//               and non-ASCII code points, which in these vocabularies are letters of other
//               scripts far more often than symbols)
//   kWord       token models: kAlpha with a leading space (a whole word in running text);
//               word models: kAlpha
// Frequency: "N most frequent" uses the vocabulary's counts when present; otherwise row order
// (word2vec/GloVe/fastText files are written most frequent first, BPE ids follow merge order),
// i.e. rows [0, N).
//
//   FilterSpec f{.regex = "^␣[A-Z]", .token_class = TokenClass::kWord};
//   auto allow = build_filter(f, words);            // std::nullopt when f is empty
//   searcher.search(q, {.allow = allow ? &*allow : nullptr});
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "embedscope/handle/word_lookup.h"

namespace embedscope {

enum class TokenClass { kAny, kWord, kAlpha, kNoSpecial };
// "any", "word", "alpha", "nospecial"; Error(kInvalidArgument) listing them otherwise.
TokenClass parse_token_class(std::string_view s);
bool token_in_class(const WordLookup& words, TokenId id, TokenClass c);

struct FilterSpec {
  std::vector<TokenId> ids;  // only these rows
  std::string words_file;    // only the rows of these words (one per line, via resolve())
  std::string regex;         // ECMAScript regex searched in display(id)
  uint64_t min_count = 0;    // count >= min_count (needs counts)
  TokenClass token_class = TokenClass::kAny;
  size_t top_n = 0;  // only the N most frequent rows
  bool empty() const {
    return ids.empty() && words_file.empty() && regex.empty() && min_count == 0 &&
           token_class == TokenClass::kAny && top_n == 0;
  }
};

// Mask of words.n_rows() entries, or std::nullopt when spec.empty(). Throws
// Error(kOutOfRange) for an id beyond the rows, Error(kNotFound / kIo) for an unreadable words
// file (naming it), Error(kInvalidArgument) for a bad regex (naming it and the reason) or a
// min_count on a model without counts, Error(kNotFound) when no line of the words file is in
// the vocabulary.
std::optional<std::vector<uint8_t>> build_filter(const FilterSpec& spec, const WordLookup& words);

// Rows a word2vec trainer actually trained, from per-row counts: count >= the file's
// "embedscope.train.min_count" metadata (our trainer records it; rarer words are counted but
// keep their random initial vector), or count > 0 when that key is absent. std::nullopt when
// there are no counts. Error(kCorrupt) when the metadata value is not a number.
std::optional<std::vector<uint8_t>> trained_rows(
    const std::vector<uint64_t>& counts, const std::map<std::string, std::string>& metadata);

}  // namespace embedscope
