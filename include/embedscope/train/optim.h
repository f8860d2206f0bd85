// Optimizers for an embedding weight, with the update rules of torch.optim (1.13), step for step.
//
// Dense optimizers (Sgd, Adam, AdamW, Adagrad) take a dense gradient of the same size as the
// parameter and move every element (Adam's moments decay even where the gradient is 0).
// Sparse optimizers (SparseAdam, Adagrad::step_sparse) take a coalesced SparseGrad
// (train/embedding.h) and touch only its rows: rows without gradient do not move and their
// optimizer state does not change. The state (moments, step count) lives in the optimizer, which
// is bound to one parameter size at construction.
//
// Errors: a parameter or gradient of the wrong size, or a SparseGrad row outside the parameter,
// throws Error(kInvalidArgument); bad hyper-parameters (lr < 0, betas outside [0, 1)) throw
// Error(kInvalidArgument) from the constructor.
//
//   Embedding emb = Embedding::standard(1000, 64, /*seed=*/1);
//   SparseAdam opt(emb.n_rows(), emb.dim(), {.lr = 1e-2f});
//   emb.forward(ids, out.data());  ...
//   opt.step(emb.weight(), emb.backward_sparse(ids, dout.data()));
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "embedscope/train/embedding.h"

namespace embedscope {

struct SgdOptions {
  float lr = 1e-2f;
  float momentum = 0.0f;
  float dampening = 0.0f;
  float weight_decay = 0.0f;
  bool nesterov = false;
};

class Sgd {
 public:
  Sgd(size_t n_rows, size_t dim, const SgdOptions& options);
  void step(std::span<float> param, std::span<const float> grad);

 private:
  SgdOptions o_;
  size_t n_;
  bool has_buf_ = false;
  std::vector<float> buf_;
};

struct AdamOptions {
  float lr = 1e-3f;
  float beta1 = 0.9f, beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;  // Adam: L2 added to the gradient; AdamW: decoupled (default 1e-2)
};

// torch.optim.Adam (amsgrad=false).
class Adam {
 public:
  Adam(size_t n_rows, size_t dim, const AdamOptions& options);
  void step(std::span<float> param, std::span<const float> grad);

 protected:
  void adam_update(std::span<float> param, std::span<const float> grad, bool decoupled);
  AdamOptions o_;
  size_t n_;
  uint64_t step_ = 0;
  std::vector<float> m_, v_;
};

// torch.optim.AdamW: weight decay applied to the parameter (p *= 1 - lr * wd) before the Adam
// update instead of being added to the gradient.
class AdamW : public Adam {
 public:
  AdamW(size_t n_rows, size_t dim, const AdamOptions& options);
  void step(std::span<float> param, std::span<const float> grad);
};

// torch.optim.SparseAdam: Adam's moments kept only for rows that receive gradient.
class SparseAdam {
 public:
  SparseAdam(size_t n_rows, size_t dim, const AdamOptions& options);  // weight_decay must be 0
  void step(std::span<float> param, const SparseGrad& grad);

 private:
  AdamOptions o_;
  size_t n_rows_, dim_;
  uint64_t step_ = 0;
  std::vector<float> m_, v_;
};

struct AdagradOptions {
  float lr = 1e-2f;
  float lr_decay = 0.0f;
  float weight_decay = 0.0f;  // dense only (PyTorch refuses it with sparse gradients)
  float initial_accumulator_value = 0.0f;
  float eps = 1e-10f;
};

// torch.optim.Adagrad, dense or sparse.
class Adagrad {
 public:
  Adagrad(size_t n_rows, size_t dim, const AdagradOptions& options);
  void step(std::span<float> param, std::span<const float> grad);
  void step_sparse(std::span<float> param, const SparseGrad& grad);

 private:
  AdagradOptions o_;
  size_t n_rows_, dim_;
  uint64_t step_ = 0;
  std::vector<float> sum_;
};

}  // namespace embedscope
