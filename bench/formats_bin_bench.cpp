// Load times of the binary embedding readers on a GPT-2-sized matrix (50257 x 768 F32, 154 MB),
// file in page cache: safetensors (zero copy: parse + validate + view), npy (same), and the same
// followed by the row norms that `embedscope info` reports (touches every byte once).
// Side by side with numpy.load / torch: bench/compare_formats_bin.py. Single-threaded.
//
//   build/bin/formats_bin_bench [--benchmark_filter=Safetensors]
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <random>

#include "embedscope/formats/npy.h"
#include "embedscope/formats/safetensors.h"

namespace {

using namespace embedscope;

constexpr size_t kRows = 50257, kDim = 768;

const std::string& bench_dir() {
  static const std::string dir = [] {
    const char* t = std::getenv("TMPDIR");
    std::string d = std::string(t ? t : "/tmp") + "/embedscope_formats_bin_bench";
    std::filesystem::create_directories(d);
    std::vector<float> v(kRows * kDim);
    std::mt19937 rng(1);
    std::normal_distribution<float> nd(0.f, 0.02f);
    for (float& x : v) x = nd(rng);
    auto table = EmbeddingTable::from_f32(kRows, kDim, std::move(v));
    SaveOptions o;
    o.tensor = "wte";
    save_safetensors_embeddings(d + "/wte.safetensors", table, nullptr, o);
    save_npy(d + "/wte.npy", table);
    return d;
  }();
  return dir;
}

void BM_SafetensorsLoad(benchmark::State& state) {
  const std::string path = bench_dir() + "/wte.safetensors";
  for (auto _ : state) {
    auto e = load_safetensors_embeddings(path, {});
    benchmark::DoNotOptimize(e.table.data());
  }
}

void BM_SafetensorsLoadAndNorms(benchmark::State& state) {
  const std::string path = bench_dir() + "/wte.safetensors";
  for (auto _ : state) {
    auto e = load_safetensors_embeddings(path, {});
    benchmark::DoNotOptimize(e.table.norms().data());
  }
}

void BM_NpyLoad(benchmark::State& state) {
  const std::string path = bench_dir() + "/wte.npy";
  for (auto _ : state) {
    auto e = load_npy(path, {});
    benchmark::DoNotOptimize(e.table.data());
  }
}

void BM_NpyLoadAndNorms(benchmark::State& state) {
  const std::string path = bench_dir() + "/wte.npy";
  for (auto _ : state) {
    auto e = load_npy(path, {});
    benchmark::DoNotOptimize(e.table.norms().data());
  }
}

BENCHMARK(BM_SafetensorsLoad)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SafetensorsLoadAndNorms)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_NpyLoad)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_NpyLoadAndNorms)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::AddCustomContext("threads", "1");
  benchmark::AddCustomContext("simd", "none (scalar norms in core)");
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
