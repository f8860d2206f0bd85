// The shared thread pool and parallel_for.
//
// One pool serves the whole process: process_pool(), process_threads() threads (the calling
// thread counts as one), created on first use and sized once: front ends call
// set_process_threads() from --threads (the CLI, the server, the Python module) before any
// work runs. Library code runs its parallel loops on it; no operation starts threads of its own
// (the word2vec trainer keeps a private pool: its threads meet at a barrier, which needs them
// all running at once, see train/word2vec.h).
//
// Work is split into tasks. parallel_for(n_items, fn, n_tasks) cuts [0, n_items) into n_tasks
// contiguous chunks (n_tasks defaults to size()) and calls fn(begin, end, task) once per
// non-empty chunk; results merged by task index are deterministic, whichever thread ran which
// task. A task index is held by one thread at a time, so per-task scratch (indexed by `task`)
// needs no lock. Task 0 always runs on the calling thread (a progress callback reported from
// task 0 never runs on a worker). An exception thrown by any task is captured and rethrown in the
// caller (the lowest task's) after every task finished.
//
// Concurrency: parallel_for and run_on_all may be called from many threads at once and from
// inside a task (nested). Calls queue their tasks; idle workers take tasks from the oldest
// call first, and every caller runs its own call's unclaimed tasks itself. A caller therefore
// never waits for a task that nobody runs, and nested calls cannot deadlock; a caller only
// ever waits for tasks of its own call that other threads are running. Concurrent calls share
// the size() threads (a busy server answers N requests on about size() + N threads' worth of
// callers, not N x size()).
//
// Idle workers spin for about a millisecond (with the CPU's pause hint) before they sleep, and
// so does a caller waiting for them: on virtual machines waking a halted virtual CPU through
// the kernel costs about a millisecond, as much as a whole exact search over GPT-2's matrix takes
// on one thread's share of the rows. Back-to-back jobs (queries, batches, segments) therefore
// start at once; a pool left idle costs nothing after the spin.
//
// Workers start on distinct CPUs: worker i moves itself once to the i-th CPU after its
// creator's (in the creator's affinity mask, wrapping), then allows every CPU of the mask again,
// a starting place and not a pin. Left to itself, the kernel places a new thread by load
// averages that lag by tens of ms, and may put it on its creator's busy CPU: both then run at
// one thread's pace until the load balancer moves one, milliseconds later, which is the whole
// of a one-shot search.
//
//   set_process_threads(2);                          // once, at start-up (optional)
//   process_pool().parallel_for(n_rows, [&](size_t begin, size_t end, size_t task) { ... });
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace embedscope {

// The process-wide thread count: what n_threads == 0 means everywhere in the library (pools,
// searchers, readers, the trainer), and the size of process_pool(). Defaults to
// std::thread::hardware_concurrency().
size_t process_threads();
// Sets process_threads() (0 = all cores). Before process_pool() is first used, any n is taken.
// After, the pool's threads are fixed: an n that resolves to the pool's size is a no-op, any
// other throws Error(kInvalidArgument) naming both counts (tasks may be running on the pool).
void set_process_threads(size_t n);

class ThreadPool;
// The process-wide pool (process_threads() threads), created on first use and never destroyed
// (a request thread may still be inside it while the process exits).
ThreadPool& process_pool();

class ThreadPool {
 public:
  // n_threads == 0 means process_threads(). Starts n_threads - 1 workers.
  explicit ThreadPool(size_t n_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  size_t size() const { return n_threads_; }

  using RangeFn = std::function<void(size_t begin, size_t end, size_t task)>;
  // Calls fn on the non-empty ones of n_tasks (0 = size()) contiguous chunks covering
  // [0, n_items): chunk t is [n_items * t / n_tasks, n_items * (t + 1) / n_tasks).
  void parallel_for(size_t n_items, const RangeFn& fn, size_t n_tasks = 0);
  // Runs fn(task) once for each task in [0, n_tasks) (0 = size()). On a pool no one else is
  // using, the n_tasks <= size() tasks run at the same time, one per thread.
  void run_on_all(const std::function<void(size_t task)>& fn, size_t n_tasks = 0);

 private:
  struct Job;
  void worker_loop();
  void run_task(Job& job, size_t task);
  size_t n_threads_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  std::deque<Job*> open_;          // calls with tasks nobody claimed yet, oldest first
  std::atomic<size_t> n_open_{0};  // open_.size(), read without mu_ by spinning workers
  std::atomic<bool> stop_{false};
};

}  // namespace embedscope
