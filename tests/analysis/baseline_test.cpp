// Random baseline: init parsing, per-row reproducibility, the O(1) cosine sampler against a
// materialised table, and the order-statistic expectation against scipy.
#include "embedscope/analysis/baseline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "embedscope/core/error.h"
#include "test_util.h"

namespace embedscope {
namespace {

TEST(Baseline, ParsesInitHints) {
  auto n = parse_init_hint("normal:0.02");
  EXPECT_EQ(n.kind, InitDistribution::Kind::kNormal);
  EXPECT_DOUBLE_EQ(n.scale, 0.02);
  auto u = parse_init_hint("uniform:0.005");
  EXPECT_EQ(u.kind, InitDistribution::Kind::kUniform);
  EXPECT_DOUBLE_EQ(u.scale, 0.005);
  EXPECT_EQ(parse_init_hint("").describe(), "normal:1");
  EXPECT_EQ(n.describe(), "normal:0.02");
}

TEST(Baseline, RejectsBadInitHints) {
  for (const char* bad : {"gauss:1", "normal:-1", "normal:x", "normal:", "uniform:0"}) {
    try {
      parse_init_hint(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

TEST(Baseline, RowsDependOnlyOnSeedAndIndex) {
  auto init = parse_init_hint("normal:0.02");
  EmbeddingTable a = random_table(init, 5, 16, 7), b = random_table(init, 9, 16, 7);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(a.row(i), b.row(i));
  EmbeddingTable c = random_table(init, 5, 16, 8);
  EXPECT_NE(a.row(0), c.row(0));
  // Scale: the sample standard deviation of 5 x 16 values is near 0.02.
  EmbeddingTable big = random_table(init, 1000, 64, 1);
  double s2 = 0;
  const float* d = big.f32();
  for (size_t i = 0; i < 64000; ++i) s2 += double(d[i]) * d[i];
  EXPECT_NEAR(std::sqrt(s2 / 64000), 0.02, 0.0005);
}

TEST(Baseline, UniformRowsStayInRange) {
  EmbeddingTable t = random_table(parse_init_hint("uniform:0.5"), 100, 10, 3);
  const float* d = t.f32();
  auto [lo, hi] = std::minmax_element(d, d + 1000);
  EXPECT_GE(*lo, -0.5f);
  EXPECT_LT(*hi, 0.5f);
  EXPECT_LT(*lo, -0.45f);
  EXPECT_GT(*hi, 0.45f);
}

// Moments of the sampled cosines: mean 0, variance 1/dim (exact for isotropic rows).
TEST(Baseline, SampledCosinesHaveTheRightMoments) {
  for (size_t dim : {8u, 64u, 768u}) {
    auto c = random_cosines(parse_init_hint("normal:0.02"), 40000, dim, 11);
    double m = 0, v = 0;
    for (float x : c) m += x;
    m /= double(c.size());
    for (float x : c) v += (x - m) * (x - m);
    v /= double(c.size());
    EXPECT_NEAR(m, 0.0, 4.0 / std::sqrt(40000.0 * double(dim))) << dim;
    EXPECT_NEAR(v * double(dim), 1.0, 0.03) << dim;
    for (float x : c) ASSERT_TRUE(x >= -1 && x <= 1);
  }
}

double mean_top(std::vector<float> v, size_t k) {
  std::partial_sort(v.begin(), v.begin() + long(k), v.end(), std::greater<float>());
  return std::accumulate(v.begin(), v.begin() + long(k), 0.0) / double(k);
}

// The O(1) sampler and a materialised table give the same top-k statistics (averaged over
// independent seeds to keep the tolerance tight).
TEST(Baseline, SamplerMatchesMaterialisedTable) {
  const size_t n = 4000, dim = 48, k = 10;
  auto init = parse_init_hint("normal:1");
  double fast = 0, full = 0;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    fast += mean_top(random_cosines(init, n, dim, seed), k);
    EmbeddingTable t = random_table(init, n + 1, dim, 1000 + seed);
    std::vector<float> q = t.row(n), cos(n);
    double qn = 0;
    for (float x : q) qn += double(x) * x;
    for (size_t i = 0; i < n; ++i) {
      std::vector<float> r = t.row(i);
      double dot = 0, rn = 0;
      for (size_t j = 0; j < dim; ++j) {
        dot += double(q[j]) * r[j];
        rn += double(r[j]) * r[j];
      }
      cos[i] = float(dot / std::sqrt(qn * rn));
    }
    full += mean_top(cos, k);
  }
  EXPECT_NEAR(fast / 20, full / 20, 0.01);
}

// At GPT-2's shape the N(0, 1/dim) order-statistic approximation is close to the sampled top-k
// (at small dim it overestimates: the true cosine distribution has bounded, lighter tails).
TEST(Baseline, ExpectedTopCosinesMatchSamplesAtGpt2Shape) {
  const size_t n = 50257, dim = 768, k = 10;
  double fast = 0;
  for (uint64_t seed = 0; seed < 4; ++seed)
    fast += mean_top(random_cosines(parse_init_hint("normal:0.02"), n, dim, seed), k);
  auto e = expected_top_cosines(n, dim, k);
  EXPECT_NEAR(fast / 4, std::accumulate(e.begin(), e.end(), 0.0) / double(k), 0.005);
  EXPECT_GT(e[0], e[9]);
}

TEST(Baseline, UniformSamplerUsesTheTableRows) {
  auto init = parse_init_hint("uniform:0.1");
  auto c = random_cosines(init, 50, 16, 5);
  EmbeddingTable t = random_table(init, 50, 16, 5);
  // Query is an extra random row; every cosine is a real cosine of table rows with it.
  double v = 0;
  for (float x : c) v += double(x) * x;
  EXPECT_GT(v / 50 * 16, 0.5);
  EXPECT_LT(v / 50 * 16, 1.8);
  EXPECT_EQ(c, random_cosines(init, 50, 16, 5));
}

TEST(Baseline, QuantileAndExpectationMatchScipy) {
  test::TempDir d;
  auto r = test::run_python(R"(
import sys
from scipy.stats import norm
n, dim, k = 50257, 768, 10
ps = [1e-6, 0.001, 0.02, 0.3, 0.5, 0.9, 0.99, 0.999999]
print(" ".join(repr(float(norm.ppf(p))) for p in ps))
print(" ".join(repr(float(norm.ppf((n - i + 1 - 0.375) / (n + 0.25)) / dim ** 0.5)) for i in range(1, k + 1)))
)");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::istringstream in(r.out);
  const double ps[] = {1e-6, 0.001, 0.02, 0.3, 0.5, 0.9, 0.99, 0.999999};
  for (double p : ps) {
    double want;
    in >> want;
    EXPECT_NEAR(normal_quantile(p), want, 1e-8) << p;
  }
  auto e = expected_top_cosines(50257, 768, 10);
  ASSERT_EQ(e.size(), 10u);
  for (size_t i = 0; i < 10; ++i) {
    double want;
    in >> want;
    EXPECT_NEAR(e[i], want, 1e-8) << i;
  }
}

TEST(Baseline, ExpectedTopCosinesStayCosines) {
  for (double e : expected_top_cosines(50257, 2, 5)) EXPECT_LE(e, 1.0);
}

TEST(Baseline, RejectsDimBelowTwo) {
  EXPECT_THROW(random_cosines(parse_init_hint(""), 10, 1, 0), Error);
}

}  // namespace
}  // namespace embedscope
