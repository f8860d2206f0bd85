// SIMD kernels against their scalar twins. Inputs are small integers, so every partial sum is
// exact in float32 / int32 and the two must agree bit for bit whatever the summation order;
// the tests of bit-identical orders say so and use non-integer values.
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "embedscope/core/embedding_table.h"
#include "simd/dot_kernels.h"
#include "simd/u8i8_kernels.h"
#include "test_util.h"

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

// A row's score must not depend on whether it is scored alone or inside a block of rows (and
// on where the row sits: the tail's masked load is used only where it stays inside the block):
// fast mode re-ranks candidates one row at a time and must reproduce exact mode's scores bit
// for bit. Non-integer inputs on purpose.
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

// The first scan's fused kernel against the two it replaces, bit for bit, on every target this
// CPU runs (the dispatcher is pointed at each in turn): its dots are dot_rows' and its sums of
// squares are core's sum_of_squares (so the norms a first scan fills equal those of a separate
// pass, and of EmbeddingTable::norms()). Non-integer values of mixed magnitudes, a zero row, and
// rows with NaN, infinity and squares that overflow; every dim class around the 16-value steps
// and 64-value blocks; groups of rows and the rows left over.
TEST(DotKernels, DotRowsSumSqEqualsDotRowsAndSumOfSquaresOnEveryTarget) {
  std::mt19937 g(11);
  std::normal_distribution<float> nd;
  const size_t n = 13;
  std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  ASSERT_FALSE(targets.empty());
  for (int64_t target : targets) {
    hwy::GetChosenTarget().Update(target);
    ASSERT_STREQ(simd::active_target(), hwy::TargetName(target));
    for (size_t dim : {1u, 3u, 15u, 16u, 17u, 48u, 63u, 64u, 65u, 100u, 300u, 768u, 771u}) {
      std::vector<float> rows(n * dim), q(dim);
      for (size_t i = 0; i < n; ++i) {
        const float scale = std::pow(10.0f, float(int(i % 5) * 6 - 12));  // 1e-12 .. 1e12
        for (size_t j = 0; j < dim; ++j) rows[i * dim + j] = nd(g) * scale;
      }
      for (float& x : q) x = nd(g);
      std::fill_n(rows.begin() + 2 * dim, dim, 0.0f);
      rows[3 * dim + dim / 2] = std::numeric_limits<float>::quiet_NaN();
      rows[4 * dim] = std::numeric_limits<float>::infinity();
      rows[5 * dim + dim - 1] = 3e30f;  // its square overflows float32
      for (DType dt : {DType::kF32, DType::kF16, DType::kBF16}) {
        std::vector<uint16_t> h(rows.size());
        std::vector<float> as_f32 = rows;  // the rows as the kernel reads them
        if (dt != DType::kF32)
          for (size_t i = 0; i < h.size(); ++i) {
            h[i] = dt == DType::kF16 ? f32_to_f16(rows[i]) : f32_to_bf16(rows[i]);
            as_f32[i] = dt == DType::kF16 ? f16_to_f32(h[i]) : bf16_to_f32(h[i]);
          }
        const std::byte* base = dt == DType::kF32 ? reinterpret_cast<const std::byte*>(rows.data())
                                                  : reinterpret_cast<const std::byte*>(h.data());
        std::vector<float> dots(n), want_dots(n);
        std::vector<double> sums(n);
        simd::dot_rows_sumsq(base, dt, n, dim, q.data(), dots.data(), sums.data());
        simd::dot_rows(base, dt, n, dim, q.data(), want_dots.data());
        for (size_t i = 0; i < n; ++i) {
          const double want = sum_of_squares(as_f32.data() + i * dim, dim);
          const std::string at = std::string(hwy::TargetName(target)) + " " +
                                 std::string(dtype_name(dt)) + " dim " + std::to_string(dim) +
                                 " row " + std::to_string(i);
          if (std::isnan(want_dots[i]))  // a NaN's sign and payload are not part of the contract
            EXPECT_TRUE(std::isnan(dots[i])) << at;
          else
            EXPECT_EQ(std::memcmp(&dots[i], &want_dots[i], sizeof(float)), 0) << at;
          if (std::isnan(want))
            EXPECT_TRUE(std::isnan(sums[i])) << at;
          else
            EXPECT_EQ(std::memcmp(&sums[i], &want, sizeof(double)), 0)
                << at << ": " << sums[i] << " vs " << want;
        }
        EXPECT_EQ(sums[2], 0.0);
        EXPECT_TRUE(std::isnan(sums[3]));
        EXPECT_TRUE(std::isinf(sums[4]));
      }
    }
  }
  hwy::GetChosenTarget().Update(hwy::SupportedTargets());
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

// Every float16 bit pattern (zeros, subnormals, infinities, NaNs) converts to core's
// f16_to_f32 value on every target: Highway's emulated conversion on targets without F16C
// turns infinity into 65536, which made dot_rows score such rows as finite there.
TEST(DotKernels, EveryF16ValueConvertsExactlyOnEveryTarget) {
  std::vector<uint16_t> all(65536);
  for (size_t i = 0; i < all.size(); ++i) all[i] = uint16_t(i);
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::GetChosenTarget().Update(target);
    std::vector<float> out(all.size());
    simd::convert_to_f32(reinterpret_cast<const std::byte*>(all.data()), DType::kF16, all.size(),
                         out.data());
    size_t bad = 0;
    for (size_t i = 0; i < all.size(); ++i) {
      const float want = f16_to_f32(all[i]);
      bad += std::isnan(want) ? !std::isnan(out[i]) : std::memcmp(&out[i], &want, 4) != 0;
    }
    EXPECT_EQ(bad, 0u) << hwy::TargetName(target);
    // dot_rows reads F16 rows through the same conversion: an infinite value scores infinite.
    const uint16_t row[3] = {0x3C00, 0x7C00, 0x3C00};  // 1, +inf, 1
    const float q[3] = {1, 1, 1};
    float d = 0;
    simd::dot_rows(reinterpret_cast<const std::byte*>(row), DType::kF16, 1, 3, q, &d);
    EXPECT_TRUE(std::isinf(d)) << hwy::TargetName(target) << ": " << d;
  }
  hwy::GetChosenTarget().Update(hwy::SupportedTargets());
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

// has_u8_i8_kernel asks the CPU itself (CPUID, not libgcc's start-up table): it must say yes
// exactly where the kernel's instructions exist, as the kernel's /proc/cpuinfo flags list them
// (Highway's AVX3 set, which the kernel's target attribute needs, plus VNNI).
TEST(DotKernels, U8I8KernelIsOfferedExactlyWhereTheCpuHasIt) {
  const std::string info = test::read_file("/proc/cpuinfo");
  const size_t at = info.find("\nflags");
  ASSERT_NE(at, std::string::npos);
  const std::string flags = " " + info.substr(at, info.find('\n', at + 1) - at) + " ";
  bool all = true;
  for (const char* f : {"avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl", "avx512_vnni"})
    all = all && flags.find(std::string(" ") + f + " ") != std::string::npos;
#if defined(__x86_64__)
  EXPECT_EQ(simd::has_u8_i8_kernel(), all) << flags;
#else
  EXPECT_FALSE(simd::has_u8_i8_kernel());
#endif
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
