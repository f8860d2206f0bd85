// Whole-table diagnostics (`embedscope stats`) and two-table comparison (`embedscope compare`).
//
// Stats:
//  - norms: distribution of row L2 norms (zero and non-finite rows counted);
//  - anisotropy: mean cosine of each row to the mean row, and the mean / sd of the cosine of
//    random row pairs (isotropic random vectors give ~0 and sd ~1/sqrt(dim));
//  - hubness: k-occurrence N_k(x) = how often row x is among the k nearest neighbours of the
//    query rows; its skewness (Radovanovic et al. 2010; > 1 means strong hubs), the share of
//    rows that are never a neighbour, and the top hubs. Queries are a seeded sample of rows
//    (all rows when n_queries >= rows);
//  - PCA: share of variance explained by the top components (eigenvalues of the covariance of
//    a seeded sample of at most max_pca_rows rows, LAPACK ssyevd).
// Compare (A, B share a vocabulary, or have the same number of rows: same tokenizer):
//  - overlap@k per sampled word: |kNN_A(w) ∩ kNN_B(w)| / k within the shared rows;
//  - orthogonal Procrustes: W = U V^T from the SVD of A^T B over unit rows (LAPACK sgesvd),
//    drift(w) = 1 - cos(a_w W, b_w); the rows that moved most. Needs equal dims.
// Rows considered: [0, n_rows_limit) when set (Model::n_search_rows).
//
// Errors: Error(kInvalidArgument) for an empty table, k == 0, or tables that share no rows.
//
//   TableStats s = table_stats(model.emb.table, {.n_rows_limit = model.n_search_rows});
//   CompareResult c = compare_tables(a.emb, b.emb, {.k = 10});
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "embedscope/formats/embeddings_file.h"

namespace embedscope {

struct StatsOptions {
  size_t n_rows_limit = 0;
  size_t n_pairs = 20000;  // random pairs for the pair-cosine distribution
  size_t hub_k = 10;
  size_t n_queries = 2000;  // hubness queries
  size_t n_components = 10;
  size_t max_pca_rows = 20000;
  uint64_t seed = 42;
  size_t n_threads = 1;  // search threads; 0: the process pool's size
};

struct Distribution {
  double mean = 0, sd = 0, min = 0, p01 = 0, p50 = 0, p99 = 0, max = 0;
};
Distribution describe(std::vector<double> values);  // empty -> zeros

struct TableStats {
  size_t n_rows = 0, dim = 0;
  Distribution norms;
  size_t n_zero = 0, n_nonfinite = 0;
  double mean_cos_to_mean = 0;  // anisotropy
  Distribution pair_cos;        // random pairs
  size_t hub_k = 0, n_queries = 0;
  double k_occurrence_skew = 0;
  double antihub_share = 0;                          // rows never among the k nearest
  std::vector<std::pair<TokenId, size_t>> top_hubs;  // (row, N_k), descending
  std::vector<double> pca_explained;                 // variance shares of the top components
};

TableStats table_stats(const EmbeddingTable& table, const StatsOptions& options);

struct CompareOptions {
  size_t k = 10;
  size_t n_words = 1000;  // sampled shared rows for overlap (0 = all)
  size_t n_moved = 20;
  uint64_t seed = 42;
  size_t n_threads = 1;  // search threads; 0: the process pool's size
};

struct WordOverlap {
  std::string word;
  double overlap = 0;
};
struct RowDrift {
  std::string word;
  double drift = 0;  // 1 - cos after alignment
};

struct CompareResult {
  size_t n_shared = 0;
  std::string matched_by;             // "vocabulary" or "row id"
  std::vector<WordOverlap> overlaps;  // the sampled words
  double mean_overlap = 0;
  bool aligned = false;  // false when dims differ
  double mean_drift = 0, median_drift = 0;
  std::vector<RowDrift> moved;  // largest drift first
};

CompareResult compare_tables(const LoadedEmbeddings& a, const LoadedEmbeddings& b,
                             const CompareOptions& options);

}  // namespace embedscope
