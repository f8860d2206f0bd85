#include "embedscope/search/searcher.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <optional>
#include <string>

#include "embedscope/core/blas.h"
#include "embedscope/core/error.h"
#include "embedscope/core/thread_pool.h"
#include "search/top_k.h"
#include "simd/dot_kernels.h"
#include "simd/u8i8_kernels.h"

namespace embedscope {

std::string_view search_mode_name(SearchMode m) {
  return m == SearchMode::kExact ? "exact" : "fast";
}

std::string_view metric_name(Metric m) {
  switch (m) {
    case Metric::kCosine:
      return "cosine";
    case Metric::kDot:
      return "dot";
    case Metric::kL2:
      return "l2";
  }
  return "?";
}

SearchMode parse_search_mode(std::string_view s) {
  if (s == "exact") return SearchMode::kExact;
  if (s == "fast") return SearchMode::kFast;
  throw Error(ErrorCode::kInvalidArgument,
              "unknown search mode '" + std::string(s) + "' (expected exact or fast)");
}

Metric parse_metric(std::string_view s) {
  if (s == "cosine" || s == "cos") return Metric::kCosine;
  if (s == "dot" || s == "ip") return Metric::kDot;
  if (s == "l2" || s == "euclidean") return Metric::kL2;
  throw Error(ErrorCode::kInvalidArgument,
              "unknown metric '" + std::string(s) + "' (expected cosine, dot or l2)");
}

namespace {

// Rows per block: the scores of one block stay in L1 while the heap consumes them.
constexpr size_t kBlockRows = 256;
// Rows per work item of a single-query scan (scan_blocks): 3 MB of a 768-dim float32 table,
// ~25 items per thread on GPT-2's 50257 rows.
constexpr size_t kScanGrain = 1024;
// Rows per sgemm block in search_batch: one thread's score block is n_queries x kGemmRows
// floats (2 MB for 1000 queries). Measured on 1000 x 768 x 50257 (2 threads): 256, 512 and
// 1024 rows are within noise of each other (~93-98% of one full sgemm); smaller blocks repack
// the queries more often, larger ones spill the scores further out of cache. 256 varied most.
constexpr size_t kGemmRows = 512;

// Turns a raw dot product into the metric's score (larger is nearer); NaN means "skip".
// inv_norm is NaN for rows whose norm is zero or not finite, so a cosine score is NaN there
// without a test in the hot loop (NaN fails every `s >= threshold` check).
struct Scorer {
  Metric metric;
  float inv_qn;  // cosine: 1 / |q|
  float q_sq;    // L2: |q|^2
  const float* inv_norm;
  const float* sq_norm;
  template <Metric M>
  float score(float dot, size_t i) const {
    if constexpr (M == Metric::kCosine) return dot * inv_qn * inv_norm[i];
    if constexpr (M == Metric::kDot) return dot;
    if constexpr (M == Metric::kL2)
      return -std::sqrt(std::max(0.0f, q_sq + sq_norm[i] - 2.0f * dot));
  }
  float operator()(float dot, size_t i) const {
    switch (metric) {
      case Metric::kCosine:
        return score<Metric::kCosine>(dot, i);
      case Metric::kDot:
        return score<Metric::kDot>(dot, i);
      case Metric::kL2:
        return score<Metric::kL2>(dot, i);
    }
    return NAN;
  }
};

// Calls f.template operator()<M>() with the metric as a compile-time constant, so the per-row
// scoring loops below have no switch inside.
template <class F>
void with_metric(Metric m, F&& f) {
  switch (m) {
    case Metric::kCosine:
      return f.template operator()<Metric::kCosine>();
    case Metric::kDot:
      return f.template operator()<Metric::kDot>();
    case Metric::kL2:
      return f.template operator()<Metric::kL2>();
  }
}

struct Eligible {
  const std::vector<uint8_t>* allow;
  const std::vector<TokenId>* exclude;  // sorted
  bool operator()(size_t i) const {
    if (allow && (i >= allow->size() || !(*allow)[i])) return false;
    return !std::binary_search(exclude->begin(), exclude->end(), TokenId(i));
  }
};

// Offers rows [i0, i0 + m) with raw dot products dots[0..m) to h, in row order. Scores are
// computed kOfferChunk at a time and compared with the threshold as it stood at the start of
// the chunk, a branch-free loop the compiler vectorises; only a chunk where some row passes
// goes through the row-by-row path (live threshold, eligibility, push). The threshold only
// rises, so a chunk with no row at or above the old threshold has none above the live one
// either, and the rows pushed are exactly those of the plain row-by-row loop. Eligibility
// (allow list, exclusions) is only checked for the few rows that would enter the heap.
constexpr size_t kOfferChunk = 32;

inline void offer_rows(const float* s, size_t i0, size_t m, TopK& h, const Eligible& ok) {
  for (size_t r = 0; r < m; ++r)
    if (s[r] >= h.threshold()) [[unlikely]] {
      if (h.would_accept(s[r]) && ok(i0 + r)) h.push(TokenId(i0 + r), s[r]);
    }
}

template <Metric M>
inline void offer_block(const Scorer& sc, const float* dots, size_t i0, size_t m, TopK& h,
                        const Eligible& ok) {
  float s[kOfferChunk];
  size_t r = 0;
  for (; r + kOfferChunk <= m; r += kOfferChunk) {
    const float thr = h.threshold();
    unsigned any = 0;
    for (size_t j = 0; j < kOfferChunk; ++j) {
      s[j] = sc.score<M>(dots[r + j], i0 + r + j);
      any |= unsigned(s[j] >= thr);
    }
    if (any) [[unlikely]]
      offer_rows(s, i0 + r, kOfferChunk, h, ok);
  }
  for (size_t j = 0; r + j < m; ++j) s[j] = sc.score<M>(dots[r + j], i0 + r + j);
  offer_rows(s, i0 + r, m - r, h, ok);
}

}  // namespace

struct Searcher::Impl {
  EmbeddingTable table;
  std::vector<float> mean;
  bool centered = false;
  ExactScan exact_scan = ExactScan::kAuto;
  std::vector<float> inv_norm, sq_norm;
  // int8 copy for kFast: rows padded to `stride` bytes, value = round(x / scale[i]).
  mutable std::once_flag i8_once;
  mutable std::vector<int8_t> i8;
  mutable std::vector<float> i8_scale;
  mutable std::vector<float> i8_mu;  // mean row the int8 residuals are relative to
  // Error bounds of the int8 copy (see bounded()): with r_i - mu = scale_i c_i + d_i,
  // i8_a[i] >= |scale_i c_i| and i8_c[i] >= |d_i| + the float32 rounding of both dot products
  // per unit |q|; NaN for rows with a non-finite value (never returned by any mode).
  mutable std::vector<float> i8_a, i8_c;
  mutable std::vector<int32_t> i8_sum;  // sum_j c_ij (the u8 queries' +128 offset)
  mutable bool i8_bounded_ok = true;    // false when a row norm is too large for the bounds
  size_t stride = 0;
  // kAuto: exact queries answered so far by this searcher and its lanes.
  mutable std::atomic<uint64_t> n_exact_queries{0};
  mutable std::atomic<uint64_t> n_bounded{0}, n_candidates{0};

