// HttpFront: cpp-httplib's request parser, router and response writer (httplib::Server) driven
// by our own connection loop, so that the limits Debian's cpp-httplib 0.11.4 lacks are ours:
//   - a whole-request deadline (head + body), not only a per-read timeout: a client that sends
//     one header byte per second (slowloris) is cut off after `request_timeout_s` with 408;
//   - at most `max_header_lines` header lines and `max_header_bytes` of head: else 431;
//   - at most `max_body_bytes` read after a head, whatever the framing (0.11.4 does not limit
//     chunked bodies and reads a too-large Content-Length through to skip it): else 413;
//   - a bounded accept queue: connections beyond `max_queued` waiting for a worker get a
//     canned 503 and are closed at once (the health route stays reachable once a worker frees);
//   - idle keep-alive connections are closed after `keep_alive_timeout_s`, at shutdown, and at
//     once when accepted connections are waiting for a worker (an idle client must not hold a
//     thread others need; HTTP/1.1 clients reopen a connection the server closed while idle);
//   - a listen backlog we choose (httplib compiles in 5).
// Request lines longer than 8192 bytes get 414, header lines longer than 8192 get 400 (httplib).
//
// Shutdown: stop() stops accepting, lets every request already read finish and be answered
// (Connection: close), answers connections already accepted and queued, closes idle keep-alive
// connections, then returns once all workers have joined.
//
// Thread-safety: configure before start(); stop() from any thread (e.g. a signal thread).
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace embedscope::server {

struct FrontLimits {
  size_t workers = 128;      // connections served at once (each holds a thread)
  size_t max_queued = 1024;  // accepted connections waiting for a worker; beyond: 503
  int backlog = 1024;
  int request_timeout_s = 5;  // whole request (head + body) must arrive within this
  int read_timeout_s = 5;     // any single wait for bytes
  int write_timeout_s = 5;
  int keep_alive_timeout_s = 5;  // idle keep-alive connection closed after this
  size_t keep_alive_max = 1000;  // requests per connection
  size_t max_header_lines = 100;
  size_t max_header_bytes = 32 * 1024;
  size_t max_body_bytes = (1 << 20) + (64 << 10);  // bytes read after a head, any framing: 413
};

struct FrontStats {
  std::atomic<uint64_t> accepted{0}, rejected_busy{0}, timed_out{0}, head_too_large{0};
  std::atomic<int64_t> active{0};
};

class HttpFront : public httplib::Server {
 public:
  explicit HttpFront(FrontLimits limits) : limits_(limits) {}
  ~HttpFront() override;

  // Binds and listens; port 0 = ephemeral. Returns the bound port; throws std::runtime_error.
  int bind_listen(const std::string& host, int port);
  // Starts the accept thread and workers (returns at once).
  void start();
  // Graceful stop (see the file comment); idempotent.
  void stop_gracefully();
  bool stopping() const { return stopping_.load(); }
  size_t queue_depth() const;
  const FrontStats& front_stats() const { return stats_; }
  // Called for each answer the front writes itself (503, 408, 431, 413), for the access log:
  // (client address, status). Set before start().
  std::function<void(const std::string&, int)> on_front_answer;

 private:
  void accept_loop();
  void worker_loop();
  void serve_connection(int fd);

  FrontLimits limits_;
  int listen_fd_ = -1;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<int> queue_;
  bool accept_done_ = false;
  std::thread acceptor_;
  std::vector<std::thread> workers_;
  FrontStats stats_;
};

}  // namespace embedscope::server

namespace embedscope::server {
// When the request being served on this thread started (its first byte), for access logs.
std::chrono::steady_clock::time_point request_start();
// Whether the request on this thread failed in the front (timeout, head or body limit): the
// front answers it and logs it (on_front_answer); httplib's own answer is not sent.
bool request_failed_in_front();
}  // namespace embedscope::server
