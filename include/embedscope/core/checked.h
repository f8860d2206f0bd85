// Checked size arithmetic for sizes read from untrusted files.
//
// Every count x size product and offset + length sum computed from file fields goes through
// these helpers: they return std::nullopt on overflow (including a product that wraps to 0),
// and bounds are written as subtraction (`off <= avail && len <= avail - off`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace embedscope {

inline std::optional<uint64_t> checked_mul(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<uint64_t> checked_add(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// True when [off, off + len) lies inside [0, avail).
inline bool in_bounds(uint64_t off, uint64_t len, uint64_t avail) {
  return off <= avail && len <= avail - off;
}

}  // namespace embedscope
