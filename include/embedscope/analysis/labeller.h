// The neighbour labeller: what is this neighbour to the query word, and why.
//
// label() is a pure function of (query word, neighbour token, WordNet, options). Rules, first
// match wins; every result carries an evidence string that names what was used:
//
//   0. noise/special   the token is special (<|endoftext|>, [CLS], <unk>), a byte token
//                      (not valid UTF-8) or holds control characters
//   1. variant         same word up to ASCII case, leading space and tokenizer markers
//                      (GPT-2 "Ġ", SentencePiece "▁", CLIP "</w>")
//   2. noise/number_or_punct   the token has no letter
//   3. noise/subword   a word-piece: "##ing", or, in a vocabulary that marks word starts, a
//                      token without the mark whose text is not a WordNet lemma ("omput")
//   4. variant         same lemma by WordNet's morphy in one part of speech (computers ->
//                      computer, better -> good); morphy's rules applied once, as WordNet's
//                      morph.c does, so "murderess" is no form of "murder"
//   5. variant         a WordNet derivational link between the two words ("+" pointer,
//                      either direction, word to word: computer <-> compute)
//   6. variant         derivation by a common affix (un-, re-, over-, dis-, -less, -ful,
//                      -ness, -ly, -ment, -er, ...: effort/effortless, read/reread) when
//                      WordNet has no entry for the longer word, or links the two words (any
//                      pointer between their synsets, or a shared synset), or defines the
//                      longer word with the shorter one ("uncontrolled: not controlled");
//                      so stand/understand and ease/disease stay apart
//   7. variant         same Snowball English stem, unless WordNet knows both words as different
//                      lemmas and neither links nor defines one by the other (physics /
//                      physically, emergency / emergence stay apart)
//   8. synonym         the two words share a WordNet synset (car, automobile: car.n.01)
//   9. related         a WordNet path of at most `max_hops` semantic pointers (hypernym,
//                      hyponym, meronym/holonym, similar-to, antonym, also-see, attribute,
//                      entailment, cause, verb group, pertainym, participle), or a shared
//                      hypernym at most `max_hypernym_depth` levels above both (lion, tiger
//                      -> big_cat.n.01). One specificity test (LabelOptions::specificity) for
//                      every kind-of link that goes through a hypernym: a path goes on from a
//                      hypernym/hyponym pointer only when its more general end is specific, and
//                      a shared hypernym must be specific. A direct pointer (computer -> machine)
//                      needs no test. Domain pointers (topic, region, usage) make one-pointer
//                      paths only: no path goes through colloquialism.n.01 or military.n.01;
//                      so do instance pointers (Milk and White are both rivers: milk, white
//                      are not related through river.n.01), which no shared hypernym uses
//  10. noise/rare      count below `rare_count` when counts are known
//  11. noise/unrelated anything else
//
// Words are looked up in WordNet lower-cased; a query that WordNet does not know can still get
// variants (rules 1, 6, 7) but never synonym / related.
//
// Thread-safety: a Labeller and its PreparedQuery may be used concurrently (const).
//
//   WordNet wn = WordNet::open();
//   Labeller lab(wn);
//   LabelResult r = lab.label("car", {.text = " automobile"});
//   r.label;      // Label::kSynonym
//   r.evidence;   // "share synset car.n.01 {car, auto, automobile, machine, motorcar}: ..."
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "embedscope/analysis/stemmer.h"
#include "embedscope/analysis/wordnet.h"

