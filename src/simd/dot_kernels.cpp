// Highway kernels behind dot_kernels.h. This file is compiled once per x86 target by
// foreach_target.h; HWY_DYNAMIC_DISPATCH picks the best one the CPU supports on first call.
// clang-format off: foreach_target.h must come first, before any other Highway header.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/dot_kernels.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h
#include <hwy/highway.h>
// clang-format on

#include <cstring>

#include "simd/dot_kernels.h"

HWY_BEFORE_NAMESPACE();
namespace embedscope::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Four independent accumulators per row hide the FMA latency; the tail (dim % lanes) is scalar
// so rows of any dim work without padding the caller's table.
//
// Rows go R at a time (R = 4 where there are 32 vector registers): one load of q then feeds R
// FMAs, so a scan issues ~1.25 loads per FMA instead of 2, which is what keeps one thread at
// the memory's pace when rows are not 64-byte aligned (every load then splits across two cache
// lines). Each row keeps exactly the accumulators, order and reduction of the one-row loop, so
// a row's score is bit-identical whether it is scored alone (fast mode's re-rank, score()) or
// inside a block (tests/search/kernels_test.cpp checks it).
template <size_t R, class LoadRow>
HWY_INLINE void DotRowGroup(size_t i, size_t dim, const float* HWY_RESTRICT q,
                            float* HWY_RESTRICT out, const LoadRow& load_row) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  hn::Vec<decltype(d)> a[R][4];
  for (size_t r = 0; r < R; ++r)
    for (size_t u = 0; u < 4; ++u) a[r][u] = hn::Zero(d);
  size_t j = 0;
  for (; j + 4 * N <= dim; j += 4 * N) {
    for (size_t u = 0; u < 4; ++u) {
      const auto qv = hn::LoadU(d, q + j + u * N);
      for (size_t r = 0; r < R; ++r)
        a[r][u] = hn::MulAdd(qv, load_row(d, i + r, j + u * N), a[r][u]);
    }
  }
  for (; j + N <= dim; j += N) {
    const auto qv = hn::LoadU(d, q + j);
    for (size_t r = 0; r < R; ++r) a[r][0] = hn::MulAdd(qv, load_row(d, i + r, j), a[r][0]);
  }
  for (size_t r = 0; r < R; ++r) {
    float s = hn::GetLane(
        hn::SumOfLanes(d, hn::Add(hn::Add(a[r][0], a[r][1]), hn::Add(a[r][2], a[r][3]))));
    if (j < dim) {
      // Tail through a zero-padded vector so the summation stays in float32 like the body.
      HWY_ALIGN float qt[hn::MaxLanes(d)] = {};
      HWY_ALIGN float rt[hn::MaxLanes(d)] = {};
      for (size_t t = j; t < dim; ++t) {
        qt[t - j] = q[t];
        rt[t - j] = hn::GetLane(load_row.scalar(i + r, t));
      }
      s += hn::GetLane(hn::SumOfLanes(d, hn::Mul(hn::Load(d, qt), hn::Load(d, rt))));
    }
    out[i + r] = s;
  }
}

template <class LoadRow>
HWY_INLINE void DotRowsImpl(size_t n_rows, size_t dim, const float* HWY_RESTRICT q,
                            float* HWY_RESTRICT out, const LoadRow& load_row) {
#if HWY_TARGET <= HWY_AVX3
  constexpr size_t kGroup = 4;  // 16 accumulators + q + rows fit in 32 zmm registers
#else
  constexpr size_t kGroup = 2;  // 16 registers: 8 accumulators
#endif
  size_t i = 0;
  for (; i + kGroup <= n_rows; i += kGroup) DotRowGroup<kGroup>(i, dim, q, out, load_row);
  for (; i < n_rows; ++i) DotRowGroup<1>(i, dim, q, out, load_row);
}

struct LoadF32 {
  const float* rows;
  size_t dim;
  template <class D>
  HWY_INLINE hn::Vec<D> operator()(D d, size_t i, size_t j) const {
    return hn::LoadU(d, rows + i * dim + j);
  }
  HWY_INLINE hn::Vec<hn::ScalableTag<float>> scalar(size_t i, size_t j) const {
    return hn::Set(hn::ScalableTag<float>(), rows[i * dim + j]);
  }
};

