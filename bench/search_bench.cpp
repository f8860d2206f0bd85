// Search benchmarks.
//
//   search_bench                      Google Benchmark microbenchmarks on synthetic tables
//   search_bench --compare W.f32 N DIM Q.f32 NQ THREADS [--f16] [--ids Q.i32] [--seen S.u8]
//                [--hnsw M EFC EF1,EF2,...]
//                                     the embedscope side of bench/compare_search.py: times
//                                     every mode in-process on the given raw float32 matrix and
//                                     queries and prints one JSON object (also the machine's
//                                     read bandwidth and sgemm GFLOP/s, measured here).
//                                     --ids: the row each query was taken from (excluded from
//                                     its answers, as `neighbors WORD` does); --seen: rows seen
//                                     in training (one byte per row): the HNSW index and its
//                                     exact ground truth cover only those rows.
// Prints the active SIMD target and thread count.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "embedscope/core/blas.h"
#include "embedscope/core/embedding_table.h"
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

// Read bandwidth the way a search reads: the same number of threads, the same 1024-row work
// items from a shared counter and 256-row blocks, the same vector loads (simd::sum_rows_f32 is
// dot_rows without the multiply). Best of 10 passes (STREAM's convention: the machine's
// attainable rate), bytes / seconds.
double read_bandwidth_gbs(const float* w, size_t n, size_t dim, size_t threads) {
  ThreadPool pool(threads);
  std::vector<float> sink(threads);
  double best = 1e9;
  for (int rep = 0; rep < 10; ++rep) {
    double t0 = now_s();
    std::atomic<size_t> next{0};
    pool.run_on_all([&](size_t t) {
      for (size_t b; (b = next.fetch_add(1024, std::memory_order_relaxed)) < n;) {
        const size_t e = std::min(n, b + 1024);
        float buf[256];
        for (size_t i0 = b; i0 < e; i0 += 256) {
          const size_t m = std::min<size_t>(256, e - i0);
          simd::sum_rows_f32(w + i0 * dim, m, dim, buf);
          sink[t] += buf[0];
        }
      }
    });
    best = std::min(best, now_s() - t0);
  }
  benchmark::DoNotOptimize(sink.data());
  return double(n * dim * 4) / best / 1e9;
}

std::vector<uint8_t> read_u8(const std::string& path, size_t n) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> v(n);
  in.read(reinterpret_cast<char*>(v.data()), std::streamsize(n));
  if (!in) {
    std::fprintf(stderr, "cannot read %zu bytes from %s\n", n, path.c_str());
    std::exit(1);
  }
  return v;
}

double sgemm_gflops(const float* w, size_t n, size_t dim, const float* q, size_t nq,
                    size_t threads) {
  embedscope::blas::set_num_threads(int(threads));
  std::vector<float> c(n * nq);
  double best = 1e9;
  for (int rep = 0; rep < 3; ++rep) {
    double t0 = now_s();
    embedscope::blas::sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(nq), int(n), int(dim),
                            1.0f, q, int(dim), w, int(dim), 0.0f, c.data(), int(n));
    best = std::min(best, now_s() - t0);
  }
  return 2.0 * double(n) * double(nq) * double(dim) / best / 1e9;
}

double g_last_best_ms = 0;  // fastest repetition of the last median_ms() call

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
  g_last_best_ms = t[0];
  return t[t.size() / 2];
}

