// UMAP's private parts shared by umap.cpp (exact kNN, fuzzy set), umap_nndescent.cpp (the
// approximate kNN graph) and umap_layout.cpp (the SGD layout).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "embedscope/analysis/projection.h"
#include "embedscope/core/error.h"
#include "embedscope/core/thread_pool.h"
#include "train/rng.h"

namespace embedscope::umap_detail {

using Clock = std::chrono::steady_clock;

// The trainer's SplitMix64 (train/rng.h): a seed gives the same stream on every machine.
using Rng = SplitMix64;

// n x k neighbour slots, ids -1 (none yet) and distances 0.
inline KnnGraph unfilled_graph(size_t n, size_t k) {
  KnnGraph g;
  g.n_rows = n;
  g.k = k;
  g.ids.assign(n * k, -1);
  g.dists.assign(n * k, 0.0f);
  return g;
}

inline uint64_t mix(uint64_t a, uint64_t b, uint64_t c) {
  Rng r(a ^ 0x5851F42D4C957F2Dull);
  Rng r2(r.next() ^ b);
  Rng r3(r2.next() ^ c);
  return r3.next();
}

// Reports one stage's progress from the calling thread, at most every 0.2 s and at the end.
class StageProgress {
 public:
  StageProgress(const ProgressFn& fn, const char* what, double total, const char* unit)
      : fn_(fn), what_(what), unit_(unit), total_(total) {}
  void report(double done, bool force = false) {
    if (!fn_) return;
    auto now = Clock::now();
    if (!force && now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    ProgressInfo p;
    p.what = what_;
    p.unit = unit_;
    p.total = total_;
    p.done = done;
    double secs = std::chrono::duration<double>(now - start_).count();
    p.rate = secs > 0 ? done / secs : 0;
    p.eta_seconds = p.rate > 0 ? (total_ - done) / p.rate : 0;
    fn_(p);
  }

 private:
  const ProgressFn& fn_;
  const char *what_, *unit_;
  double total_;
  Clock::time_point start_ = Clock::now(), last_ = Clock::now() - std::chrono::seconds(1);
};

inline void check_options(const EmbeddingTable& t, const UmapOptions& o) {
  auto bad = [](const std::string& m) { throw Error(ErrorCode::kInvalidArgument, "umap: " + m); };
  if (t.n_rows() == 0) bad("the table has no rows");
  if (o.dims == 0 || o.dims > 3 || o.dims > t.dim())
    bad("dims " + std::to_string(o.dims) + " must be from 1 to 3 and at most the table's width " +
        std::to_string(t.dim()));
  if (o.n_neighbors < 2 || o.n_neighbors >= t.n_rows())
    bad("n_neighbors " + std::to_string(o.n_neighbors) + " must be from 2 to the row count - 1 (" +
        std::to_string(t.n_rows() - 1) + ")");
  if (!(o.spread > 0) || !(o.min_dist >= 0 && o.min_dist <= o.spread))
    bad("min_dist " + std::to_string(o.min_dist) + " must be from 0 to spread " +
        std::to_string(o.spread));
  if (o.negative_sample_rate > 1000)
    bad("negative_sample_rate " + std::to_string(o.negative_sample_rate) + " exceeds 1000");
  if (o.n_epochs > 100000) bad("n_epochs " + std::to_string(o.n_epochs) + " exceeds 100000");
}

// The tasks every parallel loop of UMAP is split into: the requested thread count (0 = the
// process's), never the pool's size, so that a seed and a thread count give the same result
// however many workers process_pool() has.
inline size_t tasks(const UmapOptions& o) { return o.n_threads ? o.n_threads : process_threads(); }

// The rows as float32: unit rows for cosine (a zero row is not usable: no neighbours, nobody's),
// raw rows for Euclidean; sq[i] the squared norm of the raw row (sq_exact[i] in double).
// Error(kInvalidArgument) naming the row and column of a non-finite value.
struct Rows {
  std::vector<float> x, sq;
  std::vector<double> sq_exact;
  std::vector<uint8_t> usable;
};
Rows prepare_rows(const EmbeddingTable& table, const UmapOptions& o);

// The graph of each row's candidates (candidates(i, out) fills out with ids other than i):
// distances recomputed in double from the table, sorted by (distance, id), row i first at 0.
KnnGraph exact_graph(const EmbeddingTable& table, const UmapOptions& o, const Rows& rows,
                     const std::function<void(size_t, std::vector<int32_t>&)>& candidates);

// The SGD layout (umap_layout.cpp) from the initial coordinates y (n_rows x dims) on the fuzzy
// graph g, n_epochs epochs, with o's curve, rates and seed, split into tasks(o) tasks.
void optimize_layout(std::vector<float>& y, size_t dims, FuzzyGraph g, size_t n_epochs,
                     const UmapOptions& o);

}  // namespace embedscope::umap_detail
