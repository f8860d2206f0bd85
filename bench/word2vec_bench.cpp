// word2vec readers on a 100k x 300 matrix (the size of a typical fastText / GloVe download
// slice): text as written by our writer (shortest float32 decimals, like gensim's repr) and
// fastText-style 5-significant-digit text, and binary. Files are generated once per run in
// $TMPDIR and stay in page cache, so this measures parsing, not the disk.
//
//   build/bin/word2vec_bench --benchmark_min_time=1
// Arg = parse threads (text); CPU time is the whole process (all threads), Time is wall.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "embedscope/core/atomic_file.h"
#include "embedscope/formats/word2vec.h"

namespace {

using namespace embedscope;

constexpr size_t kRows = 100000, kDim = 300;

struct Files {
  std::string dir, text_shortest, text_fasttext, binary;
  Files() {
    const char* t = std::getenv("TMPDIR");
    std::string tmpl = std::string(t && *t ? t : "/tmp") + "/es-w2v-bench-XXXXXX";
    dir = ::mkdtemp(tmpl.data());
    std::mt19937 rng(42);
    std::normal_distribution<float> nd(0.0f, 0.3f);
    std::vector<float> v(kRows * kDim);
    for (float& x : v) x = nd(rng);
    Vocabulary vocab;
    for (size_t i = 0; i < kRows; ++i) vocab.add("word" + std::to_string(i));
    EmbeddingTable table = EmbeddingTable::from_f32(kRows, kDim, v);
    text_shortest = dir + "/shortest.txt";
    binary = dir + "/vectors.bin";
    text_fasttext = dir + "/fasttext.vec";
    save_word2vec_text(text_shortest, table, vocab);
    save_word2vec_binary(binary, table, vocab);
    // fastText's saveVectors prints with the stream default (6 significant digits) and a
    // trailing space before the newline.
    AtomicFile f(text_fasttext);
    f.write(std::to_string(kRows) + " " + std::to_string(kDim) + "\n");
    std::string line;
    char num[32];
    for (size_t i = 0; i < kRows; ++i) {
      line = vocab.token(TokenId(i));
      for (size_t k = 0; k < kDim; ++k) {
        int n = std::snprintf(num, sizeof num, " %g", double(v[i * kDim + k]));
        line.append(num, size_t(n));
      }
      line += " \n";
      f.write(line);
    }
    f.commit();
  }
  ~Files() {
    std::remove(text_shortest.c_str());
    std::remove(text_fasttext.c_str());
    std::remove(binary.c_str());
    ::rmdir(dir.c_str());
  }
};

// Made on first use, so a --benchmark_filter that skips these never writes them.
Files& files() {
  static Files f;
  return f;
}

// state.range(0): parse threads for text (the binary reader is serial).
void run(benchmark::State& state, const std::string& path, bool binary) {
  size_t bytes = 0;
  const size_t threads = size_t(state.range(0));
  for (auto _ : state) {
    LoadedEmbeddings e =
        binary ? load_word2vec_binary(path, {}) : load_word2vec_text(path, {}, threads);
    benchmark::DoNotOptimize(e.table.data());
    if (e.table.n_rows() != kRows) state.SkipWithError("wrong row count");
  }
  FILE* f = std::fopen(path.c_str(), "rb");
  std::fseek(f, 0, SEEK_END);
  bytes = size_t(std::ftell(f));
  std::fclose(f);
  state.SetBytesProcessed(int64_t(bytes) * state.iterations());
  state.counters["file_MB"] = double(bytes) / 1e6;
  state.counters["threads"] = double(threads);
}

void BM_LoadText_Shortest(benchmark::State& s) { run(s, files().text_shortest, false); }
void BM_LoadText_FastTextStyle(benchmark::State& s) { run(s, files().text_fasttext, false); }
void BM_LoadBinary(benchmark::State& s) { run(s, files().binary, true); }

BENCHMARK(BM_LoadText_Shortest)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();
BENCHMARK(BM_LoadText_FastTextStyle)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();
BENCHMARK(BM_LoadBinary)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();

// ES_W2V_FILE=path: also time that file (bench/compare_word2vec.py uses it to compare with
// gensim on the same bytes).
void BM_LoadFile(benchmark::State& s) {
  const std::string path = std::getenv("ES_W2V_FILE");
  const bool binary = path.size() > 4 && path.substr(path.size() - 4) == ".bin";
  for (auto _ : s) {
    LoadedEmbeddings e =
        binary ? load_word2vec_binary(path, {}) : load_word2vec_text(path, {}, size_t(s.range(0)));
    benchmark::DoNotOptimize(e.table.data());
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (std::getenv("ES_W2V_FILE"))
    benchmark::RegisterBenchmark("BM_LoadFile", BM_LoadFile)
        ->Arg(1)
        ->Arg(2)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->MeasureProcessCPUTime();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