namespace embedscope {

enum class Label : uint8_t { kVariant, kSynonym, kRelated, kNoise };
enum class NoiseKind : uint8_t { kNone, kSpecial, kNumberOrPunct, kSubword, kRare, kUnrelated };
inline constexpr Label kAllLabels[] = {Label::kVariant, Label::kSynonym, Label::kRelated,
                                       Label::kNoise};

std::string_view label_name(Label l);           // "variant" "synonym" "related" "noise"
std::string_view noise_kind_name(NoiseKind k);  // "" "special" "number_or_punct" "subword"
                                                // "rare" "unrelated"

// A token's text with markers removed.
struct TokenForm {
  std::string word;           // marker-free text, original case ("Computer")
  std::string lower;          // ASCII lower-cased word
  bool word_start = false;    // had a leading space / "Ġ" / "▁" (or "</w>" word end)
  bool continuation = false;  // "##" word-piece continuation
  bool has_letter = false;    // an ASCII letter or any non-ASCII code point
  bool is_wordlike = false;   // letters plus internal ' - . _ only
  bool special = false;       // <|...|>, [CLS]-like, invalid UTF-8, control bytes
};
TokenForm normalize_token(std::string_view raw);

struct TokenInfo {
  std::string_view text;                 // raw token bytes (" computer", "Ġcomputer", "computers")
  bool special = false;                  // marked special by the tokenizer
  std::optional<uint64_t> count;         // training count, when the model has counts
  bool vocab_marks_word_starts = false;  // GPT-2 / SentencePiece style vocabulary
};

// How "specific" a hypernym must be for a kind-of link to count as related.
//   kCoverage: the synset with all its hyponyms and instances, transitively, is at most
//              `max_coverage_share` of its part of speech's synsets (WordNet 3.0: 82,115
//              nouns, 13,767 verbs; 0.4% = 328 nouns or 55 verbs): feline.n.01 (60) and
//              furniture.n.01 (199) pass; carnivore.n.01 (366), person.n.01 (10,297),
//              act.n.02 and treat.v.03 do not
//   kDepth:    its shortest hypernym chain to a root (entity.n.01, or a verb with no
//              hypernym) is at least `min_depth` pointers long
// The gold-set measurement (tests/analysis/labeller_gold_test.cpp, docs/explore.md) compares
// the two; kCoverage separates random pairs from related ones better.
enum class Specificity : uint8_t { kCoverage, kDepth };

struct LabelOptions {
  int max_hops = 2;            // pointer hops for "related"
  int max_hypernym_depth = 2;  // levels above both words for a shared hypernym
  uint64_t rare_count = 5;     // noise/rare below this count (when counts are known)
  Specificity specificity = Specificity::kCoverage;
  double max_coverage_share = 0.004;  // kCoverage threshold
  int min_depth = 4;                  // kDepth threshold, pointers from a root
};

struct LabelResult {
  Label label = Label::kNoise;
  NoiseKind noise = NoiseKind::kNone;
  std::string evidence;
};

// The query side of labelling, computed once per query word.
struct PreparedQuery {
  std::string word;  // as given
  TokenForm form;
  std::vector<std::pair<WnPos, std::string>> lemmas;  // morphy per POS (rules applied once)
  std::string stem;
  std::vector<SynsetId> synsets;  // of the word's lemmas, all POS
  // Synsets reachable within max_hops by allowed paths, with the pointer that first reached
  // them; `expand` false: reached by a domain pointer or a kind-of pointer to (or from) a
  // synset that is not specific: not followed further.
  struct Reach {
    SynsetId prev;
    std::string symbol;  // "" for the query's own synsets
    int hops = 0;
    bool expand = true;
  };
  std::map<SynsetId, Reach> reached;
  std::map<SynsetId, int> ancestors;  // hypernyms up to max_hypernym_depth -> levels
};

class Labeller {
 public:
  // `wn` must outlive the Labeller.
  explicit Labeller(const WordNet& wn, LabelOptions options = {});

  PreparedQuery prepare(std::string_view query) const;
  LabelResult label(const PreparedQuery& q, const TokenInfo& neighbour) const;
  LabelResult label(std::string_view query, const TokenInfo& neighbour) const {
    return label(prepare(query), neighbour);
  }
  const WordNet& wordnet() const { return wn_; }
  const LabelOptions& options() const { return opt_; }

  // The specificity test of rule 9 for one synset; `why` gets e.g. "covers 212 synsets".
  bool specific(SynsetId s, std::string* why = nullptr) const;

 private:
  using PosLemmas = std::vector<std::pair<WnPos, std::string>>;
  std::string synset_text(SynsetId id) const;
  PosLemmas pos_lemmas(const std::string& word) const;
  struct Hop {
    bool allowed, through;
  };
  Hop hop_allowed(SynsetId from, std::string_view symbol, SynsetId to, int hop) const;
  std::optional<std::string> link(const PosLemmas& a, const PosLemmas& b,
                                  bool derivation_only) const;
  std::optional<std::string> defines(const PosLemmas& longer, const std::string& shorter,
                                     const PosLemmas& shorter_lemmas) const;
  std::optional<std::string> affix_variant(const std::string& a, const PosLemmas& al,
                                           const std::string& b, const PosLemmas& bl) const;
  int coverage(SynsetId s) const;
  int max_coverage(WnPos pos) const;
  int depth(SynsetId s) const;
  const WordNet& wn_;
  LabelOptions opt_;
  Stemmer stemmer_;
  mutable std::mutex cache_mu_;
  mutable std::map<SynsetId, int> coverage_, depth_;  // specificity measures, computed once
};

}  // namespace embedscope
