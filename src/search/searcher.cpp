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
#include "search/searcher_impl.h"
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

using namespace searcher_detail;  // NOLINT(google-build-using-namespace): this module's helpers

// The first exact query over the whole table fills the row norms as it goes: one kernel
// computes each row's dot product and its sum of squares from the same loads
// (simd::dot_rows_sumsq), so a one-shot query in a fresh process reads the table once, not a
// norms pass plus a scan. It also maps a mapped table into the process ahead of
// reading it (PopulateAhead). Scores are those of a later query: the same norms, the
// same kernel, the same scorer.
std::vector<Neighbor> Searcher::Impl::exact(const Tasks& pool, std::span<const float> q,
                                            const SearchOptions& o, size_t k,
                                            const std::vector<TokenId>& excl) const {
  const size_t n = limit(o);
  return with_norms([&](bool fill) {
    if (fill && n < table.n_rows()) {  // a partial scan cannot fill every norm
      ensure_norms_unlocked(pool);
      fill = false;
    }
    Scorer sc = scorer(q, o.metric);
    Eligible ok{o.allow, &excl};
    std::vector<TopK> heaps(pool.size(), TopK(k));
    const size_t dim = table.dim();
    PopulateAhead ahead(table, n);
    with_metric(o.metric, [&]<Metric M>() {
      scan_blocks(pool, n, [&](size_t b, size_t e, size_t t) {
        float buf[kBlockRows];
        TopK& h = heaps[t];
        if (fill) ahead.before(e);
        for (size_t i0 = b; i0 < e; i0 += kBlockRows) {
          size_t m = std::min(kBlockRows, e - i0);
          if (fill) {
            double sumsq[kBlockRows];
            simd::dot_rows_sumsq(table.row_data(i0), table.dtype(), m, dim, q.data(), buf, sumsq);
            fill_norms_from_sumsq(i0, i0 + m, sumsq);
          } else {
            simd::dot_rows(table.row_data(i0), table.dtype(), m, dim, q.data(), buf);
          }
          offer_block<M>(sc, buf, i0, m, h, ok);
        }
      });
    });
    return merge_top_k(heaps, k);
  });
}

