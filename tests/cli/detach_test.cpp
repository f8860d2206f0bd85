// The CLI's detached exit (core/detach.h) as a caller sees it: the process a shell waits for is
// the parent, the work runs in its child. Killing the parent stops the work; a child killed by a
// signal makes the parent die of that signal; exit codes and output pass through. Sanitizer
// builds run the work in the process itself (no child), and these tests check that instead.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kDetaches = false;
#else
constexpr bool kDetaches = true;
#endif

namespace embedscope {
namespace {

using test::TempDir;

// `embedscope neighbors TABLE --batch FIFO` with output to /dev/null: it blocks opening the
// FIFO, which nobody writes.
pid_t start_waiting_query(const TempDir& dir, const std::string& table) {
  const std::string fifo = dir.file("queries.fifo");
  EXPECT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string cli = test::cli_path();
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, STDIN_FILENO);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
    ::execl(cli.c_str(), cli.c_str(), "neighbors", table.c_str(), "--batch", fifo.c_str(), nullptr);
    ::_exit(127);
  }
  return pid;
}

// The children of pid (Linux /proc/PID/task/PID/children), waiting up to 10 s for `want` of them.
std::vector<pid_t> children(pid_t pid, size_t want) {
  std::vector<pid_t> out;
  for (int i = 0; i < 1000; ++i) {
    out.clear();
    std::ifstream f("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
    for (pid_t c; f >> c;) out.push_back(c);
    if (out.size() >= want) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return out;
}

bool gone(pid_t pid) {  // no such process, or a zombie nobody reaped yet
  for (int i = 0; i < 1000; ++i) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string stat;
    if (!std::getline(f, stat)) return true;
    const size_t close = stat.rfind(')');
    if (close != std::string::npos && stat.size() > close + 2 && stat[close + 2] == 'Z')
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

std::string small_table(const TempDir& dir) {
  const std::string path = dir.path() + "/t.txt";
  test::write_file(path, "3 2\na 1 0\nb 0 1\nc 1 1\n");
  return path;
}

TEST(CliDetach, KillingTheParentStopsTheWork) {
  TempDir dir;
  const pid_t pid = start_waiting_query(dir, small_table(dir));
  // The parent waits for its child's status; the child waits on the FIFO.
  const std::vector<pid_t> kids = children(pid, kDetaches ? 1 : 0);
  ASSERT_EQ(kids.size(), kDetaches ? 1u : 0u);
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  int st = 0;
  ASSERT_EQ(::waitpid(pid, &st, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM) << st;
  for (pid_t c : kids) EXPECT_TRUE(gone(c)) << "child " << c << " outlived its parent";
}

// (Without a child, the signal goes to the process itself: the same status.)
TEST(CliDetach, AChildKilledByASignalKillsTheParentWithIt) {
  TempDir dir;
  const pid_t pid = start_waiting_query(dir, small_table(dir));
  const std::vector<pid_t> kids = children(pid, kDetaches ? 1 : 0);
  if (kDetaches) {
    ASSERT_EQ(kids.size(), 1u);
    ASSERT_EQ(::kill(kids[0], SIGUSR1), 0);
  } else {
    ASSERT_EQ(::kill(pid, SIGUSR1), 0);
  }
  int st = 0;
  ASSERT_EQ(::waitpid(pid, &st, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGUSR1) << st;
}

TEST(CliDetach, ExitCodesAndOutputPassThrough) {
  TempDir dir;
  const std::string table = small_table(dir);
  test::write_file(dir.path() + "/q.txt", "a\n");
  auto ok =
      test::run(test::shell_quote(test::cli_path()) + " neighbors " + test::shell_quote(table) +
                " --batch " + test::shell_quote(dir.path() + "/q.txt") + " -k 1 --json");
  EXPECT_EQ(ok.rc, 0) << ok.err;
  EXPECT_NE(ok.out.find("\"token\":\"c\""), std::string::npos) << ok.out;  // cos(a, c) = 0.71
  auto bad = test::run(test::shell_quote(test::cli_path()) + " neighbors " +
                       test::shell_quote(table) + " zzz");
  EXPECT_EQ(bad.rc, 3) << bad.err;  // kExitNotFound: the word is not in the vocabulary
  EXPECT_NE(bad.err.find("zzz"), std::string::npos) << bad.err;
  // A closed pipe: the child dies of SIGPIPE, or stops writing; the shell sees no hang.
  auto head =
      test::run("yes a | head -200 > " + test::shell_quote(dir.path() + "/many.txt") + " && " +
                test::shell_quote(test::cli_path()) + " neighbors " + test::shell_quote(table) +
                " --batch " + test::shell_quote(dir.path() + "/many.txt") + " -k 2 | head -c 1");
  EXPECT_EQ(head.out.size(), 1u);
}

}  // namespace
}  // namespace embedscope
