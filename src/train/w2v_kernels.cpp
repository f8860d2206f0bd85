// word2vec inner loops. This file is compiled once per SIMD target by Highway's
// foreach_target.h; w2v_train_sentence dispatches to the best target for this CPU once per
// sentence (no mutable function pointers: Highway's dispatch table is initialised once and
// thread-safely).
//
// The math is word2vec.c's (Mikolov 2013), with the sigmoid read from a table over [-8, 8]:
//   skip-gram: for each center w and context c in its (random-size) window, predict w from c:
//     l1 = syn0[c]; for target t in {w} + negatives: f = l1 . syn1neg[t];
//     g = (label - sigmoid(f)) * alpha; neu1e += g * syn1neg[t]; syn1neg[t] += g * l1;
//     then syn0[c] += neu1e.
//   CBOW: l1 = mean of the context rows, the same update of syn1neg for w, and neu1e added to
//     every context row.
//   hierarchical softmax: the same with t = the inner nodes on w's Huffman path and
//     label = 1 - code bit.
//   skip-gram with negative sampling only is software-pipelined (SkipGramSentence): the next
//     window's contexts, targets and negatives are drawn, and their rows prefetched, while the
//     current window trains. By default every (context, center) pair gets fresh negatives, as
//     above (SkipGramWindowFresh): word2vec.c's math, with every draw made one window early.
//   skip-gram, shared negatives (shared_negatives): one draw of negatives per center w, shared
//     by every context of its window (Ji et al. 2016, "Parallelizing Word2Vec in Shared and
//     Distributed Memory"; BlazingText's batch_skipgram).
//     For each context c in turn: g_t from f = syn0[c] . syn1neg[t] for every target t in
//     {w} + negatives, then syn1neg[t] += g_t syn0[c] and syn0[c] += sum_t g_t syn1neg[t] in
//     one pass. The window's output rows are drawn and fetched once per center instead of once
//     per pair: with window 5 and 5 negatives ~3.5x fewer random row accesses. Its quality is
//     below fresh draws (the window's contexts all push against the same few rows, a noisier
//     gradient), so it is opt-in.
//     Ji et al. update the output rows once, after the whole window; we update them after each
//     context instead: stale rows cost analogy accuracy, and updating in place is no slower.
// clang-format off: foreach_target.h must come first, before any other Highway header.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "train/w2v_kernels.cpp"
#include <hwy/cache_control.h>
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
// clang-format on

#include <atomic>
#include <cmath>
#include <cstring>

#include "train/w2v_kernels.h"

#ifndef ES_W2V_TABLES_ONCE
#define ES_W2V_TABLES_ONCE
namespace embedscope::w2v_detail {
inline constexpr float kMaxExp = 8.0f;
inline constexpr int kTableSize = 4096;
struct Tables {
  float sigmoid[kTableSize + 1];
  float log_sigmoid[kTableSize + 1];    // log(sigmoid(x))
  float log_one_minus[kTableSize + 1];  // log(1 - sigmoid(x))
  Tables() {
    for (int i = 0; i <= kTableSize; ++i) {
      double x = (double(i) / kTableSize * 2 - 1) * kMaxExp;
      double s = 1.0 / (1.0 + std::exp(-x));
      sigmoid[i] = float(s);
      log_sigmoid[i] = float(std::log(s));
      log_one_minus[i] = float(std::log(1.0 - s));
    }
  }
};
inline const Tables& tables() {
  static const Tables t;
  return t;
}
}  // namespace embedscope::w2v_detail
#endif

