#include "embedscope/train/embedding.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <unordered_map>

#include "embedscope/core/error.h"
#include "train/rng.h"

namespace embedscope {

namespace {

void check_shape(size_t n_rows, size_t dim) {
  if (dim == 0) throw Error(ErrorCode::kInvalidArgument, "embedding dim is 0 (expected >= 1)");
  if (n_rows != 0 && dim > (size_t(1) << 40) / n_rows)
    throw Error(ErrorCode::kInvalidArgument, "embedding of " + std::to_string(n_rows) + " x " +
                                                 std::to_string(dim) +
                                                 " elements exceeds the limit of 2^40");
}

EmbeddingOptions normalised(size_t n_rows, EmbeddingOptions o) {
  if (o.padding_idx) {
    int64_t p = *o.padding_idx;
    if (p < 0) p += int64_t(n_rows);
    if (p < 0 || p >= int64_t(n_rows))
      throw Error(ErrorCode::kInvalidArgument, "padding_idx " + std::to_string(*o.padding_idx) +
                                                   " outside [-" + std::to_string(n_rows) + ", " +
                                                   std::to_string(n_rows) + ")");
    o.padding_idx = TokenId(p);
  }
  if (o.max_norm && !(*o.max_norm > 0))
    throw Error(ErrorCode::kInvalidArgument,
                "max_norm " + std::to_string(*o.max_norm) + " must be > 0");
  if (!(o.norm_type > 0))
    throw Error(ErrorCode::kInvalidArgument,
                "norm_type " + std::to_string(o.norm_type) + " must be > 0");
  return o;
}

}  // namespace

Embedding::Embedding(size_t n_rows, size_t dim, const EmbeddingOptions& options)
    : n_rows_(n_rows), dim_(dim), options_(normalised(n_rows, options)) {
  check_shape(n_rows, dim);
  weight_.assign(n_rows * dim, 0.0f);
}

Embedding Embedding::standard(size_t n_rows, size_t dim, uint64_t seed,
                              const EmbeddingOptions& options) {
  return normal(n_rows, dim, 1.0f, seed, options);
}

Embedding Embedding::normal(size_t n_rows, size_t dim, float sigma, uint64_t seed,
                            const EmbeddingOptions& options) {
  if (!(sigma >= 0) || !std::isfinite(sigma))
    throw Error(ErrorCode::kInvalidArgument, "sigma " + std::to_string(sigma) + " must be >= 0");
  Embedding e(n_rows, dim, options);
  SplitMix64 rng(seed);
  for (float& w : e.weight_) w = float(rng.normal()) * sigma;
  if (e.options_.padding_idx)
    std::fill_n(e.weight_.begin() + size_t(*e.options_.padding_idx) * dim, dim, 0.0f);
  return e;
}

Embedding Embedding::uniform(size_t n_rows, size_t dim, float low, float high, uint64_t seed,
                             const EmbeddingOptions& options) {
  if (!(low <= high) || !std::isfinite(low) || !std::isfinite(high))
    throw Error(ErrorCode::kInvalidArgument, "uniform bounds [" + std::to_string(low) + ", " +
                                                 std::to_string(high) + ") are not ordered");
  Embedding e(n_rows, dim, options);
  SplitMix64 rng(seed);
  for (float& w : e.weight_) w = low + float(rng.uniform()) * (high - low);
  if (e.options_.padding_idx)
    std::fill_n(e.weight_.begin() + size_t(*e.options_.padding_idx) * dim, dim, 0.0f);
  return e;
}

Embedding Embedding::from_pretrained(size_t n_rows, size_t dim, std::vector<float> weight,
                                     bool freeze, const EmbeddingOptions& options) {
  Embedding e(n_rows, dim, options);
  if (weight.size() != n_rows * dim)
    throw Error(ErrorCode::kInvalidArgument,
                "pretrained weight has " + std::to_string(weight.size()) + " values, expected " +
                    std::to_string(n_rows) + " x " + std::to_string(dim));
  e.weight_ = std::move(weight);
  e.frozen_ = freeze;
  return e;
}

Embedding Embedding::from_pretrained(const EmbeddingTable& table, bool freeze,
                                     const EmbeddingOptions& options) {
  std::vector<float> w(table.n_rows() * table.dim());
  for (size_t i = 0; i < table.n_rows(); ++i) table.row_f32(i, w.data() + i * table.dim());
  return from_pretrained(table.n_rows(), table.dim(), std::move(w), freeze, options);
}

void Embedding::check_ids(std::span<const TokenId> ids) const {
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] < 0 || size_t(ids[i]) >= n_rows_)
      throw Error(ErrorCode::kOutOfRange, "embedding input position " + std::to_string(i) +
                                              ": id " + std::to_string(ids[i]) + " outside [0, " +
                                              std::to_string(n_rows_) + ")");
}

