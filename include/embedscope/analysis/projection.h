// Projections of every row of an embedding table to 2 or 3 dimensions, for plotting: exact PCA
// and UMAP (below).
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
#include <utility>
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

// ---- UMAP (McInnes, Healy, Melville 2018; the reference is umap-learn 0.5.3) ----
//
// umap() runs three stages, each reported through `progress` (what = "knn", "fuzzy", "layout"):
//   1. knn: below kUmapExactKnnRows rows (or with knn = kExact) the exact n_neighbors nearest
//      rows of every row; above, the approximate graph of umap_knn_approx() (NN-descent). In
//      both the row itself comes first, at distance 0; cosine distance 1 - cos by default, or
//      Euclidean. Exact: every unordered pair of 512-row blocks is multiplied once by OpenBLAS
//      sgemm and each similarity offered to both rows' top-k lists (half the work of one query per
//      row); the chosen neighbours' distances are then recomputed in double and re-sorted.
//      Independent of the thread count. Zero rows under cosine have no neighbours (they stay
//      isolated); a non-finite value is an error.
//   2. fuzzy: umap-learn's fuzzy simplicial set: per row, rho = the nearest non-zero distance and
//      sigma by binary search so that sum_j exp(-(d_j - rho) / sigma) = log2(k) (smooth_knn_dist,
//      64 steps, tolerance 1e-5, sigma >= 1e-3 x the mean distance); memberships
//      exp(-(d - rho) / sigma); symmetrised by the fuzzy union P + P^T - P o P^T.
//   3. layout: umap-learn's SGD (optimize_layout_euclidean, move_other): edges below
//      max_weight / n_epochs dropped; each edge sampled every max_weight / weight epochs with
//      negative_sample_rate negatives per sample; learning rate decaying linearly from 1;
//      gradients clipped to +-4; curve 1 / (1 + a d^2b) with a, b fitted to min_dist / spread
//      like find_ab_params (Levenberg-Marquardt on the same 300 points).
//      n_epochs 0 means umap-learn's default: 500 up to 10,000 rows, else 200.
// Initialisation: not umap-learn's spectral embedding (a sparse eigensolver we do not have) but
// the exact PCA above, scaled to max |coordinate| 10 with N(0, 1e-4) noise (umap-learn's own
// recipe for its spectral init), then umap-learn's rescale of every axis to [0, 10].
//
// Parallel and reproducible: with one thread the layout is umap-learn's sequential SGD (every
// read and write in place). With more, each epoch runs in 16 rounds (vertex j in round j mod
// 16); the vertices of a round are split into one contiguous range per thread; a thread moves
// its own vertices in place and reads every other vertex from the round's starting snapshot;
// the pulls an edge gives its other end are summed per thread and added after the round in
// thread order; negatives come from a generator seeded by (seed, epoch, vertex). So a seed and a
// thread count give the same coordinates bit for bit (umap-learn's parallel layout is a race and
// is not reproducible). One snapshot per epoch instead of 16 cost 0.02 of trustworthiness@10 on
// the default model (bench/RESULTS.md); 16 rounds match the sequential result.
// Since a round's vertices are independent, a thread moves 4 of them in lockstep, one sample of
// each per step, in SIMD lanes (their latency chains overlap; one operation serves 4 samples), each
// vertex still taking its samples in umap-learn's order; the vertices are numbered in breadth-first
// order of the graph for the layout (neighbours close in memory) and the edges stored round by
// round; d^b is a polynomial approximation within 2.2e-4 relative. The per-epoch work is
// umap-learn's: same n_epochs, the same epochs_per_sample schedule, negative_sample_rate negatives
// per sample, a/b, clipping.

// Errors: Error(kInvalidArgument) for dims outside 1..3 or above the width, n_neighbors < 2 or not
// below the row count, min_dist outside [0, spread], and non-finite values (from the PCA pass).

