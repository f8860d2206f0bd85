// Replays inputs through a fuzz target's LLVMFuzzerTestOneInput without libFuzzer, so normal
// (and sanitizer) builds run every seed in ctest.
//
//   fuzz_npy_replay DIR_OR_FILE...
//
// Inputs: every file under the arguments (recursively), every prefix of each file up to 512
// bytes (truncations are the commonest corruption), each file with one byte flipped at every
// offset below 512, and a few fixed inputs (empty, 1 KB of 0x00 / 0xff / pseudo-random bytes).
//
// Memory bound (docs/reliability.md 6.0 G1, issue 2 "a 1 KB file never makes the process allocate
// more than a few MB"): operator new is replaced to track live heap bytes; the peak above the
// live bytes before each input must stay under kFixedBudget + kPerInputByte x input size.
// Exit status: 0 when every input ran within budget, 1 otherwise (a crash or an escaped
// exception ends the process non-zero by itself).
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <new>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::atomic<int64_t> g_live{0};
std::atomic<int64_t> g_peak{0};

void* counted_alloc(size_t n, size_t align) {
  if (n == 0) n = 1;
  void* p = align > alignof(std::max_align_t)
                ? std::aligned_alloc(align, (n + align - 1) / align * align)
                : std::malloc(n);
  if (!p) throw std::bad_alloc();
  int64_t now = g_live += int64_t(malloc_usable_size(p));
  int64_t peak = g_peak.load();
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
  }
  return p;
}

void counted_free(void* p) {
  if (!p) return;
  g_live -= int64_t(malloc_usable_size(p));
  std::free(p);
}

constexpr int64_t kFixedBudget = 4 << 20;  // 4 MiB for any input
constexpr int64_t kPerInputByte = 16;      // parse trees and copies grow with the input
constexpr size_t kMutateBytes = 512;

struct Stats {
  size_t runs = 0, over = 0;
  int64_t worst = 0;
  std::string worst_name;
};

void run_one(const std::vector<uint8_t>& in, const std::string& name, Stats& st) {
  int64_t base = g_live.load();
  g_peak = base;
  LLVMFuzzerTestOneInput(in.data(), in.size());
  int64_t used = g_peak.load() - base;
  ++st.runs;
  if (used > st.worst) {
    st.worst = used;
    st.worst_name = name;
  }
  if (used > kFixedBudget + kPerInputByte * int64_t(in.size())) {
    ++st.over;
    std::fprintf(stderr, "MEMORY: %s (%zu bytes) made the target allocate %lld bytes\n",
                 name.c_str(), in.size(), static_cast<long long>(used));
  }
}

std::vector<uint8_t> read_all(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

}  // namespace

void* operator new(size_t n) { return counted_alloc(n, 0); }
void* operator new[](size_t n) { return counted_alloc(n, 0); }
void* operator new(size_t n, std::align_val_t a) { return counted_alloc(n, size_t(a)); }
void* operator new[](size_t n, std::align_val_t a) { return counted_alloc(n, size_t(a)); }
// The nothrow forms too (std::stable_sort's temporary buffer uses them): otherwise they come from
// the runtime's allocator and our operator delete would free() what it did not malloc().
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(n, 0);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(n, size_t(a));
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t& t) noexcept {
  return operator new(n, a, t);
}
void operator delete(void* p, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  counted_free(p);
}
void operator delete(void* p) noexcept { counted_free(p); }
void operator delete[](void* p) noexcept { counted_free(p); }
void operator delete(void* p, size_t) noexcept { counted_free(p); }
void operator delete[](void* p, size_t) noexcept { counted_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { counted_free(p); }

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    fs::path a = argv[i];
    if (fs::is_directory(a)) {
      for (const auto& e : fs::recursive_directory_iterator(a))
        if (e.is_regular_file()) files.push_back(e.path());
    } else if (fs::is_regular_file(a)) {
      files.push_back(a);
    } else {
      std::fprintf(stderr, "replay: %s is neither a file nor a folder\n", argv[i]);
      return 1;
    }
  }
  std::sort(files.begin(), files.end());
  Stats st;
  run_one({}, "<empty>", st);
  run_one(std::vector<uint8_t>(1024, 0x00), "<1 KB of 0x00>", st);
  run_one(std::vector<uint8_t>(1024, 0xff), "<1 KB of 0xff>", st);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (int k = 0; k < 16; ++k) {
    std::vector<uint8_t> r(1024);
    for (auto& b : r) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      b = uint8_t(x);
    }
    run_one(r, "<1 KB random #" + std::to_string(k) + ">", st);
  }
  for (const auto& f : files) {
    std::vector<uint8_t> in = read_all(f);
    run_one(in, f.string(), st);
    size_t lim = std::min(in.size(), kMutateBytes);
    for (size_t n = 0; n < lim; ++n)
      run_one(std::vector<uint8_t>(in.begin(), in.begin() + n),
              f.string() + " [:" + std::to_string(n) + "]", st);
    for (size_t i = 0; i < lim; ++i) {
      std::vector<uint8_t> m = in;
      m[i] ^= 0xff;
      run_one(m, f.string() + " [byte " + std::to_string(i) + " flipped]", st);
    }
  }
  std::printf("replayed %zu inputs from %zu files; largest allocation peak %lld bytes (%s)\n",
              st.runs, files.size(), static_cast<long long>(st.worst), st.worst_name.c_str());
  if (files.empty()) std::printf("note: no seed files given, fixed inputs only\n");
  return st.over ? 1 : 0;
}
