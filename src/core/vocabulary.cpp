#include "embedscope/core/vocabulary.h"

#include "embedscope/core/error.h"

namespace embedscope {

TokenId Vocabulary::add(std::string token) {
  TokenId id = TokenId(tokens_.size());
  index_.try_emplace(token, id);
  tokens_.push_back(std::move(token));
  return id;
}

void Vocabulary::reserve(size_t n) {
  tokens_.reserve(n);
  index_.reserve(n);
}

const std::string& Vocabulary::token(TokenId id) const {
  ES_CHECK(id >= 0 && size_t(id) < tokens_.size());
  return tokens_[size_t(id)];
}

std::optional<TokenId> Vocabulary::find(std::string_view token) const {
  auto it = index_.find(token);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

void Vocabulary::set_counts(std::vector<uint64_t> counts) {
  if (counts.size() != tokens_.size())
    throw Error(ErrorCode::kInvalidArgument, "vocabulary counts: " + std::to_string(counts.size()) +
                                                 " values for " + std::to_string(tokens_.size()) +
                                                 " tokens");
  counts_ = std::move(counts);
}

}  // namespace embedscope
