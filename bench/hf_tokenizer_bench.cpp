// Single-thread encode throughput and load time of load_tokenizer() (tokenizer.json), the
// figures bench/compare_hf_tokenizers.sh sets beside Hugging Face tokenizers (Rust, via node).
// Not a Google Benchmark: one tokenizer file per run, printed as one JSON line.
//
//   hf_tokenizer_bench TOKENIZER_JSON TEXT_FILE [RUNS=3]
// Times are process CPU time (user + system).
//   -> {"load_ms": mean of RUNS loads, "mb_per_s": best of RUNS line-by-line encodes,
//       "tokens": ..., "repeat_1mb_ms": one call on 1 MB of "a", "threads": 1}
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "embedscope/tokenizer/tokenizer.h"

namespace {
// CPU time of this (single-threaded) process: the box these figures come from is shared, and
// wall time there mostly measures the neighbours.
double now_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: hf_tokenizer_bench TOKENIZER_JSON TEXT_FILE [RUNS=3]\n");
    return 2;
  }
  const int runs = argc > 3 ? std::max(1, std::atoi(argv[3])) : 3;
  std::ifstream in(argv[2], std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  std::vector<std::string_view> lines;
  for (size_t p = 0; p <= text.size();) {
    size_t e = text.find('\n', p);
    if (e == std::string::npos) e = text.size();
    lines.push_back(std::string_view(text).substr(p, e - p));
    p = e + 1;
  }
  try {
    double load = 0;
    std::unique_ptr<embedscope::Tokenizer> tok;
    for (int r = 0; r < runs; ++r) {
      tok.reset();
      double t0 = now_s();
      tok = embedscope::load_tokenizer(argv[1]);
      load += now_s() - t0;
    }
    double best = 1e30;
    size_t tokens = 0;
    for (int r = 0; r < runs; ++r) {
      double t0 = now_s();
      tokens = 0;
      for (std::string_view l : lines) tokens += tok->encode(l).ids.size();
      best = std::min(best, now_s() - t0);
    }
    std::string rep(1 << 20, 'a');
    double t0 = now_s();
    size_t rep_tokens = tok->encode(rep).ids.size();
    double rep_s = now_s() - t0;
    std::printf(
        "{\"load_ms\": %.1f, \"mb_per_s\": %.2f, \"tokens\": %zu, \"repeat_1mb_ms\": %.1f, "
        "\"repeat_tokens\": %zu, \"threads\": 1}\n",
        load / runs * 1e3, double(text.size()) / 1e6 / best, tokens, rep_s * 1e3, rep_tokens);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hf_tokenizer_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
