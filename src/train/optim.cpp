// The update rules follow torch/optim/{sgd,adam,adamw,sparse_adam,adagrad}.py of PyTorch 1.13
// operation by operation (float32 element arithmetic, double-precision scalar bias
// corrections), so that parity with torch holds to ~1e-6 after many steps.
#include "embedscope/train/optim.h"

#include <cmath>
#include <string>

#include "embedscope/core/error.h"

namespace embedscope {

namespace {

void check_sizes(const char* who, size_t n, std::span<float> param, size_t grad_size) {
  if (param.size() != n || grad_size != n)
    throw Error(ErrorCode::kInvalidArgument,
                std::string(who) + ": parameter has " + std::to_string(param.size()) +
                    " values and gradient " + std::to_string(grad_size) + ", expected " +
                    std::to_string(n));
}

void check_sparse(const char* who, size_t n_rows, size_t dim, std::span<float> param,
                  const SparseGrad& g) {
  check_sizes(who, n_rows * dim, param, n_rows * dim);
  if (g.dim != dim || g.values.size() != g.rows.size() * dim)
    throw Error(ErrorCode::kInvalidArgument,
                std::string(who) + ": sparse gradient of dim " + std::to_string(g.dim) + " with " +
                    std::to_string(g.values.size()) + " values for " +
                    std::to_string(g.rows.size()) + " rows, expected dim " + std::to_string(dim));
  for (size_t k = 0; k < g.rows.size(); ++k)
    if (g.rows[k] < 0 || size_t(g.rows[k]) >= n_rows || (k > 0 && g.rows[k] <= g.rows[k - 1]))
      throw Error(ErrorCode::kInvalidArgument,
                  std::string(who) + ": sparse gradient row " + std::to_string(k) + " = " +
                      std::to_string(g.rows[k]) + " is outside [0, " + std::to_string(n_rows) +
                      ") or not strictly increasing (coalesce it)");
}

void check_adam(const AdamOptions& o) {
  if (!(o.lr >= 0) || !(o.eps >= 0) || !(o.beta1 >= 0 && o.beta1 < 1) ||
      !(o.beta2 >= 0 && o.beta2 < 1) || !(o.weight_decay >= 0))
    throw Error(ErrorCode::kInvalidArgument,
                "adam: lr " + std::to_string(o.lr) + ", betas (" + std::to_string(o.beta1) + ", " +
                    std::to_string(o.beta2) + "), eps " + std::to_string(o.eps) +
                    ": expected lr >= 0, betas in [0, 1), eps >= 0, weight_decay >= 0");
}

}  // namespace

Sgd::Sgd(size_t n_rows, size_t dim, const SgdOptions& options) : o_(options), n_(n_rows * dim) {
  if (!(o_.lr >= 0) || !(o_.momentum >= 0) || !(o_.weight_decay >= 0))
    throw Error(ErrorCode::kInvalidArgument, "sgd: lr " + std::to_string(o_.lr) + ", momentum " +
                                                 std::to_string(o_.momentum) +
                                                 ": expected values >= 0");
  if (o_.nesterov && (o_.momentum <= 0 || o_.dampening != 0))
    throw Error(ErrorCode::kInvalidArgument, "sgd: nesterov needs momentum > 0 and dampening 0");
}

void Sgd::step(std::span<float> p, std::span<const float> g) {
  check_sizes("sgd", n_, p, g.size());
  if (o_.momentum != 0 && !has_buf_) buf_.assign(n_, 0.0f);
  const float wd = o_.weight_decay, mom = o_.momentum, damp = 1.0f - o_.dampening;
  for (size_t i = 0; i < n_; ++i) {
    float d = g[i];
    if (wd != 0) d = d + p[i] * wd;
    if (mom != 0) {
      if (!has_buf_)
        buf_[i] = d;
      else
        buf_[i] = buf_[i] * mom + d * damp;
      d = o_.nesterov ? d + buf_[i] * mom : buf_[i];
    }
    p[i] = p[i] + d * -o_.lr;
  }
  if (mom != 0) has_buf_ = true;
}

Adam::Adam(size_t n_rows, size_t dim, const AdamOptions& options)
    : o_(options), n_(n_rows * dim), m_(n_, 0.0f), v_(n_, 0.0f) {
  check_adam(o_);
}

void Adam::adam_update(std::span<float> p, std::span<const float> g, bool decoupled) {
  ++step_;
  const double bc1 = 1.0 - std::pow(double(o_.beta1), double(step_));
  const double bc2 = 1.0 - std::pow(double(o_.beta2), double(step_));
  const float step_size = float(double(o_.lr) / bc1);
  const float bc2_sqrt = float(std::sqrt(bc2));
  const float b1 = o_.beta1, b2 = o_.beta2;
  const float a1 = float(1.0 - double(b1)), a2 = float(1.0 - double(b2));
  const float decay = float(1.0 - double(o_.lr) * double(o_.weight_decay));
  for (size_t i = 0; i < n_; ++i) {
    float gi = g[i];
    if (decoupled)
      p[i] = p[i] * decay;
    else if (o_.weight_decay != 0)
      gi = gi + p[i] * o_.weight_decay;
    m_[i] = m_[i] * b1 + gi * a1;
    v_[i] = v_[i] * b2 + gi * gi * a2;
    float denom = std::sqrt(v_[i]) / bc2_sqrt + o_.eps;
    p[i] = p[i] + -step_size * (m_[i] / denom);
  }
}

void Adam::step(std::span<float> p, std::span<const float> g) {
  check_sizes("adam", n_, p, g.size());
  adam_update(p, g, false);
}

AdamW::AdamW(size_t n_rows, size_t dim, const AdamOptions& options) : Adam(n_rows, dim, options) {}

void AdamW::step(std::span<float> p, std::span<const float> g) {
  check_sizes("adamw", n_, p, g.size());
  adam_update(p, g, true);
}

SparseAdam::SparseAdam(size_t n_rows, size_t dim, const AdamOptions& options)
    : o_(options), n_rows_(n_rows), dim_(dim), m_(n_rows * dim, 0.0f), v_(n_rows * dim, 0.0f) {
  check_adam(o_);
  if (o_.weight_decay != 0)
    throw Error(ErrorCode::kInvalidArgument, "sparse adam: weight_decay " +
                                                 std::to_string(o_.weight_decay) +
                                                 " is not supported (expected 0)");
}

void SparseAdam::step(std::span<float> p, const SparseGrad& g) {
  check_sparse("sparse adam", n_rows_, dim_, p, g);
  ++step_;
  const double bc1 = 1.0 - std::pow(double(o_.beta1), double(step_));
  const double bc2 = 1.0 - std::pow(double(o_.beta2), double(step_));
  const float step_size = float(double(o_.lr) * std::sqrt(bc2) / bc1);
  const float a1 = float(1.0 - double(o_.beta1)), a2 = float(1.0 - double(o_.beta2));
  for (size_t k = 0; k < g.rows.size(); ++k) {
    size_t base = size_t(g.rows[k]) * dim_;
    for (size_t d = 0; d < dim_; ++d) {
      const float gv = g.values[k * dim_ + d];
      const float old_m = m_[base + d], old_v = v_[base + d];
      float m_upd = (gv - old_m) * a1;
      float v_upd = (gv * gv - old_v) * a2;
      m_[base + d] = old_m + m_upd;
      v_[base + d] = old_v + v_upd;
      float numer = m_upd + old_m;
      float denom = std::sqrt(v_upd + old_v) + o_.eps;
      p[base + d] = p[base + d] + -step_size * (numer / denom);
    }
  }
}

Adagrad::Adagrad(size_t n_rows, size_t dim, const AdagradOptions& options)
    : o_(options),
      n_rows_(n_rows),
      dim_(dim),
      sum_(n_rows * dim, options.initial_accumulator_value) {
  if (!(o_.lr >= 0) || !(o_.lr_decay >= 0) || !(o_.weight_decay >= 0) ||
      !(o_.initial_accumulator_value >= 0) || !(o_.eps >= 0))
    throw Error(ErrorCode::kInvalidArgument, "adagrad: lr " + std::to_string(o_.lr) +
                                                 ", lr_decay " + std::to_string(o_.lr_decay) +
                                                 ": expected all hyper-parameters >= 0");
}

void Adagrad::step(std::span<float> p, std::span<const float> g) {
  check_sizes("adagrad", n_rows_ * dim_, p, g.size());
  ++step_;
  const float clr = float(double(o_.lr) / (1.0 + double(step_ - 1) * double(o_.lr_decay)));
  for (size_t i = 0; i < sum_.size(); ++i) {
    float gi = g[i];
    if (o_.weight_decay != 0) gi = gi + p[i] * o_.weight_decay;
    sum_[i] = sum_[i] + gi * gi;
    float s = std::sqrt(sum_[i]) + o_.eps;
    p[i] = p[i] + -clr * (gi / s);
  }
}

void Adagrad::step_sparse(std::span<float> p, const SparseGrad& g) {
  check_sparse("adagrad", n_rows_, dim_, p, g);
  if (o_.weight_decay != 0)
    throw Error(ErrorCode::kInvalidArgument,
                "adagrad: weight_decay is not supported with sparse gradients");
  ++step_;
  const float clr = float(double(o_.lr) / (1.0 + double(step_ - 1) * double(o_.lr_decay)));
  for (size_t k = 0; k < g.rows.size(); ++k) {
    size_t base = size_t(g.rows[k]) * dim_;
    for (size_t d = 0; d < dim_; ++d) {
      const float gv = g.values[k * dim_ + d];
      sum_[base + d] = sum_[base + d] + gv * gv;
      float s = std::sqrt(sum_[base + d]) + o_.eps;
      p[base + d] = p[base + d] + -clr * (gv / s);
    }
  }
}

}  // namespace embedscope
