// UMAP: kNN graph by our exact search, umap-learn's fuzzy simplicial set and SGD layout
// (projection.h says what is umap-learn's and what differs).
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "embedscope/analysis/projection.h"
#include "embedscope/core/blas.h"
#include "embedscope/core/error.h"
#include "embedscope/core/thread_pool.h"
#include "embedscope/search/searcher.h"
#include "umap_internal.h"

namespace embedscope {

namespace {

using Clock = std::chrono::steady_clock;
using umap_detail::check_options;
using umap_detail::mix;
using umap_detail::Rng;
using umap_detail::StageProgress;
using umap_detail::unfilled_graph;

}  // namespace

std::pair<double, double> umap_ab_params(double spread, double min_dist) {
  // Levenberg-Marquardt from (1, 1), as scipy's curve_fit (MINPACK lmdif) starts.
  const int n = 300;
  std::vector<double> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = spread * 3 * i / (n - 1);
    y[i] = x[i] < min_dist ? 1.0 : std::exp(-(x[i] - min_dist) / spread);
  }
  auto cost = [&](double a, double b) {
    double s = 0;
    for (int i = 0; i < n; ++i) {
      double r = 1.0 / (1.0 + a * std::pow(x[i], 2 * b)) - y[i];
      s += r * r;
    }
    return s;
  };
  double a = 1, b = 1, lambda = 1e-3, c = cost(a, b);
  for (int it = 0; it < 1000; ++it) {
    double jtj[3] = {0, 0, 0}, jtr[2] = {0, 0};  // JtJ = [[0, 1], [1, 2]]
    for (int i = 0; i < n; ++i) {
      double u = x[i] > 0 ? std::pow(x[i], 2 * b) : 0.0;
      double f = 1.0 / (1.0 + a * u), r = f - y[i];
      double da = -u * f * f;
      double db = x[i] > 0 ? -a * u * 2 * std::log(x[i]) * f * f : 0.0;
      jtj[0] += da * da;
      jtj[1] += da * db;
      jtj[2] += db * db;
      jtr[0] += da * r;
      jtr[1] += db * r;
    }
    bool improved = false;
    for (int tries = 0; tries < 30 && !improved; ++tries) {
      double m00 = jtj[0] * (1 + lambda), m11 = jtj[2] * (1 + lambda), m01 = jtj[1];
      double det = m00 * m11 - m01 * m01;
      if (det == 0) break;
      double sa = -(m11 * jtr[0] - m01 * jtr[1]) / det;
      double sb = -(m00 * jtr[1] - m01 * jtr[0]) / det;
      double nc = cost(a + sa, b + sb);
      if (nc < c) {
        double rel = (c - nc) / std::max(c, 1e-300);
        a += sa;
        b += sb;
        c = nc;
        lambda = std::max(lambda / 10, 1e-12);
        improved = true;
        if (rel < 1e-14) return {a, b};
      } else {
        lambda *= 10;
      }
    }
    if (!improved) break;
  }
  return {a, b};
}

KnnGraph umap_knn_by_searcher(const EmbeddingTable& table, const UmapOptions& o) {
  check_options(table, o);
  const size_t n = table.n_rows(), d = table.dim(), k = o.n_neighbors;
  KnnGraph g = unfilled_graph(n, k);
  SearcherOptions so;
  so.n_threads = o.n_threads;
  Searcher searcher(table, so);
  SearchOptions q;
  q.k = k - 1;
  q.metric = o.euclidean ? Metric::kL2 : Metric::kCosine;
  StageProgress progress(o.progress, "knn", double(n), "rows");
  const size_t block = 1024;
  std::vector<float> queries(block * d);
  std::vector<std::vector<TokenId>> exclude(block);
  for (size_t b0 = 0; b0 < n; b0 += block) {
    size_t rows = std::min(block, n - b0);
    for (size_t r = 0; r < rows; ++r) {
      table.row_f32(b0 + r, queries.data() + r * d);
      exclude[r].assign(1, TokenId(b0 + r));
    }
    exclude.resize(rows);
    auto res =
        searcher.search_batch(std::span<const float>(queries.data(), rows * d), rows, q, &exclude);
    for (size_t r = 0; r < rows; ++r) {
      size_t i = b0 + r;
      g.ids[i * k] = int32_t(i);
      const auto& nn = res[r];
      for (size_t j = 0; j < nn.size() && j + 1 < k; ++j) {
        g.ids[i * k + j + 1] = nn[j].id;
        // cosine: 1 - cos (>= 0); L2: the score is -|q - r|
        float dist = o.euclidean ? -nn[j].score : 1.0f - nn[j].score;
        g.dists[i * k + j + 1] = std::max(0.0f, dist);
      }
    }
    exclude.resize(block);
    progress.report(double(b0 + rows), b0 + rows == n);
  }
  return g;
}

