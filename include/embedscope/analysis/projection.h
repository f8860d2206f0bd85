// Projections of every row of an embedding table to 2 or 3 dimensions, for plotting.
//
// pca(): exact principal component analysis of the centred matrix, no sampling and no random
// projection whatever the width. Three passes over the rows in the shared pool:
//   1. the column means (double);
//   2. the covariance C = sum (x - mean)(x - mean)^T / (n - 1): each thread centres blocks of
//      kPcaBlockRows rows in float32, takes their Gram matrix with BLAS ssyrk (OpenBLAS, one
//      thread inside each pool worker) and adds it to its own double accumulator; the
//      accumulators are summed in thread order;
//   3. the top `dims` eigenpairs of C by LAPACK dsyevr (double), then each row's coordinates
//      (x - mean) . v_j accumulated in double.
// Results depend on the thread count only through float rounding of the block sums (the
// chunks are contiguous and merged in thread order); a fixed thread count is bit-reproducible.
//
// Sign convention: an eigenvector is defined up to sign, so each component is flipped so that
// its entry of largest absolute value (the first such entry on ties) is positive: the rule of
// scikit-learn's svd_flip(u_based_decision=False), which sklearn.decomposition.PCA uses from
// version 1.5 (Debian 12's 1.2 flips by U's columns instead). It depends only on the loadings,
// so the same rule applied to numpy's SVD gives the same signs.
//
// Errors: Error(kInvalidArgument) when dims is 0 or larger than the table's width or its row
// count, or when a value is not finite (naming the row and the column); Error(kUnsupported)
// when OpenBLAS cannot be loaded; Error(kCorrupt) if LAPACK reports a failure (info named).
// A progress callback that throws aborts the computation with its exception (cancellation).
//
// Thread-safety: pure functions of their arguments; they may run concurrently.
//
//   PcaOptions o;
//   o.dims = 2;
//   Projection p = pca(h->table(), o);     // p.coords: n_rows x 2, row-major
//   p.variance[0];                          // variance along the first component
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "embedscope/core/embedding_table.h"
#include "embedscope/core/progress.h"

namespace embedscope {

// Rows centred and multiplied per BLAS call in pca()'s covariance pass.
inline constexpr size_t kPcaBlockRows = 512;

// Coordinates of every row: coords is n_rows x dims, row-major float32.
struct Projection {
  size_t n_rows = 0;
  size_t dims = 0;
  std::vector<float> coords;
  // PCA: the variance along each component (eigenvalues of the covariance, descending) and the
  // total variance (trace), so variance[i] / total_variance is the explained ratio. Empty for
  // UMAP.
  std::vector<double> variance;
  double total_variance = 0;
};

struct PcaOptions {
  size_t dims = 2;
  size_t n_threads = 0;  // 0 = process_threads()
  // Called from the calling thread with what = "pca", done/total in rows over the three passes
  // (total = 3 * n_rows), at most every 0.2 s and once at the end.
  ProgressFn progress;
};

// Exact PCA of all rows of `table` (see the file comment).
Projection pca(const EmbeddingTable& table, const PcaOptions& options);

}  // namespace embedscope