  void check_query(std::span<const float> q) const {
    if (q.size() != table.dim())
      throw Error(ErrorCode::kInvalidArgument, "query has " + std::to_string(q.size()) +
                                                   " values, table dim is " +
                                                   std::to_string(table.dim()));
  }

  Scorer scorer(std::span<const float> q, Metric metric) const {
    double qq = 0;
    for (float v : q) qq += double(v) * v;
    float inv = qq > 0 ? float(1.0 / std::sqrt(qq)) : 0.0f;
    return Scorer{metric, inv, float(qq), inv_norm.data(), sq_norm.data()};
  }

  // int8 copy of the residuals r_i - mu (mu = mean row): trained embeddings share a large
  // common component (anisotropy), so quantising what is left after removing it keeps far more
  // of what separates rows. Then <q, r_i> = <q, mu> + <q, r_i - mu>.
  void build_int8(ThreadPool& pool) const {
    const size_t n = table.n_rows(), dim = table.dim();
    i8.assign(n * stride, 0);
    i8_scale.assign(n, 0.0f);
    i8_mu.assign(dim, 0.0f);
    {
      std::vector<double> acc(dim, 0.0);
      std::vector<float> row(dim);
      for (size_t i = 0; i < n; ++i) {
        table.row_f32(i, row.data());
        for (size_t j = 0; j < dim; ++j)
          if (std::isfinite(row[j])) acc[j] += row[j];
      }
      for (size_t j = 0; j < dim; ++j) i8_mu[j] = float(acc[j] / double(n));
    }
    i8_a.assign(n, 0.0f);
    i8_c.assign(n, 0.0f);
    i8_sum.assign(n, 0);
    double mu_norm = 0;
    for (float v : i8_mu) mu_norm += double(v) * v;
    mu_norm = std::sqrt(mu_norm);
    // Float32 rounding, per unit |q| |r|: the exact path's dot product (dim products and sums,
    // any order: gamma_dim) and the approximation's own arithmetic (a few operations on values
    // bounded by |q| (|mu| + |scale c|)). Generous: the quantisation term dominates anyway.
    const double u = std::ldexp(1.0, -24);
    const double gamma = 1.01 * double(dim + 8) * u;
    std::atomic<bool> too_large{false};
    pool.parallel_for(n, [&](size_t b, size_t e, size_t) {
      std::vector<float> row(dim);
      for (size_t i = b; i < e; ++i) {
        table.row_f32(i, row.data());
        bool finite = true;
        double rn = 0;
        for (size_t j = 0; j < dim; ++j) {
          finite = finite && std::isfinite(row[j]);
          rn += double(row[j]) * row[j];
        }
        float m = 0;
        for (size_t j = 0; j < dim; ++j) {
          row[j] = std::isfinite(row[j]) ? row[j] - i8_mu[j] : 0.0f;
          m = std::max(m, std::fabs(row[j]));
        }
        rn = std::sqrt(rn);
        if (!finite) {
          i8_c[i] = NAN;
        } else if (rn > 1e15) {
          too_large = true;
        }
        int8_t* dst = i8.data() + i * stride;
        if (m > 0) {
          float inv = 127.0f / m;
          for (size_t j = 0; j < dim; ++j)
            dst[j] = int8_t(std::lrint(std::clamp(row[j] * inv, -127.f, 127.f)));
          i8_scale[i] = m / 127.0f;
          int32_t sum = 0;
          for (size_t j = 0; j < dim; ++j) sum += dst[j];
          i8_sum[i] = sum;
        }
        if (!finite) continue;
        // |scale c| and |d| in double from the row as stored (re-read: `row` holds the float
        // residual, itself rounded).
        table.row_f32(i, row.data());
        double a = 0, dd = 0;
        for (size_t j = 0; j < dim; ++j) {
          double sc = double(i8_scale[i]) * dst[j];
          a += sc * sc;
          double d = (double(row[j]) - double(i8_mu[j])) - sc;
          dd += d * d;
        }
        a = std::sqrt(a);
        double c = std::sqrt(dd) + gamma * rn + 16 * u * (mu_norm + a);
        i8_a[i] = float(a * (1 + 1e-6));
        i8_c[i] = float(c * (1 + 1e-6));
      }
    });
    i8_bounded_ok = !too_large;
  }