struct LoadF16 {
  const hwy::float16_t* rows;
  size_t dim;
  template <class D>
  HWY_INLINE hn::Vec<D> operator()(D d, size_t i, size_t j) const {
    const hn::Rebind<hwy::float16_t, D> dh;
    return hn::PromoteTo(d, hn::LoadU(dh, rows + i * dim + j));
  }
  HWY_INLINE hn::Vec<hn::ScalableTag<float>> scalar(size_t i, size_t j) const {
    const hn::ScalableTag<float> d;
    uint16_t bits;
    std::memcpy(&bits, rows + i * dim + j, 2);
    return hn::Set(d, f16_to_f32(bits));
  }
};

// bfloat16 is the top half of a float32: widen to u32 and shift.
struct LoadBF16 {
  const uint16_t* rows;
  size_t dim;
  template <class D>
  HWY_INLINE hn::Vec<D> operator()(D d, size_t i, size_t j) const {
    const hn::RebindToUnsigned<D> du32;
    const hn::Rebind<uint16_t, D> du16;
    auto w = hn::PromoteTo(du32, hn::LoadU(du16, rows + i * dim + j));
    return hn::BitCast(d, hn::ShiftLeft<16>(w));
  }
  HWY_INLINE hn::Vec<hn::ScalableTag<float>> scalar(size_t i, size_t j) const {
    return hn::Set(hn::ScalableTag<float>(), bf16_to_f32(rows[i * dim + j]));
  }
};

// Same loop shape as DotRowsImpl with the multiply removed: a pure streaming read of the rows,
// used to measure the read bandwidth a scan can reach (bench/search_bench).
void SumRowsF32(const float* rows, size_t n_rows, size_t dim, float* out) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  for (size_t i = 0; i < n_rows; ++i) {
    const float* r = rows + i * dim;
    auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
    size_t j = 0;
    for (; j + 4 * N <= dim; j += 4 * N) {
      a0 = hn::Add(hn::LoadU(d, r + j), a0);
      a1 = hn::Add(hn::LoadU(d, r + j + N), a1);
      a2 = hn::Add(hn::LoadU(d, r + j + 2 * N), a2);
      a3 = hn::Add(hn::LoadU(d, r + j + 3 * N), a3);
    }
    for (; j + N <= dim; j += N) a0 = hn::Add(hn::LoadU(d, r + j), a0);
    float s = hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3))));
    for (; j < dim; ++j) s += r[j];
    out[i] = s;
  }
}

void DotRowsF32(const float* rows, size_t n_rows, size_t dim, const float* q, float* out) {
  DotRowsImpl(n_rows, dim, q, out, LoadF32{rows, dim});
}
void DotRowsF16(const uint16_t* rows, size_t n_rows, size_t dim, const float* q, float* out) {
  DotRowsImpl(n_rows, dim, q, out, LoadF16{reinterpret_cast<const hwy::float16_t*>(rows), dim});
}
void DotRowsBF16(const uint16_t* rows, size_t n_rows, size_t dim, const float* q, float* out) {
  DotRowsImpl(n_rows, dim, q, out, LoadBF16{rows, dim});
}

// int8 x int16 -> int32 through ReorderWidenMulAccumulate (pmaddwd on x86): sign-extend the
// row bytes to int16, multiply pairs with the query and add adjacent products into int32 lanes.
void DotRowsI8(const int8_t* rows, size_t n_rows, size_t stride, const int16_t* q, int32_t* out) {
  const hn::ScalableTag<int16_t> d16;
  const hn::Rebind<int8_t, decltype(d16)> d8;
  const hn::Repartition<int32_t, decltype(d16)> d32;
  const size_t N = hn::Lanes(d16);
  for (size_t i = 0; i < n_rows; ++i) {
    const int8_t* r = rows + i * stride;
    auto s0 = hn::Zero(d32), s1 = hn::Zero(d32), s2 = hn::Zero(d32), s3 = hn::Zero(d32);
    size_t j = 0;
    for (; j + 2 * N <= stride; j += 2 * N) {
      s0 = hn::ReorderWidenMulAccumulate(d32, hn::PromoteTo(d16, hn::LoadU(d8, r + j)),
                                         hn::LoadU(d16, q + j), s0, s1);
      s2 = hn::ReorderWidenMulAccumulate(d32, hn::PromoteTo(d16, hn::LoadU(d8, r + j + N)),
                                         hn::LoadU(d16, q + j + N), s2, s3);
    }
    for (; j < stride; j += N)
      s0 = hn::ReorderWidenMulAccumulate(d32, hn::PromoteTo(d16, hn::LoadU(d8, r + j)),
                                         hn::LoadU(d16, q + j), s0, s1);
    out[i] = hn::GetLane(hn::SumOfLanes(d32, hn::Add(hn::Add(s0, s1), hn::Add(s2, s3))));
  }
}