namespace {

// One row's best candidates, sorted by score descending then id ascending; at most `cap`.
struct TopList {
  static bool before(float sa, int32_t ia, float sb, int32_t ib) {
    return sa > sb || (sa == sb && ia < ib);
  }
  // Inserts into the sorted run [s, s + size) of capacity cap; returns the new size.
  static size_t insert(float* s, int32_t* id, size_t size, size_t cap, float score, int32_t j) {
    if (size == cap && !before(score, j, s[size - 1], id[size - 1])) return size;
    size_t at = size == cap ? cap - 1 : size;
    while (at > 0 && before(score, j, s[at - 1], id[at - 1])) {
      s[at] = s[at - 1];
      id[at] = id[at - 1];
      --at;
    }
    s[at] = score;
    id[at] = j;
    return size == cap ? size : size + 1;
  }
};

}  // namespace

namespace umap_detail {

Rows prepare_rows(const EmbeddingTable& table, const UmapOptions& o) {
  const size_t n = table.n_rows(), d = table.dim();
  Rows rows;
  rows.x.resize(n * d);
  rows.sq.assign(n, 0.0f);
  rows.sq_exact.assign(n, 0.0);
  rows.usable.assign(n, 1);
  std::vector<float>& x = rows.x;
  std::vector<float>& sq = rows.sq;
  std::vector<uint8_t>& usable = rows.usable;
  process_pool().parallel_for(
      n,
      [&](size_t begin, size_t end, size_t) {
        for (size_t i = begin; i < end; ++i) {
          float* r = x.data() + i * d;
          table.row_f32(i, r);
          double ss = 0;
          for (size_t c = 0; c < d; ++c) {
            if (!std::isfinite(r[c]))
              throw Error(ErrorCode::kInvalidArgument,
                          "umap: row " + std::to_string(i) + " column " + std::to_string(c) +
                              " holds " + std::to_string(r[c]) + ": every value must be finite");
            ss += double(r[c]) * r[c];
          }
          sq[i] = float(ss);
          rows.sq_exact[i] = ss;
          if (!o.euclidean) {
            if (ss == 0) {
              usable[i] = 0;
              continue;
            }
            float inv = float(1.0 / std::sqrt(ss));
            for (size_t c = 0; c < d; ++c) r[c] *= inv;
          }
        }
      },
      tasks(o));

  return rows;
}

namespace {

// sum a[c] b[c] and sum (a[c] - b[c])^2 in double, in 8 partial sums: independent additions
// (the compiler vectorises them; one running sum waits on each addition) in a fixed order (the
// same value on every machine and thread count).
double dot_exact(const float* a, const float* b, size_t d) {
  double s[8] = {};
  size_t c = 0;
  for (; c + 8 <= d; c += 8)
    for (size_t u = 0; u < 8; ++u) s[u] += double(a[c + u]) * double(b[c + u]);
  for (; c < d; ++c) s[0] += double(a[c]) * double(b[c]);
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}
double diff2_exact(const float* a, const float* b, size_t d) {
  double s[8] = {};
  size_t c = 0;
  for (; c + 8 <= d; c += 8)
    for (size_t u = 0; u < 8; ++u) {
      const double e = double(a[c + u]) - double(b[c + u]);
      s[u] += e * e;
    }
  for (; c < d; ++c) s[0] += (double(a[c]) - double(b[c])) * (double(a[c]) - double(b[c]));
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

}  // namespace

KnnGraph exact_graph(const EmbeddingTable& table, const UmapOptions& o, const Rows& rows,
                     const std::function<void(size_t, std::vector<int32_t>&)>& candidates) {
  const size_t n = table.n_rows(), d = table.dim(), k = o.n_neighbors;
  KnnGraph g = unfilled_graph(n, k);
  process_pool().parallel_for(
      n,
      [&](size_t begin, size_t end, size_t) {
        std::vector<int32_t> cand;
        std::vector<std::pair<double, int32_t>> exact;
        std::vector<float> ri(d), rj(d);
        for (size_t i = begin; i < end; ++i) {
          g.ids[i * k] = int32_t(i);
          candidates(i, cand);
          exact.clear();
          table.row_f32(i, ri.data());
          for (int32_t j : cand) {
            table.row_f32(size_t(j), rj.data());
            double dist = o.euclidean
                              ? std::sqrt(diff2_exact(ri.data(), rj.data(), d))
                              : std::max(0.0, 1.0 - dot_exact(ri.data(), rj.data(), d) /
                                                        std::sqrt(rows.sq_exact[i] *
                                                                  rows.sq_exact[size_t(j)]));
            exact.emplace_back(dist, j);
          }
          std::sort(exact.begin(), exact.end());
          for (size_t e = 0; e < exact.size() && e + 1 < k; ++e) {
            g.ids[i * k + e + 1] = exact[e].second;
            g.dists[i * k + e + 1] = float(exact[e].first);
          }
        }
      },
      tasks(o));
  return g;
}

}  // namespace umap_detail

KnnGraph umap_knn(const EmbeddingTable& table, const UmapOptions& o) {
  check_options(table, o);
  const size_t n = table.n_rows(), d = table.dim(), k = o.n_neighbors, kk = k - 1;
  const umap_detail::Rows rows = umap_detail::prepare_rows(table, o);
  const std::vector<float>& x = rows.x;
  const std::vector<float>& sq = rows.sq;
  const std::vector<uint8_t>& usable = rows.usable;

  // Every unordered pair of row blocks once: S = X_I X_J^T by sgemm, each score offered to both
  // rows' lists (the similarity is symmetric: half the multiplications of a query-by-query
  // search). Each thread keeps its own lists for every row; a pair of rows is scored by exactly
  // one thread, so merging the lists by (score, id) gives the same graph for any thread count.
  const size_t block = 512, nb = (n + block - 1) / block, n_pairs = nb * (nb + 1) / 2;
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  pairs.reserve(n_pairs);
  for (size_t bi = 0; bi < nb; ++bi)
    for (size_t bj = bi; bj < nb; ++bj) pairs.emplace_back(uint32_t(bi), uint32_t(bj));
  const size_t n_threads = umap_detail::tasks(o);
  std::vector<std::vector<float>> top_s(n_threads);
  std::vector<std::vector<int32_t>> top_id(n_threads);
  std::vector<std::vector<uint8_t>> top_n(n_threads);
  std::atomic<size_t> pairs_done{0};
  std::atomic<bool> abort{false};
  StageProgress progress(o.progress, "knn", double(n_pairs), "block pairs");
  blas::set_num_threads(1);
  process_pool().parallel_for(
      n_pairs,
      [&](size_t begin, size_t end, size_t t) {
        std::vector<float>& ts = top_s[t];
        std::vector<int32_t>& ti = top_id[t];
        std::vector<uint8_t>& tn = top_n[t];
        ts.assign(n * kk, 0.0f);
        ti.assign(n * kk, -1);
        tn.assign(n, 0);
        std::vector<float> sim(block * block);
        auto offer = [&](size_t row, float score, size_t j) {
          tn[row] = uint8_t(TopList::insert(ts.data() + row * kk, ti.data() + row * kk, tn[row], kk,
                                            score, int32_t(j)));
        };
        for (size_t p = begin; p < end; ++p) {
          const size_t i0 = size_t(pairs[p].first) * block, j0 = size_t(pairs[p].second) * block;
          const size_t ni = std::min(block, n - i0), nj = std::min(block, n - j0);
          blas::sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(ni), int(nj), int(d), 1.0f,
                      x.data() + i0 * d, int(d), x.data() + j0 * d, int(d), 0.0f, sim.data(),
                      int(block));
          for (size_t a = 0; a < ni; ++a) {
            const size_t i = i0 + a;
            if (!usable[i]) continue;
            const float* srow = sim.data() + a * block;
            for (size_t b = (i0 == j0 ? a + 1 : 0); b < nj; ++b) {
              const size_t j = j0 + b;
              if (!usable[j]) continue;
              // cosine: the dot of unit rows; Euclidean: minus the squared distance
              float score = o.euclidean ? 2.0f * srow[b] - sq[i] - sq[j] : srow[b];
              offer(i, score, j);
              offer(j, score, i);
            }
          }
          size_t done = pairs_done.fetch_add(1) + 1;
          if (t == 0) {
            try {
              progress.report(double(done));
            } catch (...) {  // cancelled: the other threads stop at their next block pair
              abort.store(true);
              throw;
            }
          }
          if (abort.load(std::memory_order_relaxed)) return;
        }
      },
      n_threads);
  progress.report(double(n_pairs), true);

