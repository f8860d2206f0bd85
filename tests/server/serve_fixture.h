// The `Serve` test fixture shared by server_test.cpp (routes) and server_limits_test.cpp (the
// HTTP bad-input cases): the real binary started on an ephemeral loopback port over fixtures
// numpy and gensim write at test time, a raw-socket client, and JSON helpers.
#pragma once
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "test_util.h"

namespace embedscope::serve_test {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

inline double secs_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// A 50257 x 16 GPT-2-shaped table (the tokenizer policy gives it GPT-2's BPE; row 11 is all
// zeros), and a 300 x 16 word2vec text file written by gensim (no tokenizer).
inline const char* kMake = R"PY(
import json, struct, sys, numpy as np
from gensim.models import KeyedVectors
out = sys.argv[1]
rng = np.random.default_rng(7)
W = rng.standard_normal((50257, 16)).astype(np.float32)
W[11] = 0
raw = W.tobytes()
hdr = json.dumps({"wte.weight": {"dtype": "F32", "shape": list(W.shape), "data_offsets": [0, len(raw)]}}).encode()
hdr += b" " * (-len(hdr) % 8)
open(f"{out}/g.safetensors", "wb").write(struct.pack("<Q", len(hdr)) + hdr + raw)
np.save(f"{out}/g.npy", W)
V = rng.standard_normal((300, 16)).astype(np.float32)
kv = KeyedVectors(16)
kv.add_vectors([f"w{i}" for i in range(300)], V)
kv.save_word2vec_format(f"{out}/w.txt", binary=False)
)PY";

// numpy: mean of the given rows, and cosines of means (the oracle for embeddings/similarity).
inline const char* kMeans = R"PY(
import json, sys, numpy as np
W = np.load(sys.argv[1]).astype(np.float64)
lists = json.loads(sys.argv[2])
m = [W[ids].mean(axis=0) for ids in lists]
cos = [float(m[0] @ v / (np.linalg.norm(m[0]) * np.linalg.norm(v))) for v in m[1:]]
print(json.dumps({"means": [v.tolist() for v in m], "cos": cos}))
)PY";

// A running `embedscope serve` process; its stderr is drained by a thread.
class ServerProc {
 public:
  explicit ServerProc(const std::vector<std::string>& args) {
    // Everything the child needs is built before fork(): this process has other threads (the
    // drain threads of running servers), so between fork() and exec() the child may only make
    // async-signal-safe calls. An allocation there can block forever on a lock that another
    // thread held at the fork (seen under ASan: the child never exec'd, the test timed out).
    std::string cli = test::cli_path();
    std::vector<std::string> all{cli, "serve", "--port", "0"};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    int fds[2];
    // Close-on-exec, so that no other child started meanwhile keeps this pipe open (its EOF
    // is how a server that exits at start-up is noticed); dup2 clears the flag on fd 2.
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(fds[1], 2);
      ::execv(cli.c_str(), argv.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    fd_ = fds[0];
    auto t0 = Clock::now();
    std::string line;
    while (port_ == 0 && secs_since(t0) < 120) {
      char c;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 1000) <= 0) continue;
      if (::read(fd_, &c, 1) != 1) break;
      log_ += c;
      if (c != '\n') continue;
      size_t at = log_.rfind("listening on http://127.0.0.1:");
      if (at != std::string::npos) port_ = std::atoi(log_.c_str() + at + 30);
    }
    drain_ = std::thread([this] {
      char buf[4096];
      for (ssize_t n; (n = ::read(fd_, buf, sizeof buf)) > 0;) {
        std::lock_guard<std::mutex> lock(mu_);
        log_.append(buf, size_t(n));
      }
    });
  }
  ~ServerProc() {
    if (pid_ > 0 && !exited_) stop();
    if (drain_.joinable()) drain_.join();
    if (fd_ >= 0) ::close(fd_);
  }
  int port() const { return port_; }
  std::string log() {
    std::lock_guard<std::mutex> lock(mu_);
    return log_;
  }
  // SIGTERM and wait (at most 30 s); returns the exit status (-1: did not exit, killed).
  int stop() {
    ::kill(pid_, SIGTERM);
    auto t0 = Clock::now();
    int status = 0;
    while (secs_since(t0) < 30) {
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
    exited_ = true;
    return -1;
  }

 private:
  pid_t pid_ = -1;
  int fd_ = -1, port_ = 0;
  bool exited_ = false;
  std::mutex mu_;
  std::string log_;
  std::thread drain_;
};

