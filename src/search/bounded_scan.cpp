// ExactScan::kBounded: the int8 copy of a table with per-row error bounds, and the exact
// scans (one query, a batch) that read it instead of the float rows (searcher.h).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <optional>

#include "search/searcher_impl.h"
#include "search/top_k.h"
#include "simd/dot_kernels.h"
#include "simd/u8i8_kernels.h"

namespace embedscope {

using namespace searcher_detail;  // NOLINT(google-build-using-namespace): this module's helpers

// int8 copy of the residuals r_i - mu (mu = mean row): trained embeddings share a large
// common component (anisotropy), so quantising what is left after removing it keeps far more
// of what separates rows. Then <q, r_i> = <q, mu> + <q, r_i - mu>.
void Searcher::Impl::build_int8(const Tasks& pool) const {
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

// kExact through the int8 copy, with the same answer as exact(): every row gets an interval
// [lo, hi] that provably holds the score exact() computes for it (quantisation error by
// Cauchy-Schwarz, |<q, d_i>| <= |q| |d_i| and |scale_i <eta, c_i>| <= |eta| |scale_i c_i|
// for the query's own int16 rounding eta, plus float32 rounding; the scorers are monotone in
// the dot product, so bounds on the dot give bounds on the score). The k-th best lower bound L
// is at most the k-th best exact score, so every row of the exact top k has hi >= L: those
// candidates are rescored with exact()'s kernel and scorer, and the top k of them is exact()'s
// answer, ids, scores, order and ties included. nullopt when the bounds do not apply (a zero
// or huge query, a table with huge rows): the caller scans the float rows instead.
std::optional<std::vector<Neighbor>> Searcher::Impl::bounded(
    const Tasks& pool, std::span<const float> q, const SearchOptions& o, size_t k,
    const std::vector<TokenId>& excl) const {
  ensure_norms(pool);
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
std::optional<std::vector<std::vector<Neighbor>>> Searcher::Impl::bounded_batch(
    const Tasks& pool, std::span<const float> queries, size_t nq, const SearchOptions& o,
    const std::vector<std::vector<TokenId>>& excl) const {
  ensure_norms(pool);
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

}  // namespace embedscope