  // Runs f(begin, end, thread) over [0, n) in blocks of kScanGrain rows handed out from a
  // shared counter. A static split into halves made the slower half the query's time: on these
  // VMs the second core is not always free, and the rows are not equally costly (a trained
  // table's frequent rows pass the top-k threshold far more often than its untrained tail).
  // Results do not depend on the split: per-thread heaps are merged by score, then id.
  template <class F>
  void scan_blocks(ThreadPool& pool, size_t n, F&& f) const {
    if (pool.size() == 1 || n <= kScanGrain) {
      if (n > 0) f(size_t(0), n, size_t(0));
      return;
    }
    std::atomic<size_t> next{0};
    pool.run_on_all([&](size_t t) {
      for (size_t b; (b = next.fetch_add(kScanGrain, std::memory_order_relaxed)) < n;)
        f(b, std::min(n, b + kScanGrain), t);
    });
  }

  size_t limit(const SearchOptions& o) const {
    size_t n = table.n_rows();
    return o.n_rows_limit > 0 ? std::min(n, o.n_rows_limit) : n;
  }

  std::vector<Neighbor> exact(ThreadPool& pool, std::span<const float> q, const SearchOptions& o,
                              size_t k, const std::vector<TokenId>& excl) const {
    Scorer sc = scorer(q, o.metric);
    Eligible ok{o.allow, &excl};
    std::vector<TopK> heaps(pool.size(), TopK(k));
    const size_t dim = table.dim();
    with_metric(o.metric, [&]<Metric M>() {
      scan_blocks(pool, limit(o), [&](size_t b, size_t e, size_t t) {
        float buf[kBlockRows];
        TopK& h = heaps[t];
        for (size_t i0 = b; i0 < e; i0 += kBlockRows) {
          size_t m = std::min(kBlockRows, e - i0);
          simd::dot_rows(table.row_data(i0), table.dtype(), m, dim, q.data(), buf);
          offer_block<M>(sc, buf, i0, m, h, ok);
        }
      });
    });
    return merge_top_k(heaps, k);
  }

  std::vector<Neighbor> fast(ThreadPool& pool, std::span<const float> q, const SearchOptions& o,
                             size_t k, const std::vector<TokenId>& excl) const {
    std::call_once(i8_once, [&] { build_int8(pool); });
    const size_t dim = table.dim();
    // Quantise the query to int16 within the overflow bound of the int8 kernel.
    float qmax = 0;
    for (float v : q) qmax = std::max(qmax, std::fabs(v));
    const float lim = float(simd::int8_query_limit(stride));
    const float qs = qmax > 0 ? qmax / lim : 1.0f;
    std::vector<int16_t> q16(stride, 0);
    for (size_t j = 0; j < dim; ++j) q16[j] = int16_t(std::lrint(q[j] / qs));
    double qmu = 0;
    for (size_t j = 0; j < dim; ++j) qmu += double(q[j]) * i8_mu[j];
    const float q_mu = float(qmu);
    Scorer sc = scorer(q, o.metric);
    Eligible ok{o.allow, &excl};
    size_t n_cand = std::max(k * std::max<size_t>(o.rerank_factor, 1), kMinFastCandidates);
    std::vector<TopK> heaps(pool.size(), TopK(n_cand));
    with_metric(o.metric, [&]<Metric M>() {
      scan_blocks(pool, limit(o), [&](size_t b, size_t e, size_t t) {
        int32_t buf[kBlockRows];
        float approx[kBlockRows];
        TopK& h = heaps[t];
        for (size_t i0 = b; i0 < e; i0 += kBlockRows) {
          size_t m = std::min(kBlockRows, e - i0);
          simd::dot_rows_i8(i8.data() + i0 * stride, m, stride, q16.data(), buf);
          const float* scale = i8_scale.data() + i0;
          for (size_t r = 0; r < m; ++r) approx[r] = q_mu + float(buf[r]) * qs * scale[r];
          offer_block<M>(sc, approx, i0, m, h, ok);
        }
      });
    });
    std::vector<Neighbor> cand = merge_top_k(heaps, n_cand);
    // Exact float32 re-rank: the same kernel and scorer as kExact, so scores are identical.
    TopK best(k);
    for (const Neighbor& c : cand) {
      float d;
      simd::dot_rows(table.row_data(size_t(c.id)), table.dtype(), 1, dim, q.data(), &d);
      float s = sc(d, size_t(c.id));
      if (std::isfinite(s)) best.push(c.id, s);
    }
    std::vector<TopK> one{std::move(best)};
    return merge_top_k(one, k);
  }

