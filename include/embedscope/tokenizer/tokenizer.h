// Tokenizer: one interface over every tokenizer file embedscope reads, exact with respect to
// Hugging Face `tokenizers` (Rust, 0.22; tests/tokenizer/hf_parity_test.cpp runs it under node).
//
// load_tokenizer() reads a Hugging Face tokenizer.json (or a folder holding one) and assembles
// its pipeline, run in this order on each encode:
//   added tokens     split out first (leftmost-longest; lstrip / rstrip / single_word; those
//                    marked "normalized" are matched on the normalized text)
//   normalizer       NFC NFD NFKC NFKD Lowercase StripAccents Strip Replace Prepend
//                    BertNormalizer Sequence (Unicode normalization by ICU)
//   pre_tokenizer    ByteLevel (regex, add_prefix_space) Split (string or PCRE2 regex; all five
//                    behaviours; invert) Metaspace (prepend schemes, split) BertPreTokenizer
//                    Whitespace WhitespaceSplit Punctuation Digits Sequence
//   model            BPE (byte_fallback, fuse_unk, ignore_merges, continuing_subword_prefix,
//                    end_of_word_suffix) WordPiece Unigram (Viterbi over the pieces'
//                    log-probabilities, unk_id, byte_fallback; docs/tokenizer.md)
//   post_processor   TemplateProcessing BertProcessing RobertaProcessing ByteLevel Sequence
//                    (only with EncodeOptions::add_special_tokens)
//   decoder          ByteLevel Metaspace ByteFallback Fuse Strip WordPiece Replace Sequence
// Any other type or option value in the file is Error(kUnsupported) naming the JSON path and the
// value (e.g. `tokenizer.json: model.type "WordLevel" is not supported (BPE, WordPiece,
// Unigram)`); a
// malformed file is Error(kCorrupt) naming the path: wrong JSON types, a merge whose parts or
// result are not tokens, duplicate tokens or ids, ids out of range (docs/reliability.md T17-T33).
//
// Invariants after loading: ids are below vocab_size() = largest id + 1; an id has at most one
// token string (the model's vocabulary plus the added tokens; an added token may repeat a
// vocabulary entry with the same id); ids may leave a few holes (GPT-4o's file has 19), which
// token() reports as nullopt and decode rejects; no id is beyond the number of entries + 65,536
// (a larger one is taken for a corrupt file, not allocated); every merge result is a token.
//
// Input policy: input bytes that are not well-formed UTF-8 are replaced by U+FFFD (one per
// maximal invalid subpart) before tokenizing; offsets still refer to the caller's bytes.
// A Split regex that exceeds PCRE2's match limit on some input (a catastrophically
// backtracking pattern) makes encode() throw Error(kInvalidArgument) naming the pattern.
//
// Thread-safety: a loaded Tokenizer is immutable; all const methods may run concurrently.
//
//   auto tok = load_tokenizer("Meta-Llama-3-8B/");            // or .../tokenizer.json
//   Encoding e = tok->encode("Hello world", {.add_special_tokens = true});
//   // e.ids == {128000, 9906, 1917}; e.offsets[1] == {0, 5}
//   tok->decode(e.ids, /*skip_special=*/true);                // "Hello world"
//   tok->display(9906);                                        // "Hello"
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "embedscope/core/embedding_table.h"
#include "embedscope/tokenizer/bpe.h"

