// stats and compare: norms, anisotropy, hubness, PCA; overlap@k and Procrustes drift.
#include "embedscope/analysis/table_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <unordered_map>

#include "embedscope/core/blas.h"
#include "embedscope/core/error.h"
#include "embedscope/search/searcher.h"

namespace embedscope {

namespace {

std::vector<size_t> sample_rows(size_t n, size_t want, uint64_t seed) {
  std::vector<size_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  if (want >= n) return idx;
  std::mt19937_64 rng(seed);
  // Partial Fisher-Yates: the first `want` entries are a uniform sample.
  for (size_t i = 0; i < want; ++i) std::swap(idx[i], idx[i + rng() % (n - i)]);
  idx.resize(want);
  std::sort(idx.begin(), idx.end());
  return idx;
}

std::vector<float> unit_rows(const EmbeddingTable& t, const std::vector<size_t>& rows) {
  size_t d = t.dim();
  std::vector<float> out(rows.size() * d);
  for (size_t i = 0; i < rows.size(); ++i) {
    float* r = out.data() + i * d;
    t.row_f32(rows[i], r);
    double n = 0;
    for (size_t j = 0; j < d; ++j) n += double(r[j]) * r[j];
    n = std::sqrt(n);
    if (n > 0 && std::isfinite(n))
      for (size_t j = 0; j < d; ++j) r[j] = float(r[j] / n);
    else
      std::fill(r, r + d, 0.0f);
  }
  return out;
}

}  // namespace

Distribution describe(std::vector<double> v) {
  Distribution d;
  if (v.empty()) return d;
  double s = 0, s2 = 0;
  for (double x : v) {
    s += x;
    s2 += x * x;
  }
  double n = double(v.size());
  d.mean = s / n;
  d.sd = std::sqrt(std::max(0.0, s2 / n - d.mean * d.mean));
  std::sort(v.begin(), v.end());
  auto at = [&](double p) {
    return v[std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5))];
  };
  d.min = v.front();
  d.p01 = at(0.01);
  d.p50 = at(0.5);
  d.p99 = at(0.99);
  d.max = v.back();
  return d;
}

