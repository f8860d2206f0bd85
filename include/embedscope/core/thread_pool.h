// The shared thread pool and parallel_for.
//
// A ThreadPool owns n-1 worker threads; the calling thread is the n-th worker. parallel_for
// splits [0, n_items) into contiguous chunks, one per thread, so results that are merged by
// thread index are deterministic. An exception thrown by any worker is captured and rethrown
// in the caller after all workers finished. Callers own their pools; how many threads a pool
// of "all cores" means is decided in one place, process_threads(), which front ends set once
// from --threads (the CLI, the server, the Python module).
//
// Idle workers spin for about a millisecond (with the CPU's pause hint) before they sleep, and
// so does the caller waiting for them: on virtual machines waking a halted virtual CPU through
// the kernel costs about a millisecond, as much as a whole exact search over GPT-2's matrix takes
// on one thread's share of the rows. Back-to-back jobs (queries, batches, segments) therefore
// start at once; a pool left idle costs nothing after the spin.
//
//   ThreadPool pool(2);
//   pool.parallel_for(n_rows, [&](size_t begin, size_t end, size_t thread) { ... });
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace embedscope {

// The process-wide thread count: what n_threads == 0 means everywhere in the library (pools,
// searchers, readers, the trainer). Defaults to std::thread::hardware_concurrency(); a front
// end sets it once at start-up (set_process_threads(0) restores the default).
size_t process_threads();
void set_process_threads(size_t n);

class ThreadPool {
 public:
  // n_threads == 0 means process_threads().
  explicit ThreadPool(size_t n_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  size_t size() const { return n_threads_; }

  using RangeFn = std::function<void(size_t begin, size_t end, size_t thread)>;
  // Calls fn on up to size() disjoint contiguous ranges covering [0, n_items); thread ids are
  // 0..size()-1. Not reentrant: do not call parallel_for from inside fn.
  void parallel_for(size_t n_items, const RangeFn& fn);
  // Runs fn(thread) once on each of the size() threads.
  void run_on_all(const std::function<void(size_t thread)>& fn);

 private:
  void worker_loop(size_t id);
  size_t n_threads_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(size_t)>* job_ = nullptr;
  // Written under mu_, read without it by spinning threads.
  std::atomic<size_t> generation_{0}, pending_{0};
  std::atomic<bool> stop_{false};
  std::vector<std::exception_ptr> errors_;
};

}  // namespace embedscope
