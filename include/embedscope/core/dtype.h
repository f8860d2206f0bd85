// Element types of embedding tables and the scalar conversions between them.
//
// Tables are stored as F32, F16 (IEEE binary16) or BF16 (bfloat16). F64 inputs are converted
// to F32 at load time by the readers. The conversions here are the scalar reference; the
// vectorised versions live in src/simd and are tested against these.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace embedscope {

enum class DType { kF32, kF16, kBF16 };

size_t dtype_size(DType t);
std::string_view dtype_name(DType t);  // "F32", "F16", "BF16" (safetensors spelling)

inline float bf16_to_f32(uint16_t h) { return std::bit_cast<float>(uint32_t(h) << 16); }

// Round to nearest even, NaN stays NaN (quiet).
inline uint16_t f32_to_bf16(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);  // round to nearest even, overflow -> inf

// Reads element i of a buffer of the given dtype as float, without typed loads through
// possibly unaligned pointers.
inline float load_as_f32(const std::byte* p, DType t) {
  switch (t) {
    case DType::kF32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case DType::kF16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return f16_to_f32(h);
    }
    case DType::kBF16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return bf16_to_f32(h);
    }
  }
  return 0.0f;
}

}  // namespace embedscope
