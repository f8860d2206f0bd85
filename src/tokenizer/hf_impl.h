// The tokenizer.json pipeline's parts (internal to the tokenizer module; the public interface is
// embedscope/tokenizer/tokenizer.h). Each part is built from its JSON object by a make_*
// function that validates every field it reads and rejects what it does not implement.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "embedscope/tokenizer/tokenizer.h"
#include "tokenizer/bpe_impl.h"

namespace embedscope::hf {

using nlohmann::json;

// Largest vocabulary we accept (the largest real ones are ~260k entries).
inline constexpr size_t kMaxVocab = size_t(1) << 24;

struct StrHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using TokenMap = std::unordered_map<std::string, TokenId, StrHash, std::equal_to<>>;

// Token bytes -> id in one flat open-addressing table whose keys live in one byte arena: loading
// a 128k-token vocabulary is one allocation instead of two per token, and a lookup is one cache
// miss (the slot) plus the key bytes. Built at load, then read-only (safe to share).
class FlatTokenMap {
 public:
  // Room for n keys of `bytes` bytes in all without rehashing.
  void reserve(size_t n, size_t bytes);
  // Inserts s -> id and returns true; when s is already a key, returns false and keeps the old
  // id unless `replace`.
  bool insert(std::string_view s, TokenId id, bool replace = false);
  // -1 when absent.
  TokenId find(std::string_view s) const { return find_hashed(s, hash(s)); }
  // The same in two steps, so that bulk loaders can prefetch a batch of slots before probing.
  static uint64_t hash(std::string_view s) {
    // An empty view may have a null data(), which hash_bytes' memcpy must not see.
    return hash_bytes(s.empty() ? "" : s.data(), s.size()) | 1u;
  }
  void prefetch(uint64_t h) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[h & mask_]);
  }
  TokenId find_hashed(std::string_view s, uint64_t h) const {
    if (slots_.empty()) return -1;
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& e = slots_[i];
      if (e.hash == 0) return -1;
      if (e.hash == h && e.len == s.size() &&
          (s.empty() || std::memcmp(arena_.data() + e.off, s.data(), s.size()) == 0))
        return e.id;
    }
  }
  size_t size() const { return size_; }

 private:
  struct Slot {
    uint64_t hash = 0;  // 0 = empty (stored hashes have bit 0 set)
    uint64_t off = 0;   // key bytes: arena_[off, off + len)
    uint32_t len = 0;
    TokenId id = -1;
  };
  void rehash(size_t n_slots);
  std::vector<Slot> slots_;
  std::string arena_;
  size_t mask_ = 0, size_ = 0;
};

// Error context: the file name, for messages "<file>: <json path> <value> ...".
struct Ctx {
  std::string file;
  // Set for pipelines built in memory from other formats (SentencePiece .model, GGUF): allows
  // the internal model type "SentencePieceBPE", which no tokenizer.json file may name.
  bool internal = false;
  [[noreturn]] void corrupt(const std::string& path, const std::string& what) const;
  [[noreturn]] void unsupported(const std::string& path, const json& value,
                                const std::string& known) const;
  const json& get(const json& obj, const std::string& path, const char* key) const;  // required
  std::string str(const json& obj, const std::string& path, const char* key) const;
  bool flag(const json& obj, const std::string& path, const char* key, bool dflt) const;
};

// model.vocab (an object token -> id) and model.merges as the fast JSON reader (hf_json.cpp)
// found them: views into its parsed document, in file order, valid while `keep` lives. Only
// filled when every entry has the expected type (integer ids; merges "a b" or ["a", "b"]);
// otherwise the model reads the nlohmann DOM as usual.
struct ModelLists {
  struct Merge {
    std::string_view a, b;
    bool joined = false;  // the "a b" string form: `a` holds it whole, b is empty
  };
  bool has_vocab = false, has_merges = false;
  std::vector<std::pair<std::string_view, int64_t>> vocab;
  size_t vocab_bytes = 0;  // sum of the keys' lengths
  std::vector<Merge> merges;
  std::shared_ptr<void> keep;
};
// Parses a tokenizer.json with simdjson into `root` (nlohmann), except that model.vocab and
// model.merges, when well typed, go to `lists` (root holds an empty object / array there).
// Returns false for anything simdjson rejects or that nlohmann might read differently (lone
// surrogate escapes, "-0"): the caller then parses with nlohmann, which names the problem.
bool parse_fast(std::string_view text, json* root, ModelLists* lists);

struct Vocab;
// model.vocab as [[piece, score], ...] (Unigram, SentencePiece BPE; `model` names it in errors):
// every piece non-empty, at most 1024 bytes and not repeated, every score finite. Fills
// vocab.tokens / present and ids (piece -> id), and returns the scores in id order.
std::vector<double> read_scored_vocab(const Ctx& c, const json& j, const char* model, Vocab& vocab,
                                      TokenMap& ids);

