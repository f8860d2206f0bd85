// SIMD kernels against their scalar twins. Inputs are small integers, so every partial sum is
// exact in float32 / int32 and the two must agree bit for bit whatever the summation order.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "simd/dot_kernels.h"
#include "simd/u8i8_kernels.h"

namespace embedscope {
namespace {

std::vector<float> int_values(size_t n, int lo, int hi, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = float(d(g));
  return v;
}

TEST(DotKernels, ReportsTheDispatchedTarget) {
  std::string t = simd::active_target();
  EXPECT_FALSE(t.empty());
}

TEST(DotKernels, F32MatchesScalarForEveryTailLength) {
  for (size_t dim : {1u, 3u, 7u, 16u, 31u, 64u, 65u, 100u, 768u}) {
    const size_t n = 37;
    std::vector<float> rows = int_values(n * dim, -8, 8, uint32_t(dim));
    std::vector<float> q = int_values(dim, -8, 8, uint32_t(dim) + 1);
    std::vector<float> a(n), b(n);
    simd::dot_rows(reinterpret_cast<const std::byte*>(rows.data()), DType::kF32, n, dim, q.data(),
                   a.data());
    simd::dot_rows_scalar(reinterpret_cast<const std::byte*>(rows.data()), DType::kF32, n, dim,
                          q.data(), b.data());
    EXPECT_EQ(a, b) << "dim " << dim;
    // And against the obvious double sum (exact for these inputs).
    double d0 = 0;
    for (size_t j = 0; j < dim; ++j) d0 += double(q[j]) * rows[j];
    EXPECT_EQ(a[0], float(d0));
  }
}

// A row's score must not depend on whether it is scored alone or inside a block of rows (the
// block kernel shares query loads across rows): fast mode re-ranks candidates one row at a
// time and must reproduce exact mode's scores bit for bit. Non-integer inputs on purpose.
TEST(DotKernels, BlockScoresEqualOneRowScoresBitForBit) {
  std::mt19937 g(5);
  std::normal_distribution<float> nd;
  for (size_t dim : {5u, 16u, 100u, 768u, 771u}) {
    const size_t n = 23;
    std::vector<float> rows(n * dim), q(dim);
    for (float& x : rows) x = nd(g);
    for (float& x : q) x = nd(g);
    for (DType dt : {DType::kF32, DType::kBF16}) {
      std::vector<uint16_t> h(rows.size());
      for (size_t i = 0; i < h.size(); ++i) h[i] = f32_to_bf16(rows[i]);
      const std::byte* base = dt == DType::kF32 ? reinterpret_cast<const std::byte*>(rows.data())
                                                : reinterpret_cast<const std::byte*>(h.data());
      const size_t es = dtype_size(dt);
      std::vector<float> block(n), one(n);
      simd::dot_rows(base, dt, n, dim, q.data(), block.data());
      for (size_t i = 0; i < n; ++i)
        simd::dot_rows(base + i * dim * es, dt, 1, dim, q.data(), &one[i]);
      for (size_t i = 0; i < n; ++i)
        EXPECT_EQ(std::memcmp(&block[i], &one[i], 4), 0) << "dim " << dim << " row " << i;
    }
  }
}

TEST(DotKernels, SumRowsMatchesScalarAndTheDoubleSum) {
  for (size_t dim : {1u, 5u, 16u, 63u, 64u, 129u, 768u}) {
    const size_t n = 11;
    std::vector<float> rows = int_values(n * dim, -50, 50, uint32_t(dim) + 7);
    std::vector<float> a(n), b(n);
    simd::sum_rows_f32(rows.data(), n, dim, a.data());
    simd::sum_rows_f32_scalar(rows.data(), n, dim, b.data());
    EXPECT_EQ(a, b) << "dim " << dim;
    for (size_t i = 0; i < n; ++i) {
      double d0 = 0;
      for (size_t j = 0; j < dim; ++j) d0 += rows[i * dim + j];
      EXPECT_EQ(a[i], float(d0)) << "dim " << dim << " row " << i;
    }
  }
}

TEST(DotKernels, F16AndBF16MatchScalar) {
  for (DType t : {DType::kF16, DType::kBF16}) {
    for (size_t dim : {5u, 32u, 50u, 769u}) {
      const size_t n = 19;
      std::vector<float> f = int_values(n * dim, -16, 16, 7);
      std::vector<uint16_t> h(f.size());
      for (size_t i = 0; i < f.size(); ++i)
        h[i] = t == DType::kF16 ? f32_to_f16(f[i]) : f32_to_bf16(f[i]);
      std::vector<float> q = int_values(dim, -4, 4, 9);
      std::vector<float> a(n), b(n), c(n);
      const auto* p = reinterpret_cast<const std::byte*>(h.data());
      simd::dot_rows(p, t, n, dim, q.data(), a.data());
      simd::dot_rows_scalar(p, t, n, dim, q.data(), b.data());
      simd::dot_rows_scalar(reinterpret_cast<const std::byte*>(f.data()), DType::kF32, n, dim,
                            q.data(), c.data());
      EXPECT_EQ(a, b) << dtype_name(t) << " dim " << dim;
      EXPECT_EQ(a, c) << "small integers are exact in " << dtype_name(t);
    }
  }
}

TEST(DotKernels, ConvertToF32MatchesScalarConversions) {
  std::vector<float> f = int_values(1000, -300, 300, 3);
  for (float& x : f) x *= 0.125f;  // exact in f16 and bf16 for |x| < 64 .. still exact here
  for (DType t : {DType::kF16, DType::kBF16}) {
    std::vector<uint16_t> h(f.size());
    for (size_t i = 0; i < f.size(); ++i)
      h[i] = t == DType::kF16 ? f32_to_f16(f[i]) : f32_to_bf16(f[i]);
    std::vector<float> out(f.size());
    simd::convert_to_f32(reinterpret_cast<const std::byte*>(h.data()), t, h.size(), out.data());
    for (size_t i = 0; i < h.size(); ++i)
      ASSERT_EQ(out[i], t == DType::kF16 ? f16_to_f32(h[i]) : bf16_to_f32(h[i])) << i;
  }
}

TEST(DotKernels, Int8MatchesScalarAtTheOverflowBound) {
  for (size_t stride : {64u, 128u, 832u}) {
    const size_t n = 23;
    std::mt19937 g{uint32_t(stride)};
    std::uniform_int_distribution<int> d8(-127, 127);
    const int32_t lim = simd::int8_query_limit(stride);
    std::uniform_int_distribution<int> d16(-lim, lim);
    std::vector<int8_t> rows(n * stride);
    for (auto& x : rows) x = int8_t(d8(g));
    std::vector<int16_t> q(stride);
    for (auto& x : q) x = int16_t(d16(g));
    // Worst case row: every product at the limit, same sign.
    for (size_t j = 0; j < stride; ++j) {
      rows[j] = 127;
      q[j] = int16_t(lim);
    }
    std::vector<int32_t> a(n), b(n);
    simd::dot_rows_i8(rows.data(), n, stride, q.data(), a.data());
    simd::dot_rows_i8_scalar(rows.data(), n, stride, q.data(), b.data());
    EXPECT_EQ(a, b) << "stride " << stride;
    EXPECT_EQ(int64_t(a[0]), int64_t(stride) * 127 * lim);
  }
}

TEST(DotKernels, U8I8BlockMatchesScalarForEveryTileShape) {
  // Without AVX-512 VNNI dot_u8_i8_block is the scalar twin and the batch search does not use
  // it; with it (the CI machines), the VNNI tiles are compared here.
  std::mt19937 g(3);
  std::uniform_int_distribution<int> u8(0, 255), i8(-127, 127);
  for (size_t stride : {64u, 128u, 768u}) {
    for (size_t nq : {1u, 3u, 4u, 9u}) {
      for (size_t nr : {1u, 4u, 7u, 33u}) {
        std::vector<uint8_t> q(nq * stride);
        std::vector<int8_t> rows(nr * stride);
        for (auto& x : q) x = uint8_t(u8(g));
        for (auto& x : rows) x = int8_t(i8(g));
        if (nq == 3) std::fill(q.begin(), q.end(), uint8_t(255));  // the largest sums
        if (nr == 7) std::fill(rows.begin(), rows.end(), int8_t(-128));
        std::vector<int32_t> a(nq * nr), b(nq * nr);
        simd::dot_u8_i8_block(q.data(), nq, rows.data(), nr, stride, a.data());
        simd::dot_u8_i8_block_scalar(q.data(), nq, rows.data(), nr, stride, b.data());
        EXPECT_EQ(a, b) << stride << " " << nq << " " << nr;
        int64_t d0 = 0;
        for (size_t j = 0; j < stride; ++j) d0 += int64_t(q[(nq - 1) * stride + j]) * rows[j];
        EXPECT_EQ(a[(nq - 1) * nr], d0);
      }
    }
  }
}

}  // namespace
}  // namespace embedscope
