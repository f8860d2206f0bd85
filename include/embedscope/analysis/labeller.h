// The neighbour labeller: what is this neighbour to the query word, and why.
//
// label() is a pure function of (query word, neighbour token, WordNet, options). Rules, first
// match wins; every result carries an evidence string a reader can check:
//
//   0. noise/special   the token is special (<|endoftext|>, [CLS], <unk>), a byte token
//                      (not valid UTF-8) or holds control characters
//   1. variant         same word up to ASCII case, leading space and tokenizer markers
//                      (GPT-2 "Ġ", SentencePiece "▁", CLIP "</w>")
//   2. noise/number_or_punct   the token has no letter
//   3. noise/subword   a word-piece: "##ing", or, in a vocabulary that marks word starts, a
//                      token without the mark whose text is not a WordNet lemma ("omput")
//   4. variant         same lemma by WordNet's morphy (computers -> computer, better -> good)
//   5. variant         same Snowball English stem (computing, computer -> comput)
//   6. variant         a WordNet derivational link between the two words ("+" pointer,
//                      either direction: computer <-> compute)
//   7. synonym         the two words share a WordNet synset (car, automobile: car.n.01)
//   8. related         a WordNet path of at most `max_hops` semantic pointers (hypernym,
//                      hyponym, meronym/holonym, similar-to, antonym, also-see, attribute,
//                      entailment, cause, verb group, pertainym, domain/topic/region/usage),
//                      or a shared hypernym at most `max_hypernym_depth` levels above both
//                      (sister terms at 1, cousins at 2: cat, dog -> carnivore.n.01) that is
//                      not one of WordNet's top levels (depth from entity.n.01 < 4)
//   9. noise/rare      count below `rare_count` when counts are known
//  10. noise/unrelated anything else
//
// Words are looked up in WordNet lower-cased; a query that WordNet does not know can still get
// variants (rules 1, 5) but never synonym / related.
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

std::string_view label_name(Label l);          // "variant" "synonym" "related" "noise"
std::string_view noise_kind_name(NoiseKind k);  // "" "special" "number_or_punct" "subword"
                                                // "rare" "unrelated"

// A token's text with markers removed.
struct TokenForm {
  std::string word;         // marker-free text, original case ("Computer")
  std::string lower;        // ASCII lower-cased word
  bool word_start = false;  // had a leading space / "Ġ" / "▁" (or "</w>" word end)
  bool continuation = false;  // "##" word-piece continuation
  bool has_letter = false;    // an ASCII letter or any non-ASCII code point
  bool is_wordlike = false;   // letters plus internal ' - . _ only
  bool special = false;       // <|...|>, [CLS]-like, invalid UTF-8, control bytes
};
TokenForm normalize_token(std::string_view raw);

struct TokenInfo {
  std::string_view text;            // raw token bytes (" computer", "Ġcomputer", "computers")
  bool special = false;             // marked special by the tokenizer
  std::optional<uint64_t> count;    // training count, when the model has counts
  bool vocab_marks_word_starts = false;  // GPT-2 / SentencePiece style vocabulary
};

struct LabelOptions {
  int max_hops = 2;              // pointer hops for "related"
  int max_hypernym_depth = 2;    // levels above both words for a shared hypernym
  uint64_t rare_count = 5;       // noise/rare below this count (when counts are known)
};

struct LabelResult {
  Label label = Label::kNoise;
  NoiseKind noise = NoiseKind::kNone;
  std::string evidence;
};

// The query side of labelling, computed once per query word.
struct PreparedQuery {
  std::string word;                     // as given
  TokenForm form;
  std::vector<std::string> lemmas;      // morphy over all POS
  std::string stem;
  std::vector<SynsetId> synsets;        // of the word's lemmas, all POS
  // Synsets reachable within max_hops, with the pointer that first reached them.
  struct Reach {
    SynsetId prev;
    std::string symbol;  // "" for the query's own synsets
    int hops = 0;
  };
  std::map<SynsetId, Reach> reached;
  std::map<SynsetId, int> ancestors;    // hypernyms up to max_hypernym_depth -> levels
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

 private:
  std::string synset_text(SynsetId id) const;
  const WordNet& wn_;
  LabelOptions opt_;
  Stemmer stemmer_;
};

}  // namespace embedscope