HWY_BEFORE_NAMESPACE();
namespace embedscope {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using w2v_detail::kMaxExp;
using w2v_detail::kTableSize;
constexpr size_t kMaxNegativeInline = kW2vMaxNegative;
constexpr size_t kMaxWindowInline = kW2vMaxWindow;

HWY_INLINE float Dot(const float* HWY_RESTRICT a, const float* HWY_RESTRICT b, size_t stride) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  auto s0 = hn::Zero(d), s1 = hn::Zero(d);
  size_t i = 0;
  for (; i + 2 * N <= stride; i += 2 * N) {
    s0 = hn::MulAdd(hn::LoadU(d, a + i), hn::LoadU(d, b + i), s0);
    s1 = hn::MulAdd(hn::LoadU(d, a + i + N), hn::LoadU(d, b + i + N), s1);
  }
  for (; i < stride; i += N) s0 = hn::MulAdd(hn::LoadU(d, a + i), hn::LoadU(d, b + i), s0);
  return hn::GetLane(hn::SumOfLanes(d, hn::Add(s0, s1)));
}

// y += g * x
HWY_INLINE void Axpy(float g, const float* HWY_RESTRICT x, float* HWY_RESTRICT y, size_t stride) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const auto vg = hn::Set(d, g);
  for (size_t i = 0; i < stride; i += N)
    hn::StoreU(hn::MulAdd(vg, hn::LoadU(d, x + i), hn::LoadU(d, y + i)), d, y + i);
}

// The fused output-row update: neu1e += g * out; out += g * l1.
HWY_INLINE void Update(float g, const float* HWY_RESTRICT l1, float* HWY_RESTRICT out,
                       float* HWY_RESTRICT neu1e, size_t stride) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const auto vg = hn::Set(d, g);
  for (size_t i = 0; i < stride; i += N) {
    const auto o = hn::LoadU(d, out + i);
    hn::StoreU(hn::MulAdd(vg, o, hn::LoadU(d, neu1e + i)), d, neu1e + i);
    hn::StoreU(hn::MulAdd(vg, hn::LoadU(d, l1 + i), o), d, out + i);
  }
}

HWY_INLINE void Zero(float* p, size_t stride) {
  const hn::ScalableTag<float> d;
  for (size_t i = 0; i < stride; i += hn::Lanes(d)) hn::StoreU(hn::Zero(d), d, p + i);
}

// Row r of a matrix (rows are `stride` floats apart).
HWY_INLINE float* Row(float* base, uint32_t r, size_t stride) { return base + size_t(r) * stride; }

// One prediction: returns g and adds its loss to `loss`. label is 1 (positive) or 0.
HWY_INLINE float Gradient(float f, float label, float alpha, float& loss) {
  const auto& tb = w2v_detail::tables();
  int idx;
  if (f >= kMaxExp)
    idx = kTableSize;
  else if (f <= -kMaxExp)
    idx = 0;
  else
    idx = int((f + kMaxExp) * (kTableSize / (2 * kMaxExp)) + 0.5f);
  loss -= label > 0 ? tb.log_sigmoid[idx] : tb.log_one_minus[idx];
  return (label - tb.sigmoid[idx]) * alpha;
}

// The same, counted straight into the thread's totals (loops with a handful of predictions).
HWY_INLINE float Gradient(float f, float label, float alpha, W2vThread& t) {
  float loss = 0;
  const float g = Gradient(f, label, alpha, loss);
  t.loss += loss;
  ++t.n_loss;
  return g;
}

// One draw from the negative-sampling distribution. Two LCG steps: bits 16..47 of the first pick
// the alias entry (multiply-shift, no division), of the second the coin (the LCG's low bits
// are too regular to share one draw).
HWY_INLINE uint32_t DrawNegative(W2vThread& t) {
  t.rng = t.rng * 25214903917ull + 11;
  const W2vAlias& e = t.neg_alias[((t.rng >> 16) & 0xFFFFFFFFull) * t.neg_alias_size >> 32];
  t.rng = t.rng * 25214903917ull + 11;
  return uint32_t(t.rng >> 16) < e.threshold ? e.row : e.other;
}

