#include "embedscope/core/thread_pool.h"

#include <algorithm>

#include "embedscope/core/spin_wait.h"

namespace embedscope {

namespace {
std::atomic<size_t> g_process_threads{0};
}

size_t process_threads() {
  size_t n = g_process_threads.load(std::memory_order_relaxed);
  return n ? n : std::max(1u, std::thread::hardware_concurrency());
}

void set_process_threads(size_t n) { g_process_threads.store(n, std::memory_order_relaxed); }

ThreadPool::ThreadPool(size_t n_threads) {
  if (n_threads == 0) n_threads = process_threads();
  n_threads_ = n_threads;
  errors_.resize(n_threads_);
  for (size_t i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::worker_loop(size_t id) {
  size_t seen = 0;
  for (;;) {
    const std::function<void(size_t)>* job;
    spin_until([&] {
      return stop_.load(std::memory_order_acquire) ||
             generation_.load(std::memory_order_acquire) != seen;
    });
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
    }
    try {
      (*job)(id);
    } catch (...) {
      errors_[id] = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) done_cv_.notify_one();
    }
  }
}

void ThreadPool::run_on_all(const std::function<void(size_t)>& fn) {
  std::fill(errors_.begin(), errors_.end(), nullptr);
  if (n_threads_ > 1) {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = &fn;
    pending_ = n_threads_ - 1;
    ++generation_;
  }
  cv_.notify_all();
  try {
    fn(0);
  } catch (...) {
    errors_[0] = std::current_exception();
  }
  if (n_threads_ > 1) {
    spin_until([&] { return pending_.load(std::memory_order_acquire) == 0; });
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [&] { return pending_.load(std::memory_order_acquire) == 0; });
    job_ = nullptr;
  }
  for (auto& e : errors_)
    if (e) std::rethrow_exception(e);
}

void ThreadPool::parallel_for(size_t n_items, const RangeFn& fn) {
  size_t n = n_threads_;
  if (n_items == 0) return;
  if (n == 1 || n_items == 1) {
    fn(0, n_items, 0);
    return;
  }
  run_on_all([&](size_t t) {
    size_t begin = n_items * t / n, end = n_items * (t + 1) / n;
    if (begin < end) fn(begin, end, t);
  });
}

}  // namespace embedscope