// torch.embedding_renorm_: each distinct looked-up row whose norm exceeds max_norm is scaled by
// max_norm / (norm + 1e-7), in float32 like PyTorch's CPU kernel.
void Embedding::renorm(std::span<const TokenId> ids) {
  if (!options_.max_norm) return;
  std::vector<TokenId> uniq(ids.begin(), ids.end());
  std::sort(uniq.begin(), uniq.end());
  uniq.erase(std::unique(uniq.begin(), uniq.end()), uniq.end());
  const float max_norm = *options_.max_norm, p = options_.norm_type;
  for (TokenId id : uniq) {
    float* row = weight_.data() + size_t(id) * dim_;
    double acc = 0;
    if (p == 2.0f) {
      for (size_t d = 0; d < dim_; ++d) acc += double(row[d]) * row[d];
      acc = std::sqrt(acc);
    } else if (p == 1.0f) {
      for (size_t d = 0; d < dim_; ++d) acc += std::fabs(row[d]);
    } else {
      for (size_t d = 0; d < dim_; ++d) acc += std::pow(std::fabs(double(row[d])), double(p));
      acc = std::pow(acc, 1.0 / p);
    }
    float norm = float(acc);
    if (norm > max_norm) {
      float scale = max_norm / (norm + 1e-7f);
      for (size_t d = 0; d < dim_; ++d) row[d] *= scale;
    }
  }
}

void Embedding::forward(std::span<const TokenId> ids, float* out) {
  check_ids(ids);
  renorm(ids);
  for (size_t i = 0; i < ids.size(); ++i)
    std::copy_n(weight_.data() + size_t(ids[i]) * dim_, dim_, out + i * dim_);
}

std::vector<float> Embedding::occurrence_scale(std::span<const TokenId> ids) const {
  std::vector<float> s(ids.size(), frozen_ ? 0.0f : 1.0f);
  if (frozen_) return s;
  std::unordered_map<TokenId, uint32_t> count;
  if (options_.scale_grad_by_freq)
    for (TokenId id : ids) ++count[id];
  for (size_t i = 0; i < ids.size(); ++i) {
    if (options_.padding_idx && ids[i] == *options_.padding_idx)
      s[i] = 0.0f;
    else if (options_.scale_grad_by_freq)
      s[i] = 1.0f / float(count[ids[i]]);
  }
  return s;
}

void Embedding::backward_dense(std::span<const TokenId> ids, const float* grad_out,
                               float* grad_weight) const {
  check_ids(ids);
  std::vector<float> s = occurrence_scale(ids);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (s[i] == 0.0f) continue;
    float* g = grad_weight + size_t(ids[i]) * dim_;
    const float* go = grad_out + i * dim_;
    for (size_t d = 0; d < dim_; ++d) g[d] += go[d] * s[i];
  }
}

SparseGrad Embedding::backward_sparse(std::span<const TokenId> ids, const float* grad_out) const {
  check_ids(ids);
  std::vector<float> s = occurrence_scale(ids);
  std::vector<TokenId> rows;
  std::vector<float> vals;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (s[i] == 0.0f) continue;
    rows.push_back(ids[i]);
    for (size_t d = 0; d < dim_; ++d) vals.push_back(grad_out[i * dim_ + d] * s[i]);
  }
  return coalesce(n_rows_, dim_, rows, vals.data());
}