// Predicts `word` from the hidden vector l1, accumulating the input gradient in neu1e.
// Hierarchical softmax: predicts `word` from l1 along its Huffman path (no-op without it).
HWY_INLINE void PredictHs(const W2vShared& m, uint32_t word, const float* l1, float* neu1e,
                          float alpha, W2vThread& t) {
  if (!m.syn1) return;
  const size_t S = m.stride;
  for (uint32_t k = m.hs_offset[word]; k < m.hs_offset[word + 1]; ++k) {
    float* out = m.syn1 + size_t(m.hs_points[k]) * S;
    float g = Gradient(Dot(l1, out, S), 1.0f - float(m.hs_codes[k]), alpha, t);
    Update(g, l1, out, neu1e, S);
  }
}

// The syn1neg row of vocabulary row w (W2vShared::out_slot). Negatives are drawn as slots, so a
// negative equal to the center is the one equal to its slot.
HWY_INLINE uint32_t OutSlot(const W2vShared& m, uint32_t w) {
  return m.out_slot ? m.out_slot[w] : w;
}

HWY_INLINE void Predict(const W2vShared& m, uint32_t word, const float* l1, float* neu1e,
                        float alpha, W2vThread& t) {
  const size_t S = m.stride;
  PredictHs(m, word, l1, neu1e, alpha, t);
  if (m.negative > 0) {
    // Draw the negatives first (same generator sequence as drawing them one by one) so their
    // rows can be prefetched: the random output rows are the trainer's main cache misses.
    float* targets[kMaxNegativeInline + 1];
    size_t n_t = 0;
    const uint32_t slot = OutSlot(m, word);
    targets[n_t++] = Row(m.syn1neg, slot, S);
    for (size_t d = 0; d < m.negative; ++d) {
      const uint32_t target = DrawNegative(t);
      if (target == slot) continue;
      targets[n_t++] = Row(m.syn1neg, target, S);
      hwy::Prefetch(targets[n_t - 1]);
    }
    for (size_t k = 0; k < n_t; ++k) {
      float* out = targets[k];
      float g = Gradient(Dot(l1, out, S), k == 0 ? 1.0f : 0.0f, alpha, t);
      Update(g, l1, out, neu1e, S);
    }
  }
}

HWY_INLINE void CountUpdate(const W2vShared& m, uint32_t row) {
  if (m.row_updates)
    std::atomic_ref<uint64_t>(m.row_updates[row]).fetch_add(1, std::memory_order_relaxed);
}

// PREFETCHW (fetch a line in exclusive state). __builtin_prefetch(p, 1) emits it only when the
// compiler targets PRFCHW, which Highway's target attributes do not include, so it silently
// became a read prefetch (PREFETCHT0): a line the other core held then arrived shared and the
// store needed a second round trip for ownership. The opcode (0F 0D /1) is a hint on every
// x86-64 CPU: processors without PRFCHW execute it as a NOP.
HWY_INLINE void PrefetchW(const char* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetchw %0" : : "m"(*p));
#else
  __builtin_prefetch(p, 1, 3);
#endif
}

// Prefetches a whole row for writing. The rows of a window are read and then written: asking
// for ownership up front saves the second coherence round trip when another core holds them.
HWY_INLINE void PrefetchRowForWrite(const float* row, size_t stride) {
  const char* p = reinterpret_cast<const char*>(row);
  for (size_t off = 0; off < stride * sizeof(float); off += 64) PrefetchW(p + off);
}

// The output rows of one skip-gram window: the center's row, then its negatives (a negative
// equal to the center is dropped, as in word2vec.c; duplicates are kept).
struct WindowTargets {
  size_t n = 0;
  float* out[kMaxNegativeInline + 1];
};

