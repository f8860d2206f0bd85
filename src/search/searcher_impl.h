// Private to src/search: Searcher's shared state (Searcher::Impl) and the scoring helpers used
// by its two scans: searcher.cpp (the float32 scan, kFast, sgemm batches, the public API) and
// bounded_scan.cpp (the int8 copy and the bounded exact scan, ExactScan::kBounded).
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "embedscope/core/error.h"
#include "embedscope/core/thread_pool.h"
#include "embedscope/search/searcher.h"
#include "search/top_k.h"

namespace embedscope {
namespace searcher_detail {

// The process pool, cut into the searcher's task count (SearcherOptions::n_threads).
struct Tasks {
  ThreadPool* pool;
  size_t n;
  size_t size() const { return n; }
  void run_on_all(const std::function<void(size_t)>& f) const { pool->run_on_all(f, n); }
  void parallel_for(size_t items, const ThreadPool::RangeFn& f) const {
    pool->parallel_for(items, f, n);
  }
};

// Rows per block: the scores of one block stay in L1 while the heap consumes them.
inline constexpr size_t kBlockRows = 256;
// Rows per work item of a single-query scan (scan_blocks): 3 MB of a 768-dim float32 table,
// ~25 items per thread on GPT-2's 50257 rows.
inline constexpr size_t kScanGrain = 1024;
// Rows per sgemm block in search_batch: one thread's score block is n_queries x kGemmRows
// floats (2 MB for 1000 queries). Measured on 1000 x 768 x 50257 (2 threads): 256, 512 and
// 1024 rows are within noise of each other (~93-98% of one full sgemm); smaller blocks repack
// the queries more often, larger ones spill the scores further out of cache. 256 varied most.
inline constexpr size_t kGemmRows = 512;

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
inline constexpr size_t kOfferChunk = 32;

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

// Maps a mapped table's rows into the process ahead of a first scan (EmbeddingTable::populate)
// in pieces of the rows that start in one 2 MiB-aligned span of addresses (one page table),
// claimed from a shared counter. When each thread populated its own 1.2 MB block, two threads
// kept populating inside one page table and contended on its lock: a third of a one-shot scan's
// kernel time on 2 cores. Populating is only a hint: reading a page not populated yet faults it
// in; a piece's last row may reach a page into the next span.
class PopulateAhead {
 public:
  PopulateAhead(const EmbeddingTable& t, size_t n_rows)
      : t_(t),
        base_(reinterpret_cast<uintptr_t>(t.row_data(0))),
        n_(n_rows),
        next_(base_ / kSpan * kSpan) {}
  // Before reading rows [.., e): the spans up to one past row e's start are claimed and populated.
  void before(size_t e) {
    if (t_.row_bytes() == 0) return;
    const uintptr_t want = base_ + std::min(e, n_) * t_.row_bytes() + kSpan;
    while (next_.load(std::memory_order_relaxed) < want) {
      const uintptr_t p = next_.fetch_add(kSpan, std::memory_order_relaxed);
      const size_t r0 = first_row_from(p), r1 = first_row_from(p + kSpan);
      if (r0 >= n_) return;
      t_.populate(r0, r1);
    }
  }

 private:
  static constexpr uintptr_t kSpan = uintptr_t(2) << 20;
  // The first row starting at or after address a (n_ when none does).
  size_t first_row_from(uintptr_t a) const {
    if (a <= base_) return 0;
    return std::min(n_, size_t((a - base_ + t_.row_bytes() - 1) / t_.row_bytes()));
  }
  const EmbeddingTable& t_;
  const uintptr_t base_;
  const size_t n_;
  std::atomic<uintptr_t> next_;
};

}  // namespace searcher_detail

struct Searcher::Impl {
  using Tasks = searcher_detail::Tasks;
  using Scorer = searcher_detail::Scorer;
  EmbeddingTable table;
  std::vector<float> mean;
  bool centered = false;
  ExactScan exact_scan = ExactScan::kAuto;
  // 1 / |row| (NaN for a zero or non-finite norm) and |row|^2, filled on first use: by the first
  // full exact scan beside its dot products (one pass over the rows, not two; see exact()), or
  // by ensure_norms(). Written only under norms_mu before norms_ready; read-only after.
  // Uninitialised until the first full scan fills them: its threads then take the first touch
  // of these pages (12.8 MB at 1.6M rows) in parallel, not a serial memset here.
  mutable std::unique_ptr<float[]> inv_norm, sq_norm;
  mutable std::atomic<bool> norms_ready{false};
  mutable std::mutex norms_mu;
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

