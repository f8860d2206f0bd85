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

// d^p for d > 0 as 2^(p log2 d) by polynomials (least-squares fits at Chebyshev nodes of [0, 1):
// log2(1 + f) within 1.0e-4, 2^f within 1.1e-4 relative): a relative error of at most 2.2e-4
// wherever |p| <= 1, which the SGD does not notice (trustworthiness unchanged,
// bench/projection_bench.py), at a fraction of glibc's exp2f(log2f()). Degrees 4 and 3 keep the
// chain of dependent operations short: the layout waits on it. d is floored at 1e-30 (no
// subnormals) and the exponent clamped to +-126.
[[gnu::always_inline]] inline float powf_pos(float d, float p) {
  const uint32_t bits = std::bit_cast<uint32_t>(std::max(d, 1e-30f));
  const float e = float(int32_t(bits >> 23) - 127);
  const float f = std::bit_cast<float>((bits & 0x7FFFFFu) | 0x3F800000u) - 1.0f;
  const float lg =
      e +
      (1.0018903e-4f + f * (1.4373021f + f * (-0.6729342f + f * (0.3154676f + f * -0.080010876f))));
  const float y = std::clamp(p * lg, -126.0f, 126.0f);
  int32_t yi = int32_t(y);
  if (float(yi) > y) --yi;
  const float r = y - float(yi);
  const float m = 0.9998967f + r * (0.69639057f + r * (0.22451635f + r * 0.0790857f));
  return std::bit_cast<float>(std::bit_cast<uint32_t>(m) + (uint32_t(yi) << 23));
}

// Synchronisations per epoch of the parallel layout (projection.h).
constexpr size_t kLayoutRounds = 16;

// A uniform index below n from 32 random bits (Lemire's multiply-shift: no division).
inline size_t below(uint64_t r, size_t n) { return size_t(((r >> 32) * uint64_t(n)) >> 32); }

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

Rows prepare_rows(const EmbeddingTable& table, const UmapOptions& o, ThreadPool& pool) {
  const size_t n = table.n_rows(), d = table.dim();
  Rows rows;
  rows.x.resize(n * d);
  rows.sq.assign(n, 0.0f);
  rows.usable.assign(n, 1);
  std::vector<float>& x = rows.x;
  std::vector<float>& sq = rows.sq;
  std::vector<uint8_t>& usable = rows.usable;
  pool.parallel_for(n, [&](size_t begin, size_t end, size_t) {
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
      if (!o.euclidean) {
        if (ss == 0) {
          usable[i] = 0;
          continue;
        }
        float inv = float(1.0 / std::sqrt(ss));
        for (size_t c = 0; c < d; ++c) r[c] *= inv;
      }
    }
  });

  return rows;
}

KnnGraph exact_graph(const EmbeddingTable& table, const UmapOptions& o, const Rows& rows,
                     ThreadPool& pool,
                     const std::function<void(size_t, std::vector<int32_t>&)>& candidates) {
  const size_t n = table.n_rows(), d = table.dim(), k = o.n_neighbors;
  KnnGraph g = unfilled_graph(n, k);
  pool.parallel_for(n, [&](size_t begin, size_t end, size_t) {
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
        double dot = 0, nj = 0, diff = 0;
        for (size_t c = 0; c < d; ++c) {
          dot += double(ri[c]) * rj[c];
          nj += double(rj[c]) * rj[c];
          diff += (double(ri[c]) - rj[c]) * (double(ri[c]) - rj[c]);
        }
        double dist = o.euclidean ? std::sqrt(diff)
                                  : std::max(0.0, 1.0 - dot / std::sqrt(double(rows.sq[i]) * nj));
        exact.emplace_back(dist, j);
      }
      std::sort(exact.begin(), exact.end());
      for (size_t e = 0; e < exact.size() && e + 1 < k; ++e) {
        g.ids[i * k + e + 1] = exact[e].second;
        g.dists[i * k + e + 1] = float(exact[e].first);
      }
    }
  });
  return g;
}

}  // namespace umap_detail

