// Intrinsic evaluation with gensim's semantics (gensim 4.2 KeyedVectors
// evaluate_word_analogies / evaluate_word_pairs), so numbers are comparable with published
// gensim runs.
//
// Analogies (questions-words format: ": section" lines, then "a b c expected"):
//  - only the first `restrict_vocab` rows are candidates and valid words;
//  - case-insensitive (default): words are upper-cased (full Unicode, as Python's str.upper():
//    café -> CAFÉ, straße -> STRASSE) and a word maps to the first
//    (most frequent) row that upper-cases to it;
//  - a line that does not split into exactly 4 words is skipped; a question with a word outside
//    the restricted vocabulary counts as OOV (incorrect instead when dummy4unknown);
//  - the answer is 3CosAdd over unit vectors (b + c - a), top 5 with the question's rows
//    excluded; the prediction is the first of those that is not a, b or c up to case;
//  - per-section correct / incorrect, then "Total accuracy"; score = correct / (correct +
//    incorrect); oov_ratio = 100 * oov / questions.
// Word pairs (TAB-separated "a<TAB>b<TAB>score", '#' comments): cosine of the two rows;
// Pearson and Spearman (average ranks for ties) against the gold scores; oov_ratio = 100 * oov /
// (pairs + oov), or oov / pairs when dummy4unknown (which scores OOV pairs as 0).
//
// Token models (a tokenizer is given): every word is encoded as its default variant (" word");
// a word of several tokens is composed (mean of its rows for similarity, a multi-row Term for
// analogies) and counted in n_composed, never dropped. Words are then never OOV.
//
// Errors: Error(kNotFound / kIo) for an unreadable file; Error(kCorrupt) for an analogy line
// before the first section (gensim raises too), naming the file and line; Error(kInvalidArgument)
// when no pair is in the vocabulary (gensim's ValueError).
//
//   AnalogyResult a = evaluate_analogies(model.emb, nullptr, "questions-words.txt", {});
//   a.score;  a.sections[0].name;  // "capital-common-countries"
#pragma once

#include <array>
#include <string>
#include <vector>

#include "embedscope/formats/embeddings_file.h"

namespace embedscope {

class Tokenizer;

struct EvalOptions {
  size_t restrict_vocab = 300000;
  bool case_insensitive = true;
  bool dummy4unknown = false;
  size_t n_threads = 0;  // 0: process_threads()
};

struct AnalogySection {
  std::string name;
  size_t correct = 0, incorrect = 0;
  // The questions themselves (a, b, c, expected; upper-cased when case_insensitive), as gensim
  // lists them; "Total accuracy" holds every section's, in order.
  std::vector<std::array<std::string, 4>> correct_questions, incorrect_questions;
};

struct AnalogyResult {
  std::vector<AnalogySection> sections;  // the file's sections, then "Total accuracy"
  double score = 0;                      // total correct / (correct + incorrect)
  size_t n_questions = 0, n_oov = 0, n_composed = 0;
  double oov_ratio = 0;  // percent
};

struct PairsResult {
  double pearson = 0, spearman = 0;
  double oov_ratio = 0;  // percent
  size_t n_pairs = 0, n_oov = 0, n_composed = 0;
};

AnalogyResult evaluate_analogies(const LoadedEmbeddings& emb, const Tokenizer* tokenizer,
                                 const std::string& path, const EvalOptions& options);
PairsResult evaluate_word_pairs(const LoadedEmbeddings& emb, const Tokenizer* tokenizer,
                                const std::string& path, const EvalOptions& options);

// Correlations (exposed for tests): Pearson r; Spearman rho with average ranks for ties.
double pearson_r(const std::vector<double>& x, const std::vector<double>& y);
double spearman_rho(const std::vector<double>& x, const std::vector<double>& y);

// Python's str.upper() on UTF-8 text (full case mapping, ß -> SS); invalid bytes kept as they are.
std::string unicode_upper(std::string_view s);

}  // namespace embedscope
