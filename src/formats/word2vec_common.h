// Private helpers shared by the word2vec text / binary readers and writers: number parsing,
// UTF-8 checking and repair, header parsing, field scanning and message formatting.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace embedscope::w2v {

// Uninitialised float storage for a parsed table. Large buffers are 2 MiB aligned and marked
// for transparent huge pages: on VMs each 4 KiB page fault is expensive, and a 100k x 300
// table would otherwise take 30,000 of them.
std::shared_ptr<float[]> alloc_floats(size_t n);

// Result of parsing one decimal field.
enum class NumStatus {
  kOk,         // finite, within float32 range (underflow becomes 0 / subnormal, like numpy)
  kNotNumber,  // not a decimal float at all ("0.1x", "", "--1")
  kNonFinite,  // "nan", "inf", "-Infinity"
  kOverflow,   // beyond float32 range ("1e39", "1e999")
};

// Clinger's fast path: a decimal whose digits (at most 19, value <= 2^53) and whose power of
// ten is at most 22 in magnitude is exactly mantissa * 10^e or mantissa / 10^-e, one correctly
// rounded IEEE operation, so the result equals std::from_chars bit for bit. Grammar handled:
// -?[0-9]*(.[0-9]*)?([eE][+-]?[0-9]+)? with at least one mantissa digit. Returns the end of
// the number, or nullptr when the caller must fall back to std::from_chars (more digits, a
// larger exponent, nan/inf, '+', anything unusual). libstdc++ 12's from_chars takes ~60 ns
// per value; this takes a few.
inline const char* parse_double_fast(const char* p, const char* e, double* out) {
  static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                      1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                      1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  bool neg = false;
  if (p < e && *p == '-') neg = true, ++p;
  // Up to 19 digits cannot overflow uint64; the 2^53 bound is checked once at the end.
  uint64_t m = 0;
  int n_mantissa = 0, exp10 = 0;
  const char* digits_begin = p;
  while (p < e && unsigned(*p - '0') < 10) m = m * 10 + uint64_t(*p++ - '0');
  n_mantissa = int(p - digits_begin);
  if (p < e && *p == '.') {
    const char* frac = ++p;
    while (p < e && unsigned(*p - '0') < 10) m = m * 10 + uint64_t(*p++ - '0');
    exp10 = -int(p - frac);
    n_mantissa -= exp10;
  }
  if (n_mantissa == 0 || n_mantissa > 19 || m > (uint64_t(1) << 53)) return nullptr;
  if (p < e && (*p == 'e' || *p == 'E')) {
    ++p;
    bool eneg = false;
    if (p < e && (*p == '-' || *p == '+')) eneg = *p == '-', ++p;
    if (p >= e || unsigned(*p - '0') >= 10) return nullptr;
    int x = 0;
    while (p < e && unsigned(*p - '0') < 10) {
      x = x * 10 + (*p - '0');
      ++p;
      if (x > 1000) return nullptr;
    }
    exp10 += eneg ? -x : x;
  }
  if (exp10 < -22 || exp10 > 22) return nullptr;
  double d = double(m);  // exact: m <= 2^53
  d = exp10 < 0 ? d / kPow10[-exp10] : d * kPow10[exp10];
  *out = neg ? -d : d;
  return p;
}

// Parses [b, e) as a binary64 with std::from_chars (locale-independent), then rounds to
// float32 as numpy.float32(str) does. A single leading '+' is accepted (Python float does).
NumStatus parse_float(const char* b, const char* e, float* out);
// True for anything that reads as a number, including NaN / Inf / out-of-range values.
inline bool is_number(const char* b, const char* e) {
  float f;
  return parse_float(b, e, &f) != NumStatus::kNotNumber;
}

// The shape of a text line (fields are maximal runs of bytes other than ' ').
struct LineShape {
  size_t n_fields = 0;
  size_t n_trailing_numbers = 0;  // consecutive numeric fields at the end of the line
  bool starts_with_space = false;
};
LineShape line_shape(std::string_view line);

// The DIM a header-less line suggests: its trailing numbers, except that a line made only of
// numbers starts with its word ("1999 0.1 0.2" -> 2).
size_t glove_dim_candidate(const LineShape& s);

// Removes trailing ' ', '\t', '\r' (CRLF files, fastText's trailing space).
std::string_view rstrip_line(std::string_view line);

// Header "N DIM": exactly two space-separated fields that both read as numbers.
bool is_header_like(std::string_view line);
struct Header {
  uint64_t n = 0, dim = 0;
};
// Validates a header-like line: two positive integers, dim <= kMaxDim is checked by callers
// after the size check (so W3 reports the size first). Throws Error(kCorrupt) naming `path`.
Header parse_header(const std::string& path, std::string_view line);

// Offset of the first byte that makes `s` invalid UTF-8, or npos.
size_t utf8_invalid_offset(std::string_view s);
// `s` with each maximal ill-formed subsequence replaced by U+FFFD (Python errors="replace").
std::string utf8_replace(std::string_view s);

// A short, printable rendering of untrusted bytes for messages: quoted, non-printable bytes
// as \xNN, cut to `max` bytes with "...".
std::string excerpt(std::string_view s, size_t max = 40);

}  // namespace embedscope::w2v
