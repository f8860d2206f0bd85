#include "embedscope/core/dtype.h"

namespace embedscope {

size_t dtype_size(DType t) { return t == DType::kF32 ? 4 : 2; }

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::kF32:
      return "F32";
    case DType::kF16:
      return "F16";
    case DType::kBF16:
      return "BF16";
  }
  return "?";
}

float f16_to_f32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        mant <<= 1;
        ++e;
      } while ((mant & 0x400u) == 0);
      bits = sign | (uint32_t(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

uint16_t f32_to_f16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return uint16_t(sign | 0x7e00u);   // NaN
  if (ax >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // overflow (incl. inf) -> inf
  if (ax < 0x38800000u) {                                  // subnormal or zero in f16
    if (ax < 0x33000000u) return uint16_t(sign);           // < half of smallest subnormal
    uint32_t e = ax >> 23;
    uint32_t m = (ax & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - e;  // 14..24 bits of mantissa dropped (+13)
    uint32_t r = m >> (shift - 1 + 0);
    // r has one extra bit for rounding
    uint32_t half = r >> 1;
    uint32_t round_bit = r & 1u;
    uint32_t sticky = (m & ((1u << (shift - 1)) - 1)) != 0;
    if (round_bit && (sticky || (half & 1u))) ++half;
    return uint16_t(sign | half);
  }
  uint32_t e = (ax >> 23) - 112;
  uint32_t m = ax & 0x7fffffu;
  uint32_t h = (e << 10) | (m >> 13);
  uint32_t rest = m & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // may carry into exponent: fine
  return uint16_t(sign | h);
}

}  // namespace embedscope
