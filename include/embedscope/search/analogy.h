// Analogies and word relations with gensim's semantics (KeyedVectors.most_similar,
// most_similar_cosmul, doesnt_match, similarity, rank), over a Searcher.
//
// Every input is a Term: the rows that make up one word (one row for a word-level model or a
// single token; several for a word split into pieces, whose vector is their mean) with a
// weight. As in gensim, term vectors are unit-normalised before they are combined, scores are
// cosines, and the input rows are excluded from the answers.
//
//   3CosAdd  (most_similar):        cos(y, unit(mean_i w_i unit(x_i)))
//   3CosMul  (most_similar_cosmul): prod_pos (1 + cos(y, p)) / 2 / (prod_neg (1 + cos(y, n)) / 2 +
//   1e-6) doesnt_match: the term with the lowest cos to unit(mean of unit terms) rank(a, b): 1 +
//   number of rows y (not a's rows) with cos(a, y) > cos(a, b)
//
//   Term king{{king_id}, 1}, man{{man_id}, -1}, woman{{woman_id}, 1};
//   auto nn = analogy(s, {king, man, woman}, AnalogyMethod::kAdd, {.k = 5});  // queen ...
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "embedscope/search/searcher.h"

namespace embedscope {

struct Term {
  std::vector<TokenId> ids;  // rows averaged into the term's vector (at least one)
  float weight = 1.0f;       // > 0 positive, < 0 negative
};

// One parsed term of an expression like "king - man + 0.5*woman" or "#12 + 2 * queen".
struct ExpressionTerm {
  std::string word;  // the word as written ("#12" for a row id)
  float weight;
};
// Grammar: [sign] [number '*'] word { ('+'|'-') [number '*'] word }; words are runs of
// characters other than whitespace, '+', '*' (a '-' inside a word is kept: "t-shirt").
// Error(kInvalidArgument) naming the byte offset for an empty or malformed expression.
std::vector<ExpressionTerm> parse_expression(std::string_view expr);

// The query vector of 3CosAdd: sum_i w_i * unit(mean of term i's rows) / n_terms (gensim's
// mean of weighted unit vectors, not normalised: cosine search ignores its length).
// Error(kInvalidArgument) when terms is empty or a term has no rows; kOutOfRange for bad ids.
std::vector<float> compose_terms(const Searcher& s, std::span<const Term> terms);

enum class AnalogyMethod { kAdd, kMul };
std::string_view analogy_method_name(AnalogyMethod m);   // "3cosadd", "3cosmul"
AnalogyMethod parse_analogy_method(std::string_view s);  // also "add", "mul"

// Top-k rows by 3CosAdd / 3CosMul. Positive terms have weight > 0, negative < 0 (3CosMul uses
// only the sign). Every term's rows and options.exclude are excluded; options.allow and
// options.mode apply (kMul always scores exactly).
std::vector<Neighbor> analogy(const Searcher& s, std::span<const Term> terms, AnalogyMethod m,
                              const SearchOptions& options);

// Cosine similarity of two terms (their mean rows).
float term_similarity(const Searcher& s, const Term& a, const Term& b);

// gensim rank: 1 + the number of rows closer to a than b is (a's own rows not counted).
size_t term_rank(const Searcher& s, const Term& a, const Term& b);

struct DoesntMatch {
  size_t index;               // index into the terms of the odd one out
  std::vector<float> scores;  // cos of each term to the mean direction
};
// Error(kInvalidArgument) for fewer than 2 terms.
DoesntMatch doesnt_match(const Searcher& s, std::span<const Term> terms);

}  // namespace embedscope
