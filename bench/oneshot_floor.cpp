// The least a fresh process can take to answer a one-shot exact query over a table file, on this
// machine and this page cache: start, map the file as embedscope does (read-only, private),
// read every byte once on T threads through the scan's own loads (simd::sum_rows_f32, dot_rows
// without the multiply), exit. No parsing, no scoring, no output but one line.
//
// Why it exists: the "floor" of a resident array (a warm read of memory that is already mapped)
// leaves out what every fresh process pays: exec and dynamic loading, and building the page
// tables of a 1-2 GB mapping. bench/oneshot_bench.py runs this beside embedscope and torch, so
// the distance of a one-shot query from what is physically required is measured, not guessed.
//
//   oneshot_floor /tmp/embedscope-oneshot/t1600000x300.npy --threads 2
//   -> read 1920000128 bytes on 2 threads in 48.3 ms (sum 1.2e+04)
//
// Exit status: 0, or 2 with a message for bad arguments or an unreadable file.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "simd/dot_kernels.h"

namespace {

int usage_error(const std::string& m) {
  std::fprintf(stderr, "oneshot_floor: %s (see --help)\n", m.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const char* path = nullptr;
  long threads = 2;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf(
          "usage: oneshot_floor FILE [--threads T]\n"
          "Maps FILE and reads every byte once on T threads (default 2, at most 256), as the\n"
          "least a fresh process answering an exact query over it can do.\n"
          "Example: oneshot_floor /tmp/embedscope-oneshot/t1600000x300.npy --threads 2\n");
      return 0;
    }
    if (a == "--threads" && i + 1 < argc) {
      char* end = nullptr;
      threads = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || threads < 1 || threads > 256)
        return usage_error(std::string("--threads must be an integer in [1, 256], got '") +
                           argv[i] + "'");
    } else if (!path && a.rfind("--", 0) != 0) {
      path = argv[i];
    } else {
      return usage_error("unknown or incomplete argument '" + a + "'");
    }
  }
  if (!path) return usage_error("give a FILE");
  const auto t0 = std::chrono::steady_clock::now();
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 4)
    return usage_error(std::string(path) + ": not a readable file of at least 4 bytes" +
                       (fd < 0 ? std::string(": ") + std::strerror(errno) : std::string()));
  const size_t bytes = size_t(st.st_size);
  void* p = ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) return usage_error(std::string(path) + ": cannot mmap");
  // Rows of 1024 floats (the row shape does not change what is read); each thread takes one
  // contiguous share, as ranges of rows, plus the last partial row read by thread 0.
  const auto* f = static_cast<const float*>(p);
  const size_t n_floats = bytes / 4, width = 1024, rows = n_floats / width;
  std::vector<float> sums(size_t(threads), 0.0f);
  std::vector<std::thread> pool;
  for (long t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      const size_t b = rows * size_t(t) / size_t(threads),
                   e = rows * size_t(t + 1) / size_t(threads);
      float out[64];
      for (size_t i = b; i < e; i += 64) {
        const size_t m = std::min<size_t>(64, e - i);
        embedscope::simd::sum_rows_f32(f + i * width, m, width, out);
        for (size_t k = 0; k < m; ++k) sums[size_t(t)] += out[k];
      }
      if (t == 0 && rows * width < n_floats) {
        embedscope::simd::sum_rows_f32(f + rows * width, 1, n_floats - rows * width, out);
        sums[0] += out[0];
      }
    });
  for (auto& th : pool) th.join();
  float total = 0;
  for (float s : sums) total += s;
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("read %zu bytes on %ld threads in %.1f ms (sum %.3g)\n", bytes, threads, ms,
              double(total));
  return 0;
}
