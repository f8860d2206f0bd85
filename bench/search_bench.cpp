// Search benchmarks.
//
//   search_bench                      Google Benchmark microbenchmarks on synthetic tables
//   search_bench --compare W.f32 N DIM Q.f32 NQ THREADS [--hnsw] [--f16]
//                                     the embedscope side of bench/compare_search.py: times
//                                     every mode in-process on the given raw float32 matrix and
//                                     queries and prints one JSON object (also the machine's
//                                     read bandwidth and sgemm GFLOP/s, measured here).
// Prints the active SIMD target and thread count.
#include <benchmark/benchmark.h>
#include "embedscope/core/blas.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "embedscope/core/thread_pool.h"
#include "embedscope/search/hnsw_index.h"
#include "embedscope/search/searcher.h"
#include "simd/dot_kernels.h"

using namespace embedscope;

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::vector<float> read_f32(const std::string& path, size_t n) {
  std::ifstream in(path, std::ios::binary);
  std::vector<float> v(n);
  in.read(reinterpret_cast<char*>(v.data()), std::streamsize(n * 4));
  if (!in) {
    std::fprintf(stderr, "cannot read %zu floats from %s\n", n, path.c_str());
    std::exit(1);
  }
  return v;
}

// STREAM-style read: each thread sums its slice of the buffer as uint64 (4 accumulators; the
// loop vectorises without -march flags). Best of 5, bytes / seconds.
double read_bandwidth_gbs(const std::byte* p, size_t bytes, size_t threads) {
  ThreadPool pool(threads);
  std::vector<uint64_t> sink(threads);
  double best = 1e9;
  const size_t words = bytes / 8;
  for (int rep = 0; rep < 5; ++rep) {
    double t0 = now_s();
    pool.parallel_for(words, [&](size_t b, size_t e, size_t t) {
      uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
      const uint64_t* w = reinterpret_cast<const uint64_t*>(p);
      size_t i = b;
      for (; i + 4 <= e; i += 4) {
        a0 += w[i];
        a1 += w[i + 1];
        a2 += w[i + 2];
        a3 += w[i + 3];
      }
      for (; i < e; ++i) a0 += w[i];
      sink[t] += a0 + a1 + a2 + a3;
    });
    best = std::min(best, now_s() - t0);
  }
  benchmark::DoNotOptimize(sink.data());
  return double(words * 8) / best / 1e9;
}

double sgemm_gflops(const float* w, size_t n, size_t dim, const float* q, size_t nq, size_t threads) {
  embedscope::blas::set_num_threads(int(threads));
  std::vector<float> c(n * nq);
  double best = 1e9;
  for (int rep = 0; rep < 2; ++rep) {
    double t0 = now_s();
    embedscope::blas::sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(nq), int(n), int(dim), 1.0f, q,
                int(dim), w, int(dim), 0.0f, c.data(), int(n));
    best = std::min(best, now_s() - t0);
  }
  return 2.0 * double(n) * double(nq) * double(dim) / best / 1e9;
}

