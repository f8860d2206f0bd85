// Byte-level BPE tokenizer (GPT-2 family), exact with respect to the reference implementations.
//
// Loading: vocab.json + merges.txt (also encoder.json + vocab.bpe), a Hugging Face
// tokenizer.json (BPE model with a ByteLevel pre-tokenizer), or a GGUF's tokenizer.ggml.*.
// Tokens are stored as their raw bytes (the byte-level alphabet decoded), so token_bytes(id)
// of GPT-2's id 3644 is " computer".
//
//   BpeTokenizer tok = BpeTokenizer::from_files("vocab.json", "merges.txt");
//   std::vector<TokenId> ids = tok.encode(" computer");   // {3644}
//   tok.display(3644);                                      // "␣computer"
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "embedscope/core/embedding_table.h"

namespace embedscope {

class BpeTokenizer {
 public:
  static BpeTokenizer from_files(const std::string& vocab_json, const std::string& merges_txt);
  static BpeTokenizer from_tokenizer_json(const std::string& path);
  static BpeTokenizer from_gguf(const std::string& path);
  // Finds tokenizer files in a model folder (tokenizer.json, or vocab.json + merges.txt);
  // std::nullopt when none.
  static std::optional<BpeTokenizer> find_in_dir(const std::string& dir);
  // The GPT-2 vocabulary setup fetched into the embedscope home; Error(kNotFound) with a hint
  // to run scripts/setup.sh when absent.
  static BpeTokenizer gpt2_default();

  BpeTokenizer();
  ~BpeTokenizer();
  BpeTokenizer(BpeTokenizer&&) noexcept;
  BpeTokenizer& operator=(BpeTokenizer&&) noexcept;
  BpeTokenizer(const BpeTokenizer&);
  BpeTokenizer& operator=(const BpeTokenizer&);

  size_t vocab_size() const;
  // Special tokens are plain text unless allow_special.
  std::vector<TokenId> encode(std::string_view text, bool allow_special = false) const;
  // Byte offsets of each id's first byte in `text` (same length as encode's result).
  std::vector<TokenId> encode_with_offsets(std::string_view text, std::vector<size_t>* offsets,
                                           bool allow_special = false) const;
  // Text API: bytes that do not form valid UTF-8 become U+FFFD. Error(kOutOfRange) for bad ids.
  std::string decode(std::span<const TokenId> ids) const;
  // Exact bytes.
  std::string decode_bytes(std::span<const TokenId> ids) const;
  // Raw bytes of one token (Error(kOutOfRange) if id is out of range).
  const std::string& token_bytes(TokenId id) const;
  std::optional<TokenId> token_id(std::string_view raw_bytes) const;
  // Readable form: leading space as "␣", control bytes as <0x0A>, partial UTF-8 as hex bytes.
  std::string display(TokenId id) const;
  bool is_special(TokenId id) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Readable form of arbitrary token bytes (what display() uses).
std::string display_token(std::string_view raw_bytes);

// The rows a reader would expect for a word: "computer", " computer", "Computer", " Computer",
// each with its ids. The default row for running text is the space-prefixed single token.
struct WordVariant {
  std::string text;              // the variant's raw text, e.g. " computer"
  std::vector<TokenId> ids;
  bool single_token() const { return ids.size() == 1; }
};
std::vector<WordVariant> word_variants(const BpeTokenizer& tok, std::string_view word);

}  // namespace embedscope
