// UMAP's approximate kNN graph: random-projection trees, then NN-descent (Dong, Moses, Li 2011),
// as umap-learn's pynndescent builds it, written so that a seed gives the same graph for any
// thread count (projection.h, umap_knn_approx).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>

#include "embedscope/analysis/projection.h"
#include "embedscope/core/error.h"
#include "embedscope/core/thread_pool.h"
#include "simd/dot_kernels.h"
#include "umap_internal.h"

namespace embedscope {

namespace {

using umap_detail::mix;
using umap_detail::Rng;

// Each row's current neighbour list: kk slots sorted by (distance, id) ascending (empty slots
// at +inf, id -1) and a "new" flag per slot. Offers may come from any thread: a slot array is
// changed under its row's lock stripe; worst_ (the last slot's distance) is read without the
// lock to drop most offers early. The final content is the kk best of all offers by (distance,
// id), whatever their order, so the graph does not depend on the thread schedule.
class Lists {
 public:
  Lists(size_t n, size_t kk)
      : n_(n), kk_(kk), d_(n * kk, kInf), id_(n * kk, -1), is_new_(n * kk, 0), worst_(n) {
    for (auto& w : worst_) w.store(kInf, std::memory_order_relaxed);
  }
  // Offers id at distance dist to row's list; true if it entered.
  bool offer(size_t row, int32_t id, float dist) {
    if (dist > worst_[row].load(std::memory_order_relaxed)) return false;
    std::lock_guard<std::mutex> lock(locks_[row % kStripes]);
    float* d = d_.data() + row * kk_;
    int32_t* ids = id_.data() + row * kk_;
    uint8_t* fl = is_new_.data() + row * kk_;
    if (!before(dist, id, d[kk_ - 1], ids[kk_ - 1])) return false;
    for (size_t s = 0; s < kk_; ++s)
      if (ids[s] == id) return false;
    size_t at = kk_ - 1;
    while (at > 0 && before(dist, id, d[at - 1], ids[at - 1])) {
      d[at] = d[at - 1];
      ids[at] = ids[at - 1];
      fl[at] = fl[at - 1];
      --at;
    }
    d[at] = dist;
    ids[at] = id;
    fl[at] = 1;
    worst_[row].store(d[kk_ - 1], std::memory_order_relaxed);
    return true;
  }
  size_t kk() const { return kk_; }
  const int32_t* ids(size_t row) const { return id_.data() + row * kk_; }
  const float* dists(size_t row) const { return d_.data() + row * kk_; }
  uint8_t* flags(size_t row) { return is_new_.data() + row * kk_; }

