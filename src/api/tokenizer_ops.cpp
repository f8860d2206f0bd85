#include "embedscope/api/tokenizer_ops.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "embedscope/core/error.h"

namespace embedscope::api {

TokenizeResult tokenize(const Tokenizer& tok, std::string_view text, bool allow_special) {
  TokenizeResult r;
  Encoding e = tok.encode(text, {.split_special_tokens = !allow_special});
  r.ids = std::move(e.ids);
  for (const TokenSpan& s : e.offsets) r.offsets.push_back(s.begin);
  for (TokenId id : r.ids) r.pieces.push_back(tok.display(id));
  return r;
}

std::string to_text(const Tokenizer& tok, const TokenizeResult& r, size_t n_bytes) {
  std::string s;
  char b[96];
  std::snprintf(b, sizeof b, "%zu tokens, %zu bytes\n%8s %8s  %s\n", r.ids.size(), n_bytes,
                "offset", "id", "piece");
  s += b;
  for (size_t i = 0; i < r.ids.size(); ++i) {
    std::snprintf(b, sizeof b, "%8zu %8d  ", r.offsets[i], r.ids[i]);
    s += b + r.pieces[i] + (tok.is_special(r.ids[i]) ? "  (special)" : "") + "\n";
  }
  return s;
}

std::vector<TokenId> parse_token_ids(const std::vector<std::string>& items, size_t vocab_size) {
  std::vector<TokenId> ids;
  for (const std::string& a : items) {
    size_t pos = 0;
    while (pos < a.size()) {
      size_t end = a.find_first_of(", ", pos);
      if (end == std::string::npos) end = a.size();
      std::string part = a.substr(pos, end - pos);
      pos = end + 1;
      if (part.empty()) continue;
      char* stop = nullptr;
      errno = 0;
      long long v = std::strtoll(part.c_str(), &stop, 10);
      if (stop != part.c_str() + part.size() || errno != 0)
        throw Error(ErrorCode::kInvalidArgument,
                    "decode: '" + part + "' is not a token id (an integer)");
      if (v < 0 || size_t(v) >= vocab_size)
        throw Error(ErrorCode::kOutOfRange, "decode: token id " + part + " is out of range [0, " +
                                                std::to_string(vocab_size) + ")");
      ids.push_back(TokenId(v));
    }
  }
  if (ids.empty()) throw Error(ErrorCode::kInvalidArgument, "decode: give at least one token id");
  return ids;
}

json decode_json(const Tokenizer& tok, const std::vector<TokenId>& ids) {
  json pieces = json::array(), bytes = json::array();
  for (TokenId id : ids) pieces.push_back(tok.display(id));
  for (unsigned char c : tok.decode_bytes(ids)) bytes.push_back(int(c));
  return {{"ids", ids}, {"text", tok.decode(ids)}, {"pieces", pieces}, {"bytes", bytes}};
}

}  // namespace embedscope::api