std::vector<Neighbor> Searcher::Impl::fast(const Tasks& pool, std::span<const float> q,
                                           const SearchOptions& o, size_t k,
                                           const std::vector<TokenId>& excl) const {
  ensure_norms(pool);
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

Searcher::Searcher(EmbeddingTable table, const SearcherOptions& options)
    : impl_(std::make_shared<Impl>()) {
  if (table.n_rows() == 0 || table.dim() == 0)
    throw Error(ErrorCode::kInvalidArgument, "cannot search an empty table (" +
                                                 std::to_string(table.n_rows()) + " x " +
                                                 std::to_string(table.dim()) + ")");
  Impl& m = *impl_;
  const size_t n = table.n_rows(), dim = table.dim();
  n_tasks_ = options.n_threads ? options.n_threads : process_pool().size();
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
  // Row norms are filled by the first query (Impl::exact), not here: opening costs no pass.
  m.inv_norm = std::make_unique_for_overwrite<float[]>(n);
  m.sq_norm = std::make_unique_for_overwrite<float[]>(n);
  m.stride = (dim + 63) / 64 * 64;
}

Searcher::Searcher(std::shared_ptr<Impl> impl, size_t n_threads)
    : impl_(std::move(impl)), n_tasks_(n_threads ? n_threads : process_pool().size()) {}

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
    if (auto r = m.bounded(Tasks{&process_pool(), n_tasks_}, q, o, k, excl)) return std::move(*r);
  return m.exact(Tasks{&process_pool(), n_tasks_}, q, o, k, excl);
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
size_t Searcher::n_threads() const { return n_tasks_; }
bool Searcher::centered() const { return impl_->centered; }
const std::vector<float>& Searcher::mean() const { return impl_->mean; }
void Searcher::prepare_fast() const {
  std::call_once(impl_->i8_once, [&] { impl_->build_int8(Tasks{&process_pool(), n_tasks_}); });
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
  impl_->ensure_norms(Tasks{&process_pool(), n_tasks_});
  float d;
  simd::dot_rows(impl_->table.row_data(size_t(id)), impl_->table.dtype(), 1, dim(), q.data(), &d);
  return impl_->scorer(q, metric)(d, size_t(id));
}

std::vector<float> Searcher::score_all(std::span<const float> q, Metric metric) const {
  const Impl& m = *impl_;
  m.check_query(q);
  m.ensure_norms(Tasks{&process_pool(), n_tasks_});
  Scorer sc = m.scorer(q, metric);
  std::vector<float> out(n_rows());
  Tasks{&process_pool(), n_tasks_}.parallel_for(n_rows(), [&](size_t b, size_t e, size_t) {
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
    return o.mode == SearchMode::kFast ? m.fast(Tasks{&process_pool(), n_tasks_}, q, o, o.k, excl)
                                       : exact(q, o, o.k, excl);

  // CSLS: re-rank the best cosine candidates by 2 cos(q, y) - r(q) - r(y), where r is the mean
  // cosine to the csls_k nearest rows of the whole table (the hubness penalty).
  size_t n_cand = std::max(o.k * std::max<size_t>(o.rerank_factor, 1), kMinFastCandidates);
  std::vector<Neighbor> cand = o.mode == SearchMode::kFast
                                   ? m.fast(Tasks{&process_pool(), n_tasks_}, q, o, n_cand, excl)
                                   : exact(q, o, n_cand, excl);
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
  // One query is a single search: a gemv through OpenBLAS would cost its load and relocations
  // (~12% of a one-shot query in a fresh process) and give what search() gives.
  if (o.mode == SearchMode::kFast || o.csls_k > 0 || n_queries == 1) {
    for (size_t qi = 0; qi < n_queries; ++qi) {
      SearchOptions one = o;
      one.exclude = excl[qi];
      out[qi] = search(queries.subspan(qi * dim, dim), one);
    }
    return out;
  }
  if (use_bounded(n_queries) && simd::has_u8_i8_kernel())
    if (auto r = m.bounded_batch(Tasks{&process_pool(), n_tasks_}, queries, n_queries, o, excl))
      return std::move(*r);
  const size_t T = n_tasks_, n_lim = m.limit(o);
  std::vector<std::vector<TopK>> heaps(T, std::vector<TopK>(n_queries, TopK(o.k)));
  // As in exact(): the first batch over the whole table fills the row norms block by block
  // beside its sgemm (and maps each block of a mapped table ahead of it).
  m.with_norms([&](bool fill) {
    if (fill && n_lim < m.table.n_rows()) {
      m.ensure_norms_unlocked(Tasks{&process_pool(), n_tasks_});
      fill = false;
    }
    std::vector<Scorer> sc(n_queries);
    for (size_t qi = 0; qi < n_queries; ++qi)
      sc[qi] = m.scorer(queries.subspan(qi * dim, dim), o.metric);
    // Our threads each run a single-threaded sgemm on their own rows; OpenBLAS's own threads
    // would oversubscribe the cores. (A process-wide OpenBLAS setting; we are its only user.)
    blas::set_num_threads(1);
    // Threads take row blocks from a shared counter rather than one fixed half each: a thread
    // that loses its core for a while (other processes, a slower core) no longer holds up the
    // whole batch. Which thread scored which rows does not change the result: every heap keeps
    // the top k of the rows it saw, and merge_top_k's order is total.
    std::atomic<size_t> next_block{0};
    PopulateAhead ahead(m.table, n_lim);
    Tasks{&process_pool(), n_tasks_}.run_on_all([&](size_t t) {
      std::vector<float> block(m.table.dtype() == DType::kF32 ? 0 : kGemmRows * dim);
      std::vector<float> s(n_queries * kGemmRows);
      for (;;) {
        const size_t i0 = next_block.fetch_add(kGemmRows, std::memory_order_relaxed);
        if (i0 >= n_lim) break;
        const size_t nr = std::min(kGemmRows, n_lim - i0);
        if (fill) {
          ahead.before(i0 + nr);
          m.fill_norms(i0, i0 + nr);
        }
        const float* rows;
        if (m.table.dtype() == DType::kF32) {
          rows = m.table.f32() + i0 * dim;
        } else {
          simd::convert_to_f32(m.table.row_data(i0), m.table.dtype(), nr * dim, block.data());
          rows = block.data();
        }
        blas::sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(n_queries), int(nr), int(dim),
                    1.0f, queries.data(), int(dim), rows, int(dim), 0.0f, s.data(), int(nr));
        for (size_t qi = 0; qi < n_queries; ++qi) {
          TopK& h = heaps[t][qi];
          const float* sq = s.data() + qi * nr;
          Eligible ok{o.allow, &excl[qi]};
          with_metric(o.metric, [&]<Metric M>() { offer_block<M>(sc[qi], sq, i0, nr, h, ok); });
        }
      }
    });
    return 0;
  });
  for (size_t qi = 0; qi < n_queries; ++qi) {
    std::vector<TopK> per(T, TopK(o.k));
    for (size_t t = 0; t < T; ++t) per[t] = std::move(heaps[t][qi]);
    out[qi] = merge_top_k(per, o.k);
  }
  return out;
}

}  // namespace embedscope