struct UmapOptions {
  size_t dims = 2;
  size_t n_neighbors = 15;
  double min_dist = 0.1;
  double spread = 1.0;
  size_t n_epochs = 0;  // 0: 500 up to 10,000 rows, else 200 (umap-learn)
  size_t negative_sample_rate = 5;
  double learning_rate = 1.0;
  double repulsion_strength = 1.0;  // umap-learn's gamma
  bool euclidean = false;           // false: cosine distance
  // The kNN graph: kAuto is exact below kUmapExactKnnRows rows (umap-learn's own threshold for
  // its brute-force path), else approximate (umap_knn_approx).
  enum class Knn { kAuto, kExact, kApproximate };
  Knn knn = Knn::kAuto;
  uint64_t seed = 42;
  // Every stage runs on process_pool(), its loops split into n_threads tasks (0 =
  // process_threads()): the result depends on n_threads, never on the pool's size.
  size_t n_threads = 0;
  ProgressFn progress;
};

Projection umap(const EmbeddingTable& table, const UmapOptions& options);

// The stages, public for tests against umap-learn's own functions.

// Row i's neighbours: ids[i * k + j] (-1 past the last one found) at dists[i * k + j],
// ascending, j = 0 being i itself at distance 0.
struct KnnGraph {
  size_t n_rows = 0, k = 0;
  std::vector<int32_t> ids;
  std::vector<float> dists;
};
KnnGraph umap_knn(const EmbeddingTable& table, const UmapOptions& options);

inline constexpr size_t kUmapExactKnnRows = 4096;

// NN-descent's parameters; 0 means pynndescent's defaults as umap-learn 0.5.3 calls it.
struct NnDescentOptions {
  size_t n_trees = 0;  // 0: min(64, 5 + round(sqrt(n_rows) / 20))
  size_t n_iters = 0;  // 0: max(5, round(log2(n_rows)))
  size_t max_candidates = 60;
  double delta = 0.001;  // stop when fewer than delta * n_rows * k entries changed in a step
};
// The approximate kNN graph, as pynndescent builds it for umap-learn: random-projection trees
// (leaves of max(10, n_neighbors) rows, every pair in a leaf measured), then NN-descent steps:
// each row's neighbours and reverse neighbours (new ones sampled up to max_candidates by seeded
// priority) measured pairwise and offered to each other's lists. Distances in float32 by the
// Highway dot kernel; the chosen neighbours' distances then recomputed in double, like
// umap_knn(). For speed, not results: the trees' top levels are split together, one pass over
// the rows per level (node pivots: the members with the smallest seeded hashes), and
// NN-descent runs on the rows renumbered in the first tree's leaf order (neighbours near in
// memory). Reproducible for a seed whatever the thread count: every list keeps the best
// (distance, id) of all offers, which does not depend on their order, and the stopping count is
// read from the lists after each step. Most neighbours are the exact ones (the recall is
// measured against umap_knn() in tests/analysis/umap_test.cpp), at a fraction of the arithmetic
// of the exact graph on large tables.
KnnGraph umap_knn_approx(const EmbeddingTable& table, const UmapOptions& options,
                         const NnDescentOptions& nd = {});
// The same graph by the Searcher's batched search, one row's query at a time: umap_knn()'s slow
// twin (twice the multiplications), kept for the test that compares them.
KnnGraph umap_knn_by_searcher(const EmbeddingTable& table, const UmapOptions& options);

// A symmetric sparse matrix in CSR form: row i's entries are [row_start[i], row_start[i + 1]),
// columns ascending.
struct FuzzyGraph {
  size_t n_rows = 0;
  std::vector<size_t> row_start;
  std::vector<int32_t> cols;
  std::vector<float> weights;
};
// umap-learn's fuzzy_simplicial_set (local_connectivity 1, set_op_mix_ratio 1) of a kNN graph.
FuzzyGraph umap_fuzzy_set(const KnnGraph& knn, size_t n_threads = 0);

// a, b of 1 / (1 + a x^2b) fitted to 1 below min_dist and exp(-(x - min_dist) / spread) above,
// at 300 points of [0, 3 spread] (umap-learn's find_ab_params).
std::pair<double, double> umap_ab_params(double spread, double min_dist);

}  // namespace embedscope
