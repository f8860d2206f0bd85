#include "embedscope/core/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <string>

#include "embedscope/core/error.h"
#include "embedscope/core/spin_wait.h"

namespace embedscope {

namespace {
std::atomic<size_t> g_process_threads{0};
std::mutex g_pool_mu;
std::atomic<ThreadPool*> g_pool{nullptr};

size_t resolve_threads(size_t n) {
  return n ? n : std::max(1u, std::thread::hardware_concurrency());
}
}  // namespace

size_t process_threads() {
  return resolve_threads(g_process_threads.load(std::memory_order_relaxed));
}

void set_process_threads(size_t n) {
  std::lock_guard<std::mutex> lock(g_pool_mu);
  if (ThreadPool* p = g_pool.load(std::memory_order_acquire)) {
    if (resolve_threads(n) == p->size()) return;
    throw Error(ErrorCode::kInvalidArgument,
                "threads: the process thread pool already runs " + std::to_string(p->size()) +
                    " threads; " + std::to_string(resolve_threads(n)) +
                    " must be set before the first parallel operation");
  }
  g_process_threads.store(n, std::memory_order_relaxed);
}

ThreadPool& process_pool() {
  if (ThreadPool* p = g_pool.load(std::memory_order_acquire)) return *p;
  std::lock_guard<std::mutex> lock(g_pool_mu);
  if (ThreadPool* p = g_pool.load(std::memory_order_acquire)) return *p;
  auto* p = new ThreadPool(process_threads());  // never deleted: see thread_pool.h
  g_pool.store(p, std::memory_order_release);
  return *p;
}

// One parallel_for / run_on_all call, on its caller's stack. Tasks are claimed through `next`
// (by the caller without mu_, by workers under mu_, so a worker never sees a finished call);
// `remaining` counts tasks not yet finished and the caller returns only at zero.
struct ThreadPool::Job {
  const std::function<void(size_t)>* fn = nullptr;
  size_t n_tasks = 0;
  std::atomic<size_t> next{0};
  std::atomic<size_t> remaining{0};
  std::vector<std::exception_ptr> errors;
};

namespace {

#ifdef __linux__
// The CPUs this thread may run on, in order, the calling thread's own first (empty when unknown
// or only one): worker i starts on entry i % size.
std::vector<int> placement_order(cpu_set_t* allowed) {
  CPU_ZERO(allowed);
  if (::sched_getaffinity(0, sizeof *allowed, allowed) != 0 || CPU_COUNT(allowed) < 2) return {};
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, allowed)) cpus.push_back(c);
  const auto here = std::find(cpus.begin(), cpus.end(), ::sched_getcpu());
  if (here != cpus.end()) std::rotate(cpus.begin(), here, cpus.end());
  return cpus;
}

// Moves the calling thread to `cpu`, then allows it every CPU of `allowed` again: a starting
// place, not a pin (the kernel balances it as any thread from there). Best effort.
void start_on(int cpu, const cpu_set_t& allowed) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (::sched_setaffinity(0, sizeof one, &one) == 0)
    ::sched_setaffinity(0, sizeof allowed, &allowed);
}
#endif

}  // namespace

ThreadPool::ThreadPool(size_t n_threads) {
  if (n_threads == 0) n_threads = process_threads();
  n_threads_ = n_threads;
#ifdef __linux__
  cpu_set_t allowed;
  const std::vector<int> order = placement_order(&allowed);
  for (size_t i = 1; i < n_threads_; ++i) {
    const int cpu = order.empty() ? -1 : order[i % order.size()];
    workers_.emplace_back([this, cpu, allowed] {
      if (cpu >= 0) start_on(cpu, allowed);
      worker_loop();
    });
  }
#else
  for (size_t i = 1; i < n_threads_; ++i) workers_.emplace_back([this] { worker_loop(); });
#endif
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run_task(Job& job, size_t task) {
  try {
    (*job.fn)(task);
  } catch (...) {
    job.errors[task] = std::current_exception();
  }
  // The caller may return (and free `job`) as soon as remaining reaches zero: touch only the
  // pool after the decrement. Notifying under mu_ pairs with the caller's wait below.
  if (job.remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    std::lock_guard<std::mutex> lock(mu_);
    done_cv_.notify_all();
  }
}

void ThreadPool::worker_loop() {
  for (;;) {
    spin_until([&] {
      return stop_.load(std::memory_order_acquire) || n_open_.load(std::memory_order_acquire) != 0;
    });
    Job* job = nullptr;
    size_t task = 0;
    {
      std::unique_lock<std::mutex> lock(mu_);
      while (job == nullptr) {
        cv_.wait(lock, [&] { return stop_ || !open_.empty(); });
        if (stop_) return;
        Job* front = open_.front();
        task = front->next.fetch_add(1, std::memory_order_relaxed);
        if (task + 1 >= front->n_tasks) {  // the last task (or none left): close the call
          open_.pop_front();
          n_open_.store(open_.size(), std::memory_order_release);
        }
        if (task < front->n_tasks) job = front;
      }
    }
    run_task(*job, task);
  }
}

void ThreadPool::run_on_all(const std::function<void(size_t)>& fn, size_t n_tasks) {
  if (n_tasks == 0) n_tasks = n_threads_;
  Job job;
  job.fn = &fn;
  job.n_tasks = n_tasks;
  job.remaining.store(n_tasks, std::memory_order_relaxed);
  job.next.store(1, std::memory_order_relaxed);  // task 0 is the caller's (thread_pool.h)
  job.errors.resize(n_tasks);
  const bool shared = n_threads_ > 1 && n_tasks > 1;
  if (shared) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_.push_back(&job);
      n_open_.store(open_.size(), std::memory_order_release);
    }
    if (n_tasks - 1 >= workers_.size())
      cv_.notify_all();
    else
      for (size_t i = 1; i < n_tasks; ++i) cv_.notify_one();
  }
  // The caller runs task 0, then every task nobody else has claimed: its own call never waits
  // on a queue.
  run_task(job, 0);
  for (size_t t; (t = job.next.fetch_add(1, std::memory_order_relaxed)) < n_tasks;)
    run_task(job, t);
  if (shared) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = std::find(open_.begin(), open_.end(), &job);
      if (it != open_.end()) {
        open_.erase(it);
        n_open_.store(open_.size(), std::memory_order_release);
      }
    }
    spin_until([&] { return job.remaining.load(std::memory_order_acquire) == 0; });
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [&] { return job.remaining.load(std::memory_order_acquire) == 0; });
  }
  for (auto& e : job.errors)
    if (e) std::rethrow_exception(e);
}

void ThreadPool::parallel_for(size_t n_items, const RangeFn& fn, size_t n_tasks) {
  if (n_tasks == 0) n_tasks = n_threads_;
  if (n_items == 0) return;
  if (n_tasks == 1 || n_items == 1) {
    fn(0, n_items, 0);
    return;
  }
  run_on_all(
      [&](size_t t) {
        size_t begin = n_items * t / n_tasks, end = n_items * (t + 1) / n_tasks;
        if (begin < end) fn(begin, end, t);
      },
      n_tasks);
}

}  // namespace embedscope