int compare(int argc, char** argv) {
  if (argc < 8) {
    std::fprintf(stderr,
                 "usage: search_bench --compare W.f32 N DIM Q.f32 NQ THREADS [--f16] [--ids Q.i32] "
                 "[--seen S.u8] [--hnsw M EFC EF1,EF2,...]\n");
    return 2;
  }
  const std::string wpath = argv[2], qpath = argv[5];
  const size_t n = std::stoul(argv[3]), dim = std::stoul(argv[4]), nq = std::stoul(argv[6]),
               threads = std::stoul(argv[7]);
  bool hnsw = false, half = false;
  std::string ids_path, seen_path;
  size_t hM = 16, hefc = 200;
  std::vector<size_t> efs;
  for (int i = 8; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--f16")
      half = true;
    else if (a == "--ids" && i + 1 < argc)
      ids_path = argv[++i];
    else if (a == "--seen" && i + 1 < argc)
      seen_path = argv[++i];
    else if (a == "--hnsw" && i + 3 < argc) {
      hnsw = true;
      hM = std::stoul(argv[++i]);
      hefc = std::stoul(argv[++i]);
      for (std::string l = argv[++i]; !l.empty();) {
        size_t c = l.find(',');
        efs.push_back(std::stoul(l.substr(0, c)));
        l = c == std::string::npos ? "" : l.substr(c + 1);
      }
    } else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  std::vector<float> w = read_f32(wpath, n * dim), q = read_f32(qpath, nq * dim);
  std::vector<int32_t> ids;
  if (!ids_path.empty()) {
    std::vector<float> raw = read_f32(ids_path, nq);  // 4-byte records
    ids.resize(nq);
    std::memcpy(ids.data(), raw.data(), nq * 4);
  }
  std::vector<uint8_t> seen;
  if (!seen_path.empty()) seen = read_u8(seen_path, n);
  nlohmann::json j{
      {"target", simd::active_target()}, {"threads", threads}, {"rows", n}, {"dim", dim}};
  j["read_bandwidth_gbs"] = read_bandwidth_gbs(w.data(), n, dim, threads);
  j["sgemm_gflops"] = sgemm_gflops(w.data(), n, dim, q.data(), nq, threads);
  // The kernel family OpenBLAS was told to use (inherited; "auto" = its own CPU detection).
  const char* core = std::getenv("OPENBLAS_CORETYPE");
  j["openblas_coretype"] = core ? core : "auto";
  EmbeddingTable t = EmbeddingTable::from_f32(n, dim, w);
  Searcher s(t, {.n_threads = threads});
  const size_t n_single = std::min<size_t>(nq, 30);
  auto qrow = [&](size_t i) { return std::span<const float>(q.data() + (i % nq) * dim, dim); };
  auto opts = [&](size_t i, SearchMode mode) {
    SearchOptions o{.k = 10, .mode = mode};
    if (!ids.empty()) o.exclude = {ids[i % nq]};
    return o;
  };
  j["exact_ms"] = median_ms(n_single, [&](size_t r) {
    benchmark::DoNotOptimize(s.search(qrow(r), opts(r, SearchMode::kExact)));
  });
  j["exact_best_ms"] = g_last_best_ms;
  j["fast_ms"] = median_ms(n_single, [&](size_t r) {
    benchmark::DoNotOptimize(s.search(qrow(r), opts(r, SearchMode::kFast)));
  });
  size_t same = 0;
  const size_t n_check = std::min<size_t>(nq, 200);
  for (size_t i = 0; i < n_check; ++i)
    same += s.search(qrow(i), opts(i, SearchMode::kExact)) ==
            s.search(qrow(i), opts(i, SearchMode::kFast));
  j["fast_identical_top10"] = double(same) / double(n_check);
  j["n_check"] = n_check;
  SearchOptions ex{.k = 10};
  // Median of 5 (an odd count: a real median, not the slower of two) and the fastest run.
  j["batch_ms"] =
      median_ms(5, [&](size_t) { benchmark::DoNotOptimize(s.search_batch(q, nq, ex)); });
  j["batch_best_ms"] = g_last_best_ms;
  j["batch_queries"] = nq;
  if (half) {
    for (DType dt : {DType::kF16, DType::kBF16}) {
      std::vector<uint16_t> h(w.size());
      for (size_t i = 0; i < h.size(); ++i)
        h[i] = dt == DType::kF16 ? f32_to_f16(w[i]) : f32_to_bf16(w[i]);
      Searcher sh(EmbeddingTable::from_u16(n, dim, dt, std::move(h)), {.n_threads = threads});
      j[std::string("exact_") + std::string(dtype_name(dt)) + "_ms"] =
          median_ms(n_single, [&](size_t r) {
            benchmark::DoNotOptimize(sh.search(qrow(r), opts(r, SearchMode::kExact)));
          });
    }
  }
  if (hnsw) {
    const std::vector<uint8_t>* allow = seen.empty() ? nullptr : &seen;
    double t0 = now_s();
    HnswIndex ix = HnswIndex::build(
        t, {.M = hM, .ef_construction = hefc, .n_threads = threads, .allow = allow});
    j["hnsw_build_s"] = now_s() - t0;
    j["hnsw_M"] = hM;
    j["hnsw_efc"] = hefc;
    j["hnsw_indexed_rows"] = ix.n_indexed();
    // Ground truth and the exact-search time it is compared with: exact search over the same
    // rows (the seen ones when counts exist), single query, this thread count.
    std::vector<std::vector<Neighbor>> truth;
    auto exact_opts = [&](size_t i) {
      SearchOptions o = opts(i, SearchMode::kExact);
      o.allow = allow;
      return o;
    };
    for (size_t i = 0; i < n_check; ++i) truth.push_back(s.search(qrow(i), exact_opts(i)));
    j["hnsw_exact_ms"] = median_ms(
        n_single, [&](size_t r) { benchmark::DoNotOptimize(s.search(qrow(r), exact_opts(r))); });
    auto hopts = [&](size_t i, size_t ef) {
      HnswSearchOptions o{.k = 10, .ef = ef};
      if (!ids.empty()) o.exclude = {ids[i % nq]};
      return o;
    };
    nlohmann::json runs = nlohmann::json::array();
    for (size_t ef : efs) {
      size_t hit = 0;
      for (size_t i = 0; i < n_check; ++i) {
        auto a = ix.search(qrow(i), hopts(i, ef));
        for (auto& x : truth[i])
          for (auto& y : a) hit += x.id == y.id;
      }
      double ms = median_ms(
          n_check, [&](size_t r) { benchmark::DoNotOptimize(ix.search(qrow(r), hopts(r, ef))); });
      runs.push_back(
          {{"ef", ef}, {"recall_at_10", double(hit) / double(n_check * 10)}, {"ms", ms}});
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
  for (size_t i = 0; i < h.size(); ++i)
    h[i] = dt == DType::kF16 ? f32_to_f16(v[i]) : f32_to_bf16(v[i]);
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
BENCHMARK_CAPTURE(BM_Search, exact_f32, DType::kF32, SearchMode::kExact)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Search, exact_bf16, DType::kBF16, SearchMode::kExact)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Search, fast_f32, DType::kF32, SearchMode::kFast)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond);

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

// The first scan's per-block kernels, one thread, over 256-row blocks of a 300-wide table:
// Arg 0 = 256 rows (one block, L2-resident), Arg 1 = 800k rows (960 MB, from memory).
//   norms_then_dots: what a first scan did before dot_rows_sumsq (core's sum_of_squares per
//                    row, then dot_rows over the block from cache);
//   dots_sumsq:      the fused kernel; dots: a later scan (norms known);
//   read:            sum_rows_f32, the same loads with no arithmetic (the read's own pace).
enum class FirstScan { kNormsThenDots, kDotsSumSq, kDots, kRead };
void BM_FirstScanBlock(benchmark::State& st, FirstScan how) {
  const size_t dim = 300, n = st.range(0) ? 800'000 : 256, kBlock = 256;
  static std::vector<float> rows;  // shared by the cases: built once per size
  static size_t built = 0;
  if (built != n) {
    std::mt19937 g(3);
    std::normal_distribution<float> nd;
    rows.resize(n * dim);
    for (float& x : rows) x = nd(g);
    built = n;
  }
  std::vector<float> q(rows.begin(), rows.begin() + dim), dots(kBlock);
  std::vector<double> sums(kBlock);
  for (auto _ : st) {
    for (size_t i0 = 0; i0 < n; i0 += kBlock) {
      const size_t m = std::min(kBlock, n - i0);
      const auto* p = reinterpret_cast<const std::byte*>(rows.data() + i0 * dim);
      if (how == FirstScan::kRead) {
        simd::sum_rows_f32(rows.data() + i0 * dim, m, dim, dots.data());
      } else if (how == FirstScan::kDotsSumSq) {
        simd::dot_rows_sumsq(p, DType::kF32, m, dim, q.data(), dots.data(), sums.data());
      } else {
        if (how == FirstScan::kNormsThenDots)
          for (size_t r = 0; r < m; ++r)
            sums[r] = sum_of_squares(rows.data() + (i0 + r) * dim, dim);
        simd::dot_rows(p, DType::kF32, m, dim, q.data(), dots.data());
      }
      benchmark::DoNotOptimize(dots.data());
      benchmark::DoNotOptimize(sums.data());
    }
  }
  st.SetBytesProcessed(int64_t(st.iterations()) * int64_t(n * dim * 4));
  st.SetLabel(simd::active_target());
}
BENCHMARK_CAPTURE(BM_FirstScanBlock, norms_then_dots, FirstScan::kNormsThenDots)->Arg(0)->Arg(1);
BENCHMARK_CAPTURE(BM_FirstScanBlock, dots_sumsq, FirstScan::kDotsSumSq)->Arg(0)->Arg(1);
BENCHMARK_CAPTURE(BM_FirstScanBlock, dots, FirstScan::kDots)->Arg(0)->Arg(1);
BENCHMARK_CAPTURE(BM_FirstScanBlock, read, FirstScan::kRead)->Arg(0)->Arg(1);

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