KnnGraph umap_knn(const EmbeddingTable& table, const UmapOptions& o) {
  check_options(table, o);
  const size_t n = table.n_rows(), d = table.dim(), k = o.n_neighbors, kk = k - 1;
  ThreadPool pool(o.n_threads);
  const umap_detail::Rows rows = umap_detail::prepare_rows(table, o, pool);
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
  const size_t n_threads = pool.size();
  std::vector<std::vector<float>> top_s(n_threads);
  std::vector<std::vector<int32_t>> top_id(n_threads);
  std::vector<std::vector<uint8_t>> top_n(n_threads);
  std::atomic<size_t> pairs_done{0};
  std::atomic<bool> abort{false};
  StageProgress progress(o.progress, "knn", double(n_pairs), "block pairs");
  blas::set_num_threads(1);
  pool.parallel_for(n_pairs, [&](size_t begin, size_t end, size_t t) {
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
  });
  progress.report(double(n_pairs), true);

  // Merge the threads' lists; then exact distances (double) for the chosen neighbours, re-sorted.
  return umap_detail::exact_graph(table, o, rows, pool, [&](size_t i, std::vector<int32_t>& out) {
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
  ThreadPool pool(n_threads);
  pool.parallel_for(n, [&](size_t begin, size_t end, size_t) {
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
  });

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

namespace {

// The layout's sampling schedule (make_epochs_per_sample): edge e runs from vertex j (start[j] <=
// e < start[j + 1]) to tail[e]; it is due when next[e] <= epoch, then advances by eps[e], with
// its negatives due by next_neg / eps_neg.
struct Schedule {
  const std::vector<size_t>& start;
  const std::vector<int32_t>& tail;
  const std::vector<double>& eps;
  std::vector<double>& next;
  const std::vector<double>& eps_neg;
  std::vector<double>& next_neg;
};

struct LayoutParams {
  float a, b, gamma, learning_rate;
  size_t n_epochs;
  uint64_t seed;
};

inline float clip4(float v) { return std::clamp(v, -4.0f, 4.0f); }

// How many negatives an edge that is due owes now (>= 0 but for rounding).
inline size_t negatives_due(const Schedule& s, size_t e, double en) {
  if (s.eps_neg[e] <= 0) return 0;
  const double due = (en - s.next_neg[e]) / s.eps_neg[e];
  return due > 0 ? size_t(due) : 0;
}

// One thread: umap-learn's sequential SGD exactly, every read and write in place.
void layout_sequential(std::vector<float>& y, size_t dims, Schedule& s, const LayoutParams& p,
                       StageProgress& progress) {
  const size_t n = s.start.size() - 1;
  const float a = p.a, b = p.b, gamma = p.gamma;
  float diff[3];
  for (size_t epoch = 0; epoch < p.n_epochs; ++epoch) {
    const float alpha = float(p.learning_rate * (1.0 - double(epoch) / double(p.n_epochs)));
    const double en = double(epoch);
    for (size_t j = 0; j < n; ++j) {
      if (s.start[j] == s.start[j + 1]) continue;
      Rng rng(mix(p.seed, epoch + 1, j));
      float* live = y.data() + j * dims;
      for (size_t e = s.start[j]; e < s.start[j + 1]; ++e) {
        if (s.next[e] > en) continue;
        const size_t k = size_t(s.tail[e]);
        float* other = y.data() + k * dims;
        float d2 = 0;
        for (size_t c = 0; c < dims; ++c) {
          diff[c] = live[c] - other[c];
          d2 += diff[c] * diff[c];
        }
        float coeff = 0;
        if (d2 > 0) {
          float pb1 = powf_pos(d2, b - 1.0f);
          coeff = -2.0f * a * b * pb1 / (a * pb1 * d2 + 1.0f);
        }
        for (size_t c = 0; c < dims; ++c) {
          float gd = clip4(coeff * diff[c]);
          live[c] += gd * alpha;
          other[c] -= gd * alpha;
        }
        s.next[e] += s.eps[e];
        const size_t n_neg = negatives_due(s, e, en);
        for (size_t q = 0; q < n_neg; ++q) {
          const size_t kk = below(rng.next(), n);
          const float* neg = y.data() + kk * dims;
          d2 = 0;
          for (size_t c = 0; c < dims; ++c) {
            diff[c] = live[c] - neg[c];
            d2 += diff[c] * diff[c];
          }
          if (d2 > 0) {
            float c2 = 2.0f * gamma * b / ((0.001f + d2) * (a * powf_pos(d2, b) + 1.0f));
            for (size_t c = 0; c < dims; ++c) live[c] += clip4(c2 * diff[c]) * alpha;
          } else if (kk != j) {
            for (size_t c = 0; c < dims; ++c) live[c] += 4.0f * alpha;  // umap-learn's
          }
        }
        if (s.eps_neg[e] > 0) s.next_neg[e] += double(n_neg) * s.eps_neg[e];
      }
    }
    progress.report(double(epoch + 1), epoch + 1 == p.n_epochs);
  }
}

// The vertices of a round are independent (each reads the others from the snapshot), so each
// thread moves kLanes of them at once, one sample of each per step, in SIMD lanes (GCC vector
// extensions: plain SSE, no target flags): their chains of dependent arithmetic (distance, power,
// division, move) overlap instead of running one after the other, and each operation serves
// kLanes samples. Each vertex still takes its samples in umap-learn's order, with the same
// float operations as layout_sequential.
// 4 lanes: one SSE register, built from scalars in registers (8 lanes took two, built through
// memory: slower on the measured box).
constexpr size_t kLanes = 4;
using VecF = float __attribute__((vector_size(4 * kLanes)));
using VecI = int32_t __attribute__((vector_size(4 * kLanes)));
using VecU = uint32_t __attribute__((vector_size(4 * kLanes)));

// {f(0), f(1), ..., f(kLanes - 1)}.
template <typename V, typename F, size_t... L>
[[gnu::always_inline]] inline V lanes_of(F&& f, std::index_sequence<L...>) {
  return V{f(L)...};
}
template <typename V, typename F>
[[gnu::always_inline]] inline V lanes(F&& f) {
  return lanes_of<V>(f, std::make_index_sequence<kLanes>());
}

[[gnu::always_inline]] inline VecF splat(float v) { return VecF{} + v; }
[[gnu::always_inline]] inline VecF select(VecI mask, VecF yes, VecF no) { return mask ? yes : no; }
[[gnu::always_inline]] inline VecF clip4v(VecF v) {
  return v < -4.0f ? splat(-4.0f) : (v > 4.0f ? splat(4.0f) : v);
}

// powf_pos lane by lane, the same operations.
[[gnu::always_inline]] inline VecF powf_pos_v(VecF d, VecF p) {
  d = d > 1e-30f ? d : splat(1e-30f);
  const auto bits = std::bit_cast<VecU>(d);
  const VecF e = __builtin_convertvector(VecI(bits >> 23) - 127, VecF);
  VecU mant = (bits & 0x7FFFFFu) | 0x3F800000u;
  const VecF f = std::bit_cast<VecF>(mant) - 1.0f;
  const VecF lg = e + (1.0018903e-4f +
                       f * (1.4373021f + f * (-0.6729342f + f * (0.3154676f + f * -0.080010876f))));
  VecF yc = p * lg;
  yc = yc < -126.0f ? splat(-126.0f) : (yc > 126.0f ? splat(126.0f) : yc);
  VecI yi = __builtin_convertvector(yc, VecI);
  yi += __builtin_convertvector(yi, VecF) > yc;  // floor: true is -1
  const VecF r = yc - __builtin_convertvector(yi, VecF);
  VecF m = 0.9998967f + r * (0.69639057f + r * (0.22451635f + r * 0.0790857f));
  VecU out = std::bit_cast<VecU>(m) + (VecU(yi) << 23);
  return std::bit_cast<VecF>(out);
}

// More threads: the rounds of projection.h, D fixed at compile time, the moving vertex kept in
// registers.
template <size_t D>
void layout_rounds(std::vector<float>& y, Schedule& s, const LayoutParams& p, ThreadPool& pool,
                   StageProgress& progress) {
  const size_t n = s.start.size() - 1, rounds = kLayoutRounds, n_threads = pool.size();
  const float a = p.a, b = p.b, bm1 = p.b - 1.0f, two_ab = 2.0f * p.a * p.b,
              two_gb = 2.0f * p.gamma * p.b;
  // Vertices renumbered in breadth-first order of the graph (v = rank[j]), so that a vertex's
  // neighbours sit near it in memory: the pulls read and write a few cache lines instead of
  // scattered ones. The edges are stored round by round (vertex v in round v mod rounds,
  // ascending within a round), so that a round streams through contiguous memory.
  std::vector<uint32_t> rank(n, UINT32_MAX), old_id;
  old_id.reserve(n);
  for (size_t root = 0; root < n; ++root) {
    if (rank[root] != UINT32_MAX) continue;
    rank[root] = uint32_t(old_id.size());
    old_id.push_back(uint32_t(root));
    for (size_t q = old_id.size() - 1; q < old_id.size(); ++q)
      for (size_t e = s.start[old_id[q]]; e < s.start[old_id[q] + 1]; ++e)
        if (const auto k = size_t(s.tail[e]); rank[k] == UINT32_MAX) {
          rank[k] = uint32_t(old_id.size());
          old_id.push_back(uint32_t(k));
        }
  }
  std::vector<float> pos(n * D), snap;
  for (size_t j = 0; j < n; ++j)
    for (size_t c = 0; c < D; ++c) pos[size_t(rank[j]) * D + c] = y[j * D + c];
  snap = pos;
  std::vector<std::vector<float>> delta(n_threads, std::vector<float>(n * D, 0.0f));
  std::vector<std::array<std::vector<uint32_t>, kLanes>> lane_samples(n_threads);
  std::vector<size_t> round_start(rounds + 1, 0), order, start(1, 0);
  std::vector<int32_t> tail;
  std::vector<double> eps, next, eps_neg, next_neg;
  order.reserve(n);
  start.reserve(n + 1);
  for (std::vector<double>* v : {&eps, &next, &eps_neg, &next_neg}) v->reserve(s.tail.size());
  tail.reserve(s.tail.size());
  for (size_t r = 0; r < rounds; ++r) {
    for (size_t v = r; v < n; v += rounds) {
      order.push_back(v);
      const size_t j = old_id[v];
      for (size_t e = s.start[j]; e < s.start[j + 1]; ++e) {
        tail.push_back(int32_t(rank[size_t(s.tail[e])]));
        eps.push_back(s.eps[e]);
        next.push_back(s.next[e]);
        eps_neg.push_back(s.eps_neg[e]);
        next_neg.push_back(s.next_neg[e]);
      }
      start.push_back(tail.size());
    }
    round_start[r + 1] = order.size();
  }
  for (size_t epoch = 0; epoch < p.n_epochs; ++epoch) {
    const float alpha = float(p.learning_rate * (1.0 - double(epoch) / double(p.n_epochs)));
    const double en = double(epoch);
    for (size_t round = 0; round < rounds; ++round) {
      const size_t r0 = round_start[round];
      pool.parallel_for(round_start[round + 1] - r0, [&](size_t begin, size_t end, size_t t) {
        float* dl = delta[t].data();
        const float* view = snap.data();
        std::vector<uint32_t>* samples = lane_samples[t].data();
        size_t at = r0 + begin;
        const size_t stop = r0 + end;
        VecF cur[D] = {};  // lane l's vertex at cur[c][l]
        size_t vertex[kLanes] = {}, taken[kLanes] = {};
        bool live[kLanes] = {};
        // Lane l's next vertex that has samples due: its samples listed in umap-learn's order
        // (each due edge, then its negatives; a vertex drawn as its own negative is no sample),
        // (other << 1) | positive. False when the thread's vertices are done.
        auto open = [&](size_t l) {
          std::vector<uint32_t>& list = samples[l];
          for (; at < stop; ++at) {
            const size_t v = order[at];
            list.clear();
            Rng rng(mix(p.seed, epoch + 1, old_id[v]));
            for (size_t e = start[at]; e < start[at + 1]; ++e) {
              if (next[e] > en) continue;
              next[e] += eps[e];
              list.push_back((uint32_t(tail[e]) << 1) | 1u);
              if (eps_neg[e] <= 0) continue;
              const double due = (en - next_neg[e]) / eps_neg[e];  // >= 0 but for rounding
              const size_t n_neg = due > 0 ? size_t(due) : 0;
              next_neg[e] += double(n_neg) * eps_neg[e];
              for (size_t q = 0; q < n_neg; ++q)
                if (const size_t kk = below(rng.next(), n); kk != v)
                  list.push_back(uint32_t(kk) << 1);
            }
            if (list.empty()) continue;
            ++at;
            vertex[l] = v;
            taken[l] = 0;
            for (size_t c = 0; c < D; ++c) cur[c][l] = pos[v * D + c];
            return live[l] = true;
          }
          return live[l] = false;
        };
        for (size_t l = 0; l < kLanes; ++l) open(l);
        for (;;) {
          size_t other[kLanes] = {};
          int32_t is_positive[kLanes] = {}, is_active[kLanes] = {};
          bool any = false;
          for (size_t l = 0; l < kLanes; ++l) {
            if (live[l] && taken[l] == samples[l].size()) {
              for (size_t c = 0; c < D; ++c) pos[vertex[l] * D + c] = cur[c][l];
              open(l);
            }
            if (!live[l]) continue;
            any = true;
            const uint32_t sample = samples[l][taken[l]++];
            other[l] = sample >> 1;
            is_positive[l] = -int32_t(sample & 1u);
            is_active[l] = -1;
          }
          if (!any) break;
          // Built from scalars in registers (element-wise writes would go through memory).
          const VecI positive = lanes<VecI>([&](size_t l) { return is_positive[l]; }),
                     active = lanes<VecI>([&](size_t l) { return is_active[l]; });
          VecF diff[D], d2{};
          for (size_t c = 0; c < D; ++c) {
            diff[c] = cur[c] - lanes<VecF>([&](size_t l) { return view[other[l] * D + c]; });
            d2 += diff[c] * diff[c];
          }
          // Positive: -2ab d^(2(b-1)) / (1 + a d^2b); negative: 2 gamma b / ((0.001 + d^2)(1 +
          // a d^2b)); none where d^2 is 0 (a negative there moves by +4 alpha: umap-learn's).
          const VecF pw = powf_pos_v(d2, select(positive, splat(bm1), splat(b)));
          const VecF coeff = select(positive, -two_ab * pw / (a * pw * d2 + 1.0f),
                                    two_gb / ((0.001f + d2) * (a * pw + 1.0f)));
          const VecI moving = d2 > 0.0f, stuck = active & ~positive & ~moving;
          for (size_t c = 0; c < D; ++c) {
            VecF step = select(active & moving, clip4v(coeff * diff[c]) * alpha, VecF{});
            step = select(stuck, splat(4.0f * alpha), step);
            cur[c] += step;
            for (size_t l = 0; l < kLanes; ++l)
              if (positive[l]) dl[other[l] * D + c] -= step[l];
          }
        }
      });
      // The pulls added in thread order (per coordinate: any split of the range gives the same
      // sums), and the next round's snapshot taken in the same pass.
      pool.parallel_for(n * D, [&](size_t begin, size_t end, size_t) {
        for (size_t t = 0; t < n_threads; ++t) {
          float* dl = delta[t].data();
          for (size_t i = begin; i < end; ++i) {
            pos[i] += dl[i];
            dl[i] = 0.0f;
          }
        }
        std::copy(pos.begin() + long(begin), pos.begin() + long(end), snap.begin() + long(begin));
      });
    }
    progress.report(double(epoch + 1), epoch + 1 == p.n_epochs);
  }
  for (size_t j = 0; j < n; ++j)
    for (size_t c = 0; c < D; ++c) y[j * D + c] = pos[size_t(rank[j]) * D + c];
}

}  // namespace

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
  const auto [a_d, b_d] = umap_ab_params(o.spread, o.min_dist);
  const float a = float(a_d), b = float(b_d), gamma = float(o.repulsion_strength);

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

  // Edges: drop the weak ones, then the sampling schedule (make_epochs_per_sample).
  float max_w = 0;
  for (float w : g.weights) max_w = std::max(max_w, w);
  std::vector<size_t> start(n + 1, 0);
  std::vector<int32_t> tail;
  std::vector<double> eps;
  for (size_t i = 0; i < n; ++i) {
    for (size_t e = g.row_start[i]; e < g.row_start[i + 1]; ++e) {
      if (g.weights[e] < max_w / float(n_epochs)) continue;
      tail.push_back(g.cols[e]);
      eps.push_back(double(max_w) / double(g.weights[e]));
    }
    start[i + 1] = tail.size();
  }
  g = FuzzyGraph{};
  const double neg_rate = double(o.negative_sample_rate);
  std::vector<double> next = eps, eps_neg(eps.size()), next_neg(eps.size());
  for (size_t e = 0; e < eps.size(); ++e)
    next_neg[e] = eps_neg[e] = neg_rate > 0 ? eps[e] / neg_rate : 0;

  ThreadPool pool(o.n_threads);
  Schedule sched{start, tail, eps, next, eps_neg, next_neg};
  LayoutParams lp{a, b, gamma, float(o.learning_rate), n_epochs, o.seed};
  StageProgress progress(o.progress, "layout", double(n_epochs), "epochs");
  if (pool.size() == 1) {
    layout_sequential(y, dims, sched, lp, progress);
  } else if (dims == 1) {
    layout_rounds<1>(y, sched, lp, pool, progress);
  } else if (dims == 2) {
    layout_rounds<2>(y, sched, lp, pool, progress);
  } else {
    layout_rounds<3>(y, sched, lp, pool, progress);
  }

  Projection out;
  out.n_rows = n;
  out.dims = dims;
  out.coords = std::move(y);
  return out;
}

}  // namespace embedscope
