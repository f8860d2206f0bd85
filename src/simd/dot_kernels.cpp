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

// Row i's values [j, dim) (fewer than N) as a vector zero-padded like the query's tail: one load
// masked with FirstN where N values from j stay inside the caller's n_rows rows (they run into
// the next row), else value by value (the last row). The same vector either way; the masked
// load spares the store-forwarding stall of filling an array, which was a sixth of a scan.
template <class D, class LoadRow>
HWY_INLINE hn::Vec<D> RowTail(D d, const LoadRow& load_row, size_t i, size_t j, size_t dim,
                              size_t n_rows) {
  if (i * dim + j + hn::Lanes(d) <= n_rows * dim)
    return hn::IfThenElseZero(hn::FirstN(d, dim - j), load_row(d, i, j));
  HWY_ALIGN float rt[hn::MaxLanes(d)] = {};
  for (size_t t = j; t < dim; ++t) rt[t - j] = hn::GetLane(load_row.scalar(i, t));
  return hn::Load(d, rt);
}

// One row at a time, four independent accumulators to hide the FMA latency; the tail
// (dim % lanes) goes through zero-padded vectors so rows of any dim work without padding the
// caller's table and the sum stays in float32 like the body. A row's score is therefore the same
// bits whether it is scored alone (fast mode's re-rank, score()) or inside a block.
//
// Why not several rows per q load (as this kernel did: 4 rows on AVX-512, fewer q loads per
// FMA): reading 4 rows side by side from memory ran at a quarter of the read bandwidth on the
// 2-core VM, and one row at a time is as fast in cache once the tail is a masked load
// (bench/search_bench BM_FirstScanBlock, BM_Search).
template <class LoadRow>
HWY_INLINE void DotRow(size_t i, size_t dim, size_t n_rows, const float* HWY_RESTRICT q,
                       const float* HWY_RESTRICT q_tail, float* HWY_RESTRICT out,
                       const LoadRow& load_row) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  hn::Vec<decltype(d)> a[4];
  for (size_t u = 0; u < 4; ++u) a[u] = hn::Zero(d);
  size_t j = 0;
  for (; j + 4 * N <= dim; j += 4 * N)
    for (size_t u = 0; u < 4; ++u)
      a[u] = hn::MulAdd(hn::LoadU(d, q + j + u * N), load_row(d, i, j + u * N), a[u]);
  for (; j + N <= dim; j += N) a[0] = hn::MulAdd(hn::LoadU(d, q + j), load_row(d, i, j), a[0]);
  float s = hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(a[0], a[1]), hn::Add(a[2], a[3]))));
  if (j < dim)
    s += hn::GetLane(
        hn::SumOfLanes(d, hn::Mul(hn::Load(d, q_tail), RowTail(d, load_row, i, j, dim, n_rows))));
  out[i] = s;
}

// Core's sum_of_squares (core/embedding_table.cpp) beside the dot products: per 64-value block
// of the row, 16 float lanes (lane l takes the squares of values 16t + l, a multiply then an add:
// this file is compiled with -ffp-contract=off), folded by halving (lanes i + i+8, then i + i+4,
// i + i+2, i + i+1) into a float added to the row's double. The 16 lanes are K = 16 / N vectors
// (one on AVX-512). Padding lanes are never added: adding core's zero-padded squares to a
// non-negative or NaN lane changes no bit.
template <class D>
struct SumSqLanes {
  static constexpr size_t N = hn::MaxLanes(D());
  static_assert(N <= 16 && 16 % N == 0, "16 lanes must be whole vectors");
  static constexpr size_t K = 16 / N;
  hn::Vec<D> v[K];
  HWY_INLINE SumSqLanes() { clear(); }
  HWY_INLINE void clear() {
    for (size_t k = 0; k < K; ++k) v[k] = hn::Zero(D());
  }
  // x holds the values at offsets [e, e + N) of a block (e % N == 0).
  HWY_INLINE void add(size_t e, hn::Vec<D> x) {
    const size_t at = (e % 16) / N;
    for (size_t k = 0; k < K; ++k)  // a constant index where e is one: registers, not memory
      if (k == at) v[k] = hn::Add(v[k], hn::Mul(x, x));
  }
  HWY_INLINE float fold() {
    for (size_t w = K; w > 1; w /= 2)  // whole vectors: lane i + lane i + 8, ...
      for (size_t k = 0; k < w / 2; ++k) v[k] = hn::Add(v[k], v[k + w / 2]);
    return Halve(D(), v[0]);
  }
  template <class DV>
  static HWY_INLINE float Halve(DV dv, hn::Vec<DV> x) {
#if HWY_TARGET == HWY_SCALAR  // one lane, and no UpperHalf
    (void)dv;
    return hn::GetLane(x);
#else
    if constexpr (hn::MaxLanes(dv) == 1) {
      return hn::GetLane(x);
    } else {
      const hn::Half<DV> dh;
      return Halve(dh, hn::Add(hn::LowerHalf(dh, x), hn::UpperHalf(dh, x)));
    }
#endif
  }
};