TableStats table_stats(const EmbeddingTable& table, const StatsOptions& o) {
  TableStats st;
  size_t n = o.n_rows_limit ? std::min(o.n_rows_limit, table.n_rows()) : table.n_rows();
  size_t d = table.dim();
  if (n == 0 || d == 0) throw Error(ErrorCode::kInvalidArgument, "stats: the table is empty");
  if (o.hub_k == 0) throw Error(ErrorCode::kInvalidArgument, "stats: k must be at least 1");
  st.n_rows = n;
  st.dim = d;
  const auto& norms = table.norms();
  std::vector<double> nv;
  nv.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(norms[i])) {
      ++st.n_nonfinite;
      continue;
    }
    if (norms[i] == 0) ++st.n_zero;
    nv.push_back(norms[i]);
  }
  st.norms = describe(std::move(nv));
  // Mean row over finite rows, and each row's cosine to it.
  std::vector<double> mean(d, 0.0);
  std::vector<float> r(d);
  size_t n_finite = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(norms[i])) continue;
    table.row_f32(i, r.data());
    for (size_t j = 0; j < d; ++j) mean[j] += r[j];
    ++n_finite;
  }
  double mn = 0;
  for (double& x : mean) {
    x /= double(std::max<size_t>(n_finite, 1));
    mn += x * x;
  }
  mn = std::sqrt(mn);
  double cos_sum = 0;
  size_t cos_n = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(norms[i]) || norms[i] == 0 || mn == 0) continue;
    table.row_f32(i, r.data());
    double dot = 0;
    for (size_t j = 0; j < d; ++j) dot += double(r[j]) * mean[j];
    cos_sum += dot / (double(norms[i]) * mn);
    ++cos_n;
  }
  st.mean_cos_to_mean = cos_n ? cos_sum / double(cos_n) : 0.0;
  // Random pairs (distinct rows, seeded).
  std::mt19937_64 rng(o.seed);
  std::vector<double> pc;
  std::vector<float> a(d), b(d);
  for (size_t p = 0; p < o.n_pairs && n > 1; ++p) {
    size_t i = rng() % n, j = rng() % n;
    if (i == j || !(norms[i] > 0) || !(norms[j] > 0) || !std::isfinite(norms[i]) ||
        !std::isfinite(norms[j]))
      continue;
    table.row_f32(i, a.data());
    table.row_f32(j, b.data());
    double dot = 0;
    for (size_t k = 0; k < d; ++k) dot += double(a[k]) * b[k];
    pc.push_back(dot / (double(norms[i]) * norms[j]));
  }
  st.pair_cos = describe(std::move(pc));
  // Hubness over a seeded sample of queries (batched sgemm search).
  {
    SearcherOptions so;
    so.n_threads = o.n_threads;
    Searcher s(table, so);
    // Zero and non-finite rows have no cosine neighbours; they are never queries.
    std::vector<size_t> q_rows;
    for (size_t i : sample_rows(n, o.n_queries, o.seed + 1))
      if (norms[i] > 0 && std::isfinite(norms[i])) q_rows.push_back(i);
    st.hub_k = o.hub_k;
    st.n_queries = q_rows.size();
    std::vector<size_t> occ(n, 0);
    const size_t kBatch = 256;
    for (size_t b0 = 0; b0 < q_rows.size(); b0 += kBatch) {
      size_t nb = std::min(kBatch, q_rows.size() - b0);
      std::vector<float> qs(nb * d);
      std::vector<std::vector<TokenId>> excl(nb);
      for (size_t i = 0; i < nb; ++i) {
        table.row_f32(q_rows[b0 + i], qs.data() + i * d);
        excl[i] = {TokenId(q_rows[b0 + i])};
      }
      SearchOptions sopt;
      sopt.k = o.hub_k;
      sopt.n_rows_limit = n;
      auto res = s.search_batch(qs, nb, sopt, &excl);
      for (auto& lst : res)
        for (auto& nb_ : lst) ++occ[size_t(nb_.id)];
    }
    double m = 0;
    for (size_t c : occ) m += double(c);
    m /= double(n);
    double m2 = 0, m3 = 0;
    size_t zero = 0;
    for (size_t c : occ) {
      double x = double(c) - m;
      m2 += x * x;
      m3 += x * x * x;
      if (c == 0) ++zero;
    }
    m2 /= double(n);
    m3 /= double(n);
    st.k_occurrence_skew = m2 > 0 ? m3 / std::pow(m2, 1.5) : 0.0;
    st.antihub_share = double(zero) / double(n);
    std::vector<TokenId> ids(n);
    std::iota(ids.begin(), ids.end(), 0);
    size_t top = std::min<size_t>(10, n);
    std::partial_sort(ids.begin(), ids.begin() + long(top), ids.end(), [&](TokenId x, TokenId y) {
      return occ[size_t(x)] > occ[size_t(y)] || (occ[size_t(x)] == occ[size_t(y)] && x < y);
    });
    for (size_t i = 0; i < top; ++i) st.top_hubs.emplace_back(ids[i], occ[size_t(ids[i])]);
  }
  // PCA: covariance of a row sample, eigenvalues by LAPACK.
  {
    auto rows = sample_rows(n, o.max_pca_rows, o.seed + 2);
    std::vector<float> x(rows.size() * d);
    std::vector<double> mu(d, 0.0);
    size_t m = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      if (!std::isfinite(norms[rows[i]])) continue;
      table.row_f32(rows[i], x.data() + m * d);
      for (size_t j = 0; j < d; ++j) mu[j] += x[m * d + j];
      ++m;
    }
    if (m > 1) {
      for (double& v : mu) v /= double(m);
      for (size_t i = 0; i < m; ++i)
        for (size_t j = 0; j < d; ++j) x[i * d + j] -= float(mu[j]);
      std::vector<float> cov(d * d, 0.0f);
      blas::ssyrk(CblasRowMajor, CblasUpper, CblasTrans, int(d), int(m), 1.0f / float(m - 1),
                  x.data(), int(d), 0.0f, cov.data(), int(d));
      std::vector<float> w(d);
      int nn = int(d), info = 0, lwork = -1, liwork = -1, iw = 0;
      float wq = 0;
      info = blas::ssyevd('N', 'L', nn, cov.data(), nn, w.data(), &wq, lwork, &iw, liwork);
      lwork = int(wq) + 1;
      liwork = std::max(iw, 1);
      std::vector<float> work(static_cast<size_t>(lwork));
      std::vector<int> iwork(static_cast<size_t>(liwork));
      info = blas::ssyevd('N', 'L', nn, cov.data(), nn, w.data(), work.data(), lwork, iwork.data(),
                          liwork);
      if (info == 0) {
        double total = 0;
        for (float v : w) total += std::max(0.0f, v);
        for (size_t i = 0; i < std::min(o.n_components, d) && total > 0; ++i)
          st.pca_explained.push_back(std::max(0.0f, w[d - 1 - i]) / total);
      }
    }
  }
  return st;
}

