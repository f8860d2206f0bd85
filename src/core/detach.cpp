#include "embedscope/core/detach.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <iostream>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ES_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(undefined_behavior_sanitizer)
#define ES_SANITIZED 1
#endif
#endif

namespace embedscope {
namespace {

std::atomic<bool> g_detached{false};

// The parent's side: the child's status byte, or its fate when it died without one.
[[noreturn]] void wait_for_child(pid_t child, int status_fd) {
  unsigned char code = 0;
  ssize_t n;
  do n = ::read(status_fd, &code, 1);
  while (n < 0 && errno == EINTR);
  if (n == 1) ::_exit(code);
  int st = 0;
  while (::waitpid(child, &st, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(st)) {
    const int sig = WTERMSIG(st);
    std::signal(sig, SIG_DFL);
    ::raise(sig);
    ::_exit(128 + sig);  // a signal this process cannot die of
  }
  ::_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
}

}  // namespace

bool in_detached_child() { return g_detached.load(std::memory_order_relaxed); }

int run_detached(const std::function<int()>& fn, bool allowed) {
#ifdef ES_SANITIZED
  allowed = false;
#endif
  if (!allowed) return fn();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return fn();
  std::fflush(nullptr);  // nothing buffered may be written twice
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return fn();
  }
  if (child > 0) {
    ::close(fds[1]);
    wait_for_child(child, fds[0]);
  }
  ::close(fds[0]);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(1);  // the parent died before prctl took effect
  g_detached.store(true, std::memory_order_relaxed);
  const int code = fn();
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  if (const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC); null >= 0) {
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
    ::close(null);
  }
  ::prctl(PR_SET_PDEATHSIG, 0);  // the parent's exit now is the plan, not a reason to stop
  const auto byte = static_cast<unsigned char>(code);
  while (::write(fds[1], &byte, 1) < 0 && errno == EINTR) {
  }
  ::close(fds[1]);
  return code;
}

}  // namespace embedscope
