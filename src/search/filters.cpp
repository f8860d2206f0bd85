#include "embedscope/search/filters.h"

#include <algorithm>
#include <fstream>
#include <numeric>
#include <regex>
#include <sstream>

#include "embedscope/core/error.h"

namespace embedscope {

namespace {

// Walks UTF-8; false on any invalid sequence or a control character. Sets *letters to whether
// every code point is a letter (ASCII letter or non-ASCII).
bool clean_utf8(std::string_view s, bool* letters) {
  *letters = !s.empty();
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f) return false;
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) *letters = false;
      ++i;
      continue;
    }
    size_t len = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
    if (len == 0 || c == 0xc0 || c == 0xc1 || c > 0xf4 || i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return false;
    i += len;
  }
  return true;
}

}  // namespace

TokenClass parse_token_class(std::string_view s) {
  if (s == "any") return TokenClass::kAny;
  if (s == "word") return TokenClass::kWord;
  if (s == "alpha") return TokenClass::kAlpha;
  if (s == "nospecial" || s == "no-special") return TokenClass::kNoSpecial;
  throw Error(ErrorCode::kInvalidArgument, "unknown token class '" + std::string(s) +
                                               "' (expected any, word, alpha or nospecial)");
}

bool token_in_class(const WordLookup& w, TokenId id, TokenClass c) {
  if (c == TokenClass::kAny) return true;
  if (w.is_special(id)) return false;
  std::string raw = w.raw_token(id);
  bool letters = false;
  if (raw.empty() || !clean_utf8(raw, &letters)) return false;
  if (c == TokenClass::kNoSpecial) return true;
  bool space = raw[0] == ' ';
  std::string_view rest = space ? std::string_view(raw).substr(1) : std::string_view(raw);
  bool alpha = false;
  clean_utf8(rest, &alpha);
  if (c == TokenClass::kAlpha) return alpha;
  return alpha && (space || !w.has_tokenizer());
}

std::optional<std::vector<uint8_t>> build_filter(const FilterSpec& f, const WordLookup& w) {
  if (f.empty()) return std::nullopt;
  const size_t n = w.n_rows();
  std::vector<uint8_t> allow(n, 1);
  auto intersect = [&](const std::vector<uint8_t>& m) {
    for (size_t i = 0; i < n; ++i) allow[i] = allow[i] && m[i];
  };
  if (!f.ids.empty()) {
    std::vector<uint8_t> m(n, 0);
    for (TokenId id : f.ids) {
      if (id < 0 || size_t(id) >= n)
        throw Error(ErrorCode::kOutOfRange, "filter id " + std::to_string(id) +
                                                " is out of range (" + std::to_string(n) +
                                                " rows)");
      m[size_t(id)] = 1;
    }
    intersect(m);
  }
  if (!f.words_file.empty()) {
    std::ifstream in(f.words_file, std::ios::binary);
    if (!in) throw Error(ErrorCode::kNotFound, f.words_file + ": cannot open word list");
    std::vector<uint8_t> m(n, 0);
    size_t found = 0, line_no = 0;
    for (std::string line; std::getline(in, line);) {
      ++line_no;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) continue;
      if (auto r = w.resolve(line); r && r->ids.size() == 1) {
        m[size_t(r->ids[0])] = 1;
        ++found;
      }
    }
    if (found == 0)
      throw Error(ErrorCode::kNotFound, f.words_file + ": none of its " + std::to_string(line_no) +
                                            " lines is a word or single token of this model");
    intersect(m);
  }
  if (!f.regex.empty()) {
    std::regex re;
    try {
      re = std::regex(f.regex, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw Error(ErrorCode::kInvalidArgument,
                  "bad --regex '" + f.regex + "': " + std::string(e.what()));
    }
    for (size_t i = 0; i < n; ++i)
      if (allow[i] && !std::regex_search(w.display(TokenId(i)), re)) allow[i] = 0;
  }
  const Vocabulary* v = w.vocab();
  bool counts = v && v->has_counts() && v->counts().size() >= n;
  if (f.min_count > 0) {
    if (!counts)
      throw Error(ErrorCode::kInvalidArgument,
                  "--min-count needs per-row counts, and this model has none");
    for (size_t i = 0; i < n; ++i)
      if (v->counts()[i] < f.min_count) allow[i] = 0;
  }
  if (f.token_class != TokenClass::kAny)
    for (size_t i = 0; i < n; ++i)
      if (allow[i] && !token_in_class(w, TokenId(i), f.token_class)) allow[i] = 0;
  if (f.top_n > 0 && f.top_n < n) {
    std::vector<uint8_t> m(n, 0);
    if (counts) {
      std::vector<TokenId> order(n);
      std::iota(order.begin(), order.end(), 0);
      // Stable: equal counts keep row order, so the cut is deterministic.
      std::stable_sort(order.begin(), order.end(), [&](TokenId a, TokenId b) {
        return v->counts()[size_t(a)] > v->counts()[size_t(b)];
      });
      for (size_t i = 0; i < f.top_n; ++i) m[size_t(order[i])] = 1;
    } else {
      std::fill(m.begin(), m.begin() + ptrdiff_t(f.top_n), 1);
    }
    intersect(m);
  }
  return allow;
}

std::optional<std::vector<uint8_t>> trained_rows(
    const std::vector<uint64_t>& counts, const std::map<std::string, std::string>& metadata) {
  if (counts.empty()) return std::nullopt;
  uint64_t min_count = 1;
  if (auto it = metadata.find("embedscope.train.min_count"); it != metadata.end()) {
    const std::string& v = it->second;
    if (v.empty() || v.size() > 18 || v.find_first_not_of("0123456789") != std::string::npos)
      throw Error(ErrorCode::kCorrupt, "metadata embedscope.train.min_count is \"" +
                                           v.substr(0, 40) + "\", expected a decimal count");
    min_count = std::max<uint64_t>(1, std::stoull(v));
  }
  std::vector<uint8_t> mask(counts.size());
  for (size_t i = 0; i < counts.size(); ++i) mask[i] = counts[i] >= min_count;
  return mask;
}

}  // namespace embedscope
