// api::analogy: "a is to b as c is to ?" by 3CosAdd or 3CosMul (search/analogy.h, gensim
// semantics) on a ModelHandle, with its JSON document, the one `embedscope analogy --json`
// prints ({a, b, c, method, mode, inputs, model, elapsed_ms, neighbors}); the server's
// POST /v1/analogy.
//
// Errors (thrown): Error(kNotFound) for a word not in the vocabulary (the message names it),
// Error(kInvalidArgument) for k == 0 or an unknown method / mode.
//
// Thread-safety: safe from many threads (the handle's shared searcher runs one call at a time).
//
//   auto h = ModelHandle::open("");
//   api::AnalogyResult r = api::analogy(*h, {.a = "man", .b = "king", .c = "woman", .k = 5});
#pragma once

#include <string>
#include <vector>

#include "embedscope/api/common.h"
#include "embedscope/search/analogy.h"
#include "embedscope/search/filters.h"

namespace embedscope::api {

struct AnalogyRequest {
  std::string a, b, c;
  size_t k = 10;
  std::string method = "3cosadd";  // 3cosadd, 3cosmul (also add, mul)
  std::string mode = "exact";      // exact, fast
  bool include_query = false;      // keep a, b and c's rows in the answer
  bool center = false;             // subtract the mean row (anisotropy correction)
  FilterSpec filter;               // only these rows may be answers (search/filters.h)
};

struct AnalogyResult {
  AnalogyRequest request;
  AnalogyMethod method = AnalogyMethod::kAdd;
  SearchMode mode = SearchMode::kExact;
  json inputs;  // [{how, ids, pieces, word, weight?}] for a, b, c
  std::vector<Neighbor> neighbors;
  double elapsed_ms = 0;
};

AnalogyResult analogy(const ModelHandle& h, const AnalogyRequest& r);
json to_json(const ModelHandle& h, const AnalogyResult& r);

}  // namespace embedscope::api