namespace embedscope {

struct EncodeOptions {
  // Run the post-processor (Llama's <|begin_of_text|>, BERT's [CLS] ... [SEP]).
  bool add_special_tokens = false;
  // Special added tokens written in the text are matched as their ids (Hugging Face's default);
  // true treats their text as plain text (HF's encode_special_tokens).
  bool split_special_tokens = false;
};

struct TokenSpan {
  size_t begin = 0, end = 0;  // byte offsets into the encoded text; {0, 0} for inserted tokens
  bool operator==(const TokenSpan&) const = default;
};

struct Encoding {
  std::vector<TokenId> ids;
  std::vector<TokenSpan> offsets;  // one per id
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // "tokenizer.json (BPE)", "tokenizer.json (WordPiece)", ...
  virtual std::string describe() const = 0;
  virtual size_t vocab_size() const = 0;
  // Never throws on any input bytes (see the input policy above for the one exception).
  virtual Encoding encode(std::string_view text, const EncodeOptions& options = {}) const = 0;
  std::vector<TokenId> encode_ids(std::string_view text, const EncodeOptions& options = {}) const {
    return encode(text, options).ids;
  }
  // The decoder's output as exact bytes (a byte-fallback or byte-level token that is part of a
  // character yields that byte). Error(kOutOfRange) for an id >= vocab_size().
  virtual std::string decode_bytes(std::span<const TokenId> ids,
                                   bool skip_special = false) const = 0;
  // decode_bytes() with every maximal invalid UTF-8 subpart replaced by U+FFFD.
  std::string decode(std::span<const TokenId> ids, bool skip_special = false) const;
  // The vocabulary string of an id as the file spells it ("Ġcomputer", "▁the", "##ing");
  // nullopt when out of range.
  virtual std::optional<std::string> token(TokenId id) const = 0;
  virtual std::optional<TokenId> token_id(std::string_view token) const = 0;
  // Readable piece: the token's decoded bytes through display_token() ("␣computer", "<0x0A>").
  virtual std::string display(TokenId id) const = 0;
  virtual bool is_special(TokenId id) const = 0;
  // The bytes the token stands for as one piece of running text: the decoder applied to it
  // alone, without the start-of-text stripping (" computer" for "Ġcomputer" and
  // "▁computer"; GPT-2's raw token bytes); a special token's content. What display() shows
  // readably. Error(kOutOfRange) for an id >= vocab_size() or a hole.
  virtual std::string token_bytes(TokenId id) const = 0;
  // The GPT-2-family fast path when this tokenizer is one (make_tokenizer(BpeTokenizer)), else
  // nullptr: callers that need BpeTokenizer's extras (parallel encoding for training, raw-byte
  // token lookups) use it; everything else goes through this interface.
  virtual const BpeTokenizer* bpe() const { return nullptr; }
};

// `path` is a tokenizer.json or a folder holding one (a folder with vocab.json + merges.txt
// instead gets make_tokenizer(BpeTokenizer)). Error(kNotFound) when absent, kCorrupt /
// kUnsupported as described above.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path);
// The same on text in memory (fuzz targets, embedded files); `name` appears in messages.
std::unique_ptr<Tokenizer> load_tokenizer_json_text(std::string_view json, const std::string& name);

// BpeTokenizer (GPT-2's vocab.json + merges.txt, GGUF gpt2 vocabularies; the fast path with
// hand-written pre-tokenizers) behind this interface: same ids; special tokens in the text are
// matched unless split_special_tokens; add_special_tokens adds nothing (no post-processor);
// token() spells ids in the byte-level alphabet ("Ġcomputer") as vocab.json does.
std::unique_ptr<Tokenizer> make_tokenizer(BpeTokenizer bpe);

// The rows a reader would expect for a word, whatever the tokenizer's conventions (bpe.h's
// word_variants for any Tokenizer): the word, " " + word, and both with the first letter's
// case flipped (ASCII), each encoded (Llama-2 / Gemma prepend "▁" themselves, BERT drops the
// space); then the vocabulary spellings "▁word", "Ġword", "##word" that are tokens and not
// already a single-token variant (text = that spelling). default_variant() picks the row for
// running text. Special tokens written in the word are plain text. A GPT-2-family tokenizer
// (bpe() != nullptr) gives exactly bpe.h's word_variants(BpeTokenizer).
std::vector<WordVariant> word_variants(const Tokenizer& tok, std::string_view word);

}  // namespace embedscope
