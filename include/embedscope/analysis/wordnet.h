// WordNet 3.0 reader over the Princeton dict files (Debian wordnet-base: /usr/share/wordnet),
// with morphy, WordNet's own lemmatizer.
//
// Files and byte layout (wndb(5WN), wninput(5WN)):
//   index.POS   one line per lemma, sorted bytewise; license lines start with two spaces:
//               lemma pos synset_cnt p_cnt [ptr_symbol x p_cnt] sense_cnt tagsense_cnt
//               synset_offset x synset_cnt
//   data.POS    one line per synset, starting with its own 8-digit byte offset:
//               offset lex_filenum ss_type w_cnt(2 hex) [word lex_id(1 hex)] x w_cnt
//               p_cnt(3 dec) [symbol offset pos source/target(4 hex)] x p_cnt [frames] | gloss
//   POS.exc     "inflected base [base...]" per line, sorted: morphy's exception lists.
//
// Lazy by construction: open() maps the eight index/data files and reads only the four small
// exception lists, so it costs a few milliseconds. A lemma lookup is a binary search over the
// mapped index bytes; a synset is parsed from its byte offset on demand. Nothing is cached.
//
// Bad input: a data line that does not start with its offset, a count or offset beyond the
// file, an unknown pointer POS, a missing field -> Error(kCorrupt) naming the file, the byte
// offset, the field and the value. A missing dict folder -> Error(kNotFound) naming the
// folder and the Debian package (wordnet-base) to install.
//
// Thread-safety: const methods may be called concurrently.
//
//   WordNet wn = WordNet::open();                      // $WNSEARCHDIR or /usr/share/wordnet
//   for (SynsetId s : wn.synsets("car", WnPos::kNoun)) wn.synset(s).words;  // car, auto, ...
//   wn.morphy("computers", WnPos::kNoun);               // {"computer"}
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace embedscope {

class MappedFile;

enum class WnPos : uint8_t { kNoun = 0, kVerb = 1, kAdj = 2, kAdv = 3 };
inline constexpr std::array<WnPos, 4> kAllWnPos = {WnPos::kNoun, WnPos::kVerb, WnPos::kAdj,
                                                   WnPos::kAdv};
char wn_pos_char(WnPos pos);  // 'n' 'v' 'a' 'r'

// A synset is identified by its part of speech and byte offset in data.POS.
struct SynsetId {
  WnPos pos = WnPos::kNoun;
  uint32_t offset = 0;
  bool operator==(const SynsetId&) const = default;
  auto operator<=>(const SynsetId&) const = default;
};

struct WnPointer {
  std::string symbol;  // "@" hypernym, "~" hyponym, "+" derivation, ... (wninput(5WN))
  SynsetId target;
  uint8_t source_word = 0;  // 0: semantic pointer (synset to synset); else 1-based word numbers
  uint8_t target_word = 0;  //    of a lexical pointer
};

struct Synset {
  SynsetId id;
  std::vector<std::string> words;  // lemmas as stored (underscores for spaces, adjective
                                   // markers like "(a)" stripped), original case
  std::vector<WnPointer> pointers;
  std::string gloss;
};

class WordNet {
 public:
  // Opens the dict folder; `dir` empty: $WNSEARCHDIR, else /usr/share/wordnet.
  static WordNet open(const std::string& dir = "");
  static std::string default_dir();

  WordNet(WordNet&&) noexcept;
  WordNet& operator=(WordNet&&) noexcept;
  ~WordNet();

  const std::string& dir() const { return dir_; }

  // Synsets of an exact lemma (lower-case, '_' for spaces; the lookup lower-cases ASCII and
  // maps ' ' to '_'), in WordNet's sense order. Empty when absent.
  std::vector<SynsetId> synsets(std::string_view lemma, WnPos pos) const;
  bool has_lemma(std::string_view lemma, WnPos pos) const;
  // Parses the synset at id.offset of data.POS. Error(kCorrupt) on a malformed line,
  // Error(kOutOfRange) when the offset is beyond the file.
  Synset synset(SynsetId id) const;
  // NLTK-style name "car.n.01": first word, POS, its sense number for that word.
  std::string synset_name(const Synset& s) const;

  // WordNet's morphy: base forms of `word` for `pos` that are lemmas in the index: the
  // exception list first, else the detachment rules applied repeatedly (NLTK's _morphy
  // semantics; the word itself counts when it is a lemma). `repeat` false: the rules are
  // applied once, as WordNet's own morph.c does ("murderess" is then no form of "murder").
  std::vector<std::string> morphy(std::string_view word, WnPos pos, bool repeat = true) const;
  // morphy over all four parts of speech, de-duplicated, in POS order.
  std::vector<std::string> lemmas(std::string_view word) const;

 private:
  WordNet() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string dir_;
};

}  // namespace embedscope
