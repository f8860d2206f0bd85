#include "formats/word2vec_common.h"

#include <sys/mman.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#include "embedscope/core/error.h"

namespace embedscope::w2v {

namespace {

// from_chars reports result_out_of_range for both overflow and underflow; decide which from
// the text: a negative exponent, or no exponent and a mantissa below 1, is an underflow.
bool is_underflow(const char* b, const char* e) {
  const char* p = b;
  if (p < e && (*p == '-' || *p == '+')) ++p;
  for (const char* q = p; q < e; ++q) {
    if (*q == 'e' || *q == 'E') return q + 1 < e && q[1] == '-';
  }
  while (p < e && *p == '0') ++p;
  return p < e && *p == '.';
}

}  // namespace

std::shared_ptr<float[]> alloc_floats(size_t n) {
  constexpr size_t kHuge = size_t(2) << 20;
  const size_t bytes = std::max<size_t>(n, 1) * sizeof(float);
  if (bytes < kHuge) return std::shared_ptr<float[]>(new float[std::max<size_t>(n, 1)]);
  const size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
  void* p = std::aligned_alloc(kHuge, rounded);
  if (!p) throw std::bad_alloc();
  ::madvise(p, rounded, MADV_HUGEPAGE);  // a hint; ignored where THP is off
  return std::shared_ptr<float[]>(static_cast<float*>(p), [](float* q) { std::free(q); });
}

NumStatus parse_float(const char* b, const char* e, float* out) {
  const char* p = b;
  if (p < e && *p == '+') {
    ++p;
    if (p < e && (*p == '+' || *p == '-')) return NumStatus::kNotNumber;
  }
  double d = 0;
  if (const char* q = parse_double_fast(p, e, &d); q == e) {
    float f = static_cast<float>(d);
    if (!std::isfinite(f)) return NumStatus::kOverflow;
    *out = f;
    return NumStatus::kOk;
  }
  auto [end, ec] = std::from_chars(p, e, d);
  if (ec == std::errc::invalid_argument || end != e) return NumStatus::kNotNumber;
  if (ec == std::errc::result_out_of_range) {
    if (!is_underflow(b, e)) return NumStatus::kOverflow;
    *out = (*p == '-') ? -0.0f : 0.0f;
    return NumStatus::kOk;
  }
  if (!std::isfinite(d)) return NumStatus::kNonFinite;
  float f = static_cast<float>(d);
  if (!std::isfinite(f)) return NumStatus::kOverflow;
  *out = f;
  return NumStatus::kOk;
}

LineShape line_shape(std::string_view line) {
  LineShape s;
  s.starts_with_space = !line.empty() && line[0] == ' ';
  bool numeric_run = true;
  size_t i = line.size();
  while (i > 0) {
    while (i > 0 && line[i - 1] == ' ') --i;
    if (i == 0) break;
    size_t end = i;
    while (i > 0 && line[i - 1] != ' ') --i;
    ++s.n_fields;
    if (numeric_run) {
      if (is_number(line.data() + i, line.data() + end))
        ++s.n_trailing_numbers;
      else
        numeric_run = false;
    }
  }
  return s;
}

size_t glove_dim_candidate(const LineShape& s) {
  if (s.n_fields == 0) return 0;
  if (s.n_trailing_numbers == s.n_fields && !s.starts_with_space) return s.n_fields - 1;
  return s.n_trailing_numbers;
}

std::string_view rstrip_line(std::string_view line) {
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r'))
    line.remove_suffix(1);
  return line;
}

bool is_header_like(std::string_view line) {
  LineShape s = line_shape(line);
  return s.n_fields == 2 && s.n_trailing_numbers == 2 && !s.starts_with_space;
}

Header parse_header(const std::string& path, std::string_view line) {
  Header h;
  size_t sp = line.find(' ');
  std::string_view fields[2] = {line.substr(0, sp), line.substr(line.find_first_not_of(' ', sp))};
  const char* names[2] = {"vector count N", "dimension DIM"};
  uint64_t* vals[2] = {&h.n, &h.dim};
  for (int i = 0; i < 2; ++i) {
    std::string_view f = fields[i];
    const char* b = f.data();
    const char* e = b + f.size();
    if (b < e && *b == '+') ++b;
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(b, e, v);
    if (!f.empty() && f[0] == '-')
      throw Error(ErrorCode::kCorrupt, path + ": line 1: header " + names[i] +
                                           " is negative: " + excerpt(f) +
                                           " (expected \"N DIM\", two positive integers)");
    if (ec == std::errc::result_out_of_range)
      throw Error(ErrorCode::kCorrupt, path + ": line 1: header " + names[i] + " " + excerpt(f) +
                                           " is out of range (limit 2^64-1)");
    if (ec != std::errc() || end != e)
      throw Error(ErrorCode::kCorrupt,
                  path + ": line 1: header " + names[i] + " " + excerpt(f) +
                      " is not an integer (expected \"N DIM\", two positive integers)");
    *vals[i] = v;
  }
  if (h.n == 0)
    throw Error(ErrorCode::kCorrupt,
                path + ": line 1: header declares 0 vectors: no vectors to load");
  if (h.dim == 0)
    throw Error(ErrorCode::kCorrupt,
                path + ": line 1: header declares dimension 0 (DIM must be at least 1)");
  return h;
}

size_t utf8_invalid_offset(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size(), i = 0;
  while (i < n) {
    unsigned c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t need;
    unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte (Unicode table 3-7)
    if (c >= 0xC2 && c <= 0xDF)
      need = 1;
    else if (c == 0xE0)
      need = 2, lo = 0xA0;
    else if (c >= 0xE1 && c <= 0xEF)
      need = 2, hi = (c == 0xED ? 0x9F : 0xBF);
    else if (c == 0xF0)
      need = 3, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3)
      need = 3;
    else if (c == 0xF4)
      need = 3, hi = 0x8F;
    else
      return i;
    for (size_t k = 1; k <= need; ++k) {
      if (i + k >= n) return i;
      unsigned b = p[i + k];
      unsigned l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
      if (b < l || b > h) return i;
    }
    i += need + 1;
  }
  return std::string_view::npos;
}

