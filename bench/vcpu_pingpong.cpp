// vcpu_pingpong: how far apart two CPUs are for cache-line traffic, right now.
//
// Two threads, pinned to two CPUs, hand one cache line back and forth (each waits for the
// other's store, then stores). The time per hand-over is what a Hogwild trainer pays when a row
// it is about to write was last written by the other thread. On the 2-vCPU VMs this project is
// measured on, the hypervisor moves the vCPUs every few seconds to minutes: about 30-95 ns when
// they share a cache, 200-260 ns when they do not, and word2vec's 2-thread speed-up follows it
// (bench/RESULTS.md, "## training"). compare_train.py runs this before and after each 2-thread
// scaling run so that each round can be told apart by where the vCPUs were.
//
//   vcpu_pingpong                    # one-way hand-over in ns between the first two CPUs
//   vcpu_pingpong --cpus 0,1 --round-trips 100000 --json
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

int usage(const char* msg) {
  if (msg) std::fprintf(stderr, "vcpu_pingpong: %s\n", msg);
  std::fprintf(msg ? stderr : stdout,
               "Usage: vcpu_pingpong [--cpus A,B] [--round-trips N] [--json]\n"
               "Prints the one-way cache-line hand-over time in ns between CPUs A and B\n"
               "(default: the first two CPUs this process may run on; N default 200000).\n"
               "Example: vcpu_pingpong --cpus 0,1 --json\n");
  return msg ? 2 : 0;
}

bool pin(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  return pthread_setaffinity_np(pthread_self(), sizeof s, &s) == 0;
}

bool parse_uint(const char* s, unsigned long max, unsigned long& out) {
  char* end = nullptr;
  errno = 0;
  const unsigned long v = std::strtoul(s, &end, 10);
  if (errno || end == s || *end || v > max || s[0] == '-') return false;
  out = v;
  return true;
}

alignas(64) std::atomic<unsigned long> g_line{0};

}  // namespace

int main(int argc, char** argv) {
  long cpu_a = -1, cpu_b = -1;
  unsigned long trips = 200000;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") return usage(nullptr);
    if (a == "--json") {
      json = true;
    } else if (a == "--round-trips" && i + 1 < argc) {
      if (!parse_uint(argv[++i], 100000000, trips) || trips == 0)
        return usage("--round-trips must be an integer in [1, 100000000]");
    } else if (a == "--cpus" && i + 1 < argc) {
      const std::string v = argv[++i];
      const size_t comma = v.find(',');
      unsigned long x, y;
      if (comma == std::string::npos ||
          !parse_uint(v.substr(0, comma).c_str(), CPU_SETSIZE - 1, x) ||
          !parse_uint(v.substr(comma + 1).c_str(), CPU_SETSIZE - 1, y) || x == y)
        return usage(("--cpus wants two different CPU numbers A,B below " +
                      std::to_string(CPU_SETSIZE) + ", got '" + v + "'")
                         .c_str());
      cpu_a = long(x), cpu_b = long(y);
    } else {
      return usage(("unknown or incomplete argument '" + a + "'").c_str());
    }
  }
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return usage("sched_getaffinity failed");
  if (cpu_a >= 0) {
    // Checked before any thread starts: a thread that cannot be pinned would measure nothing.
    for (long c : {cpu_a, cpu_b})
      if (!CPU_ISSET(int(c), &allowed)) {
        std::fprintf(stderr,
                     "vcpu_pingpong: CPU %ld is not one this process may run on (%d allowed)\n", c,
                     CPU_COUNT(&allowed));
        return 2;
      }
  } else {
    const cpu_set_t& s = allowed;
    for (int c = 0; c < CPU_SETSIZE && cpu_b < 0; ++c)
      if (CPU_ISSET(c, &s)) (cpu_a < 0 ? cpu_a : cpu_b) = c;
    if (cpu_b < 0) return usage("this process may run on only one CPU; nothing to measure");
  }
  bool pinned_b = true;
  std::thread other([&] {
    pinned_b = pin(int(cpu_b));
    for (unsigned long i = 0; i < trips; ++i) {
      while (g_line.load(std::memory_order_acquire) != 2 * i + 1) {
      }
      g_line.store(2 * i + 2, std::memory_order_release);
    }
  });
  if (!pin(int(cpu_a))) {
    std::fprintf(stderr, "vcpu_pingpong: cannot pin to CPU %ld\n", cpu_a);
    std::exit(2);  // the other thread spins forever; exit without joining it
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (unsigned long i = 0; i < trips; ++i) {
    g_line.store(2 * i + 1, std::memory_order_release);
    while (g_line.load(std::memory_order_acquire) != 2 * i + 2) {
    }
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  other.join();
  if (!pinned_b) {
    std::fprintf(stderr, "vcpu_pingpong: cannot pin to CPU %ld\n", cpu_b);
    return 2;
  }
  const double ns = s / double(trips) / 2 * 1e9;
  if (json)
    std::printf("{\"cpus\": [%ld, %ld], \"round_trips\": %lu, \"one_way_ns\": %.1f}\n", cpu_a,
                cpu_b, trips, ns);
  else
    std::printf("%.1f\n", ns);
  return 0;
}
