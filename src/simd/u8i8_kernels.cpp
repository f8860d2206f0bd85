#include "simd/u8i8_kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <hwy/targets.h>
#include <immintrin.h>
#define ES_HAVE_VNNI_BUILD 1
#endif

namespace embedscope::simd {

size_t u8_i8_max_stride() { return size_t(2147483647) / (255 * 128) / 64 * 64; }

void dot_u8_i8_block_scalar(const uint8_t* q, size_t n_queries, const int8_t* rows, size_t n_rows,
                            size_t stride, int32_t* out) {
  for (size_t qi = 0; qi < n_queries; ++qi)
    for (size_t r = 0; r < n_rows; ++r) {
      int32_t s = 0;
      for (size_t j = 0; j < stride; ++j)
        s += int32_t(q[qi * stride + j]) * int32_t(rows[r * stride + j]);
      out[qi * n_rows + r] = s;
    }
}

#ifdef ES_HAVE_VNNI_BUILD

namespace {

#define ES_VNNI __attribute__((target("avx512f,avx512bw,avx512vnni")))

// QB queries x RB rows: QB x RB accumulators (16 for 4 x 4, of 32 zmm registers), one load of
// each query vector feeds RB vpdpbusd, one load of each row vector QB.
template <int QB, int RB>
ES_VNNI inline void tile(const uint8_t* q, const int8_t* rows, size_t n_rows, size_t stride,
                         int32_t* out) {
  __m512i acc[QB][RB];
  for (int a = 0; a < QB; ++a)
    for (int b = 0; b < RB; ++b) acc[a][b] = _mm512_setzero_si512();
  for (size_t j = 0; j < stride; j += 64) {
    __m512i qv[QB];
    for (int a = 0; a < QB; ++a) qv[a] = _mm512_loadu_si512(q + a * stride + j);
    for (int b = 0; b < RB; ++b) {
      const __m512i rv = _mm512_loadu_si512(rows + b * stride + j);
      for (int a = 0; a < QB; ++a) acc[a][b] = _mm512_dpbusd_epi32(acc[a][b], qv[a], rv);
    }
  }
  for (int a = 0; a < QB; ++a)
    for (int b = 0; b < RB; ++b) out[a * n_rows + b] = _mm512_reduce_add_epi32(acc[a][b]);
}

ES_VNNI void block_vnni(const uint8_t* q, size_t n_queries, const int8_t* rows, size_t n_rows,
                        size_t stride, int32_t* out) {
  size_t qi = 0;
  for (; qi + 4 <= n_queries; qi += 4) {
    size_t r = 0;
    for (; r + 4 <= n_rows; r += 4)
      tile<4, 4>(q + qi * stride, rows + r * stride, n_rows, stride, out + qi * n_rows + r);
    for (; r < n_rows; ++r)
      tile<4, 1>(q + qi * stride, rows + r * stride, n_rows, stride, out + qi * n_rows + r);
  }
  for (; qi < n_queries; ++qi) {
    size_t r = 0;
    for (; r + 4 <= n_rows; r += 4)
      tile<1, 4>(q + qi * stride, rows + r * stride, n_rows, stride, out + qi * n_rows + r);
    for (; r < n_rows; ++r)
      tile<1, 1>(q + qi * stride, rows + r * stride, n_rows, stride, out + qi * n_rows + r);
  }
}

}  // namespace

// Not __builtin_cpu_supports: it links libgcc's __cpu_indicator_init, a constructor that runs
// ~20 CPUID instructions in every process (each a hypervisor exit in a VM),
// where this asks once, when the kernel is first needed.
bool has_u8_i8_kernel() {
  static const bool ok = [] {
    if ((hwy::SupportedTargets() & HWY_AVX3) == 0) return false;  // F, BW, VL; ZMM state saved
    unsigned a = 0, b = 0, c = 0, d = 0;
    __cpuid_count(7, 0, a, b, c, d);  // leaf 7 exists: AVX3 was read from it
    return ((c >> 11) & 1u) != 0;     // AVX512_VNNI
  }();
  return ok;
}

void dot_u8_i8_block(const uint8_t* q, size_t n_queries, const int8_t* rows, size_t n_rows,
                     size_t stride, int32_t* out) {
  if (has_u8_i8_kernel())
    block_vnni(q, n_queries, rows, n_rows, stride, out);
  else
    dot_u8_i8_block_scalar(q, n_queries, rows, n_rows, stride, out);
}

#else

bool has_u8_i8_kernel() { return false; }
void dot_u8_i8_block(const uint8_t* q, size_t n_queries, const int8_t* rows, size_t n_rows,
                     size_t stride, int32_t* out) {
  dot_u8_i8_block_scalar(q, n_queries, rows, n_rows, stride, out);
}

#endif

}  // namespace embedscope::simd