std::string utf8_replace(std::string_view s) {
  static constexpr char kReplacement[] = "\xEF\xBF\xBD";
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size(), i = 0;
  std::string out;
  out.reserve(n + 8);
  while (i < n) {
    unsigned c = p[i];
    if (c < 0x80) {
      out.push_back(char(c));
      ++i;
      continue;
    }
    size_t need;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
      need = 1;
    else if (c == 0xE0)
      need = 2, lo = 0xA0;
    else if (c >= 0xE1 && c <= 0xEF)
      need = 2, hi = (c == 0xED ? 0x9F : 0xBF);
    else if (c == 0xF0)
      need = 3, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3)
      need = 3;
    else if (c == 0xF4)
      need = 3, hi = 0x8F;
    else {
      out += kReplacement;  // a byte that cannot start a sequence
      ++i;
      continue;
    }
    // Maximal subpart: the lead plus the continuation bytes that were still valid become one
    // U+FFFD, and decoding resumes at the first byte that broke the sequence.
    size_t k = 1;
    for (; k <= need; ++k) {
      if (i + k >= n) break;
      unsigned b = p[i + k];
      unsigned l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
      if (b < l || b > h) break;
    }
    if (k > need)
      out.append(s.substr(i, need + 1));
    else
      out += kReplacement;
    i += k;
  }
  return out;
}

std::string excerpt(std::string_view s, size_t max) {
  std::string out = "'";
  size_t n = std::min(s.size(), max);
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F && c != '\'' && c != '\\') {
      out.push_back(char(c));
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  if (s.size() > max) out += "...";
  return out + "'";
}

}  // namespace embedscope::w2v
