#include "http_front.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <stdexcept>

namespace embedscope::server {

namespace {

using Clock = std::chrono::steady_clock;
thread_local Clock::time_point t_request_start = Clock::now();
thread_local bool t_front_failed = false;  // this thread's request is answered by the front

int ms_until(Clock::time_point t) {
  auto d = std::chrono::duration_cast<std::chrono::milliseconds>(t - Clock::now()).count();
  return d < 0 ? 0 : int(d);
}

// Waits until fd has `events` or ms elapse; false on timeout or error.
bool wait_fd(int fd, short events, int ms) {
  pollfd p{fd, events, 0};
  for (;;) {
    int r = ::poll(&p, 1, ms);
    if (r < 0 && errno == EINTR) continue;
    return r > 0;
  }
}

void ip_port(const sockaddr_storage& ss, std::string& ip, int& port) {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (ss.ss_family == AF_INET) {
    auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    ::inet_ntop(AF_INET, &a->sin_addr, buf, sizeof buf);
    port = ntohs(a->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    ::inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof buf);
    port = ntohs(a->sin6_port);
  }
  ip = buf;
}

bool send_all(int fd, const char* p, size_t n, int timeout_ms) {
  while (n > 0) {
    if (!wait_fd(fd, POLLOUT, timeout_ms)) return false;
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (w <= 0) return false;
    p += w;
    n -= size_t(w);
  }
  return true;
}

std::string canned(int status, const char* reason, const char* type, const char* code,
                   const char* message) {
  std::string body = std::string("{\"error\":{\"message\":\"") + message + "\",\"type\":\"" + type +
                     "\",\"code\":\"" + code + "\"}}";
  return "HTTP/1.1 " + std::to_string(status) + " " + reason +
         "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

// The socket as httplib::Stream, with our buffering, the request deadline and head limits.
// httplib compresses with brotli at quality 11 whenever a client accepts "br" (every browser):
// 1-2 s of CPU for the page's 235 KB script or a 50,257-token /v1/vocab, against ~20 ms for
// gzip. So "br" is struck from Accept-Encoding before routing; gzip stays.
void drop_brotli(httplib::Request& req) {
  auto it = req.headers.find("Accept-Encoding");
  if (it == req.headers.end()) return;
  std::string kept;
  std::string_view v = it->second;
  while (!v.empty()) {
    size_t comma = v.find(',');
    std::string_view item = v.substr(0, comma);
    v = comma == std::string_view::npos ? std::string_view() : v.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    if (item.substr(0, item.find(';')) == "br") continue;
    if (!kept.empty()) kept += ", ";
    kept += item;
  }
  it->second = kept;
}

class LimitedStream final : public httplib::Stream {
 public:
  LimitedStream(int fd, const FrontLimits& l) : fd_(fd), l_(l) {}

  void begin_request(Clock::time_point deadline) {
    deadline_ = deadline;
    t_request_start = Clock::now();
    t_front_failed = false;
    in_head_ = true;
    head_bytes_ = 0;
    head_lines_ = 0;
    line_len_ = 0;
    body_bytes_ = 0;
  }
  bool timed_out() const { return timed_out_; }
  bool failed() const { return timed_out_ || head_too_large_ || body_too_large_; }
  bool head_too_large() const { return head_too_large_; }
  bool body_too_large() const { return body_too_large_; }
  bool has_buffered() const { return pos_ < len_; }

  bool is_readable() const override {
    if (pos_ < len_) return true;
    return wait_fd(fd_, POLLIN, std::min(l_.read_timeout_s * 1000, ms_until(deadline_)));
  }
  bool is_writable() const override { return wait_fd(fd_, POLLOUT, l_.write_timeout_s * 1000); }

  ssize_t read(char* ptr, size_t size) override {
    if (pos_ >= len_) {
      if (timed_out_ || head_too_large_ || body_too_large_) return -1;
      int ms = std::min(l_.read_timeout_s * 1000, ms_until(deadline_));
      if (!wait_fd(fd_, POLLIN, ms)) {
        timed_out_ = t_front_failed = true;
        return -1;
      }
      ssize_t r;
      do r = ::recv(fd_, buf_, sizeof buf_, 0);
      while (r < 0 && errno == EINTR);
      if (r <= 0) return r;
      pos_ = 0;
      len_ = size_t(r);
    }
    size_t n = std::min(size, len_ - pos_);
    if (in_head_) {
      n = scan_head(n);
      if (n == 0) return -1;
    } else if ((body_bytes_ += n) > l_.max_body_bytes) {
      // Bodies of any framing (chunked has no limit in httplib 0.11.4; a huge Content-Length
      // is skipped by reading it) stop here.
      body_too_large_ = t_front_failed = true;
      return -1;
    }
    std::memcpy(ptr, buf_ + pos_, n);
    pos_ += n;
    return ssize_t(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (timed_out_ || head_too_large_ || body_too_large_) return -1;  // we answer 408 / 431 / 413
    if (!wait_fd(fd_, POLLOUT, l_.write_timeout_s * 1000)) return -1;
    ssize_t w;
    do w = ::send(fd_, ptr, size, MSG_NOSIGNAL);
    while (w < 0 && errno == EINTR);
    return w;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&ss), &len) == 0) ip_port(ss, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&ss), &len) == 0) ip_port(ss, ip, port);
  }
  socket_t socket() const override { return fd_; }

 private:
  // Counts head bytes and lines in the next n buffered bytes, stopping at the end of the head.
  // Returns how many bytes may be delivered (0: a head limit was exceeded).
  size_t scan_head(size_t n) {
    for (size_t i = 0; i < n; ++i) {
      char c = buf_[pos_ + i];
      if (++head_bytes_ > l_.max_header_bytes) {
        head_too_large_ = t_front_failed = true;
        return i;
      }
      if (c == '\n') {
        bool blank = line_len_ == 0;
        line_len_ = 0;
        if (blank) {  // end of the head: the rest is body
          in_head_ = false;
          return i + 1;
        }
        if (++head_lines_ > l_.max_header_lines + 1) {  // + the request line
          head_too_large_ = t_front_failed = true;
          return i;
        }
      } else if (c != '\r') {
        ++line_len_;
      }
    }
    return n;
  }

  int fd_;
  const FrontLimits& l_;
  char buf_[4096];
  size_t pos_ = 0, len_ = 0;
  Clock::time_point deadline_ = Clock::now();
  bool in_head_ = true, timed_out_ = false, head_too_large_ = false, body_too_large_ = false;
  size_t head_bytes_ = 0, head_lines_ = 0, line_len_ = 0, body_bytes_ = 0;
};

}  // namespace