 private:
  static bool before(float da, int32_t ia, float db, int32_t ib) {
    return da < db || (da == db && uint32_t(ia) < uint32_t(ib));  // -1 (empty) sorts last
  }
  static constexpr float kInf = std::numeric_limits<float>::infinity();
  static constexpr size_t kStripes = 4096;
  size_t n_, kk_;
  std::vector<float> d_;
  std::vector<int32_t> id_;
  std::vector<uint8_t> is_new_;
  std::vector<std::atomic<float>> worst_;
  std::mutex locks_[kStripes];
};

// Up to `cap` candidates with the smallest priorities (a hash, so the sample is seeded).
struct CandidateSet {
  std::vector<std::pair<uint64_t, int32_t>> items;
  void add(uint64_t priority, int32_t id, size_t cap) {
    for (const auto& it : items)
      if (it.second == id) return;
    if (items.size() < cap) {
      items.emplace_back(priority, id);
      return;
    }
    auto worst = std::max_element(items.begin(), items.end());
    if (std::make_pair(priority, id) < *worst) *worst = {priority, id};
  }
};

}  // namespace

KnnGraph umap_knn_approx(const EmbeddingTable& table, const UmapOptions& o,
                         const NnDescentOptions& nd) {
  umap_detail::check_options(table, o);
  const size_t n = table.n_rows(), d = table.dim(), k = o.n_neighbors, kk = k - 1;
  const size_t n_tasks = umap_detail::tasks(o);
  ThreadPool& pool = process_pool();
  umap_detail::Rows rows = umap_detail::prepare_rows(table, o);
  std::vector<float>& x = rows.x;
  const std::vector<float>& sq = rows.sq;
  const std::vector<uint8_t>& usable = rows.usable;
  // cosine: 1 - dot of unit rows; Euclidean: the squared distance (the same order).
  auto to_dist = [&](float dot, float sq_a, float sq_b) {
    return o.euclidean ? std::max(0.0f, sq_a + sq_b - 2.0f * dot) : 1.0f - dot;
  };
  auto dist = [&](size_t a, size_t b) {
    float dot = 0;
    simd::dot_rows(reinterpret_cast<const std::byte*>(x.data() + b * d), DType::kF32, 1, d,
                   x.data() + a * d, &dot);
    return to_dist(dot, sq[a], sq[b]);
  };
  const size_t n_trees =
      nd.n_trees ? nd.n_trees
                 : std::min<size_t>(64, 5 + size_t(std::lround(std::sqrt(double(n)) / 20.0)));
  const size_t n_iters =
      nd.n_iters ? nd.n_iters : std::max<size_t>(5, size_t(std::lround(std::log2(double(n)))));
  const size_t leaf_size = std::max<size_t>(10, k);
  umap_detail::StageProgress progress(o.progress, "knn", double(n_trees + n_iters), "steps");
  std::atomic<size_t> steps{0};

  std::vector<int32_t> members;
  for (size_t i = 0; i < n; ++i)
    if (usable[i]) members.push_back(int32_t(i));
  const size_t m = members.size();

  // 1. Random-projection trees: split by the hyperplane between two random rows down to leaves
  // of at most leaf_size rows; every pair within a leaf is offered to both rows. Tree 0's
  // order of the rows (its leaves left to right) is kept: NN-descent runs on the rows renumbered
  // in that order (local ids), so that a row's candidates sit near its predecessors' in memory
  // and are mostly still in cache.
  auto tree_lists = std::make_unique<Lists>(n, kk);
  Lists& lists = *tree_lists;
  std::vector<int32_t> to_orig;
  // The top levels of all trees are split together, level by level: one pass over the rows in
  // memory order per level measures each row against its node's hyperplane in every tree, so
  // the table is read once per level instead of once per tree and level (on a large table those
  // reads are what a forest costs). Nodes are heap-numbered (root 1, children 2v and 2v + 1);
  // a node's two pivots are its members with the smallest seeded hashes (the same whatever
  // the thread count). Below n_top levels a node's rows fit in cache and each tree splits its
  // nodes on its own, depth first.
  size_t n_top = 0;
  while ((m >> n_top) > 512 && n_top < 20) ++n_top;
  std::vector<uint32_t> node(n_trees * m, 1);
  auto hash_of = [&](size_t tree, size_t level, size_t r) {
    return mix(o.seed ^ 0x7233, tree * 64 + level, r);
  };
  struct Pivots {
    uint64_t key[2] = {UINT64_MAX, UINT64_MAX};
    int32_t id[2] = {-1, -1};
    size_t count = 0;
    void add(uint64_t k, int32_t r) {
      ++count;
      if (k < key[0]) {
        key[1] = key[0], id[1] = id[0], key[0] = k, id[0] = r;
      } else if (k < key[1]) {
        key[1] = k, id[1] = r;
      }
    }
    void merge(const Pivots& p) {
      const size_t c = count + p.count;
      for (int e = 0; e < 2; ++e)
        if (p.id[e] >= 0) add(p.key[e], p.id[e]);
      count = c;
    }
  };
  // pivots of level `level`'s nodes: [tree * width + (v - width)], width = 2^level.
  std::vector<Pivots> piv(n_trees);
  for (size_t r = 0; r < m; ++r)
    for (size_t t = 0; t < n_trees; ++t) piv[t].add(hash_of(t, 0, r), int32_t(r));
  for (size_t level = 0; level < n_top; ++level) {
    const size_t width = size_t(1) << level;
    std::vector<float> normal(n_trees * width * d), offset(n_trees * width, 0.0f);
    std::vector<uint8_t> splits(n_trees * width, 0);
    for (size_t e = 0; e < n_trees * width; ++e) {
      const Pivots& p = piv[e];
      if (p.count <= leaf_size || p.id[1] < 0) continue;
      splits[e] = 1;
      const size_t l = size_t(members[size_t(p.id[0])]), r = size_t(members[size_t(p.id[1])]);
      float* nv = normal.data() + e * d;
      for (size_t c = 0; c < d; ++c) {
        nv[c] = x[l * d + c] - x[r * d + c];
        if (o.euclidean) offset[e] -= nv[c] * (x[l * d + c] + x[r * d + c]) / 2;
      }
    }
    std::vector<std::vector<Pivots>> part(n_tasks);
    pool.parallel_for(
        m,
        [&](size_t begin, size_t end, size_t task) {
          std::vector<Pivots>& next = part[task];
          next.assign(n_trees * 2 * width, Pivots{});
          for (size_t r = begin; r < end; ++r) {
            const float* row = x.data() + size_t(members[r]) * d;
            for (size_t t = 0; t < n_trees; ++t) {
              uint32_t& v = node[t * m + r];
              const size_t e = t * width + (v - width);
              bool left = true;  // a node that does not split keeps its rows on the left
              if (splits[e]) {
                float margin = 0;
                simd::dot_rows(reinterpret_cast<const std::byte*>(normal.data() + e * d),
                               DType::kF32, 1, d, row, &margin);
                margin += offset[e];
                left = margin == 0 ? (hash_of(t, level + 32, r) & 1) != 0 : margin > 0;
              }
              v = 2 * v + (left ? 0 : 1);
              next[t * 2 * width + (v - 2 * width)].add(hash_of(t, level + 1, r), int32_t(r));
            }
          }
        },
        n_tasks);
    piv.assign(n_trees * 2 * width, Pivots{});
    for (const auto& pt : part)
      for (size_t e = 0; e < pt.size(); ++e) piv[e].merge(pt[e]);
  }
  piv.clear();

  pool.parallel_for(
      n_trees,
      [&](size_t begin, size_t end, size_t) {
        std::vector<int32_t> idx;
        std::vector<float> normal(d);
        std::vector<size_t> at;
        const size_t width = size_t(1) << n_top;
        for (size_t tree = begin; tree < end; ++tree) {
          Rng rng(mix(o.seed, 0x7233, tree));
          // The members grouped by node (ascending member order within a node).
          at.assign(width + 1, 0);
          const uint32_t* nd_of = node.data() + tree * m;
          for (size_t r = 0; r < m; ++r) ++at[nd_of[r] - width + 1];
          for (size_t v = 0; v < width; ++v) at[v + 1] += at[v];
          std::vector<std::pair<size_t, size_t>> todo;
          for (size_t v = width; v-- > 0;)
            if (at[v] < at[v + 1]) todo.emplace_back(at[v], at[v + 1]);
          idx.resize(m);
          for (size_t r = 0; r < m; ++r) idx[at[nd_of[r] - width]++] = members[r];
          while (!todo.empty()) {
            auto [lo, hi] = todo.back();
            todo.pop_back();
            if (hi - lo <= leaf_size) {
              for (size_t a = lo; a < hi; ++a)
                for (size_t b = a + 1; b < hi; ++b) {
                  float dd = dist(size_t(idx[a]), size_t(idx[b]));
                  lists.offer(size_t(idx[a]), idx[b], dd);
                  lists.offer(size_t(idx[b]), idx[a], dd);
                }
              continue;
            }
            const size_t span = hi - lo, pl = rng.next() % span,
                         pr = (pl + 1 + rng.next() % (span - 1)) % span;
            const size_t l = size_t(idx[lo + pl]), r = size_t(idx[lo + pr]);
            float offset = 0;
            for (size_t c = 0; c < d; ++c) {
              normal[c] = x[l * d + c] - x[r * d + c];
              if (o.euclidean) offset -= normal[c] * (x[l * d + c] + x[r * d + c]) / 2;
            }
            size_t mid = lo;
            for (size_t a = lo; a < hi; ++a) {
              float margin = 0;
              simd::dot_rows(reinterpret_cast<const std::byte*>(x.data() + size_t(idx[a]) * d),
                             DType::kF32, 1, d, normal.data(), &margin);
              margin += offset;
              bool left = margin == 0 ? (rng.next() & 1) != 0 : margin > 0;
              if (left) std::swap(idx[a], idx[mid++]);
            }
            if (mid == lo || mid == hi) mid = lo + (hi - lo) / 2;  // a degenerate split: halves
            // Left pushed last: taken first, so the leaves come left to right.
            todo.emplace_back(mid, hi);
            todo.emplace_back(lo, mid);
          }
          if (tree == 0) to_orig = idx;
          steps.fetch_add(1);
        }
      },
      n_tasks);
  progress.report(double(steps.load()), true);
  // Rows a tree left short of kk neighbours get random ones (pynndescent's random init).
  for (size_t i = 0; i < n; ++i) {
    if (!usable[i] || lists.ids(i)[kk - 1] >= 0) continue;
    Rng rng(mix(o.seed, 0x1a17, i));
    for (size_t t = 0; t < 4 * kk && lists.ids(i)[kk - 1] < 0; ++t) {
      size_t j = size_t(members[rng.next() % m]);
      if (j != i) lists.offer(i, int32_t(j), dist(i, j));
    }
  }

  // The lists, rows and squared norms in local ids (usable rows only).
  std::vector<int32_t> to_local(n, -1);
  for (size_t r = 0; r < m; ++r) to_local[size_t(to_orig[r])] = int32_t(r);
  Lists local(m, kk);
  std::vector<float> xl(m * d), sql(m);
  pool.parallel_for(
      m,
      [&](size_t begin, size_t end, size_t) {
        for (size_t r = begin; r < end; ++r) {
          const size_t i = size_t(to_orig[r]);
          std::copy_n(x.data() + i * d, d, xl.data() + r * d);
          sql[r] = sq[i];
          const int32_t* ids = lists.ids(i);
          const float* ds = lists.dists(i);
          for (size_t s = 0; s < kk && ids[s] >= 0; ++s)
            local.offer(r, to_local[size_t(ids[s])], ds[s]);
        }
      },
      n_tasks);
  std::vector<float>().swap(x);
  tree_lists.reset();

  // 2. NN-descent: each row's neighbours and reverse neighbours are candidates (new ones, since
  // last step, sampled up to max_candidates by seeded priority; and old ones); every pair of
  // candidates with at least one new is measured and offered to both. Stops when fewer than
  // delta * n * kk entries changed in a step.
  const size_t max_cand = nd.max_candidates;
  std::vector<CandidateSet> fresh(m), old(m);
  for (size_t iter = 0; iter < n_iters; ++iter) {
    for (size_t i = 0; i < m; ++i) fresh[i].items.clear(), old[i].items.clear();
    for (size_t i = 0; i < m; ++i) {
      const int32_t* ids = local.ids(i);
      const uint8_t* fl = local.flags(i);
      for (size_t s = 0; s < kk; ++s) {
        if (ids[s] < 0) continue;
        const size_t j = size_t(ids[s]);
        uint64_t p = mix(o.seed ^ iter, i, j);
        auto& sets = fl[s] ? fresh : old;
        sets[i].add(p, int32_t(j), max_cand);
        sets[j].add(p, int32_t(i), max_cand);
      }
    }
    // Sampled new entries become old (the unsampled stay new for the next step).
    pool.parallel_for(
        m,
        [&](size_t begin, size_t end, size_t) {
          for (size_t i = begin; i < end; ++i) {
            const int32_t* ids = local.ids(i);
            uint8_t* fl = local.flags(i);
            for (size_t s = 0; s < kk; ++s)
              for (const auto& it : fresh[i].items)
                if (fl[s] && it.second == ids[s]) fl[s] = 0;
          }
        },
        n_tasks);
    // Row i's candidates gathered into one block (new ones first), so that each new one is
    // measured against all those after it by one call of the dot kernel.
    pool.parallel_for(
        m,
        [&](size_t begin, size_t end, size_t) {
          std::vector<float> block, dots;
          std::vector<int32_t> cand;
          for (size_t i = begin; i < end; ++i) {
            const auto& nw = fresh[i].items;
            const auto& ol = old[i].items;
            if (nw.empty()) continue;
            cand.clear();
            for (const auto& it : nw) cand.push_back(it.second);
            for (const auto& it : ol) cand.push_back(it.second);
            block.resize(cand.size() * d);
            dots.resize(cand.size());
            for (size_t c = 0; c < cand.size(); ++c)
              std::copy_n(xl.data() + size_t(cand[c]) * d, d, block.data() + c * d);
            for (size_t a = 0; a < nw.size(); ++a) {
              const size_t rest = cand.size() - a - 1, p = size_t(cand[a]);
              if (rest == 0) continue;
              simd::dot_rows(reinterpret_cast<const std::byte*>(block.data() + (a + 1) * d),
                             DType::kF32, rest, d, block.data() + a * d, dots.data());
              for (size_t b = 0; b < rest; ++b) {
                const size_t q = size_t(cand[a + 1 + b]);
                if (q == p) continue;
                const float dd = to_dist(dots[b], sql[p], sql[q]);
                local.offer(p, int32_t(q), dd);
                local.offer(q, int32_t(p), dd);
              }
            }
          }
        },
        n_tasks);
    // Changed entries: the new flags set this step (a count independent of the offers' order).
    std::vector<size_t> changed(n_tasks, 0);
    pool.parallel_for(
        m,
        [&](size_t begin, size_t end, size_t t) {
          for (size_t i = begin; i < end; ++i) {
            const uint8_t* fl = local.flags(i);
            for (size_t s = 0; s < kk; ++s) changed[t] += fl[s];
          }
        },
        n_tasks);
    steps.fetch_add(1);
    progress.report(double(steps.load()));
    size_t total = std::accumulate(changed.begin(), changed.end(), size_t(0));
    if (double(total) <= nd.delta * double(m) * double(kk)) break;
  }
  progress.report(double(n_trees + n_iters), true);

  return umap_detail::exact_graph(table, o, rows, [&](size_t i, std::vector<int32_t>& out) {
    out.clear();
    if (to_local[i] < 0) return;
    const int32_t* ids = local.ids(size_t(to_local[i]));
    for (size_t s = 0; s < kk; ++s)
      if (ids[s] >= 0) out.push_back(to_orig[size_t(ids[s])]);
  });
}

}  // namespace embedscope
