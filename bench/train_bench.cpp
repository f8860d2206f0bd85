// word2vec inner loop throughput: one skip-gram sentence update (dim 100, window 5, negative 5)
// on random rows of a 20k-row table, and the SIMD dot product against its scalar twin.
// Run: build/bin/train_bench   (prints the SIMD target chosen by Highway)
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "train/rng.h"
#include "train/w2v_kernels.h"

using namespace embedscope;

namespace {

struct Setup {
  size_t rows = 20000, dim = 100, stride = 112;
  std::vector<float> syn0, syn1neg, neu1, neu1e;
  std::vector<W2vAlias> table;  // uniform over the rows (each entry keeps its own row)
  std::vector<uint32_t> sentence;
  W2vShared m;
  Setup() {
    SplitMix64 r(1);
    syn0.resize(rows * stride, 0.0f);
    syn1neg.resize(rows * stride, 0.0f);
    for (size_t i = 0; i < rows; ++i)
      for (size_t d = 0; d < dim; ++d) syn0[i * stride + d] = float(r.uniform() - 0.5) / 100;
    table.resize(rows);
    for (size_t i = 0; i < rows; ++i) table[i] = {0xFFFFFFFFu, uint32_t(i), uint32_t(i)};
    sentence.resize(1000);
    for (auto& s : sentence) s = uint32_t(r.next() % rows);
    neu1.resize(stride);
    neu1e.resize(stride);
    m.stride = stride;
    m.syn0 = syn0.data();
    m.syn1neg = syn1neg.data();
    m.window = 5;
    m.negative = 5;
  }
};

// Arg: 0 = word2vec.c's per-pair loop (--classic-skipgram), 1 = the pipelined loop with fresh
// negatives for every pair (the default), 2 = pipelined with one draw per window
// (--shared-negatives).
void BM_SkipGramSentence(benchmark::State& state) {
  static Setup s;
  W2vShared m = s.m;
  m.pipelined_skipgram = state.range(0) != 0;
  m.shared_negatives = state.range(0) == 2;
  W2vThread t;
  t.neg_alias = s.table.data();
  t.neg_alias_size = s.table.size();
  t.rng = 1;
  t.neu1 = s.neu1.data();
  t.neu1e = s.neu1e.data();
  for (auto _ : state) w2v_train_sentence(m, s.sentence.data(), s.sentence.size(), 0.025f, t);
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(s.sentence.size()));
  state.SetLabel(std::string(w2v_simd_target()) + (state.range(0) == 0   ? " classic"
                                                   : state.range(0) == 1 ? " fresh"
                                                                         : " shared"));
}
BENCHMARK(BM_SkipGramSentence)->Arg(0)->Arg(1)->Arg(2);

void BM_DotSimd(benchmark::State& state) {
  std::vector<float> a(112, 0.5f), b(112, 0.25f);
  for (auto _ : state) benchmark::DoNotOptimize(w2v_dot_simd(a.data(), b.data(), 112));
  state.SetLabel(w2v_simd_target());
}
BENCHMARK(BM_DotSimd);

void BM_DotScalar(benchmark::State& state) {
  std::vector<float> a(112, 0.5f), b(112, 0.25f);
  for (auto _ : state) {
    benchmark::DoNotOptimize(a.data());
    benchmark::DoNotOptimize(w2v_dot_scalar(a.data(), b.data(), 100));
  }
}
BENCHMARK(BM_DotScalar);

}  // namespace

BENCHMARK_MAIN();
