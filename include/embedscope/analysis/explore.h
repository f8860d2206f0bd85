// explore: a word's nearest neighbours, labelled (variant / synonym / related / noise) with
// evidence, next to the same query on a random matrix of the same shape, with a verdict.
//
// Query rows. With a tokenizer, the word's variants come from word_variants() ("computer",
// " computer", "Computer", " Computer"); without one, the same four spellings (plus "Ġ" / "▁"
// forms when the vocabulary uses those markers) are looked up in the vocabulary. The query
// vector is the default variant's row (the space-prefixed single token when there is one);
// when no variant is a single token it is the mean of the rows of the default variant's
// tokens (composed, reported in ExploreResult::composed). "#N" queries row N itself, labelled
// as the word its token spells (Error(kOutOfRange) beyond the table's rows).
//
// Candidates. Rows [0, Model::n_search_rows) that are whole words: letters only (plus inner
// ' - . _), not special, and, in a vocabulary that marks word starts (GPT-2 " x" / "Ġx",
// SentencePiece "▁x"), carrying the mark. The query's own rows (the ones averaged into the
// query vector) are excluded; other variants (" Computer") stay and are labelled variant.
// ExploreOptions::all_tokens lifts the whole-word restriction.
//
// Baseline. The same candidates and labeller on a random matrix drawn from the model's init
// distribution (baseline.h): its top-k tokens, labels and cosines, plus the analytic expected
// top-k cosine for random vectors of that dimension over the same number of candidates.
//
// Errors: Error(kNotFound) when no spelling of the word is in the vocabulary and no tokenizer
// can split it; Error(kInvalidArgument) for k == 0 or a table without a vocabulary.
//
//   WordNet wn = WordNet::open();
//   Labeller lab(wn);
//   Explorer ex(model, tokenizer_or_null, lab, {.k = 10});
//   ExploreResult r = ex.explore("computer");
//   r.neighbors[0].label.label;  r.verdict;
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "embedscope/analysis/baseline.h"
#include "embedscope/analysis/labeller.h"
#include "embedscope/formats/model.h"

namespace embedscope {

class Tokenizer;
class Searcher;

struct ExploreOptions {
  size_t k = 10;
  uint64_t seed = 42;       // baseline seed (row streams use seed mixed with the query's
                            // first row id) and --sample's word choice
  bool all_tokens = false;  // candidates: every row, not only whole words
  std::string init{};       // baseline init override ("normal:0.02"); "" = Model::init_hint
  size_t n_threads = 1;
};

struct LabelledNeighbor {
  TokenId id = 0;
  std::string token;    // raw bytes
  std::string display;  // readable (display_token: leading space as "␣")
  float score = 0;      // cosine
  LabelResult label;
};

struct LabelCounts {
  std::array<size_t, 4> by_label{};           // indexed by Label
  std::map<std::string, size_t> noise_kinds;  // noise sub-kind -> count
  size_t total() const { return by_label[0] + by_label[1] + by_label[2] + by_label[3]; }
  size_t operator[](Label l) const { return by_label[size_t(l)]; }
  void add(const LabelResult& r);
  void add(const LabelCounts& o);
};

struct ScoreSummary {  // cosines of the query to every candidate row
  double mean = 0, sd = 0, p50 = 0, p99 = 0, max = 0;
  size_t n = 0;
};

struct QueryRows {
  std::string text;  // the variant's raw text (" computer")
  std::vector<TokenId> ids;
  std::vector<std::string> display;  // readable tokens
};

struct BaselineView {
  std::string init;  // "normal:0.02"
  uint64_t seed = 0;
  std::vector<LabelledNeighbor> neighbors;
  LabelCounts labels;
  std::vector<float> top_scores;            // empirical, descending
  std::vector<double> expected_top_scores;  // analytic (baseline.h)
  ScoreSummary scores;
};

struct ExploreResult {
  std::string query;
  std::vector<QueryRows> rows;  // every variant found
  size_t query_variant = 0;     // index into rows used as the query
  bool composed = false;        // query = mean of several token rows
  std::vector<LabelledNeighbor> neighbors;
  LabelCounts labels;
  ScoreSummary scores;
  size_t n_candidates = 0;
  BaselineView baseline;
  double mean_top = 0, baseline_mean_top = 0;  // mean of the k best cosines
  std::string verdict;
};

struct SampleResult {
  std::vector<std::string> words;
  LabelCounts labels, baseline_labels;
  double mean_top = 0, baseline_mean_top = 0;
  size_t k = 0;
  std::string verdict;
};

class Explorer {
 public:
  // `model`, `tokenizer` (may be null) and `labeller` must outlive the Explorer.
  Explorer(const Model& model, const Tokenizer* tokenizer, const Labeller& labeller,
           ExploreOptions options = {});
  ~Explorer();

  ExploreResult explore(std::string_view word) const;
  // The same with k, the baseline seed and (when `init` is not null) the baseline's init
  // distribution given per call (the options' otherwise): one Explorer serves requests that
  // differ only in these, so a server holds one per model whatever its clients ask.
  ExploreResult explore(std::string_view word, size_t k, uint64_t seed,
                        const InitDistribution* init = nullptr) const;
  // N words drawn (seeded) from the 10 N most frequent whole-word rows that WordNet knows
  // (frequency: the vocabulary's counts, else row order), each explored as its own row.
  SampleResult sample(size_t n_words) const;

  size_t n_candidates() const;
  bool vocab_marks_word_starts() const { return marks_; }

 private:
  std::vector<LabelledNeighbor> top_k(const std::vector<float>& scores,
                                      const std::vector<TokenId>& exclude, const PreparedQuery& q,
                                      ScoreSummary* summary, size_t k) const;
  BaselineView baseline(const std::vector<TokenId>& exclude, const PreparedQuery& q, uint64_t seed,
                        size_t k, const InitDistribution& init) const;
  const Model& model_;
  const Tokenizer* tok_;
  const Labeller& lab_;
  ExploreOptions opt_;
  InitDistribution init_;
  bool marks_ = false;
  std::vector<uint8_t> allow_;
  std::unique_ptr<Searcher> searcher_;
};

// The plain-English verdict for label counts and top-k means (documented in docs/explore.md).
std::string explore_verdict(const LabelCounts& model, const LabelCounts& baseline, double mean_top,
                            double baseline_mean_top, double baseline_max);

// The readable form of token bytes used in reports (leading space as "␣", control bytes hex).
std::string readable_token(std::string_view raw);

}  // namespace embedscope