template <class F>
double median_ms(size_t reps, F&& f) {
  std::vector<double> t;
  f(0);  // warm-up (page cache, int8 copy, caches)
  for (size_t r = 0; r < reps; ++r) {
    double t0 = now_s();
    f(r);
    t.push_back((now_s() - t0) * 1e3);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int compare(int argc, char** argv) {
  if (argc < 8) {
    std::fprintf(stderr, "usage: search_bench --compare W.f32 N DIM Q.f32 NQ THREADS [--hnsw] [--f16]\n");
    return 2;
  }
  const std::string wpath = argv[2], qpath = argv[5];
  const size_t n = std::stoul(argv[3]), dim = std::stoul(argv[4]), nq = std::stoul(argv[6]),
               threads = std::stoul(argv[7]);
  bool hnsw = false, half = false;
  for (int i = 8; i < argc; ++i) {
    hnsw = hnsw || std::string(argv[i]) == "--hnsw";
    half = half || std::string(argv[i]) == "--f16";
  }
  std::vector<float> w = read_f32(wpath, n * dim), q = read_f32(qpath, nq * dim);
  nlohmann::json j{{"target", simd::active_target()}, {"threads", threads}, {"rows", n}, {"dim", dim}};
  j["read_bandwidth_gbs"] = read_bandwidth_gbs(reinterpret_cast<const std::byte*>(w.data()), w.size() * 4, threads);
  j["sgemm_gflops"] = sgemm_gflops(w.data(), n, dim, q.data(), nq, threads);
  EmbeddingTable t = EmbeddingTable::from_f32(n, dim, w);
  Searcher s(t, {.n_threads = threads});
  const size_t n_single = std::min<size_t>(nq, 30);
  auto qrow = [&](size_t i) { return std::span<const float>(q.data() + (i % nq) * dim, dim); };
  SearchOptions ex{.k = 10}, fa{.k = 10, .mode = SearchMode::kFast};
  j["exact_ms"] = median_ms(n_single, [&](size_t r) { benchmark::DoNotOptimize(s.search(qrow(r), ex)); });
  j["fast_ms"] = median_ms(n_single, [&](size_t r) { benchmark::DoNotOptimize(s.search(qrow(r), fa)); });
  size_t same = 0;
  const size_t n_check = std::min<size_t>(nq, 200);
  for (size_t i = 0; i < n_check; ++i) same += s.search(qrow(i), ex) == s.search(qrow(i), fa);
  j["fast_identical_top10"] = double(same) / double(n_check);
  j["batch_ms"] = median_ms(2, [&](size_t) { benchmark::DoNotOptimize(s.search_batch(q, nq, ex)); });
  j["batch_queries"] = nq;
  if (half) {
    for (DType dt : {DType::kF16, DType::kBF16}) {
      std::vector<uint16_t> h(w.size());
      for (size_t i = 0; i < h.size(); ++i) h[i] = dt == DType::kF16 ? f32_to_f16(w[i]) : f32_to_bf16(w[i]);
      Searcher sh(EmbeddingTable::from_u16(n, dim, dt, std::move(h)), {.n_threads = threads});
      j[std::string("exact_") + std::string(dtype_name(dt)) + "_ms"] =
          median_ms(n_single, [&](size_t r) { benchmark::DoNotOptimize(sh.search(qrow(r), ex)); });
    }
  }
  if (hnsw) {
    double t0 = now_s();
    HnswIndex ix = HnswIndex::build(t, {.M = 16, .ef_construction = 100, .n_threads = threads});
    j["hnsw_build_s"] = now_s() - t0;
    std::vector<std::vector<Neighbor>> truth;
    for (size_t i = 0; i < n_check; ++i) truth.push_back(s.search(qrow(i), ex));
    nlohmann::json runs = nlohmann::json::array();
    for (size_t ef : {16u, 32u, 64u, 128u}) {
      size_t hit = 0;
      for (size_t i = 0; i < n_check; ++i) {
        auto a = ix.search(qrow(i), {.k = 10, .ef = ef});
        for (auto& x : truth[i])
          for (auto& y : a) hit += x.id == y.id;
      }
      double ms = median_ms(n_check, [&](size_t r) { benchmark::DoNotOptimize(ix.search(qrow(r), {.k = 10, .ef = ef})); });
      runs.push_back({{"ef", ef}, {"recall_at_10", double(hit) / double(n_check * 10)}, {"ms", ms}});
    }
    j["hnsw"] = runs;
  }
  std::printf("%s\n", j.dump().c_str());
  return 0;
}

EmbeddingTable random_table(size_t n, size_t dim, DType dt) {
  std::mt19937 g(1);
  std::normal_distribution<float> nd;
  std::vector<float> v(n * dim);
  for (float& x : v) x = nd(g);
  if (dt == DType::kF32) return EmbeddingTable::from_f32(n, dim, std::move(v));
  std::vector<uint16_t> h(v.size());
  for (size_t i = 0; i < h.size(); ++i) h[i] = dt == DType::kF16 ? f32_to_f16(v[i]) : f32_to_bf16(v[i]);
  return EmbeddingTable::from_u16(n, dim, dt, std::move(h));
}

void BM_Search(benchmark::State& st, DType dt, SearchMode mode) {
  const size_t threads = size_t(st.range(0));
  EmbeddingTable t = random_table(50257, 768, dt);
  Searcher s(t, {.n_threads = threads});
  std::vector<float> q = s.row(123);
  SearchOptions o{.k = 10, .mode = mode};
  s.search(q, o);
  for (auto _ : st) benchmark::DoNotOptimize(s.search(q, o));
  st.SetBytesProcessed(int64_t(st.iterations()) * int64_t(t.byte_size()));
  st.SetLabel(std::string(simd::active_target()) + " threads=" + std::to_string(threads));
}
BENCHMARK_CAPTURE(BM_Search, exact_f32, DType::kF32, SearchMode::kExact)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Search, exact_bf16, DType::kBF16, SearchMode::kExact)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Search, fast_f32, DType::kF32, SearchMode::kFast)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

void BM_Batch(benchmark::State& st) {
  const size_t threads = size_t(st.range(0)), nq = 256;
  EmbeddingTable t = random_table(50257, 768, DType::kF32);
  Searcher s(t, {.n_threads = threads});
  std::vector<float> q(t.f32(), t.f32() + nq * 768);
  for (auto _ : st) benchmark::DoNotOptimize(s.search_batch(q, nq, {.k = 10}));
  st.SetItemsProcessed(int64_t(st.iterations()) * int64_t(nq));
  st.SetLabel(std::string(simd::active_target()) + " threads=" + std::to_string(threads));
}
BENCHMARK(BM_Batch)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--compare") return compare(argc, argv);
  std::fprintf(stderr, "SIMD target: %s, hardware threads: %u\n", simd::active_target(),
               std::thread::hardware_concurrency());
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
