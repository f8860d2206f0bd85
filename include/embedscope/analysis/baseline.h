// The random baseline: what a matrix of the same shape, drawn from the model's initial
// distribution, would show for the same query.
//
// Init distributions (Model::init_hint): "normal:S" (GPT-2: normal:0.02), "uniform:A" (values
// in [-A, A], word2vec's (rand - 0.5) / dim is uniform:0.5/dim). An empty hint means the
// documented default normal:1. Cosine is scale-free, so for normal init only the family
// matters.
//
// Random rows are reproducible one by one: row i is drawn from a generator seeded with
// mix(seed, i), so any subset of rows, in any order, on any thread, gives the same values.
//
// Exact sampling without the matrix: for an isotropic (normal) init, the cosine between a fixed
// query direction and a random row r is z / sqrt(z^2 + c) with z ~ N(0, 1) the component of r
// along the query and c ~ chi^2(dim - 1) the squared norm of the rest (rotation invariance).
// sample_random_cosines() draws each row's cosine that way, O(1) per row instead of O(dim), so
// the baseline of a 50257 x 768 model costs about a millisecond instead of drawing 38.6 M normals.
// Uniform init is not isotropic; random_cosines() then draws the rows themselves.
//
// Expected top-k cosine of random vectors: cos ~ approx N(0, 1/dim) (exact mean 0 and variance
// 1/dim), so the i-th largest of n is approx Phi^-1((n - i + 1 - 0.375) / (n + 0.25)) / sqrt(dim)
// (Blom's order-statistic approximation).
//
//   InitDistribution init = parse_init_hint(model.init_hint);
//   std::vector<float> cos = random_cosines(init, n_rows, dim, /*seed=*/42);
//   std::vector<double> e = expected_top_cosines(n_rows, dim, 10);   // e[0] ~ 0.16 for GPT-2
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "embedscope/core/embedding_table.h"

namespace embedscope {

struct InitDistribution {
  enum class Kind { kNormal, kUniform } kind = Kind::kNormal;
  double scale = 1.0;            // normal: standard deviation; uniform: half-width
  std::string describe() const;  // "normal:0.02"
};

// Parses "normal:S" / "uniform:A"; "" -> normal:1.
// Error(kInvalidArgument) naming the hint for anything else or a non-positive scale.
InitDistribution parse_init_hint(std::string_view hint);

// A materialised (n_rows x dim) float32 table drawn from `init`; row i depends only on
// (seed, i).
EmbeddingTable random_table(const InitDistribution& init, size_t n_rows, size_t dim, uint64_t seed);

// Cosines of n_rows random rows against one random query direction (a fresh random row drawn
// from the same init; none of the n_rows is the query itself). Entry i depends only on
// (seed, i). Normal init: exact-in-distribution O(1) sampling per row (see above); uniform
// init: the rows of random_table(init, n_rows, dim, seed) drawn in full.
std::vector<float> random_cosines(const InitDistribution& init, size_t n_rows, size_t dim,
                                  uint64_t seed);

// Approximate expected value of the k largest cosines among n_rows random rows (descending),
// clamped to [-1, 1] (the approximation is poor at tiny dims).
std::vector<double> expected_top_cosines(size_t n_rows, size_t dim, size_t k);

// Inverse of the standard normal CDF (Acklam's rational approximation, |error| < 1.2e-9).
double normal_quantile(double p);

}  // namespace embedscope