HWY_INLINE void DrawTargets(const W2vShared& m, uint32_t word, WindowTargets& w, W2vThread& t) {
  const size_t S = m.stride;
  w.n = 0;
  const uint32_t slot = OutSlot(m, word);
  w.out[w.n++] = Row(m.syn1neg, slot, S);
  for (size_t d = 0; d < m.negative; ++d) {
    const uint32_t target = DrawNegative(t);
    if (target == slot) continue;
    w.out[w.n++] = Row(m.syn1neg, target, S);
  }
  for (size_t k = 0; k < w.n; ++k) PrefetchRowForWrite(w.out[k], S);
}

// One context row against its output rows (the positive first): every dot product against the
// rows' current values, then one pass that updates each output row in turn and adds the summed
// input gradient to the context row (a row listed twice sees its first update in the second
// gradient). Shared by both pipelined skip-gram windows.
HWY_INLINE void TrainContext(float* in, float* const* out, size_t n_t, float alpha, size_t S,
                             float& loss) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  float g[kMaxNegativeInline + 1];
  for (size_t k = 0; k < n_t; ++k)
    g[k] = Gradient(Dot(in, out[k], S), k == 0 ? 1.0f : 0.0f, alpha, loss);
  for (size_t i = 0; i < S; i += N) {
    const auto vin = hn::LoadU(d, in + i);
    auto acc = hn::Zero(d);
    for (size_t k = 0; k < n_t; ++k) {
      const auto vg = hn::Set(d, g[k]);
      const auto vo = hn::LoadU(d, out[k] + i);
      acc = hn::MulAdd(vg, vo, acc);
      hn::StoreU(hn::MulAdd(vg, vin, vo), d, out[k] + i);
    }
    hn::StoreU(hn::Add(vin, acc), d, in + i);
  }
}

// One skip-gram window with shared negatives (see the top of the file). Contexts are taken in
// order; for each, the dot products against the window's output rows come first, then one pass
// updates the context row and every output row, so the next context already sees them.
HWY_INLINE void SkipGramWindow(const W2vShared& m, const WindowTargets& w, float* const* in_rows,
                               size_t n_ctx, float alpha, W2vThread& t) {
  // The window's loss is summed in a register and added to the thread's double once: through
  // `t` every prediction was a load-add-store chain on memory the stores around it may alias.
  float loss = 0;
  for (size_t j = 0; j < n_ctx; ++j) TrainContext(in_rows[j], w.out, w.n, alpha, m.stride, loss);
  t.loss += loss;
  t.n_loss += n_ctx * w.n;
}

// One skip-gram window with fresh negatives for every context: context j trains against its
// own targets, fout[foff[j] .. foff[j + 1]) (the center's row first, so that row is updated
// after each context as in word2vec.c).
HWY_INLINE void SkipGramWindowFresh(const W2vShared& m, float* const* fout, const uint16_t* foff,
                                    float* const* in_rows, size_t n_ctx, float alpha,
                                    W2vThread& t) {
  float loss = 0;
  for (size_t j = 0; j < n_ctx; ++j)
    TrainContext(in_rows[j], fout + foff[j], size_t(foff[j + 1] - foff[j]), alpha, m.stride, loss);
  t.loss += loss;
  t.n_loss += foff[n_ctx];
}

// What a pipelined loop (SkipGramSentence, CbowSentence) draws for a position one step ahead:
// its window and its output rows, whose lines are prefetched for writing at once. The generator
// is used in the same order as drawing them when the position trains, so a one-thread run gives
// the same bits either way.
struct WindowPlan {
  long lo = 0, hi = -1;
  WindowTargets w;  // CBOW, skip-gram with shared negatives
  // Skip-gram with fresh negatives: context j's output rows (its center's, then its negatives)
  // are fout[foff[j] .. foff[j + 1]).
  uint16_t foff[kW2vFreshMaxContexts + 1];
  float* fout[kW2vFreshMaxTargets];
};