// DotRow's dot product, each accumulator updated by the same operations in the same order (so
// the same bits), and the row's sum of squares from the same loads: a first scan reads its rows
// once for both its scores and the norms.
template <class LoadRow>
HWY_INLINE void DotSumSqRow(size_t i, size_t dim, size_t n_rows, const float* HWY_RESTRICT q,
                            const float* HWY_RESTRICT q_tail, float* HWY_RESTRICT out,
                            double* HWY_RESTRICT sumsq, const LoadRow& load_row) {
  using D = hn::ScalableTag<float>;
  const D d;
  constexpr size_t N = hn::MaxLanes(D());
  hn::Vec<D> a[4];
  for (size_t u = 0; u < 4; ++u) a[u] = hn::Zero(d);
  SumSqLanes<D> sq;
  double s2 = 0;
  // DotRow's step over the 4N values at j, which sit at offset e of their block.
  auto step = [&](size_t j, size_t e) HWY_ATTR {
    for (size_t u = 0; u < 4; ++u) {
      const auto x = load_row(d, i, j + u * N);
      a[u] = hn::MulAdd(hn::LoadU(d, q + j + u * N), x, a[u]);
      sq.add(e + u * N, x);
    }
  };
  size_t j = 0;
  for (; j + 64 <= dim; j += 64) {  // whole blocks
    for (size_t c = 0; c < 64; c += 4 * N) step(j + c, c);
    s2 += double(sq.fold());
    sq.clear();
  }
  const size_t block = j;  // the partial last block, if any, starts here
  for (; j + 4 * N <= dim; j += 4 * N) step(j, j - block);
  for (; j + N <= dim; j += N) {
    const auto x = load_row(d, i, j);
    a[0] = hn::MulAdd(hn::LoadU(d, q + j), x, a[0]);
    sq.add(j - block, x);
  }
  float s = hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(a[0], a[1]), hn::Add(a[2], a[3]))));
  if (j < dim) {  // DotRow's tail
    const auto x = RowTail(d, load_row, i, j, dim, n_rows);
    s += hn::GetLane(hn::SumOfLanes(d, hn::Mul(hn::Load(d, q_tail), x)));
    sq.add(j - block, x);
  }
  out[i] = s;
  if (block < dim) s2 += double(sq.fold());
  sumsq[i] = s2;
}

// Every row through DotRow, or DotSumSqRow with sumsq.
template <class LoadRow>
HWY_INLINE void DotRowsImpl(size_t n_rows, size_t dim, const float* HWY_RESTRICT q,
                            float* HWY_RESTRICT out, double* HWY_RESTRICT sumsq,
                            const LoadRow& load_row) {
  // q's last dim % N values, zero-padded: the tail's query vector for every row.
  const hn::ScalableTag<float> d;
  const size_t tail = dim - dim % hn::Lanes(d);
  HWY_ALIGN float q_tail[hn::MaxLanes(d)] = {};
  for (size_t t = tail; t < dim; ++t) q_tail[t - tail] = q[t];
  if (sumsq) {
    for (size_t i = 0; i < n_rows; ++i)
      DotSumSqRow(i, dim, n_rows, q, q_tail, out, sumsq, load_row);
  } else {
    for (size_t i = 0; i < n_rows; ++i) DotRow(i, dim, n_rows, q, q_tail, out, load_row);
  }
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

// float16 -> float32 for Lanes(d) values. Without F16C (SSE4 and older targets) Highway's
// emulated PromoteTo turns infinity and NaN into finite values (65536 and up): those targets
// convert each value exactly instead (core's f16_to_f32), slower but the same numbers.
template <class D>
HWY_INLINE hn::Vec<D> PromoteF16(D d, const hwy::float16_t* HWY_RESTRICT p) {
#if HWY_TARGET > HWY_AVX2
  HWY_ALIGN float t[hn::MaxLanes(d)];
  for (size_t k = 0; k < hn::Lanes(d); ++k) {
    uint16_t bits;
    std::memcpy(&bits, p + k, 2);
    t[k] = f16_to_f32(bits);
  }
  return hn::Load(d, t);
#else
  return hn::PromoteTo(d, hn::LoadU(hn::Rebind<hwy::float16_t, D>(), p));
#endif
}

struct LoadF16 {
  const hwy::float16_t* rows;
  size_t dim;
  template <class D>
  HWY_INLINE hn::Vec<D> operator()(D d, size_t i, size_t j) const {
    return PromoteF16(d, rows + i * dim + j);
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
  DotRowsImpl(n_rows, dim, q, out, nullptr, LoadF32{rows, dim});
}
void DotRowsF16(const uint16_t* rows, size_t n_rows, size_t dim, const float* q, float* out) {
  DotRowsImpl(n_rows, dim, q, out, nullptr,
              LoadF16{reinterpret_cast<const hwy::float16_t*>(rows), dim});
}
void DotRowsBF16(const uint16_t* rows, size_t n_rows, size_t dim, const float* q, float* out) {
  DotRowsImpl(n_rows, dim, q, out, nullptr, LoadBF16{rows, dim});
}
void DotRowsSumSq(const std::byte* rows, DType dtype, size_t n_rows, size_t dim, const float* q,
                  float* out, double* sumsq) {
  switch (dtype) {
    case DType::kF32:
      return DotRowsImpl(n_rows, dim, q, out, sumsq,
                         LoadF32{reinterpret_cast<const float*>(rows), dim});
    case DType::kF16:
      return DotRowsImpl(n_rows, dim, q, out, sumsq,
                         LoadF16{reinterpret_cast<const hwy::float16_t*>(rows), dim});
    case DType::kBF16:
      return DotRowsImpl(n_rows, dim, q, out, sumsq,
                         LoadBF16{reinterpret_cast<const uint16_t*>(rows), dim});
  }
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
  const size_t N = hn::Lanes(d);
  const auto* s = reinterpret_cast<const hwy::float16_t*>(src);
  size_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(PromoteF16(d, s + i), d, dst + i);
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
HWY_EXPORT(DotRowsSumSq);
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

void dot_rows_sumsq(const std::byte* rows, DType dtype, size_t n_rows, size_t dim, const float* q,
                    float* out, double* sumsq) {
  HWY_DYNAMIC_DISPATCH(DotRowsSumSq)(rows, dtype, n_rows, dim, q, out, sumsq);
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