std::chrono::steady_clock::time_point request_start() { return t_request_start; }
bool request_failed_in_front() { return t_front_failed; }

HttpFront::~HttpFront() {
  stop_gracefully();
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

int HttpFront::bind_listen(const std::string& host, int port) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  std::string p = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), p.c_str(), &hints, &res); rc != 0)
    throw std::runtime_error("cannot resolve host '" + host + "': " + ::gai_strerror(rc));
  std::string why = "no address";
  for (addrinfo* a = res; a; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, limits_.backlog) == 0) {
      listen_fd_ = fd;
      break;
    }
    why = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(res);
  if (listen_fd_ < 0) throw std::runtime_error("cannot listen on " + host + ":" + p + ": " + why);
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&ss), &len);
  std::string ip;
  int bound = 0;
  ip_port(ss, ip, bound);
  return bound;
}

void HttpFront::start() {
  for (size_t i = 0; i < limits_.workers; ++i) workers_.emplace_back([this] { worker_loop(); });
  acceptor_ = std::thread([this] { accept_loop(); });
}

size_t HttpFront::queue_depth() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

void HttpFront::stop_gracefully() {
  stopping_.store(true);
  if (acceptor_.joinable()) acceptor_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    accept_done_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_)
    if (t.joinable()) t.join();
  workers_.clear();
}

