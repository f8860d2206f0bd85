#include "embedscope/api/lookup.h"

#include <charconv>
#include <cstdint>

#include "embedscope/core/error.h"

namespace embedscope::api {

std::vector<TokenId> parse_id_list(std::string_view s, std::string_view what) {
  std::vector<TokenId> ids;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    if (comma == std::string_view::npos) comma = s.size();
    std::string_view part = s.substr(pos, comma - pos);
    long long v = 0;
    auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || p != part.data() + part.size() || v < 0 ||
        v > INT32_MAX)
      throw Error(ErrorCode::kInvalidArgument, std::string(what) + ": '" + std::string(part) +
                                                   "' is not a row id (an integer in [0, 2^31))");
    ids.push_back(TokenId(v));
    pos = comma + 1;
  }
  return ids;
}

LookupResult lookup(const ModelHandle& h, const LookupRequest& r) {
  if (r.word.empty() == r.ids.empty())
    throw Error(ErrorCode::kInvalidArgument, "give a WORD or --ids");
  const EmbeddingTable& t = h.table();
  LookupResult res;
  if (!r.ids.empty()) {
    for (TokenId id : r.ids)
      if (id < 0 || size_t(id) >= t.n_rows())
        throw Error(ErrorCode::kOutOfRange, "--ids: id " + std::to_string(id) +
                                                " out of range [0, " + std::to_string(t.n_rows()) +
                                                ")");
    res.ids = r.ids;
  } else {
    res.ids = resolve_word(h, r.word).ids;
  }
  for (TokenId id : res.ids) res.vectors.push_back(t.row(size_t(id)));
  return res;
}

json to_json(const ModelHandle& h, const LookupResult& r) {
  json rows = json::array();
  for (size_t i = 0; i < r.ids.size(); ++i) {
    json v = json::array();
    for (float x : r.vectors[i]) v.push_back(finite_or_null(x));
    rows.push_back({{"id", r.ids[i]}, {"token", h.words().raw_token(r.ids[i])}, {"vector", v}});
  }
  return {{"dim", h.table().dim()}, {"rows", std::move(rows)}};
}

}  // namespace embedscope::api