inline int connect_to(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(uint16_t(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Reads until the peer closes or `secs` pass.
inline std::string read_all(int fd, double secs) {
  std::string out;
  auto t0 = Clock::now();
  char buf[8192];
  while (secs_since(t0) < secs) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, size_t(n));
  }
  return out;
}

// Sends raw bytes on a fresh connection and returns everything the server answers.
inline std::string raw_request(int port, const std::string& bytes, double secs = 10) {
  int fd = connect_to(port);
  if (fd < 0) return "";
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n <= 0) break;
    off += size_t(n);
  }
  ::shutdown(fd, SHUT_WR);
  std::string out = read_all(fd, secs);
  ::close(fd);
  return out;
}

inline int status_of(const std::string& response) {
  return response.size() > 12 && response.rfind("HTTP/1.", 0) == 0 ? std::atoi(response.c_str() + 9)
                                                                   : -1;
}

// The first response's body (Content-Length bytes; pipelined answers may follow it).
inline json body_of(const std::string& response) {
  size_t at = response.find("\r\n\r\n");
  if (at == std::string::npos) return json::value_t::discarded;
  size_t cl = response.find("Content-Length: ");
  size_t len = cl < at ? size_t(std::atol(response.c_str() + cl + 16)) : std::string::npos;
  return json::parse(response.substr(at + 4, len), nullptr, false);
}

// Drops fields that measure time (they differ from run to run).
inline json without_timing(json j) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end();) {
      if (it.key().size() > 3 && it.key().ends_with("_ms"))
        it = j.erase(it);
      else {
        *it = without_timing(*it);
        ++it;
      }
    }
  } else if (j.is_array()) {
    for (auto& x : j) x = without_timing(x);
  }
  return j;
}

struct Reply {
  int status = -1;
  json body;
};

class Serve : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    // ctest runs each test in its own process: the fixtures are written once per build tree
    // (into a temporary folder renamed into place, so parallel runs never see half a fixture).
    fix_ = std::string(ES_BINARY_DIR) + "/test_fixtures/server_v1";
    if (::access((fix_ + "/w.txt").c_str(), R_OK) != 0) {
      ::mkdir((std::string(ES_BINARY_DIR) + "/test_fixtures").c_str(), 0755);
      test::run_python(kMake, {dir_->path()});
      if (::rename(dir_->path().c_str(), fix_.c_str()) != 0)
        fix_ = dir_->path();  // another run won
      else
        ::mkdir(dir_->path().c_str(), 0755);
    }
    gpt2_ = new ServerProc({"--model", fixture("g.safetensors"), "--threads", "2"});
    w2v_ = new ServerProc({"--model", fixture("w.txt"), "--threads", "1"});
  }
  static void TearDownTestSuite() {
    EXPECT_EQ(gpt2_->stop(), 0);
    EXPECT_EQ(w2v_->stop(), 0);
    delete gpt2_;
    delete w2v_;
    delete dir_;
  }
  void SetUp() override {
    ASSERT_GT(gpt2_->port(), 0) << gpt2_->log();
    ASSERT_GT(w2v_->port(), 0) << w2v_->log();
  }

  static Reply post(int port, const std::string& path, const std::string& body,
                    const std::string& type = "application/json") {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(30, 0);
    auto r = c.Post(path.c_str(), body, type.c_str());
    if (!r) return {};
    return {r->status, json::parse(r->body, nullptr, false)};
  }
  static Reply get(int port, const std::string& path) {
    httplib::Client c("127.0.0.1", port);
    auto r = c.Get(path.c_str());
    if (!r) return {};
    return {r->status, json::parse(r->body, nullptr, false)};
  }
  static json cli_json(const std::string& args) {
    test::CommandResult r = test::run(test::shell_quote(test::cli_path()) + " " + args);
    EXPECT_EQ(r.rc, 0) << r.err;
    return json::parse(r.out, nullptr, false);
  }
  static std::string fixture(const std::string& name) { return fix_ + "/" + name; }
  static std::string model() { return fixture("g.safetensors"); }

  static test::TempDir* dir_;
  static std::string fix_;
  static ServerProc* gpt2_;
  static ServerProc* w2v_;
};
inline test::TempDir* Serve::dir_ = nullptr;
inline std::string Serve::fix_;
inline ServerProc* Serve::gpt2_ = nullptr;
inline ServerProc* Serve::w2v_ = nullptr;

}  // namespace embedscope::serve_test