CompareResult compare_tables(const LoadedEmbeddings& A, const LoadedEmbeddings& B,
                             const CompareOptions& o) {
  if (o.k == 0) throw Error(ErrorCode::kInvalidArgument, "compare: k must be at least 1");
  CompareResult res;
  std::vector<std::pair<size_t, size_t>> shared;  // (row in A, row in B)
  std::vector<std::string> names;
  auto name_of = [&](size_t ia) {
    return ia < A.vocab.size() ? A.vocab.token(TokenId(ia)) : "#" + std::to_string(ia);
  };
  if (!A.vocab.empty() && !B.vocab.empty()) {
    res.matched_by = "vocabulary";
    for (size_t i = 0; i < std::min(A.vocab.size(), A.table.n_rows()); ++i) {
      auto j = B.vocab.find(A.vocab.token(TokenId(i)));
      if (j && size_t(*j) < B.table.n_rows() &&
          *A.vocab.find(A.vocab.token(TokenId(i))) == TokenId(i))
        shared.emplace_back(i, size_t(*j));
    }
  } else if (A.table.n_rows() == B.table.n_rows()) {
    res.matched_by = "row id";
    for (size_t i = 0; i < A.table.n_rows(); ++i) shared.emplace_back(i, i);
  }
  if (shared.size() < 2)
    throw Error(
        ErrorCode::kInvalidArgument,
        A.path + " and " + B.path + " share " + std::to_string(shared.size()) +
            " rows; compare needs a shared vocabulary or the same number of rows (same tokenizer)");
  res.n_shared = shared.size();
  for (auto& [ia, ib] : shared) names.push_back(name_of(ia));
  // Sub-tables over the shared rows, in the same order, so ids agree.
  std::vector<size_t> ra, rb;
  for (auto& [ia, ib] : shared) {
    ra.push_back(ia);
    rb.push_back(ib);
  }
  size_t m = shared.size(), da = A.table.dim(), db = B.table.dim();
  std::vector<float> ua = unit_rows(A.table, ra), ub = unit_rows(B.table, rb);
  EmbeddingTable ta = EmbeddingTable::from_f32(m, da, ua), tb = EmbeddingTable::from_f32(m, db, ub);
  SearcherOptions so;
  so.n_threads = o.n_threads;
  Searcher sa(ta, so), sb(tb, so);
  auto words = sample_rows(m, o.n_words ? o.n_words : m, o.seed);
  size_t k = std::min(o.k, m - 1);
  double total = 0;
  const size_t kBatch = 256;
  for (size_t b0 = 0; b0 < words.size(); b0 += kBatch) {
    size_t nb = std::min(kBatch, words.size() - b0);
    std::vector<float> qa(nb * da), qb(nb * db);
    std::vector<std::vector<TokenId>> excl(nb);
    for (size_t i = 0; i < nb; ++i) {
      size_t w = words[b0 + i];
      std::copy_n(ua.data() + w * da, da, qa.data() + i * da);
      std::copy_n(ub.data() + w * db, db, qb.data() + i * db);
      excl[i] = {TokenId(w)};
    }
    SearchOptions sopt;
    sopt.k = k;
    auto na = sa.search_batch(qa, nb, sopt, &excl), nbr = sb.search_batch(qb, nb, sopt, &excl);
    for (size_t i = 0; i < nb; ++i) {
      size_t common = 0;
      for (auto& x : na[i])
        for (auto& y : nbr[i])
          if (x.id == y.id) ++common;
      double ov = double(common) / double(k);
      total += ov;
      res.overlaps.push_back({names[words[b0 + i]], ov});
    }
  }
  res.mean_overlap = words.empty() ? 0.0 : total / double(words.size());
  if (da == db) {
    // M = A^T B (d x d). The row-major buffer is M^T in column-major terms; with
    // M^T = Ux S VTx, the rotation W = U_M V_M^T = (Ux VTx)^T, whose row-major buffer is the
    // column-major product Ux * VTx.
    int d = int(da);
    std::vector<float> M(da * da);
    blas::sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, d, d, int(m), 1.0f, ua.data(), d,
                ub.data(), d, 0.0f, M.data(), d);
    std::vector<float> s(da), U(da * da), VT(da * da);
    int info = 0, lwork = -1;
    float wq = 0;
    info =
        blas::sgesvd('A', 'A', d, d, M.data(), d, s.data(), U.data(), d, VT.data(), d, &wq, lwork);
    lwork = int(wq) + 1;
    std::vector<float> work(static_cast<size_t>(lwork));
    info = blas::sgesvd('A', 'A', d, d, M.data(), d, s.data(), U.data(), d, VT.data(), d,
                        work.data(), lwork);
    if (info != 0)
      throw Error(ErrorCode::kInvalidArgument,
                  "compare: the SVD for the Procrustes alignment did not converge (info " +
                      std::to_string(info) + ")");
    std::vector<float> W(da * da);
    blas::sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, d, d, d, 1.0f, U.data(), d, VT.data(), d,
                0.0f, W.data(), d);
    std::vector<float> aligned(m * da);
    blas::sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), d, d, 1.0f, ua.data(), d,
                W.data(), d, 0.0f, aligned.data(), d);
    std::vector<double> drift(m);
    for (size_t i = 0; i < m; ++i) {
      double dot = 0, n1 = 0, n2 = 0;
      for (size_t j = 0; j < da; ++j) {
        dot += double(aligned[i * da + j]) * ub[i * da + j];
        n1 += double(aligned[i * da + j]) * aligned[i * da + j];
        n2 += double(ub[i * da + j]) * ub[i * da + j];
      }
      drift[i] = n1 > 0 && n2 > 0 ? 1.0 - dot / std::sqrt(n1 * n2) : 1.0;
    }
    res.aligned = true;
    Distribution dd = describe(drift);
    res.mean_drift = dd.mean;
    res.median_drift = dd.p50;
    std::vector<size_t> order(m);
    std::iota(order.begin(), order.end(), 0);
    size_t top = std::min(o.n_moved, m);
    std::partial_sort(
        order.begin(), order.begin() + long(top), order.end(),
        [&](size_t x, size_t y) { return drift[x] > drift[y] || (drift[x] == drift[y] && x < y); });
    for (size_t i = 0; i < top; ++i) res.moved.push_back({names[order[i]], drift[order[i]]});
  }
  return res;
}

}  // namespace embedscope
