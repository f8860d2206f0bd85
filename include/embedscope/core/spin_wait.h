// Busy-waiting for short waits between threads, polite to a shared machine.
//
// On virtual machines waking a thread that sleeps in the kernel costs about a millisecond (the
// virtual CPU has to be un-halted), as long as a whole search over GPT-2's matrix on one
// thread's share of the rows, or the tail of a training segment. Threads that expect to wait less
// than that poll instead, with the CPU's pause hint, and every 256 polls yield, so a poller hands
// its core to a runnable thread (more threads than cores, a busy machine) instead of holding it.
// Used by the thread pool (idle workers, the caller waiting for a job) and by the word2vec
// trainer's barrier between segments.
#pragma once

#include <chrono>
#include <cstdint>
#include <thread>

namespace embedscope {

// About 1 ms of polling on current x86 cores (pause is ~40-140 cycles).
inline constexpr uint32_t kSpinPolls = 1u << 15;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Polls done() up to `polls` times; true as soon as it holds, false if it still does not after
// the last poll. Callers then block on something (a condition variable) or call wait_until.
template <class F>
bool spin_until(F&& done, uint32_t polls = kSpinPolls) {
  for (uint32_t i = 1; i <= polls; ++i) {
    if (done()) return true;
    if (i % 256 == 0)
      std::this_thread::yield();
    else
      cpu_relax();
  }
  return done();
}

// Waits until done() holds with no condition variable to block on: spins as spin_until, then
// checks every 50 microseconds (a slow step, such as a checkpoint written by another thread,
// does not keep a core busy).
template <class F>
void wait_until(F&& done) {
  if (spin_until(done)) return;
  while (!done()) std::this_thread::sleep_for(std::chrono::microseconds(50));
}

}  // namespace embedscope