class WindowPlanner {
 public:
  WindowPlanner(const W2vShared& m, const uint32_t* sent, size_t n) : m_(m), sent_(sent), n_(n) {}
  void plan(size_t i, WindowPlan& p, W2vThread& t) {
    const long W = long(m_.window);
    t.rng = t.rng * 25214903917ull + 11;
    const long b = long((t.rng >> 16) % uint64_t(W));  // dynamic window
    p.lo = std::max(0L, long(i) - W + b);
    p.hi = std::min(long(n_) - 1, long(i) + W - b);
    p.w.n = 0;
    if (!m_.cbow && !m_.shared_negatives) {
      const size_t S = m_.stride;
      const uint32_t slot = OutSlot(m_, sent_[i]);
      float* pos = Row(m_.syn1neg, slot, S);
      PrefetchRowForWrite(pos, S);
      size_t n = 0, j = 0;
      p.foff[0] = 0;
      for (long c = p.lo; c <= p.hi; ++c) {
        if (c == long(i)) continue;
        p.fout[n++] = pos;
        for (size_t d = 0; d < m_.negative; ++d) {
          const uint32_t target = DrawNegative(t);
          if (target == slot) continue;
          p.fout[n++] = Row(m_.syn1neg, target, S);
          PrefetchRowForWrite(p.fout[n - 1], S);
        }
        p.foff[++j] = uint16_t(n);
      }
    } else if (m_.negative > 0) {
      DrawTargets(m_, sent_[i], p.w, t);
    }
    // The center's own input row too: it is a context of the next windows.
    for (long c = std::max(p.lo, prefetched_to_ + 1); c <= p.hi; ++c)
      PrefetchRowForWrite(Row(m_.syn0, sent_[c], m_.stride), m_.stride);
    prefetched_to_ = std::max(prefetched_to_, p.hi);
  }

 private:
  const W2vShared& m_;
  const uint32_t* sent_;
  size_t n_;
  // Context rows up to this position have been prefetched for an earlier window, which trained
  // on them since: they are still in this core's cache, and asking again only costs issue slots.
  long prefetched_to_ = -1;
};

// Runs train(i, plan of i) for every position of a sentence, planning position i + 1 before
// position i trains (the software pipeline of the two loops below).
template <class F>
HWY_INLINE void PipelinedSentence(const W2vShared& m, const uint32_t* sent, size_t n, W2vThread& t,
                                  const F& train) {
  if (n == 0) return;
  WindowPlanner planner(m, sent, n);
  WindowPlan plans[2];
  planner.plan(0, plans[0], t);
  for (size_t i = 0; i < n; ++i) {
    if (i + 1 < n) planner.plan(i + 1, plans[(i + 1) & 1], t);
    train(i, plans[i & 1]);
  }
}

// Skip-gram over a sentence with shared negatives per window, software-pipelined: the next
// center's window and negatives are drawn, and all their rows prefetched, before the current
// window is trained, so the random output rows (the loop's cache misses, and with two threads
// often lines the other core has just written) arrive while this window computes.
HWY_INLINE void SkipGramSentence(const W2vShared& m, const uint32_t* sent, size_t n, float alpha,
                                 W2vThread& t) {
  const size_t S = m.stride;
  float* in_rows[2 * kMaxWindowInline];
  PipelinedSentence(m, sent, n, t, [&](size_t i, const WindowPlan& p) {
    size_t n_ctx = 0;
    for (long c = p.lo; c <= p.hi; ++c)
      if (c != long(i)) in_rows[n_ctx++] = Row(m.syn0, sent[c], S);
    if (n_ctx == 0) return;
    if (m.shared_negatives)
      SkipGramWindow(m, p.w, in_rows, n_ctx, alpha, t);
    else
      SkipGramWindowFresh(m, p.fout, p.foff, in_rows, n_ctx, alpha, t);
    for (long c = p.lo; c <= p.hi; ++c)
      if (c != long(i)) CountUpdate(m, sent[c]);
  });
}

