// Scalar dequantisation of the ggml block formats (ggml/src/ggml-quants.c dequantize_row_*).
// Block layouts are read with memcpy / byte arithmetic: file data is never accessed through
// typed pointers because blocks need not be aligned.
#include <cstring>

#include "embedscope/core/dtype.h"
#include "embedscope/core/error.h"
#include "embedscope/formats/gguf.h"

namespace embedscope {

namespace {

inline float half_at(const std::byte* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return f16_to_f32(h);
}
inline uint8_t u8_at(const std::byte* p) { return std::to_integer<uint8_t>(*p); }

// Q4_K scale/min pair j (6 bits each) packed into 12 bytes (ggml get_scale_min_k4).
inline void scale_min_k4(int j, const std::byte* q, uint8_t* d, uint8_t* m) {
  if (j < 4) {
    *d = u8_at(q + j) & 63;
    *m = u8_at(q + j + 4) & 63;
  } else {
    *d = uint8_t((u8_at(q + j + 4) & 0xF) | ((u8_at(q + j - 4) >> 6) << 4));
    *m = uint8_t((u8_at(q + j + 4) >> 4) | ((u8_at(q + j) >> 6) << 4));
  }
}

// block_q4_0 { f16 d; u8 qs[16]; }: x = (nibble - 8) * d, low nibbles first.
void deq_q4_0(const std::byte* b, float* y) {
  float d = half_at(b);
  for (int j = 0; j < 16; ++j) {
    uint8_t q = u8_at(b + 2 + j);
    y[j] = float(int(q & 0xF) - 8) * d;
    y[j + 16] = float(int(q >> 4) - 8) * d;
  }
}
// block_q4_1 { f16 d; f16 m; u8 qs[16]; }: x = nibble * d + m.
void deq_q4_1(const std::byte* b, float* y) {
  float d = half_at(b), m = half_at(b + 2);
  for (int j = 0; j < 16; ++j) {
    uint8_t q = u8_at(b + 4 + j);
    y[j] = float(q & 0xF) * d + m;
    y[j + 16] = float(q >> 4) * d + m;
  }
}
// block_q5_0 { f16 d; u8 qh[4]; u8 qs[16]; }: 5th bit of element j is bit j of qh.
void deq_q5_0(const std::byte* b, float* y) {
  float d = half_at(b);
  uint32_t qh;
  std::memcpy(&qh, b + 2, 4);
  for (int j = 0; j < 16; ++j) {
    uint8_t q = u8_at(b + 6 + j);
    int x0 = int((q & 0xF) | (((qh >> j) << 4) & 0x10)) - 16;
    int x1 = int((q >> 4) | ((qh >> (j + 12)) & 0x10)) - 16;
    y[j] = float(x0) * d;
    y[j + 16] = float(x1) * d;
  }
}
// block_q5_1 { f16 d; f16 m; u8 qh[4]; u8 qs[16]; }
void deq_q5_1(const std::byte* b, float* y) {
  float d = half_at(b), m = half_at(b + 2);
  uint32_t qh;
  std::memcpy(&qh, b + 4, 4);
  for (int j = 0; j < 16; ++j) {
    uint8_t q = u8_at(b + 8 + j);
    int x0 = int((q & 0xF) | (((qh >> j) << 4) & 0x10));
    int x1 = int((q >> 4) | ((qh >> (j + 12)) & 0x10));
    y[j] = float(x0) * d + m;
    y[j + 16] = float(x1) * d + m;
  }
}
// block_q8_0 { f16 d; i8 qs[32]; }
void deq_q8_0(const std::byte* b, float* y) {
  float d = half_at(b);
  for (int j = 0; j < 32; ++j) y[j] = float(int8_t(u8_at(b + 2 + j))) * d;
}
// block_q4_K { f16 d; f16 dmin; u8 scales[12]; u8 qs[128]; } over 256 values in 8 sub-blocks.
void deq_q4_k(const std::byte* b, float* y) {
  float d = half_at(b), dmin = half_at(b + 2);
  const std::byte* scales = b + 4;
  const std::byte* q = b + 16;
  int is = 0;
  for (int j = 0; j < 256; j += 64) {
    uint8_t sc, m;
    scale_min_k4(is, scales, &sc, &m);
    float d1 = d * sc, m1 = dmin * m;
    scale_min_k4(is + 1, scales, &sc, &m);
    float d2 = d * sc, m2 = dmin * m;
    for (int l = 0; l < 32; ++l) *y++ = d1 * float(u8_at(q + l) & 0xF) - m1;
    for (int l = 0; l < 32; ++l) *y++ = d2 * float(u8_at(q + l) >> 4) - m2;
    q += 32;
    is += 2;
  }
}
// block_q6_K { u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d; } over 256 values.
void deq_q6_k(const std::byte* b, float* y) {
  const std::byte* ql = b;
  const std::byte* qh = b + 128;
  const std::byte* sc = b + 192;
  float d = half_at(b + 208);
  for (int n = 0; n < 256; n += 128) {
    for (int l = 0; l < 32; ++l) {
      int is = l / 16;
      uint8_t h = u8_at(qh + l);
      int q1 = int((u8_at(ql + l) & 0xF) | (((h >> 0) & 3) << 4)) - 32;
      int q2 = int((u8_at(ql + l + 32) & 0xF) | (((h >> 2) & 3) << 4)) - 32;
      int q3 = int((u8_at(ql + l) >> 4) | (((h >> 4) & 3) << 4)) - 32;
      int q4 = int((u8_at(ql + l + 32) >> 4) | (((h >> 6) & 3) << 4)) - 32;
      y[l + 0] = d * float(int8_t(u8_at(sc + is + 0))) * float(q1);
      y[l + 32] = d * float(int8_t(u8_at(sc + is + 2))) * float(q2);
      y[l + 64] = d * float(int8_t(u8_at(sc + is + 4))) * float(q3);
      y[l + 96] = d * float(int8_t(u8_at(sc + is + 6))) * float(q4);
    }
    y += 128;
    ql += 64;
    qh += 32;
    sc += 8;
  }
}

}  // namespace

GgmlTypeTraits ggml_type_traits(uint32_t type) {
  // {block size, bytes per block} from ggml.c type_traits (QK_K = 256).
  static constexpr GgmlTypeTraits kTraits[] = {
      {1, 4},    {1, 2},    {32, 18},  {32, 20},   {0, 0},     {0, 0},     {32, 22},   {32, 24},
      {32, 34},  {32, 36},  {256, 84}, {256, 110}, {256, 144}, {256, 176}, {256, 210}, {256, 292},
      {256, 66}, {256, 74}, {256, 98}, {256, 50},  {32, 18},   {256, 110}, {256, 82},  {256, 136},
      {1, 1},    {1, 2},    {1, 4},    {1, 8},     {1, 8},     {256, 56},  {1, 2},     {0, 0},
      {0, 0},    {0, 0},    {256, 54}, {256, 66},  {0, 0},     {0, 0},     {0, 0},     {32, 17},
  };
  if (type >= sizeof kTraits / sizeof kTraits[0]) return {};
  return kTraits[type];
}

std::string ggml_type_name(uint32_t type) {
  static constexpr const char* kNames[] = {
      "F32",     "F16",    "Q4_0",    "Q4_1",  "",       "",      "Q5_0",  "Q5_1",
      "Q8_0",    "Q8_1",   "Q2_K",    "Q3_K",  "Q4_K",   "Q5_K",  "Q6_K",  "Q8_K",
      "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS",
      "I8",      "I16",    "I32",     "I64",   "F64",    "IQ1_M", "BF16",  "",
      "",        "",       "TQ1_0",   "TQ2_0", "",       "",      "",      "MXFP4",
  };
  if (type >= sizeof kNames / sizeof kNames[0]) return "";
  if (kNames[type][0] == '\0') return "type " + std::to_string(type) + " (removed)";
  return kNames[type];
}

bool ggml_type_dequantizable(uint32_t type) {
  switch (GgmlType(type)) {
    case GgmlType::kF32:
    case GgmlType::kF16:
    case GgmlType::kBF16:
    case GgmlType::kQ8_0:
    case GgmlType::kQ4_0:
    case GgmlType::kQ4_1:
    case GgmlType::kQ5_0:
    case GgmlType::kQ5_1:
    case GgmlType::kQ4_K:
    case GgmlType::kQ6_K:
      return true;
    default:
      return false;
  }
}

void ggml_dequantize(uint32_t type, const std::byte* src, size_t n_values, float* out) {
  ES_CHECK(ggml_type_dequantizable(type));
  GgmlTypeTraits tr = ggml_type_traits(type);
  ES_CHECK(n_values % tr.block_size == 0);
  size_t n_blocks = n_values / tr.block_size;
  switch (GgmlType(type)) {
    case GgmlType::kF32:
      std::memcpy(out, src, n_values * 4);
      return;
    case GgmlType::kF16:
      for (size_t i = 0; i < n_values; ++i) out[i] = load_as_f32(src + 2 * i, DType::kF16);
      return;
    case GgmlType::kBF16:
      for (size_t i = 0; i < n_values; ++i) out[i] = load_as_f32(src + 2 * i, DType::kBF16);
      return;
    default:
      break;
  }
  void (*fn)(const std::byte*, float*) = nullptr;
  switch (GgmlType(type)) {
    case GgmlType::kQ4_0:
      fn = deq_q4_0;
      break;
    case GgmlType::kQ4_1:
      fn = deq_q4_1;
      break;
    case GgmlType::kQ5_0:
      fn = deq_q5_0;
      break;
    case GgmlType::kQ5_1:
      fn = deq_q5_1;
      break;
    case GgmlType::kQ8_0:
      fn = deq_q8_0;
      break;
    case GgmlType::kQ4_K:
      fn = deq_q4_k;
      break;
    case GgmlType::kQ6_K:
      fn = deq_q6_k;
      break;
    default:
      ES_CHECK(false);
  }
  for (size_t i = 0; i < n_blocks; ++i) fn(src + i * tr.type_size, out + i * tr.block_size);
}

}  // namespace embedscope
