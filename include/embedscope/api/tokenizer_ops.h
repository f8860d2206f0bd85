// api tokenizer operations without a model: `embedscope tokenize` and `decode` on a tokenizer
// opened by reference (open_tokenizer() in handle/model_handle.h: a folder, a tokenizer.json, a
// SentencePiece .model, a .gguf, or GPT-2's by default), with their JSON documents and text. The
// handle-based tokenize() / decode() are in api/text.h.
//
// Errors (thrown): Error(kInvalidArgument) for an id list item that is not an integer or an
// empty list; Error(kOutOfRange) for an id outside [0, vocab_size).
//
// Thread-safety: pure functions of their arguments.
//
//   std::shared_ptr<const Tokenizer> tok = open_tokenizer("");
//   api::TokenizeResult r = api::tokenize(*tok, " computer", false);   // r.ids == {3644}
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "embedscope/api/text.h"
#include "embedscope/tokenizer/tokenizer.h"

namespace embedscope::api {

TokenizeResult tokenize(const Tokenizer& tok, std::string_view text, bool allow_special);
// "N tokens, B bytes", a header, then "offset id piece" per token ("(special)" marked).
std::string to_text(const Tokenizer& tok, const TokenizeResult& r, size_t n_bytes);

// Ids given as items each holding a comma- or space-separated list ("464,3290", "464 3290").
std::vector<TokenId> parse_token_ids(const std::vector<std::string>& items, size_t vocab_size);
// {ids, text, pieces, bytes}: bytes are what the ids stand for exactly (a token may end inside
// a UTF-8 character); text has U+FFFD there.
json decode_json(const Tokenizer& tok, const std::vector<TokenId>& ids);

}  // namespace embedscope::api
