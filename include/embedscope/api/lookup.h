// api::lookup: rows of a handle's table as vectors (ids -> vectors, nn.Embedding's forward), by
// row ids or by a word through the handle's word lookup (a word of several tokens gives the rows
// of its pieces), with the JSON document `embedscope lookup --json` prints:
//   {dim, rows: [{id, token, vector}]}     (token: the row's raw token; vector: float32 values,
//                                           null where not finite)
//
// Errors (thrown): Error(kInvalidArgument) when neither or both of word and ids are given,
// Error(kOutOfRange) for an id outside [0, rows) naming the id and the limit, Error(kNotFound)
// for a word not in the vocabulary.
//
// Thread-safety: reads the handle only; safe from many threads.
//
//   auto h = ModelHandle::open("vectors.bin");
//   api::LookupResult r = api::lookup(*h, {.word = "king"});
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "embedscope/api/common.h"

namespace embedscope::api {

// "1,2,3" -> ids. Error(kInvalidArgument) naming `what` (the option, "--ids") and the item for
// anything that is not a non-negative integer below 2^31.
std::vector<TokenId> parse_id_list(std::string_view s, std::string_view what);

struct LookupRequest {
  std::string word;
  std::vector<TokenId> ids;
};

struct LookupResult {
  std::vector<TokenId> ids;
  std::vector<std::vector<float>> vectors;  // one per id, float32 whatever the stored dtype
};

LookupResult lookup(const ModelHandle& h, const LookupRequest& r);
json to_json(const ModelHandle& h, const LookupResult& r);

// The rows of a lookup as one float32 (n, dim) .npy file, written atomically.
void save_rows_npy(const std::string& path, const LookupResult& r, size_t dim);

// convert: a model's matrix (and its vocabulary, when it has one) rewritten in another format
// (src/api/convert.cpp). `to`: safetensors | npy | word2vec | word2vec-bin, "" = from out's
// extension. Errors: load_model's and save_embeddings' (Error(kInvalidArgument) for an unknown
// format name or extension).
struct ConvertRequest {
  std::string in, out, to, tensor;
};
struct ConvertResult {
  size_t rows = 0, dim = 0;
};
ConvertResult convert(const ConvertRequest& r);

}  // namespace embedscope::api
