// Random baseline: seeded per-row generators, exact cosine sampling, order statistics.
#include "embedscope/analysis/baseline.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "embedscope/core/error.h"

namespace embedscope {

namespace {

uint64_t splitmix64(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// xoshiro256** seeded through splitmix64 from (seed, stream): one independent stream per row.
class Rng {
 public:
  Rng(uint64_t seed, uint64_t stream) {
    uint64_t s = seed ^ (stream * 0xD1B54A32D192ED03ull + 0x8CB92BA72F3D8DD7ull);
    for (auto& x : s_) x = splitmix64(s);
  }
  uint64_t next() {
    uint64_t r = rotl(s_[1] * 5, 7) * 9, t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return r;
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }               // [0, 1)
  double uniform_open() { return (double(next() >> 11) + 0.5) * 0x1.0p-53; }  // (0, 1)
  double normal() {  // Marsaglia polar method (no cached second value: keeps streams simple)
    for (;;) {
      double u = 2 * uniform() - 1, v = 2 * uniform() - 1, s = u * u + v * v;
      if (s > 0 && s < 1) return u * std::sqrt(-2 * std::log(s) / s);
    }
  }
  // Gamma(shape >= 1, 1) by Marsaglia and Tsang (2000).
  double gamma(double shape) {
    double d = shape - 1.0 / 3, c = 1 / std::sqrt(9 * d);
    for (;;) {
      double x = normal(), v = 1 + c * x;
      if (v <= 0) continue;
      v = v * v * v;
      double u = uniform_open();
      if (u < 1 - 0.0331 * x * x * x * x) return d * v;
      if (std::log(u) < 0.5 * x * x + d * (1 - v + std::log(v))) return d * v;
    }
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

constexpr uint64_t kQueryStream = ~uint64_t(0);  // the baseline query's own stream

void draw_row(const InitDistribution& init, uint64_t seed, uint64_t i, size_t dim, float* out) {
  Rng r(seed, i);
  if (init.kind == InitDistribution::Kind::kNormal)
    for (size_t j = 0; j < dim; ++j) out[j] = float(init.scale * r.normal());
  else
    for (size_t j = 0; j < dim; ++j) out[j] = float(init.scale * (2 * r.uniform() - 1));
}

}  // namespace

std::string InitDistribution::describe() const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s:%g", kind == Kind::kNormal ? "normal" : "uniform", scale);
  return buf;
}

InitDistribution parse_init_hint(std::string_view hint) {
  InitDistribution d;
  if (hint.empty()) return d;
  auto colon = hint.find(':');
  std::string family(hint.substr(0, colon));
  if (family == "normal")
    d.kind = InitDistribution::Kind::kNormal;
  else if (family == "uniform")
    d.kind = InitDistribution::Kind::kUniform;
  else
    throw Error(ErrorCode::kInvalidArgument, "init distribution '" + std::string(hint) +
                                                 "': expected normal:STD or uniform:HALF_WIDTH");
  if (colon != std::string_view::npos) {
    std::string num(hint.substr(colon + 1));
    char* end = nullptr;
    d.scale = std::strtod(num.c_str(), &end);
    if (num.empty() || end != num.c_str() + num.size() || !(d.scale > 0) || !std::isfinite(d.scale))
      throw Error(ErrorCode::kInvalidArgument, "init distribution '" + std::string(hint) +
                                                   "': scale '" + num +
                                                   "' is not a positive number");
  }
  return d;
}

EmbeddingTable random_table(const InitDistribution& init, size_t n_rows, size_t dim,
                            uint64_t seed) {
  std::vector<float> data(n_rows * dim);
  for (size_t i = 0; i < n_rows; ++i) draw_row(init, seed, i, dim, data.data() + i * dim);
  return EmbeddingTable::from_f32(n_rows, dim, std::move(data));
}

std::vector<float> random_cosines(const InitDistribution& init, size_t n_rows, size_t dim,
                                  uint64_t seed) {
  if (dim < 2)
    throw Error(ErrorCode::kInvalidArgument,
                "random baseline needs dim >= 2, got " + std::to_string(dim));
  std::vector<float> out(n_rows);
  if (init.kind == InitDistribution::Kind::kNormal) {
    double shape = double(dim - 1) / 2;  // chi^2(dim-1) = 2 Gamma((dim-1)/2)
    for (size_t i = 0; i < n_rows; ++i) {
      Rng r(seed, i);
      double z = r.normal();
      double c = shape >= 1 ? 2 * r.gamma(shape) : [&] {
        double x = r.normal();
        return x * x;
      }();
      out[i] = float(z / std::sqrt(z * z + c));
    }
    return out;
  }
  std::vector<float> q(dim), row(dim);
  draw_row(init, seed, kQueryStream, dim, q.data());
  double qn = 0;
  for (float v : q) qn += double(v) * v;
  qn = std::sqrt(qn);
  for (size_t i = 0; i < n_rows; ++i) {
    draw_row(init, seed, i, dim, row.data());
    double dot = 0, rn = 0;
    for (size_t j = 0; j < dim; ++j) {
      dot += double(q[j]) * row[j];
      rn += double(row[j]) * row[j];
    }
    out[i] = float(dot / (qn * std::sqrt(rn)));
  }
  return out;
}

double normal_quantile(double p) {
  if (p <= 0) return -INFINITY;
  if (p >= 1) return INFINITY;
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  const double lo = 0.02425, hi = 1 - lo;
  if (p < lo) {
    double q = std::sqrt(-2 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > hi) return -normal_quantile(1 - p);
  double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

std::vector<double> expected_top_cosines(size_t n_rows, size_t dim, size_t k) {
  std::vector<double> out;
  if (dim == 0) return out;
  double n = double(n_rows);
  for (size_t i = 1; i <= k && i <= n_rows; ++i)
    // The normal approximation ignores that a cosine is bounded; at tiny dims it would pass 1.
    out.push_back(std::clamp(
        normal_quantile((n - double(i) + 1 - 0.375) / (n + 0.25)) / std::sqrt(double(dim)), -1.0,
        1.0));
  return out;
}

}  // namespace embedscope