void HttpFront::accept_loop() {
  while (!stopping_.load()) {
    if (!wait_fd(listen_fd_, POLLIN, 50)) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    stats_.accepted.fetch_add(1);
    bool full;
    {
      std::lock_guard<std::mutex> lock(mu_);
      full = queue_.size() >= limits_.max_queued;
      if (!full) queue_.push_back(fd);
    }
    if (full) {
      stats_.rejected_busy.fetch_add(1);
      static const std::string busy = canned(503, "Service Unavailable", "overloaded", "queue_full",
                                             "server busy: too many queued connections");
      send_all(fd, busy.data(), busy.size(), 100);
      if (on_front_answer) {
        sockaddr_storage ss{};
        socklen_t len = sizeof ss;
        std::string ip;
        int port = 0;
        if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0) ip_port(ss, ip, port);
        on_front_answer(ip, 503);
      }
      ::close(fd);
      continue;
    }
    cv_.notify_one();
  }
  // Connections the kernel already completed (the backlog) are taken too and answered, with
  // those already queued; then no new connection is accepted.
  ::fcntl(listen_fd_, F_SETFL, ::fcntl(listen_fd_, F_GETFL) | O_NONBLOCK);
  for (int fd; (fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC)) >= 0;) {
    stats_.accepted.fetch_add(1);
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(fd);
  }
  cv_.notify_all();
  ::close(listen_fd_);
  listen_fd_ = -1;
}

void HttpFront::worker_loop() {
  for (;;) {
    int fd;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return !queue_.empty() || accept_done_; });
      if (queue_.empty()) return;
      fd = queue_.front();
      queue_.pop_front();
    }
    stats_.active.fetch_add(1);
    serve_connection(fd);
    stats_.active.fetch_sub(1);
    ::close(fd);
  }
}

void HttpFront::serve_connection(int fd) {
  LimitedStream strm(fd, limits_);
  auto front_answer = [&](int status, const std::string& r) {
    send_all(fd, r.data(), r.size(), limits_.write_timeout_s * 1000);
    if (on_front_answer) {
      std::string ip;
      int port = 0;
      strm.get_remote_ip_and_port(ip, port);
      on_front_answer(ip, status);
    }
  };
  for (size_t n = 0; n < limits_.keep_alive_max; ++n) {
    // Wait for the next request: idle connections are closed after the keep-alive timeout, and
    // at once when stopping (a connection just accepted gets its first request read).
    if (!strm.has_buffered()) {
      auto idle_until = Clock::now() + std::chrono::seconds(limits_.keep_alive_timeout_s);
      bool ready = false, saw_stop = false;
      while (!ready) {
        // An idle keep-alive connection gives its worker up to connections that are waiting.
        if (n > 0 && queue_depth() > 0) return;
        if (stopping_.load() && !saw_stop) {
          if (n > 0) return;  // idle keep-alive connection: closed at once
          // A connection accepted before the stop gets a short grace for its first request.
          saw_stop = true;
          idle_until = std::min(idle_until, Clock::now() + std::chrono::milliseconds(500));
        }
        int ms = std::min(50, ms_until(idle_until));
        ready = wait_fd(fd, POLLIN, ms);
        if (!ready && Clock::now() >= idle_until) return;
      }
    }
    strm.begin_request(Clock::now() + std::chrono::seconds(limits_.request_timeout_s));
    bool close_connection = stopping_.load() || n + 1 == limits_.keep_alive_max;
    bool connection_closed = false;
    bool ok = process_request(strm, close_connection, connection_closed, drop_brotli);
    if (strm.head_too_large()) {
      stats_.head_too_large.fetch_add(1);
      front_answer(431, canned(431, "Request Header Fields Too Large", "invalid_request_error",
                               "headers_too_large", "request head exceeds the header limits"));
      return;
    }
    if (strm.body_too_large()) {
      front_answer(413, canned(413, "Payload Too Large", "invalid_request_error",
                               "payload_too_large", "request body too large"));
      return;
    }
    if (strm.timed_out()) {
      stats_.timed_out.fetch_add(1);
      front_answer(408, canned(408, "Request Timeout", "invalid_request_error", "request_timeout",
                               "the request did not arrive within the request timeout"));
      return;
    }
    if (!ok || close_connection || connection_closed) return;
  }
}

}  // namespace embedscope::server
