// The word2vec inner loops (skip-gram / CBOW x negative sampling / hierarchical softmax),
// compiled for every SIMD target Highway knows and dispatched once per sentence.
// Private to src/train. Rows are `stride` floats apart (stride: dim rounded up to 16, the
// padding stays zero because every update to it is a multiple of zero).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace embedscope {

inline constexpr size_t kStrideAlign = 16;
// The kernels keep per-window arrays on the stack; word2vec.cpp checks that these equal
// kMaxNegative and kMaxWindow (word2vec.h), which option validation enforces.
inline constexpr size_t kW2vMaxNegative = 1000;
inline constexpr size_t kW2vMaxWindow = 1000;
// The pipelined skip-gram loop with fresh negatives plans a whole window's targets in fixed
// arrays: at most this many contexts, and this many output rows over all of them.
inline constexpr size_t kW2vFreshMaxContexts = 64;
inline constexpr size_t kW2vFreshMaxTargets = 1024;
// Whether a window of `window` and `negative` fits that plan (2 window contexts, each with its
// center row and `negative` negatives).
inline bool w2v_fresh_plan_fits(size_t window, size_t negative) {
  return 2 * window <= kW2vFreshMaxContexts && 2 * window * (negative + 1) <= kW2vFreshMaxTargets;
}

// One entry of the negative-sampling alias table (Walker 1977, Vose 1991): entry k (drawn
// uniformly) yields `row` when a uniform 32-bit coin is below `threshold`, else `other`.
struct W2vAlias {
  uint32_t threshold;
  uint32_t row;
  uint32_t other;
};

struct W2vShared {
  size_t stride = 0;
  float* syn0 = nullptr;
  float* syn1neg = nullptr;  // null when negative == 0
  float* syn1 = nullptr;     // null unless hs
  // syn1neg's layout: vocabulary row r's output vector is syn1neg row out_slot[r] (null: row r).
  // With negatives by thread each thread's rows form one block (w2v_negatives.h).
  const uint32_t* out_slot = nullptr;
  bool cbow = false;
  size_t window = 5, negative = 5;
  // Hierarchical softmax: row r's path is hs_points/hs_codes[hs_offset[r] .. hs_offset[r+1]).
  const uint32_t* hs_offset = nullptr;
  const uint32_t* hs_points = nullptr;
  const uint8_t* hs_codes = nullptr;
  uint64_t* row_updates = nullptr;  // optional (row statistics)
  // Skip-gram with negative sampling only: the pipelined loop (SkipGramSentence in
  // w2v_kernels.cpp), with fresh negatives for every (context, center) pair, or with
  // shared_negatives one draw per center word for the whole window. False: word2vec.c's
  // unpipelined per-pair loop.
  bool pipelined_skipgram = false;
  bool shared_negatives = false;
};

struct W2vThread {
  uint64_t rng = 0;
  // The table negatives are drawn from: count^0.75 over the trained rows, or with several
  // threads over this chunk's set of them (w2v_negatives.h). Entries hold syn1neg rows (slots).
  const W2vAlias* neg_alias = nullptr;
  uint64_t neg_alias_size = 0;
  double loss = 0;
  uint64_t n_loss = 0;
  float* neu1 = nullptr;  // stride floats, aligned
  float* neu1e = nullptr;
};

// Trains on one sentence of row ids (already subsampled) with learning rate alpha.
void w2v_train_sentence(const W2vShared& m, const uint32_t* sent, size_t n, float alpha,
                        W2vThread& t);
// Name of the SIMD target the dispatcher picked ("AVX3", "AVX2", "SSE4", "EMU128").
const char* w2v_simd_target();

// Scalar twin of the dot product and axpy used by the kernels (tests compare against it).
float w2v_dot_scalar(const float* a, const float* b, size_t n);
float w2v_dot_simd(const float* a, const float* b, size_t stride);

}  // namespace embedscope
