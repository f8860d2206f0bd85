// Vocabulary: row id <-> token string, with optional per-row counts.
//
// Invariants: ids are dense 0..size()-1; strings are arbitrary bytes (not necessarily UTF-8,
// possibly empty or containing NUL); a string maps to the first id that holds it (readers apply
// the keep-first duplicate policy before adding).
//
//   Vocabulary v;
//   v.add("cat"); v.add("dog");
//   std::optional<TokenId> id = v.find("dog");   // 1
//   v.find("emu");                               // std::nullopt: not an error
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "embedscope/core/embedding_table.h"

namespace embedscope {

class Vocabulary {
 public:
  // Appends a token; returns its id. If the string is already present the new id still gets
  // the string but find() keeps returning the first id.
  TokenId add(std::string token);
  // Room for n tokens, so a reader that knows its size builds without rehashing.
  void reserve(size_t n);
  size_t size() const { return tokens_.size(); }
  bool empty() const { return tokens_.empty(); }
  // id < size() (ES_CHECK).
  const std::string& token(TokenId id) const;
  std::optional<TokenId> find(std::string_view token) const;
  const std::vector<std::string>& tokens() const { return tokens_; }

  // Per-row counts (training frequencies); empty when unknown.
  bool has_counts() const { return !counts_.empty(); }
  const std::vector<uint64_t>& counts() const { return counts_; }
  // counts.size() must equal size() (throws Error(kInvalidArgument) otherwise).
  void set_counts(std::vector<uint64_t> counts);

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, TokenId, Hash, std::equal_to<>> index_;
  std::vector<uint64_t> counts_;
};

}  // namespace embedscope