  // Reads inv_norm / sq_norm: callers filled them first (ensure_norms, or inside with_norms).
  Scorer scorer(std::span<const float> q, Metric metric) const {
    double qq = 0;
    for (float v : q) qq += double(v) * v;
    float inv = qq > 0 ? float(1.0 / std::sqrt(qq)) : 0.0f;
    return Scorer{metric, inv, float(qq), inv_norm.get(), sq_norm.get()};
  }

  // Runs f(begin, end, thread) over [0, n) in blocks of kScanGrain rows handed out from a
  // shared counter. A static split into halves made the slower half the query's time: on these
  // VMs the second core is not always free, and the rows are not equally costly (a trained
  // table's frequent rows pass the top-k threshold far more often than its untrained tail).
  // Results do not depend on the split: per-thread heaps are merged by score, then id.
  template <class F>
  void scan_blocks(const Tasks& pool, size_t n, F&& f) const {
    if (pool.size() == 1 || n <= searcher_detail::kScanGrain) {
      if (n > 0) f(size_t(0), n, size_t(0));
      return;
    }
    std::atomic<size_t> next{0};
    pool.run_on_all([&](size_t t) {
      for (size_t b;
           (b = next.fetch_add(searcher_detail::kScanGrain, std::memory_order_relaxed)) < n;)
        f(b, std::min(n, b + searcher_detail::kScanGrain), t);
    });
  }

  // inv_norm / sq_norm of rows [b, e) from the table (EmbeddingTable::row_norms: norms()'s
  // values). Callers hold norms_mu or own the rows' block in the first scan.
  void fill_norms(size_t b, size_t e) const {
    table.row_norms(b, e, inv_norm.get() + b);
    for (size_t i = b; i < e; ++i) set_norm(i, inv_norm[i]);
  }
  // The same from sums of squares (simd::dot_rows_sumsq: sum_of_squares' bits), as row_norms
  // turns them into norms.
  void fill_norms_from_sumsq(size_t b, size_t e, const double* sumsq) const {
    for (size_t i = b; i < e; ++i) set_norm(i, float(std::sqrt(sumsq[i - b])));
  }
  void set_norm(size_t i, float nv) const {
    inv_norm[i] = (nv > 0 && std::isfinite(nv)) ? 1.0f / nv : NAN;
    sq_norm[i] = nv * nv;
  }
  // Runs first(true) under norms_mu when the norms are not filled yet (first must fill every
  // row's norms, and then they count as filled), otherwise first(false) / later(): one caller
  // fills them, concurrent ones wait for it.
  template <class F>
  auto with_norms(F&& scan) const {
    if (!norms_ready.load(std::memory_order_acquire)) {
      std::unique_lock<std::mutex> lock(norms_mu);
      if (!norms_ready.load(std::memory_order_relaxed)) {
        auto r = scan(true);
        norms_ready.store(true, std::memory_order_release);
        return r;
      }
    }
    return scan(false);
  }
  // Fills the norms in a pass of their own unless done (every scorer() user that did not fill
  // them in its own scan calls this first).
  void ensure_norms(const Tasks& pool) const {
    with_norms([&](bool fill) {
      if (fill) ensure_norms_unlocked(pool);
      return 0;
    });
  }
  // The pass itself, for a with_norms() scan that cannot fill them (a partial scan).
  void ensure_norms_unlocked(const Tasks& pool) const {
    pool.parallel_for(table.n_rows(), [&](size_t b, size_t e, size_t) { fill_norms(b, e); });
  }

  size_t limit(const SearchOptions& o) const {
    size_t n = table.n_rows();
    return o.n_rows_limit > 0 ? std::min(n, o.n_rows_limit) : n;
  }

  // int8 copy of the residuals r_i - mu and its error bounds (bounded_scan.cpp).
  void build_int8(const Tasks& pool) const;
  // The float32 scan: per-task top-k heaps over blocks of rows, merged by score then id.
  std::vector<Neighbor> exact(const Tasks& pool, std::span<const float> q, const SearchOptions& o,
                              size_t k, const std::vector<TokenId>& excl) const;
  // kFast: int8 scan of every row, then exact float32 re-ranking of the best candidates.
  std::vector<Neighbor> fast(const Tasks& pool, std::span<const float> q, const SearchOptions& o,
                             size_t k, const std::vector<TokenId>& excl) const;
  // ExactScan::kBounded for one query and for a batch (bounded_scan.cpp): exact()'s answer
  // through the int8 copy; nullopt when the bounds do not apply.
  std::optional<std::vector<Neighbor>> bounded(const Tasks& pool, std::span<const float> q,
                                               const SearchOptions& o, size_t k,
                                               const std::vector<TokenId>& excl) const;
  std::optional<std::vector<std::vector<Neighbor>>> bounded_batch(
      const Tasks& pool, std::span<const float> queries, size_t nq, const SearchOptions& o,
      const std::vector<std::vector<TokenId>>& excl) const;
};

}  // namespace embedscope