  // Merge the threads' lists; then exact distances (double) for the chosen neighbours, re-sorted.
  return umap_detail::exact_graph(table, o, rows, [&](size_t i, std::vector<int32_t>& out) {
    std::vector<float> ms(kk);
    std::vector<int32_t> mi(kk);
    size_t m = 0;
    for (size_t t = 0; t < n_threads; ++t) {
      if (top_n[t].empty()) continue;
      for (size_t e = 0; e < top_n[t][i]; ++e)
        m = TopList::insert(ms.data(), mi.data(), m, kk, top_s[t][i * kk + e],
                            top_id[t][i * kk + e]);
    }
    out.assign(mi.begin(), mi.begin() + long(m));
  });
}

FuzzyGraph umap_fuzzy_set(const KnnGraph& g, size_t n_threads) {
  const size_t n = g.n_rows, k = g.k;
  const double target = std::log2(double(k));
  double mean_all = 0;
  size_t n_valid = 0;
  for (size_t e = 0; e < n * k; ++e)
    if (g.ids[e] >= 0) mean_all += g.dists[e], ++n_valid;
  mean_all = n_valid ? mean_all / double(n_valid) : 0.0;

  // smooth_knn_dist and compute_membership_strengths, row by row.
  std::vector<float> p(n * k, 0.0f);
  process_pool().parallel_for(
      n,
      [&](size_t begin, size_t end, size_t) {
        for (size_t i = begin; i < end; ++i) {
          const int32_t* ids = g.ids.data() + i * k;
          const float* dist = g.dists.data() + i * k;
          double rho = 0, row_mean = 0;
          size_t n_row = 0;
          for (size_t j = 0; j < k; ++j) {
            if (ids[j] < 0) continue;
            row_mean += dist[j];
            ++n_row;
            if (dist[j] > 0 && rho == 0) rho = dist[j];  // ascending: the first non-zero
          }
          row_mean = n_row ? row_mean / double(n_row) : 0.0;
          double lo = 0, hi = std::numeric_limits<double>::infinity(), mid = 1;
          for (int it = 0; it < 64; ++it) {
            double psum = 0;
            for (size_t j = 1; j < k; ++j) {
              if (ids[j] < 0) continue;
              double dd = dist[j] - rho;
              psum += dd > 0 ? std::exp(-(dd / mid)) : 1.0;
            }
            if (std::fabs(psum - target) < 1e-5) break;
            if (psum > target) {
              hi = mid;
              mid = (lo + hi) / 2;
            } else {
              lo = mid;
              mid = std::isinf(hi) ? mid * 2 : (lo + hi) / 2;
            }
          }
          double sigma = mid;
          double floor_mean = rho > 0 ? row_mean : mean_all;
          sigma = std::max(sigma, 1e-3 * floor_mean);
          // umap-learn keeps sigma and rho in float32
          float sigma_f = float(sigma), rho_f = float(rho);
          for (size_t j = 0; j < k; ++j) {
            if (ids[j] < 0 || size_t(ids[j]) == i) continue;
            float dd = dist[j] - rho_f;
            p[i * k + j] = (dd <= 0 || sigma_f == 0) ? 1.0f : std::exp(-(dd / sigma_f));
          }
        }
      },
      n_threads ? n_threads : process_threads());

  // Transpose by counting sort: rows of P^T in ascending source order.
  std::vector<size_t> t_start(n + 1, 0);
  for (size_t e = 0; e < n * k; ++e)
    if (p[e] > 0) ++t_start[size_t(g.ids[e]) + 1];
  for (size_t i = 0; i < n; ++i) t_start[i + 1] += t_start[i];
  std::vector<int32_t> t_col(t_start[n]);
  std::vector<float> t_val(t_start[n]);
  {
    std::vector<size_t> fill(t_start.begin(), t_start.end() - 1);
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < k; ++j)
        if (float v = p[i * k + j]; v > 0) {
          size_t at = fill[size_t(g.ids[i * k + j])]++;
          t_col[at] = int32_t(i);
          t_val[at] = v;
        }
  }
  // Fuzzy union row by row: merge row i of P (sorted by column) with row i of P^T.
  FuzzyGraph out;
  out.n_rows = n;
  out.row_start.assign(n + 1, 0);
  std::vector<std::pair<int32_t, float>> row;
  for (size_t i = 0; i < n; ++i) {
    row.clear();
    for (size_t j = 0; j < k; ++j)
      if (p[i * k + j] > 0) row.emplace_back(g.ids[i * k + j], p[i * k + j]);
    std::sort(row.begin(), row.end());
    size_t a = 0, b = t_start[i];
    while (a < row.size() || b < t_start[i + 1]) {
      int32_t ca = a < row.size() ? row[a].first : std::numeric_limits<int32_t>::max();
      int32_t cb = b < t_start[i + 1] ? t_col[b] : std::numeric_limits<int32_t>::max();
      float pa = 0, pb = 0;
      int32_t c = std::min(ca, cb);
      if (ca == c) pa = row[a++].second;
      if (cb == c) pb = t_val[b++];
      float w = pa + pb - pa * pb;
      if (w > 0) {
        out.cols.push_back(c);
        out.weights.push_back(w);
      }
    }
    out.row_start[i + 1] = out.cols.size();
  }
  return out;
}