void ConvertF16(const uint16_t* src, size_t n, float* dst) {
  const hn::ScalableTag<float> d;
  const hn::Rebind<hwy::float16_t, decltype(d)> dh;
  const size_t N = hn::Lanes(d);
  const auto* s = reinterpret_cast<const hwy::float16_t*>(src);
  size_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(hn::PromoteTo(d, hn::LoadU(dh, s + i)), d, dst + i);
  for (; i < n; ++i) dst[i] = f16_to_f32(src[i]);
}

void ConvertBF16(const uint16_t* src, size_t n, float* dst) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  LoadBF16 load{src, 0};
  for (; i + N <= n; i += N) hn::StoreU(load(d, 0, i), d, dst + i);
  for (; i < n; ++i) dst[i] = bf16_to_f32(src[i]);
}

const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace embedscope::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace embedscope::simd {

HWY_EXPORT(DotRowsF32);
HWY_EXPORT(DotRowsF16);
HWY_EXPORT(DotRowsBF16);
HWY_EXPORT(DotRowsI8);
HWY_EXPORT(SumRowsF32);
HWY_EXPORT(ConvertF16);
HWY_EXPORT(ConvertBF16);
HWY_EXPORT(TargetName);

void dot_rows(const std::byte* rows, DType dtype, size_t n_rows, size_t dim, const float* q,
              float* out) {
  switch (dtype) {
    case DType::kF32:
      return HWY_DYNAMIC_DISPATCH(DotRowsF32)(reinterpret_cast<const float*>(rows), n_rows, dim, q,
                                              out);
    case DType::kF16:
      return HWY_DYNAMIC_DISPATCH(DotRowsF16)(reinterpret_cast<const uint16_t*>(rows), n_rows, dim,
                                              q, out);
    case DType::kBF16:
      return HWY_DYNAMIC_DISPATCH(DotRowsBF16)(reinterpret_cast<const uint16_t*>(rows), n_rows, dim,
                                               q, out);
  }
}

void dot_rows_scalar(const std::byte* rows, DType dtype, size_t n_rows, size_t dim, const float* q,
                     float* out) {
  const size_t es = dtype_size(dtype);
  for (size_t i = 0; i < n_rows; ++i) {
    float s = 0;
    for (size_t j = 0; j < dim; ++j) s += q[j] * load_as_f32(rows + (i * dim + j) * es, dtype);
    out[i] = s;
  }
}

void dot_rows_i8(const int8_t* rows, size_t n_rows, size_t stride, const int16_t* q, int32_t* out) {
  HWY_DYNAMIC_DISPATCH(DotRowsI8)(rows, n_rows, stride, q, out);
}

void dot_rows_i8_scalar(const int8_t* rows, size_t n_rows, size_t stride, const int16_t* q,
                        int32_t* out) {
  for (size_t i = 0; i < n_rows; ++i) {
    int32_t s = 0;
    for (size_t j = 0; j < stride; ++j) s += int32_t(q[j]) * int32_t(rows[i * stride + j]);
    out[i] = s;
  }
}

void sum_rows_f32(const float* rows, size_t n_rows, size_t dim, float* out) {
  HWY_DYNAMIC_DISPATCH(SumRowsF32)(rows, n_rows, dim, out);
}

void sum_rows_f32_scalar(const float* rows, size_t n_rows, size_t dim, float* out) {
  for (size_t i = 0; i < n_rows; ++i) {
    float s = 0;
    for (size_t j = 0; j < dim; ++j) s += rows[i * dim + j];
    out[i] = s;
  }
}

int32_t int8_query_limit(size_t stride) {
  if (stride == 0) return 32767;
  int64_t lim = ((int64_t(1) << 31) - 1) / (int64_t(stride) * 127);
  return int32_t(lim < 32767 ? lim : 32767);
}

void convert_to_f32(const std::byte* src, DType dtype, size_t n, float* dst) {
  switch (dtype) {
    case DType::kF32:
      std::memcpy(dst, src, n * 4);
      return;
    case DType::kF16:
      return HWY_DYNAMIC_DISPATCH(ConvertF16)(reinterpret_cast<const uint16_t*>(src), n, dst);
    case DType::kBF16:
      return HWY_DYNAMIC_DISPATCH(ConvertBF16)(reinterpret_cast<const uint16_t*>(src), n, dst);
  }
}

const char* active_target() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }

}  // namespace embedscope::simd
#endif  // HWY_ONCE