// Text with, for each byte, the range of the caller's bytes it came from (what offsets use).
struct Piece {
  std::string s;
  std::vector<uint32_t> a, b;  // original [a[i], b[i]) of byte i
  void push(std::string_view bytes, uint32_t oa, uint32_t ob) {
    s.append(bytes);
    a.insert(a.end(), bytes.size(), oa);
    b.insert(b.end(), bytes.size(), ob);
  }
  Piece sub(size_t begin, size_t end) const;
  bool empty() const { return s.empty(); }
};
// Each byte of each UTF-8 character aligned to that character's range, shifted by `base`.
Piece piece_from(std::string_view valid_utf8, size_t base);

// Decodes one character of valid UTF-8 at s[i]; returns its length.
size_t next_char(std::string_view s, size_t i, uint32_t* cp);
void append_utf8(std::string& out, uint32_t cp);

struct Normalizer {
  virtual ~Normalizer() = default;
  virtual void apply(Piece& p) const = 0;
};
std::unique_ptr<Normalizer> make_normalizer(const Ctx& c, const json& j, const std::string& path);

struct PreTokenizer {
  virtual ~PreTokenizer() = default;
  // Splits each piece further (pieces may also be transformed: ByteLevel, Metaspace).
  virtual void apply(std::vector<Piece>& pieces) const = 0;
};
std::unique_ptr<PreTokenizer> make_pre_tokenizer(const Ctx& c, const json& j,
                                                 const std::string& path);

// Vocabulary shared by the model, the added tokens and the decoder.
struct Vocab {
  std::vector<std::string> tokens;  // id -> string ("" for an id no token has)
  std::vector<uint8_t> present;     // id -> has a token (ids may have holes, as in GPT-4o's)
  FlatTokenMap ids;                 // string -> id (an added token wins over a model token)
  std::vector<uint8_t> special;     // id -> is a special added token
};

struct Model {
  virtual ~Model() = default;
  virtual std::string name() const = 0;
  // Appends the ids of one pre-token and their offsets.
  virtual void tokenize(const Piece& p, std::vector<TokenId>& ids,
                        std::vector<TokenSpan>& offsets) const = 0;
};
// Fills vocab.tokens / ids from model.vocab (the added tokens are merged in later); reads vocab
// and merges from `lists` where it has them (parse_fast).
std::unique_ptr<Model> make_model(const Ctx& c, const json& j, Vocab& vocab,
                                  const ModelLists* lists = nullptr);
// The Unigram model (hf_unigram.cpp), called by make_model.
std::unique_ptr<Model> make_unigram(const Ctx& c, const json& j, Vocab& vocab);
// SentencePiece's score-driven BPE (hf_spm_bpe.cpp), internal type "SentencePieceBPE".
std::unique_ptr<Model> make_spm_bpe(const Ctx& c, const json& j, Vocab& vocab);
// Called once the added tokens are in the vocabulary (unk / continuing prefix lookups).
void finish_model(const Ctx& c, Model& m, const Vocab& vocab);

struct PostProcessor {
  virtual ~PostProcessor() = default;
  virtual void apply(Encoding& e) const = 0;
};
std::unique_ptr<PostProcessor> make_post_processor(const Ctx& c, const json& j,
                                                   const std::string& path, const Vocab& v);

struct Decoder {
  virtual ~Decoder() = default;
  // Token strings in, byte strings out (decoders see one list, as in HF's decode_chain).
  // whole = false decodes tokens one at a time for display: no stripping at the start, no
  // WordPiece joining.
  virtual void apply(std::vector<std::string>& tokens, bool whole) const = 0;
};
std::unique_ptr<Decoder> make_decoder(const Ctx& c, const json& j, const std::string& path);

// Unicode properties (ICU) used by several parts.
bool is_white_space(uint32_t cp);  // Rust char::is_whitespace (White_Space)
bool is_punctuation(uint32_t cp);  // general category P*
bool is_bert_punctuation(uint32_t cp);
bool is_mark_nonspacing(uint32_t cp);

// GPT-2's byte <-> character alphabet.
const std::string& byte_char(uint8_t b);  // UTF-8 of the character for byte b
int char_byte(uint32_t cp);               // -1 when cp is not in the alphabet

// A compiled PCRE2 pattern (UTF + UCP, JIT when available) with a match limit.
class Regex {
 public:
  Regex(const Ctx& c, const std::string& pattern, const std::string& path);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;
  // Matches [begin, end) covering s in order (HF's find_matches: non-matches between them).
  void find_all(std::string_view s, std::vector<std::pair<size_t, size_t>>& matches) const;

 private:
  std::string pattern_;
  void* code_ = nullptr;
};

// A pipeline assembled in memory by another format's reader (spm_model.cpp, gguf_vocab.cpp) in
// tokenizer.json's shape; Ctx::internal is set. `kind` starts describe() ("GGUF", ...).
std::unique_ptr<Tokenizer> load_internal(const json& j, const std::string& name,
                                         const std::string& kind);

}  // namespace embedscope::hf