  // kExact through the int8 copy, with the same answer as exact(): every row gets an interval
  // [lo, hi] that provably holds the score exact() computes for it (quantisation error by
  // Cauchy-Schwarz, |<q, d_i>| <= |q| |d_i| and |scale_i <eta, c_i>| <= |eta| |scale_i c_i|
  // for the query's own int16 rounding eta, plus float32 rounding; the scorers are monotone in
  // the dot product, so bounds on the dot give bounds on the score). The k-th best lower bound L
  // is at most the k-th best exact score, so every row of the exact top k has hi >= L: those
  // candidates are rescored with exact()'s kernel and scorer, and the top k of them is exact()'s
  // answer, ids, scores, order and ties included. nullopt when the bounds do not apply (a zero
  // or huge query, a table with huge rows): the caller scans the float rows instead.
  std::optional<std::vector<Neighbor>> bounded(ThreadPool& pool, std::span<const float> q,
                                               const SearchOptions& o, size_t k,
                                               const std::vector<TokenId>& excl) const {
    std::call_once(i8_once, [&] { build_int8(pool); });
    if (!i8_bounded_ok) return std::nullopt;
    const size_t dim = table.dim();
    double qq = 0;
    float qmax = 0;
    for (float v : q) {
      qq += double(v) * v;
      qmax = std::max(qmax, std::fabs(v));
    }
    const double qn = std::sqrt(qq);
    if (!(qn > 0) || !(qn < 1e15)) return std::nullopt;
    const float lim = float(simd::int8_query_limit(stride));
    const float qs = qmax / lim;
    std::vector<int16_t> q16(stride, 0);
    double eta = 0, qmu = 0;
    for (size_t j = 0; j < dim; ++j) {
      q16[j] = int16_t(std::lrint(q[j] / qs));
      double r = double(q[j]) - double(qs) * q16[j];
      eta += r * r;
      qmu += double(q[j]) * i8_mu[j];
    }
    const float q_mu = float(qmu);
    const float eta_n = float(std::sqrt(eta) * (1 + 1e-6) + 1e-30);
    const float qn_f = float(qn * (1 + 1e-6));
    Scorer sc = scorer(q, o.metric);
    Eligible ok{o.allow, &excl};
    const size_t T = pool.size();
    std::vector<TopK> lower(T, TopK(k));
    std::vector<std::vector<Neighbor>> cand(T);  // (row, hi)
    with_metric(o.metric, [&]<Metric M>() {
      scan_blocks(pool, limit(o), [&](size_t b, size_t e, size_t t) {
        int32_t buf[kBlockRows];
        float lo[kOfferChunk], hi[kOfferChunk];
        TopK& h = lower[t];
        std::vector<Neighbor>& c = cand[t];
        for (size_t i0 = b; i0 < e; i0 += kBlockRows) {
          const size_t m = std::min(kBlockRows, e - i0);
          simd::dot_rows_i8(i8.data() + i0 * stride, m, stride, q16.data(), buf);
          for (size_t r0 = 0; r0 < m; r0 += kOfferChunk) {
            const size_t mm = std::min(kOfferChunk, m - r0);
            const size_t i1 = i0 + r0;
            const float thr = h.threshold();
            unsigned any = 0;
            for (size_t j = 0; j < mm; ++j) {
              const float approx = q_mu + float(buf[r0 + j]) * qs * i8_scale[i1 + j];
              const float err = eta_n * i8_a[i1 + j] + qn_f * i8_c[i1 + j];
              hi[j] = sc.score<M>(approx + err, i1 + j);
              any |= unsigned(hi[j] >= thr);
            }
            if (!any) [[likely]]
              continue;
            for (size_t j = 0; j < mm; ++j) {
              if (!(hi[j] >= h.threshold()) || !ok(i1 + j)) continue;
              c.push_back(Neighbor{TokenId(i1 + j), hi[j]});
              const float approx = q_mu + float(buf[r0 + j]) * qs * i8_scale[i1 + j];
              const float err = eta_n * i8_a[i1 + j] + qn_f * i8_c[i1 + j];
              lo[j] = sc.score<M>(approx - err, i1 + j);
              if (h.would_accept(lo[j])) h.push(TokenId(i1 + j), lo[j]);
            }
          }
        }
      });
    });
    std::vector<Neighbor> lows = merge_top_k(lower, k);
    const float L = lows.size() == k ? lows.back().score : -INFINITY;
    TopK best(k);
    uint64_t n_c = 0;
    for (const std::vector<Neighbor>& c : cand)
      for (const Neighbor& x : c) {
        if (!(x.score >= L)) continue;
        ++n_c;
        float d;
        simd::dot_rows(table.row_data(size_t(x.id)), table.dtype(), 1, dim, q.data(), &d);
        float s = sc(d, size_t(x.id));
        if (best.would_accept(s)) best.push(x.id, s);
      }
    n_bounded.fetch_add(1, std::memory_order_relaxed);
    n_candidates.fetch_add(n_c, std::memory_order_relaxed);
    std::vector<TopK> one{std::move(best)};
    return merge_top_k(one, k);
  }