Projection umap(const EmbeddingTable& table, const UmapOptions& o) {
  check_options(table, o);
  const size_t n = table.n_rows(), dims = o.dims;
  const bool exact = o.knn == UmapOptions::Knn::kExact ||
                     (o.knn == UmapOptions::Knn::kAuto && n < kUmapExactKnnRows);
  KnnGraph knn = exact ? umap_knn(table, o) : umap_knn_approx(table, o);
  StageProgress fuzzy_progress(o.progress, "fuzzy", 1, "graphs");
  fuzzy_progress.report(0, true);
  FuzzyGraph g = umap_fuzzy_set(knn, o.n_threads);
  knn = KnnGraph{};
  fuzzy_progress.report(1, true);

  const size_t n_epochs = o.n_epochs ? o.n_epochs : (n <= 10000 ? 500 : 200);

  // Initialisation: PCA, scaled and jittered like umap-learn's spectral init, then [0, 10].
  PcaOptions po;
  po.dims = dims;
  po.n_threads = o.n_threads;
  std::vector<float> y = pca(table, po).coords;
  {
    float max_abs = 0;
    for (float v : y) max_abs = std::max(max_abs, std::fabs(v));
    float scale = max_abs > 0 ? 10.0f / max_abs : 1.0f;
    Rng rng(mix(o.seed, 0x1417, 0));
    for (float& v : y) v = v * scale + float(1e-4 * rng.normal());
    for (size_t c = 0; c < dims; ++c) {
      float lo = std::numeric_limits<float>::max(), hi = -lo;
      for (size_t i = 0; i < n; ++i)
        lo = std::min(lo, y[i * dims + c]), hi = std::max(hi, y[i * dims + c]);
      float range = hi > lo ? hi - lo : 1.0f;
      for (size_t i = 0; i < n; ++i) y[i * dims + c] = 10.0f * (y[i * dims + c] - lo) / range;
    }
  }

  umap_detail::optimize_layout(y, dims, std::move(g), n_epochs, o);

  Projection out;
  out.n_rows = n;
  out.dims = dims;
  out.coords = std::move(y);
  return out;
}

}  // namespace embedscope