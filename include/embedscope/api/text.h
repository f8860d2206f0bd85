// api text operations: tokenize, decode and mean-pooled text embeddings on a ModelHandle, with
// their JSON documents (the server's POST /v1/tokenize, /v1/decode and /v1/embeddings).
//
// tokenize() uses the handle's tokenizer (handle/model_handle.h's policy); its document
// {ids, pieces, offsets} is the CLI's `tokenize --json` line for the same tokenizer. decode()
// turns ids back into text (invalid UTF-8 from partial byte tokens is replaced with U+FFFD when
// dumped). embed() gives each input's vector as the MEAN of its token rows: this is an
// input-embedding table, not a sentence encoder; texts are tokenized with the handle's
// tokenizer, or split on ASCII spaces and looked up as vocabulary entries when it has none.
//
// Errors (thrown): Error(kUnsupported) when tokenize/decode need a tokenizer the model lacks;
// Error(kOutOfRange) for an id < 0 or >= the table's rows; Error(kNotFound) for a word not in
// the vocabulary (no tokenizer); Error(kInvalidArgument) for an input with no tokens.
//
// Threads: embed() spreads 64 or more inputs over process_threads() threads.
// Thread-safety: safe from many threads (the handle's tokenizer and table are immutable).
//
//   auto h = ModelHandle::open("");
//   api::TokenizeResult t = api::tokenize(*h, " computer");   // t.ids == {3644}
//   api::EmbedResult e = api::embed(*h, {.texts = {"hello world"}});
//   e.vectors[0].size() == h->table().dim();
#pragma once

#include <string>
#include <vector>

#include "embedscope/api/common.h"

namespace embedscope::api {

struct TokenizeResult {
  std::vector<TokenId> ids;
  std::vector<std::string> pieces;  // readable form of each id (Tokenizer::display)
  std::vector<size_t> offsets;      // byte offset of each token in the text
};
TokenizeResult tokenize(const ModelHandle& h, std::string_view text, bool allow_special = false);
json to_json(const TokenizeResult& r);  // {ids, pieces, offsets}

struct DecodeResult {
  std::string text;  // invalid UTF-8 from partial byte tokens -> U+FFFD
  std::vector<std::string> pieces;
};
DecodeResult decode(const ModelHandle& h, const std::vector<int64_t>& ids);
json to_json(const DecodeResult& r);  // {text, pieces}

struct EmbedRequest {
  std::vector<std::string> texts;              // either texts ...
  std::vector<std::vector<int64_t>> id_lists;  // ... or token-id lists (texts empty)
};
struct EmbedResult {
  std::vector<std::vector<float>> vectors;  // one per input, dim values
  std::vector<size_t> n_tokens;             // tokens pooled for each input
  size_t total_tokens = 0;
};
EmbedResult embed(const ModelHandle& h, const EmbedRequest& r);

}  // namespace embedscope::api
