// Embedding and EmbeddingBag: the lookup-table layer of a neural network, with the semantics of
// PyTorch's torch.nn.Embedding / torch.nn.EmbeddingBag (checked against torch 1.13 at test time).
//
// The weight is a dense (n_rows x dim) row-major float32 matrix owned by the layer. forward()
// gathers rows for a batch of ids; backward_dense() scatter-adds the output gradient into a
// dense (n_rows x dim) gradient; backward_sparse() returns only the touched rows (a coalesced
// SparseGrad: sorted unique rows + their summed gradient), which is what SparseAdam and the
// sparse Adagrad consume (train/optim.h).
//
// Options, as in PyTorch:
//   padding_idx        that row's output gradient is dropped (the row is never updated by an
//                      optimizer that only sees gradients); random init zeroes it; EmbeddingBag
//                      skips it (not counted in "mean").
//   max_norm/norm_type forward() first renormalises, IN PLACE in the weight, every looked-up row
//                      whose p-norm exceeds max_norm to max_norm (scale max_norm/(norm+1e-7),
//                      exactly torch.embedding_renorm_). The weight therefore changes during
//                      forward, and backward treats the renormalised rows as constants (no
//                      gradient flows through the renormalisation), like PyTorch.
//   scale_grad_by_freq each occurrence's gradient is divided by the number of times its id
//                      occurs in the batch (padding_idx occurrences excluded).
//   frozen             from_pretrained(..., freeze=true): backward returns zero / empty gradients.
//
// Errors: ids outside [0, n_rows) throw Error(kOutOfRange) naming the position and the value;
// inconsistent shapes (offsets not increasing, weights of the wrong length) throw
// Error(kInvalidArgument). Thread-safety: a layer is not synchronised; forward with max_norm
// writes to the weight.
//
//   Embedding emb = Embedding::normal(10, 3, /*sigma=*/1.0f, /*seed=*/42);
//   std::vector<TokenId> ids = {1, 4, 4};
//   std::vector<float> out(ids.size() * 3), grad(10 * 3, 0.0f);
//   emb.forward(ids, out.data());
//   emb.backward_dense(ids, dloss_dout.data(), grad.data());   // grad += d loss / d weight
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "embedscope/core/embedding_table.h"

namespace embedscope {

struct EmbeddingOptions {
  std::optional<TokenId> padding_idx;  // in [0, n_rows); negative values count from the end
  std::optional<float> max_norm;       // > 0
  float norm_type = 2.0f;              // p of the p-norm used by max_norm (> 0)
  bool scale_grad_by_freq = false;
};

// A coalesced sparse gradient of an (n_rows x dim) weight: rows sorted ascending, unique;
// values is (rows.size() x dim).
struct SparseGrad {
  size_t n_rows = 0, dim = 0;
  std::vector<TokenId> rows;
  std::vector<float> values;
};

class Embedding {
 public:
  // N(0, 1), PyTorch's default initialisation.
  static Embedding standard(size_t n_rows, size_t dim, uint64_t seed,
                            const EmbeddingOptions& options = {});
  // N(0, sigma^2).
  static Embedding normal(size_t n_rows, size_t dim, float sigma, uint64_t seed,
                          const EmbeddingOptions& options = {});
  // U(low, high).
  static Embedding uniform(size_t n_rows, size_t dim, float low, float high, uint64_t seed,
                           const EmbeddingOptions& options = {});
  // weight: (n_rows x dim) row-major, copied; padding_idx is NOT zeroed (as in PyTorch).
  static Embedding from_pretrained(size_t n_rows, size_t dim, std::vector<float> weight,
                                   bool freeze, const EmbeddingOptions& options = {});
  // Any dtype; converted to float32.
  static Embedding from_pretrained(const EmbeddingTable& table, bool freeze,
                                   const EmbeddingOptions& options = {});

  size_t n_rows() const { return n_rows_; }
  size_t dim() const { return dim_; }
  bool frozen() const { return frozen_; }
  const EmbeddingOptions& options() const { return options_; }
  std::span<float> weight() { return weight_; }
  std::span<const float> weight() const { return weight_; }

  // out: (ids.size() x dim). Applies max_norm renormalisation first (in place).
  void forward(std::span<const TokenId> ids, float* out);
  // grad_out: (ids.size() x dim); grad_weight: (n_rows x dim), ACCUMULATED into (+=).
  void backward_dense(std::span<const TokenId> ids, const float* grad_out,
                      float* grad_weight) const;
  // The same gradient, coalesced. Frozen: no rows.
  SparseGrad backward_sparse(std::span<const TokenId> ids, const float* grad_out) const;

 private:
  Embedding(size_t n_rows, size_t dim, const EmbeddingOptions& options);
  friend class EmbeddingBag;
  void check_ids(std::span<const TokenId> ids) const;
  void renorm(std::span<const TokenId> ids);
  // Per-occurrence gradient multiplier (0 for padding, 1/count with scale_grad_by_freq).
  std::vector<float> occurrence_scale(std::span<const TokenId> ids) const;
  size_t n_rows_ = 0, dim_ = 0;
  EmbeddingOptions options_;
  bool frozen_ = false;
  std::vector<float> weight_;
};

enum class BagMode { kSum, kMean, kMax };

// EmbeddingBag: reduces the rows of each bag without materialising them.
// Bags are given by offsets: bag b holds ids[offsets[b] .. offsets[b+1]) (the last bag runs to
// the end). offsets[0] must be 0 and offsets non-decreasing; an empty bag outputs zeros.
// per_sample_weights (same length as ids) is only allowed with kSum (as in PyTorch) and
// multiplies each row. In kMax each output element takes the max over the bag's rows and its
// gradient goes to the row that attained it (the first on ties).
class EmbeddingBag {
 public:
  EmbeddingBag(Embedding embedding, BagMode mode);

  Embedding& embedding() { return emb_; }
  const Embedding& embedding() const { return emb_; }
  BagMode mode() const { return mode_; }

  // out: (offsets.size() x dim). per_sample_weights: empty or ids.size().
  void forward(std::span<const TokenId> ids, std::span<const int64_t> offsets, float* out,
               std::span<const float> per_sample_weights = {});
  // Uses the argmax recorded by the last forward() for kMax (call forward first, same inputs).
  // grad_out: (offsets.size() x dim); grad_weight (+=): (n_rows x dim). If grad_psw is not null
  // and weights were given, writes d loss / d per_sample_weights (ids.size()).
  void backward_dense(std::span<const TokenId> ids, std::span<const int64_t> offsets,
                      const float* grad_out, float* grad_weight,
                      std::span<const float> per_sample_weights = {},
                      float* grad_psw = nullptr) const;
  SparseGrad backward_sparse(std::span<const TokenId> ids, std::span<const int64_t> offsets,
                             const float* grad_out,
                             std::span<const float> per_sample_weights = {}) const;

 private:
  void check(std::span<const TokenId> ids, std::span<const int64_t> offsets,
             std::span<const float> psw) const;
  // Calls f(row, position, scale, bag) for every gradient contribution.
  template <class F>
  void for_each_contribution(std::span<const TokenId> ids, std::span<const int64_t> offsets,
                             std::span<const float> psw, F&& f) const;
  Embedding emb_;
  BagMode mode_;
  std::vector<int64_t> argmax_;  // kMax: (n_bags x dim) position into ids, -1 for empty bags
};

// Coalesces (row, gradient-row) pairs: sorts rows, sums duplicates.
SparseGrad coalesce(size_t n_rows, size_t dim, std::span<const TokenId> rows, const float* values);

}  // namespace embedscope