SparseGrad coalesce(size_t n_rows, size_t dim, std::span<const TokenId> rows, const float* values) {
  std::vector<size_t> order(rows.size());
  std::iota(order.begin(), order.end(), size_t(0));
  // Stable, so duplicates are summed in input order (as PyTorch's coalesce does on CPU).
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return rows[a] < rows[b]; });
  SparseGrad g;
  g.n_rows = n_rows;
  g.dim = dim;
  for (size_t k = 0; k < order.size(); ++k) {
    size_t i = order[k];
    if (g.rows.empty() || g.rows.back() != rows[i]) {
      g.rows.push_back(rows[i]);
      g.values.insert(g.values.end(), values + i * dim, values + (i + 1) * dim);
    } else {
      float* dst = g.values.data() + (g.rows.size() - 1) * dim;
      for (size_t d = 0; d < dim; ++d) dst[d] += values[i * dim + d];
    }
  }
  return g;
}

// ---------------------------------------------------------------------------------------------

EmbeddingBag::EmbeddingBag(Embedding embedding, BagMode mode)
    : emb_(std::move(embedding)), mode_(mode) {}

void EmbeddingBag::check(std::span<const TokenId> ids, std::span<const int64_t> offsets,
                         std::span<const float> psw) const {
  emb_.check_ids(ids);
  if (offsets.empty())
    throw Error(ErrorCode::kInvalidArgument, "embedding bag: offsets is empty (expected >= 1)");
  if (offsets[0] != 0)
    throw Error(ErrorCode::kInvalidArgument,
                "embedding bag: offsets[0] is " + std::to_string(offsets[0]) + ", expected 0");
  for (size_t b = 0; b < offsets.size(); ++b) {
    int64_t next = b + 1 < offsets.size() ? offsets[b + 1] : int64_t(ids.size());
    if (next < offsets[b] || next > int64_t(ids.size()))
      throw Error(ErrorCode::kInvalidArgument,
                  "embedding bag: offsets[" + std::to_string(b + 1) +
                      "] = " + std::to_string(next) + " is below offsets[" + std::to_string(b) +
                      "] = " + std::to_string(offsets[b]) + " or beyond " +
                      std::to_string(ids.size()) + " ids");
  }
  if (!psw.empty()) {
    if (mode_ != BagMode::kSum)
      throw Error(ErrorCode::kInvalidArgument,
                  "embedding bag: per_sample_weights are only supported with mode sum");
    if (psw.size() != ids.size())
      throw Error(ErrorCode::kInvalidArgument, "embedding bag: " + std::to_string(psw.size()) +
                                                   " per_sample_weights for " +
                                                   std::to_string(ids.size()) + " ids");
  }
}

void EmbeddingBag::forward(std::span<const TokenId> ids, std::span<const int64_t> offsets,
                           float* out, std::span<const float> psw) {
  check(ids, offsets, psw);
  emb_.renorm(ids);
  const size_t dim = emb_.dim_, n_bags = offsets.size();
  const auto& pad = emb_.options_.padding_idx;
  std::fill_n(out, n_bags * dim, 0.0f);
  if (mode_ == BagMode::kMax) argmax_.assign(n_bags * dim, -1);
  for (size_t b = 0; b < n_bags; ++b) {
    size_t begin = size_t(offsets[b]);
    size_t end = b + 1 < n_bags ? size_t(offsets[b + 1]) : ids.size();
    float* o = out + b * dim;
    size_t n = 0;
    for (size_t i = begin; i < end; ++i) {
      if (pad && ids[i] == *pad) continue;
      const float* w = emb_.weight_.data() + size_t(ids[i]) * dim;
      ++n;
      if (mode_ == BagMode::kMax) {
        int64_t* am = argmax_.data() + b * dim;
        for (size_t d = 0; d < dim; ++d)
          if (am[d] < 0 || w[d] > o[d]) o[d] = w[d], am[d] = int64_t(i);
      } else {
        float s = psw.empty() ? 1.0f : psw[i];
        for (size_t d = 0; d < dim; ++d) o[d] += w[d] * s;
      }
    }
    if (mode_ == BagMode::kMean && n > 0)
      for (size_t d = 0; d < dim; ++d) o[d] /= float(n);
  }
}

