// Word -> rows: how a query word typed by a user becomes rows of a model's matrix.
//
// Word-level models (word2vec, GloVe, fastText .vec: a Vocabulary of words, no tokenizer):
//   the exact word, else its lower-case form, else " word" (a token vocabulary without a
//   tokenizer).
// Token models (a tokenizer chosen by handle/model_handle.h's choose_tokenizer(): named in the
// model's metadata, beside the weights, inside a GGUF, or GPT-2's for a GPT-2-shaped matrix):
//   the space-prefixed single token (" computer", the row running text uses) when it exists,
//   (for GPT-2-family tokenizers a vocabulary entry of those bytes; for other tokenizers the
//   word's ids in running text, i.e. after "a ": Llama-2's "▁computer", BERT's "computer",
//   Qwen's "Ġcomputer"),
//   else the bare single token, else a single token of the word with its first letter's case
//   flipped (" Monday" for "monday", as tokenizer/bpe.h's default_variant picks), else the
//   pieces of " word" (other tokenizers: its pieces in running text; their mean is the
//   query; the pieces
//   are reported so the user sees what was averaged). A query that already starts with a space
//   is looked up as that exact token first.
// "#123" always means row 123 (Error(kOutOfRange) beyond the searchable rows).
//
// exclude lists the query's own rows and its variants ("computer", " computer", "Computer",
// " Computer"; for word models the as-typed, lower-case and capitalised words), which
// neighbour lists leave out by default.
//
// Lifetime: a WordLookup keeps pointers into the Model (its vocabulary); the Model must outlive
// it. Thread-safety: const methods may be called concurrently.
//
//   Model m = load_model("gpt2");
//   WordLookup words(m);
//   std::optional<ResolvedWord> w = words.resolve("computer");   // ids {3644}, how "token"
//   words.display(3644);                                          // "␣computer"
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "embedscope/core/vocabulary.h"
#include "embedscope/formats/model.h"
#include "embedscope/tokenizer/bpe.h"
#include "embedscope/tokenizer/tokenizer.h"

namespace embedscope {

struct ResolvedWord {
  std::string query;                // as typed
  std::vector<TokenId> ids;         // rows whose mean is the query vector (at least one)
  std::vector<std::string> pieces;  // readable form of each id (display())
  std::string how;                  // "id", "word", "lowercase", "token", "bare-token",
                                    // "case-variant", "pieces"
  std::vector<TokenId> exclude;     // the query's own rows and variants, sorted, unique
};

class WordLookup {
 public:
  // Picks the tokenizer with choose_tokenizer(model, "auto"); n_rows = model.n_search_rows (or
  // the table's rows). ModelHandle::words() is the shared instance of this.
  explicit WordLookup(const Model& model);
  // Explicit parts: vocab may be null or empty; tok may be empty / null (no tokenizer); a
  // borrowed pointer must outlive the lookup.
  WordLookup(const Vocabulary* vocab, std::optional<BpeTokenizer> tok, size_t n_rows);
  WordLookup(const Vocabulary* vocab, std::shared_ptr<const Tokenizer> tok, size_t n_rows);
  WordLookup(const Vocabulary* vocab, const Tokenizer* tok, size_t n_rows);
  WordLookup(const WordLookup&) = delete;
  WordLookup& operator=(const WordLookup&) = delete;

  bool has_tokenizer() const { return tok_ != nullptr; }
  const Tokenizer* tokenizer() const { return tok_; }
  const Vocabulary* vocab() const { return vocab_; }
  size_t n_rows() const { return n_rows_; }

  // std::nullopt when the word is not in the vocabulary (token models: never, since any word
  // encodes to pieces). Error(kOutOfRange) for "#N" beyond n_rows(), Error(kInvalidArgument)
  // for an empty word or "#" followed by something other than digits.
  std::optional<ResolvedWord> resolve(std::string_view query) const;

  // Readable token ("␣computer" for token models, the word for word models, "#N" when the row
  // has no known string).
  std::string display(TokenId id) const;
  // Raw bytes of the row's token or word ("" when unknown).
  std::string raw_token(TokenId id) const;
  // Special (tokenizer-declared) token.
  bool is_special(TokenId id) const;

 private:
  const Vocabulary* vocab_ = nullptr;
  // The ids `word` has in running text (after "a "), for tokenizers other than GPT-2's.
  std::vector<TokenId> in_running_text(std::string_view word) const;

  std::shared_ptr<const Tokenizer> owned_;
  const Tokenizer* tok_ = nullptr;
  size_t n_rows_ = 0;
};

}  // namespace embedscope
