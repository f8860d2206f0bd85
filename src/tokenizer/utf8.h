// UTF-8 decoding for the pre-tokenizers and the U+FFFD policy (internal).
#pragma once

#include <cstddef>
#include <cstdint>

namespace embedscope::utf8 {

inline constexpr uint32_t kInvalid = 0xFFFFFFFFu;

// Decodes the well-formed sequence at s[0..n) (n >= 1). Returns its length and sets *cp; for a
// byte that does not start a well-formed sequence returns the length of the maximal invalid
// subpart (Unicode 15 §3.9 D93b, what Python's errors="replace" uses) and sets *cp = kInvalid.
inline size_t decode(const uint8_t* s, size_t n, uint32_t* cp) {
  uint8_t b0 = s[0];
  if (b0 < 0x80) {
    *cp = b0;
    return 1;
  }
  *cp = kInvalid;
  size_t len;
  uint32_t c;
  uint8_t lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2, c = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3, c = b0 & 0x0F;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4, c = b0 & 0x07;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;  // <= U+10FFFF
  } else {
    return 1;
  }
  for (size_t i = 1; i < len; ++i) {
    if (i >= n) return i;
    uint8_t b = s[i];
    if (b < lo || b > hi) return i;
    lo = 0x80, hi = 0xBF;
    c = (c << 6) | (b & 0x3F);
  }
  *cp = c;
  return len;
}

inline void append(uint32_t cp, char* out, size_t* len) {
  if (cp < 0x80) {
    out[(*len)++] = char(cp);
  } else if (cp < 0x800) {
    out[(*len)++] = char(0xC0 | (cp >> 6));
    out[(*len)++] = char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out[(*len)++] = char(0xE0 | (cp >> 12));
    out[(*len)++] = char(0x80 | ((cp >> 6) & 0x3F));
    out[(*len)++] = char(0x80 | (cp & 0x3F));
  } else {
    out[(*len)++] = char(0xF0 | (cp >> 18));
    out[(*len)++] = char(0x80 | ((cp >> 12) & 0x3F));
    out[(*len)++] = char(0x80 | ((cp >> 6) & 0x3F));
    out[(*len)++] = char(0x80 | (cp & 0x3F));
  }
}

}  // namespace embedscope::utf8