// CBOW over a sentence, software-pipelined like SkipGramSentence: the next position's window
// and negatives are drawn and their rows prefetched for writing before the current position
// trains. Without it every miss on an output row stalled the loop, and on 2 threads,
// where the row is often a line the other core has just written, CBOW ran slower than on 1.
HWY_INLINE void CbowSentence(const W2vShared& m, const uint32_t* sent, size_t n, float alpha,
                             W2vThread& t) {
  const size_t S = m.stride;
  const hn::ScalableTag<float> d;
  PipelinedSentence(m, sent, n, t, [&](size_t i, const WindowPlan& p) {
    Zero(t.neu1, S);
    size_t cw = 0;
    for (long c = p.lo; c <= p.hi; ++c) {
      if (c == long(i)) continue;
      Axpy(1.0f, Row(m.syn0, sent[c], S), t.neu1, S);
      ++cw;
    }
    if (cw == 0) return;
    const auto inv = hn::Set(d, 1.0f / float(cw));
    for (size_t k = 0; k < S; k += hn::Lanes(d))
      hn::StoreU(hn::Mul(hn::LoadU(d, t.neu1 + k), inv), d, t.neu1 + k);
    Zero(t.neu1e, S);
    PredictHs(m, sent[i], t.neu1, t.neu1e, alpha, t);  // first, as Predict does
    for (size_t k = 0; k < p.w.n; ++k) {
      float* out = p.w.out[k];
      float g = Gradient(Dot(t.neu1, out, S), k == 0 ? 1.0f : 0.0f, alpha, t);
      Update(g, t.neu1, out, t.neu1e, S);
    }
    for (long c = p.lo; c <= p.hi; ++c) {
      if (c == long(i)) continue;
      Axpy(1.0f, t.neu1e, Row(m.syn0, sent[c], S), S);
      CountUpdate(m, sent[c]);
    }
  });
}

// Skip-gram with word2vec.c's per-(context, center) predictions (classic_skipgram, or
// hierarchical softmax); the other loops are above.
void TrainSentence(const W2vShared& m, const uint32_t* sent, size_t n, float alpha, W2vThread& t) {
  if (m.pipelined_skipgram) return SkipGramSentence(m, sent, n, alpha, t);
  if (m.cbow) return CbowSentence(m, sent, n, alpha, t);
  const size_t S = m.stride;
  const long W = long(m.window);
  for (size_t i = 0; i < n; ++i) {
    t.rng = t.rng * 25214903917ull + 11;
    const long b = long((t.rng >> 16) % uint64_t(W));  // window shrinks by b: dynamic window
    const long lo = std::max(0L, long(i) - W + b), hi = std::min(long(n) - 1, long(i) + W - b);
    const uint32_t word = sent[i];
    for (long c = lo; c <= hi; ++c) {
      if (c == long(i)) continue;
      const uint32_t ctx = sent[c];
      float* l1 = Row(m.syn0, ctx, S);
      Zero(t.neu1e, S);
      Predict(m, word, l1, t.neu1e, alpha, t);
      Axpy(1.0f, t.neu1e, l1, S);
      CountUpdate(m, ctx);
    }
  }
}

float DotSimd(const float* a, const float* b, size_t stride) { return Dot(a, b, stride); }

const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace embedscope
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace embedscope {
HWY_EXPORT(TrainSentence);
HWY_EXPORT(DotSimd);
HWY_EXPORT(TargetName);

void w2v_train_sentence(const W2vShared& m, const uint32_t* sent, size_t n, float alpha,
                        W2vThread& t) {
  HWY_DYNAMIC_DISPATCH(TrainSentence)(m, sent, n, alpha, t);
}

const char* w2v_simd_target() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }

float w2v_dot_simd(const float* a, const float* b, size_t stride) {
  return HWY_DYNAMIC_DISPATCH(DotSimd)(a, b, stride);
}

float w2v_dot_scalar(const float* a, const float* b, size_t n) {
  float s = 0;
  for (size_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}
}  // namespace embedscope
#endif