template <class F>
void EmbeddingBag::for_each_contribution(std::span<const TokenId> ids,
                                         std::span<const int64_t> offsets,
                                         std::span<const float> psw, F&& f) const {
  if (emb_.frozen_) return;
  const size_t n_bags = offsets.size();
  const auto& pad = emb_.options_.padding_idx;
  std::unordered_map<TokenId, uint32_t> count;
  if (emb_.options_.scale_grad_by_freq)
    for (TokenId id : ids)
      if (!(pad && id == *pad)) ++count[id];
  for (size_t b = 0; b < n_bags; ++b) {
    size_t begin = size_t(offsets[b]);
    size_t end = b + 1 < n_bags ? size_t(offsets[b + 1]) : ids.size();
    size_t n = 0;
    for (size_t i = begin; i < end; ++i) n += !(pad && ids[i] == *pad);
    for (size_t i = begin; i < end; ++i) {
      if (pad && ids[i] == *pad) continue;
      float s = psw.empty() ? 1.0f : psw[i];
      if (mode_ == BagMode::kMean) s /= float(n);
      if (emb_.options_.scale_grad_by_freq) s /= float(count[ids[i]]);
      f(ids[i], i, s, b);
    }
  }
}

void EmbeddingBag::backward_dense(std::span<const TokenId> ids, std::span<const int64_t> offsets,
                                  const float* grad_out, float* grad_weight,
                                  std::span<const float> psw, float* grad_psw) const {
  check(ids, offsets, psw);
  const size_t dim = emb_.dim_;
  if (grad_psw && !psw.empty()) {
    std::fill_n(grad_psw, ids.size(), 0.0f);
    for (size_t b = 0; b < offsets.size(); ++b) {
      size_t begin = size_t(offsets[b]);
      size_t end = b + 1 < offsets.size() ? size_t(offsets[b + 1]) : ids.size();
      for (size_t i = begin; i < end; ++i) {
        if (emb_.options_.padding_idx && ids[i] == *emb_.options_.padding_idx) continue;
        const float* w = emb_.weight_.data() + size_t(ids[i]) * dim;
        float acc = 0;
        for (size_t d = 0; d < dim; ++d) acc += w[d] * grad_out[b * dim + d];
        grad_psw[i] = acc;
      }
    }
  }
  if (mode_ == BagMode::kMax) {
    if (emb_.frozen_ || argmax_.size() != offsets.size() * dim) return;
    for (size_t b = 0; b < offsets.size(); ++b)
      for (size_t d = 0; d < dim; ++d) {
        int64_t i = argmax_[b * dim + d];
        if (i < 0) continue;
        float s = 1.0f;
        if (emb_.options_.scale_grad_by_freq) {
          uint32_t c = 0;
          for (TokenId id : ids) c += id == ids[size_t(i)];
          s /= float(c);
        }
        grad_weight[size_t(ids[size_t(i)]) * dim + d] += grad_out[b * dim + d] * s;
      }
    return;
  }
  for_each_contribution(ids, offsets, psw, [&](TokenId row, size_t, float s, size_t b) {
    float* g = grad_weight + size_t(row) * dim;
    const float* go = grad_out + b * dim;
    for (size_t d = 0; d < dim; ++d) g[d] += go[d] * s;
  });
}

SparseGrad EmbeddingBag::backward_sparse(std::span<const TokenId> ids,
                                         std::span<const int64_t> offsets, const float* grad_out,
                                         std::span<const float> psw) const {
  check(ids, offsets, psw);
  const size_t dim = emb_.dim_;
  std::vector<TokenId> rows;
  std::vector<float> vals;
  if (mode_ == BagMode::kMax) {
    // Dense scratch limited to the touched rows keeps the max routing identical to dense.
    std::vector<float> dense(emb_.n_rows_ * dim, 0.0f);
    backward_dense(ids, offsets, grad_out, dense.data());
    std::vector<TokenId> touched(ids.begin(), ids.end());
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    SparseGrad g;
    g.n_rows = emb_.n_rows_;
    g.dim = dim;
    if (emb_.frozen_) return g;
    for (TokenId r : touched) {
      if (emb_.options_.padding_idx && r == *emb_.options_.padding_idx) continue;
      g.rows.push_back(r);
      g.values.insert(g.values.end(), dense.begin() + size_t(r) * dim,
                      dense.begin() + size_t(r + 1) * dim);
    }
    return g;
  }
  for_each_contribution(ids, offsets, psw, [&](TokenId row, size_t, float s, size_t b) {
    rows.push_back(row);
    for (size_t d = 0; d < dim; ++d) vals.push_back(grad_out[b * dim + d] * s);
  });
  return coalesce(emb_.n_rows_, dim, rows, vals.data());
}

}  // namespace embedscope
