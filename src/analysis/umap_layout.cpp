// UMAP's layout: umap-learn's SGD (optimize_layout_euclidean) on the fuzzy graph, sequential
// on one thread and in reproducible rounds on more (projection.h describes both).
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <utility>

#include "embedscope/analysis/projection.h"
#include "embedscope/core/thread_pool.h"
#include "umap_internal.h"

namespace embedscope::umap_detail {

namespace {

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
void layout_rounds(std::vector<float>& y, Schedule& s, const LayoutParams& p, size_t n_threads,
                   StageProgress& progress) {
  const size_t n = s.start.size() - 1, rounds = kLayoutRounds;
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
      process_pool().parallel_for(
          round_start[round + 1] - r0,
          [&](size_t begin, size_t end, size_t t) {
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
          },
          n_threads);
      // The pulls added in thread order (per coordinate: any split of the range gives the same
      // sums), and the next round's snapshot taken in the same pass.
      process_pool().parallel_for(
          n * D,
          [&](size_t begin, size_t end, size_t) {
            for (size_t t = 0; t < n_threads; ++t) {
              float* dl = delta[t].data();
              for (size_t i = begin; i < end; ++i) {
                pos[i] += dl[i];
                dl[i] = 0.0f;
              }
            }
            std::copy(pos.begin() + long(begin), pos.begin() + long(end),
                      snap.begin() + long(begin));
          },
          n_threads);
    }
    progress.report(double(epoch + 1), epoch + 1 == p.n_epochs);
  }
  for (size_t j = 0; j < n; ++j)
    for (size_t c = 0; c < D; ++c) y[j * D + c] = pos[size_t(rank[j]) * D + c];
}

}  // namespace

void optimize_layout(std::vector<float>& y, size_t dims, FuzzyGraph g, size_t n_epochs,
                     const UmapOptions& o) {
  const size_t n = g.n_rows, n_tasks = tasks(o);
  const auto [a_d, b_d] = umap_ab_params(o.spread, o.min_dist);
  const float a = float(a_d), b = float(b_d), gamma = float(o.repulsion_strength);
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
  g = FuzzyGraph{};  // freed before the layout's own arrays
  const double neg_rate = double(o.negative_sample_rate);
  std::vector<double> next = eps, eps_neg(eps.size()), next_neg(eps.size());
  for (size_t e = 0; e < eps.size(); ++e)
    next_neg[e] = eps_neg[e] = neg_rate > 0 ? eps[e] / neg_rate : 0;

  Schedule sched{start, tail, eps, next, eps_neg, next_neg};
  LayoutParams lp{a, b, gamma, float(o.learning_rate), n_epochs, o.seed};
  StageProgress progress(o.progress, "layout", double(n_epochs), "epochs");
  if (n_tasks == 1) {
    layout_sequential(y, dims, sched, lp, progress);
  } else if (dims == 1) {
    layout_rounds<1>(y, sched, lp, n_tasks, progress);
  } else if (dims == 2) {
    layout_rounds<2>(y, sched, lp, n_tasks, progress);
  } else {
    layout_rounds<3>(y, sched, lp, n_tasks, progress);
  }
}

}  // namespace embedscope::umap_detail