  // search_batch's kExact through the int8 copy: bounded() for many queries at once, the
  // scores of a block of rows for every query from the u8 x i8 VNNI kernel (simd/u8i8_kernels.h;
  // queries quantised to 8 bits, so eta is larger than bounded()'s and a few more rows are
  // rescored). Each query's answer is search()'s float scan answer, bit for bit (a zero or
  // huge query gets exact()'s float scan). nullopt when the table's rows are too large for the
  // bounds (sgemm then).
  std::optional<std::vector<std::vector<Neighbor>>> bounded_batch(
      ThreadPool& pool, std::span<const float> queries, size_t nq, const SearchOptions& o,
      const std::vector<std::vector<TokenId>>& excl) const {
    std::call_once(i8_once, [&] { build_int8(pool); });
    if (!i8_bounded_ok || stride > simd::u8_i8_max_stride()) return std::nullopt;
    const size_t dim = table.dim(), k = o.k;
    std::vector<uint8_t> u(nq * stride, 0);
    std::vector<float> qs(nq), q_mu(nq), eta_n(nq), qn_f(nq);
    std::vector<Scorer> sc(nq);
    std::vector<uint8_t> plain(nq, 0);  // answered by the float scan instead
    for (size_t qi = 0; qi < nq; ++qi) {
      const float* q = queries.data() + qi * dim;
      double qq = 0;
      float qmax = 0;
      for (size_t j = 0; j < dim; ++j) {
        qq += double(q[j]) * q[j];
        qmax = std::max(qmax, std::fabs(q[j]));
      }
      const double qn = std::sqrt(qq);
      if (!(qn > 0) || !(qn < 1e15)) {
        plain[qi] = 1;
        continue;
      }
      qs[qi] = qmax / 127.0f;
      double eta = 0, qmu = 0;
      for (size_t j = 0; j < dim; ++j) {
        const long v = std::lrint(q[j] / qs[qi]);  // in [-127, 127]
        u[qi * stride + j] = uint8_t(v + 128);
        const double r = double(q[j]) - double(qs[qi]) * double(v);
        eta += r * r;
        qmu += double(q[j]) * i8_mu[j];
      }
      q_mu[qi] = float(qmu);
      eta_n[qi] = float(std::sqrt(eta) * (1 + 1e-6) + 1e-30);
      qn_f[qi] = float(qn * (1 + 1e-6));
      sc[qi] = scorer(std::span<const float>(q, dim), o.metric);
    }
    const size_t T = pool.size(), n_lim = limit(o);
    std::vector<std::vector<TopK>> lower(T, std::vector<TopK>(nq, TopK(k)));
    std::vector<std::vector<std::vector<Neighbor>>> cand(T, std::vector<std::vector<Neighbor>>(nq));
    constexpr size_t kRows = 64, kQ = 4;
    std::atomic<size_t> next{0};
    with_metric(o.metric, [&]<Metric M>() {
      pool.run_on_all([&](size_t t) {
        int32_t buf[kQ * kRows];
        for (;;) {
          const size_t i0 = next.fetch_add(kRows, std::memory_order_relaxed);
          if (i0 >= n_lim) break;
          const size_t m = std::min(kRows, n_lim - i0);
          for (size_t q0 = 0; q0 < nq; q0 += kQ) {
            const size_t nqb = std::min(kQ, nq - q0);
            simd::dot_u8_i8_block(u.data() + q0 * stride, nqb, i8.data() + i0 * stride, m, stride,
                                  buf);
            for (size_t a = 0; a < nqb; ++a) {
              const size_t qi = q0 + a;
              if (plain[qi]) continue;
              TopK& h = lower[t][qi];
              const Scorer& s = sc[qi];
              const int32_t* dp = buf + a * m;
              const float thr = h.threshold();
              float hi[kRows];
              unsigned any = 0;
              for (size_t r = 0; r < m; ++r) {
                const size_t i = i0 + r;
                const float approx =
                    q_mu[qi] + float(dp[r] - 128 * i8_sum[i]) * (qs[qi] * i8_scale[i]);
                const float err = eta_n[qi] * i8_a[i] + qn_f[qi] * i8_c[i];
                hi[r] = s.score<M>(approx + err, i);
                any |= unsigned(hi[r] >= thr);
              }
              if (!any) [[likely]]
                continue;
              Eligible ok{o.allow, &excl[qi]};
              for (size_t r = 0; r < m; ++r) {
                const size_t i = i0 + r;
                if (!(hi[r] >= h.threshold()) || !ok(i)) continue;
                cand[t][qi].push_back(Neighbor{TokenId(i), hi[r]});
                const float approx =
                    q_mu[qi] + float(dp[r] - 128 * i8_sum[i]) * (qs[qi] * i8_scale[i]);
                const float err = eta_n[qi] * i8_a[i] + qn_f[qi] * i8_c[i];
                const float lo = s.score<M>(approx - err, i);
                if (h.would_accept(lo)) h.push(TokenId(i), lo);
              }
            }
          }
        }
      });
    });
    std::vector<std::vector<Neighbor>> out(nq);
    std::atomic<uint64_t> n_c{0};
    pool.parallel_for(nq, [&](size_t b, size_t e, size_t) {
      uint64_t mine = 0;
      for (size_t qi = b; qi < e; ++qi) {
        if (plain[qi]) continue;
        std::vector<TopK> lows;
        for (size_t t = 0; t < T; ++t) lows.push_back(std::move(lower[t][qi]));
        std::vector<Neighbor> lw = merge_top_k(lows, k);
        const float L = lw.size() == k ? lw.back().score : -INFINITY;
        TopK best(k);
        const float* q = queries.data() + qi * dim;
        for (size_t t = 0; t < T; ++t)
          for (const Neighbor& x : cand[t][qi]) {
            if (!(x.score >= L)) continue;
            ++mine;
            float d;
            simd::dot_rows(table.row_data(size_t(x.id)), table.dtype(), 1, dim, q, &d);
            const float s = sc[qi](d, size_t(x.id));
            if (best.would_accept(s)) best.push(x.id, s);
          }
        std::vector<TopK> one{std::move(best)};
        out[qi] = merge_top_k(one, k);
      }
      n_c.fetch_add(mine, std::memory_order_relaxed);
    });
    uint64_t n_plain = 0;
    for (size_t qi = 0; qi < nq; ++qi)
      if (plain[qi]) {
        out[qi] = exact(pool, queries.subspan(qi * dim, dim), o, k, excl[qi]);
        ++n_plain;
      }
    n_bounded.fetch_add(nq - n_plain, std::memory_order_relaxed);
    n_candidates.fetch_add(n_c.load(), std::memory_order_relaxed);
    return out;
  }
};

Searcher::Searcher(EmbeddingTable table, const SearcherOptions& options)
    : impl_(std::make_shared<Impl>()) {
  if (table.n_rows() == 0 || table.dim() == 0)
    throw Error(ErrorCode::kInvalidArgument, "cannot search an empty table (" +
                                                 std::to_string(table.n_rows()) + " x " +
                                                 std::to_string(table.dim()) + ")");
  Impl& m = *impl_;
  const size_t n = table.n_rows(), dim = table.dim();
  pool_ = std::make_unique<ThreadPool>(options.n_threads);
  m.exact_scan = options.exact_scan;
  m.mean.assign(dim, 0.0f);
  if (options.center) {
    std::vector<double> acc(dim, 0.0);
    std::vector<float> row(dim);
    for (size_t i = 0; i < n; ++i) {
      table.row_f32(i, row.data());
      for (size_t j = 0; j < dim; ++j) acc[j] += row[j];
    }
    for (size_t j = 0; j < dim; ++j) m.mean[j] = float(acc[j] / double(n));
    std::vector<float> c(n * dim);
    for (size_t i = 0; i < n; ++i) {
      table.row_f32(i, c.data() + i * dim);
      for (size_t j = 0; j < dim; ++j) c[i * dim + j] -= m.mean[j];
    }
    table = EmbeddingTable::from_f32(n, dim, std::move(c));
    m.centered = true;
  }
  m.table = std::move(table);
  const std::vector<float>& norms = m.table.norms();
  m.inv_norm.resize(n);
  m.sq_norm.resize(n);
  for (size_t i = 0; i < n; ++i) {
    float nv = norms[i];
    m.inv_norm[i] = (nv > 0 && std::isfinite(nv)) ? 1.0f / nv : NAN;
    m.sq_norm[i] = nv * nv;
  }
  m.stride = (dim + 63) / 64 * 64;
}

Searcher::Searcher(std::shared_ptr<Impl> impl, size_t n_threads)
    : impl_(std::move(impl)), pool_(std::make_unique<ThreadPool>(n_threads)) {}

Searcher Searcher::lane(size_t n_threads) const { return Searcher(impl_, n_threads); }

bool Searcher::batch_prefilter_available() { return simd::has_u8_i8_kernel(); }

Searcher::PrefilterStats Searcher::prefilter_stats() const {
  return {impl_->n_bounded.load(std::memory_order_relaxed),
          impl_->n_candidates.load(std::memory_order_relaxed)};
}

std::vector<Neighbor> Searcher::exact(std::span<const float> q, const SearchOptions& o, size_t k,
                                      const std::vector<TokenId>& excl) const {
  const Impl& m = *impl_;
  if (use_bounded(1))
    if (auto r = m.bounded(*pool_, q, o, k, excl)) return std::move(*r);
  return m.exact(*pool_, q, o, k, excl);
}

bool Searcher::use_bounded(size_t n_queries) const {
  const Impl& m = *impl_;
  switch (m.exact_scan) {
    case ExactScan::kFloat:
      return false;
    case ExactScan::kBounded:
      return true;
    case ExactScan::kAuto:
      // The int8 copy costs a few scans to build: worth it for a searcher that keeps answering
      // (the server, a notebook), not for one CLI query.
      // A large batch pays for the copy by itself.
      return m.table.n_rows() >= kPrefilterMinRows &&
             (m.n_exact_queries.fetch_add(n_queries, std::memory_order_relaxed) >=
                  kPrefilterAfterQueries ||
              n_queries >= kPrefilterMinBatch);
  }
  return false;
}

Searcher::~Searcher() = default;
Searcher::Searcher(Searcher&&) noexcept = default;
Searcher& Searcher::operator=(Searcher&&) noexcept = default;

const EmbeddingTable& Searcher::table() const { return impl_->table; }
size_t Searcher::n_rows() const { return impl_->table.n_rows(); }
size_t Searcher::dim() const { return impl_->table.dim(); }
size_t Searcher::n_threads() const { return pool_->size(); }
bool Searcher::centered() const { return impl_->centered; }
const std::vector<float>& Searcher::mean() const { return impl_->mean; }
void Searcher::prepare_fast() const {
  std::call_once(impl_->i8_once, [&] { impl_->build_int8(*pool_); });
}

std::vector<float> Searcher::row(TokenId id) const {
  if (id < 0 || size_t(id) >= n_rows())
    throw Error(ErrorCode::kOutOfRange, "row id " + std::to_string(id) + " is out of range (" +
                                            std::to_string(n_rows()) + " rows)");
  return impl_->table.row(size_t(id));
}

std::vector<float> Searcher::to_search_space(std::span<const float> v) const {
  impl_->check_query(v);
  std::vector<float> out(v.begin(), v.end());
  if (impl_->centered)
    for (size_t j = 0; j < out.size(); ++j) out[j] -= impl_->mean[j];
  return out;
}

float Searcher::score(std::span<const float> q, TokenId id, Metric metric) const {
  impl_->check_query(q);
  if (id < 0 || size_t(id) >= n_rows())
    throw Error(ErrorCode::kOutOfRange, "row id " + std::to_string(id) + " is out of range (" +
                                            std::to_string(n_rows()) + " rows)");
  float d;
  simd::dot_rows(impl_->table.row_data(size_t(id)), impl_->table.dtype(), 1, dim(), q.data(), &d);
  return impl_->scorer(q, metric)(d, size_t(id));
}

std::vector<float> Searcher::score_all(std::span<const float> q, Metric metric) const {
  const Impl& m = *impl_;
  m.check_query(q);
  Scorer sc = m.scorer(q, metric);
  std::vector<float> out(n_rows());
  pool_->parallel_for(n_rows(), [&](size_t b, size_t e, size_t) {
    simd::dot_rows(m.table.row_data(b), m.table.dtype(), e - b, dim(), q.data(), out.data() + b);
    for (size_t i = b; i < e; ++i) out[i] = sc(out[i], i);
  });
  return out;
}

std::vector<Neighbor> Searcher::search(std::span<const float> q, const SearchOptions& o) const {
  const Impl& m = *impl_;
  if (o.k == 0) throw Error(ErrorCode::kInvalidArgument, "k must be at least 1");
  m.check_query(q);
  if (o.csls_k > 0 && o.metric != Metric::kCosine)
    throw Error(ErrorCode::kInvalidArgument, "CSLS re-ranking needs the cosine metric (got " +
                                                 std::string(metric_name(o.metric)) + ")");
  std::vector<TokenId> excl = o.exclude;
  std::sort(excl.begin(), excl.end());
  if (o.csls_k == 0)
    return o.mode == SearchMode::kFast ? m.fast(*pool_, q, o, o.k, excl) : exact(q, o, o.k, excl);

  // CSLS: re-rank the best cosine candidates by 2 cos(q, y) - r(q) - r(y), where r is the mean
  // cosine to the csls_k nearest rows of the whole table (the hubness penalty).
  size_t n_cand = std::max(o.k * std::max<size_t>(o.rerank_factor, 1), kMinFastCandidates);
  std::vector<Neighbor> cand =
      o.mode == SearchMode::kFast ? m.fast(*pool_, q, o, n_cand, excl) : exact(q, o, n_cand, excl);
  SearchOptions dens;
  dens.k = o.csls_k;
  dens.n_rows_limit = o.n_rows_limit;
  std::vector<Neighbor> qn = exact(q, dens, o.csls_k, excl);
  double rq = 0;
  for (const Neighbor& x : qn) rq += x.score;
  rq = qn.empty() ? 0 : rq / double(qn.size());
  std::vector<float> cq(cand.size() * dim());
  std::vector<std::vector<TokenId>> self(cand.size());
  for (size_t c = 0; c < cand.size(); ++c) {
    m.table.row_f32(size_t(cand[c].id), cq.data() + c * dim());
    self[c] = {cand[c].id};
  }
  auto dn = search_batch(cq, cand.size(), dens, &self);
  std::vector<TopK> heap{TopK(o.k)};
  for (size_t c = 0; c < cand.size(); ++c) {
    double ry = 0;
    for (const Neighbor& x : dn[c]) ry += x.score;
    ry = dn[c].empty() ? 0 : ry / double(dn[c].size());
    heap[0].push(cand[c].id, float(2.0 * cand[c].score - rq - ry));
  }
  return merge_top_k(heap, o.k);
}

std::vector<std::vector<Neighbor>> Searcher::search_batch(
    std::span<const float> queries, size_t n_queries, const SearchOptions& o,
    const std::vector<std::vector<TokenId>>* exclude_per_query) const {
  const Impl& m = *impl_;
  const size_t dim = this->dim();
  if (o.k == 0) throw Error(ErrorCode::kInvalidArgument, "k must be at least 1");
  if (queries.size() != n_queries * dim)
    throw Error(ErrorCode::kInvalidArgument, "batch has " + std::to_string(queries.size()) +
                                                 " values, expected " + std::to_string(n_queries) +
                                                 " queries x dim " + std::to_string(dim));
  if (exclude_per_query && exclude_per_query->size() != n_queries)
    throw Error(ErrorCode::kInvalidArgument,
                "exclude_per_query has " + std::to_string(exclude_per_query->size()) +
                    " entries for " + std::to_string(n_queries) + " queries");
  std::vector<std::vector<TokenId>> excl(n_queries, o.exclude);
  for (size_t qi = 0; qi < n_queries; ++qi) {
    if (exclude_per_query)
      excl[qi].insert(excl[qi].end(), (*exclude_per_query)[qi].begin(),
                      (*exclude_per_query)[qi].end());
    std::sort(excl[qi].begin(), excl[qi].end());
  }
  std::vector<std::vector<Neighbor>> out(n_queries);
  if (n_queries == 0) return out;
  if (o.mode == SearchMode::kFast || o.csls_k > 0) {
    for (size_t qi = 0; qi < n_queries; ++qi) {
      SearchOptions one = o;
      one.exclude = excl[qi];
      out[qi] = search(queries.subspan(qi * dim, dim), one);
    }
    return out;
  }
  if (use_bounded(n_queries) && simd::has_u8_i8_kernel())
    if (auto r = m.bounded_batch(*pool_, queries, n_queries, o, excl)) return std::move(*r);
  std::vector<Scorer> sc(n_queries);
  for (size_t qi = 0; qi < n_queries; ++qi)
    sc[qi] = m.scorer(queries.subspan(qi * dim, dim), o.metric);
  // Our threads each run a single-threaded sgemm on their own rows; OpenBLAS's own threads
  // would oversubscribe the cores. (A process-wide OpenBLAS setting; we are its only user.)
  blas::set_num_threads(1);
  const size_t T = pool_->size(), n_lim = m.limit(o);
  std::vector<std::vector<TopK>> heaps(T, std::vector<TopK>(n_queries, TopK(o.k)));
  // Threads take row blocks from a shared counter rather than one fixed half each: a thread
  // that loses its core for a while (other processes, a slower core) no longer holds up the
  // whole batch. Which thread scored which rows does not change the result: every heap keeps
  // the top k of the rows it saw, and merge_top_k's order is total.
  std::atomic<size_t> next_block{0};
  pool_->run_on_all([&](size_t t) {
    std::vector<float> block(m.table.dtype() == DType::kF32 ? 0 : kGemmRows * dim);
    std::vector<float> s(n_queries * kGemmRows);
    for (;;) {
      const size_t i0 = next_block.fetch_add(kGemmRows, std::memory_order_relaxed);
      if (i0 >= n_lim) break;
      const size_t nr = std::min(kGemmRows, n_lim - i0);
      const float* rows;
      if (m.table.dtype() == DType::kF32) {
        rows = m.table.f32() + i0 * dim;
      } else {
        simd::convert_to_f32(m.table.row_data(i0), m.table.dtype(), nr * dim, block.data());
        rows = block.data();
      }
      blas::sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(n_queries), int(nr), int(dim), 1.0f,
                  queries.data(), int(dim), rows, int(dim), 0.0f, s.data(), int(nr));
      for (size_t qi = 0; qi < n_queries; ++qi) {
        TopK& h = heaps[t][qi];
        const float* sq = s.data() + qi * nr;
        Eligible ok{o.allow, &excl[qi]};
        with_metric(o.metric, [&]<Metric M>() { offer_block<M>(sc[qi], sq, i0, nr, h, ok); });
      }
    }
  });
  for (size_t qi = 0; qi < n_queries; ++qi) {
    std::vector<TopK> per(T, TopK(o.k));
    for (size_t t = 0; t < T; ++t) per[t] = std::move(heaps[t][qi]);
    out[qi] = merge_top_k(per, o.k);
  }
  return out;
}

}  // namespace embedscope
