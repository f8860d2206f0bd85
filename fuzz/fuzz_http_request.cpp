// Raw request bytes into the running HTTP server (docs/reliability.md H19): cpp-httplib's
// request parser, our front's limits (http_front.h) and our routes' JSON handling, in one
// process, over a loopback connection per input (the server's parser only reads sockets).
//
// The server (a 100 x 8 table of words w0..w99, 4 workers) starts once, before any input, on
// an ephemeral loopback port. Each input is written whole, the write side is shut, and the
// answer is read to EOF. Findings: a crash or sanitizer report in the server threads, an answer
// that is not HTTP/1.1, a 500 (our bug: docs/http_api.md), or no EOF within 10 s (a hang).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "api_server.h"

namespace {

using namespace embedscope;

struct Server {
  std::unique_ptr<server::ApiServer> srv;
  int port = 0;
  Server() {
    const size_t n = 100, dim = 8;
    std::vector<float> data(n * dim);
    for (size_t i = 0; i < data.size(); ++i) data[i] = float((i * 2654435761u) % 1000) / 500.0f - 1;
    Model m;
    m.emb.table = EmbeddingTable::from_f32(n, dim, std::move(data));
    for (size_t i = 0; i < n; ++i) m.emb.vocab.add("w" + std::to_string(i));
    m.ref = m.path = "fuzz";
    server::ServerOptions o;
    o.port = 0;
    o.access_log = false;
    o.front.workers = 4;
    o.front.request_timeout_s = 2;
    o.front.read_timeout_s = 2;
    o.front.keep_alive_timeout_s = 2;
    const HandleOptions ho;
    srv = std::make_unique<server::ApiServer>(ModelHandle::from_model(std::move(m), ho), o);
    port = srv->start();
  }
};

// Started before main, so its allocations are not charged to the first input.
Server g_server;

[[noreturn]] void finding(const char* what, const std::string& answer) {
  std::fprintf(stderr, "fuzz_http_request: %s; answer starts: %.200s\n", what, answer.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(uint16_t(g_server.port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) finding("connect failed", "");
  // The server may answer (and close) before reading everything: a failed send is fine.
  for (size_t off = 0; off < size;) {
    ssize_t w = ::send(fd, data + off, size - off, MSG_NOSIGNAL);
    if (w <= 0) break;
    off += size_t(w);
  }
  ::shutdown(fd, SHUT_WR);
  std::string answer;
  char buf[4096];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 10000) <= 0) finding("no answer or EOF within 10 s", answer);
    ssize_t r = ::recv(fd, buf, sizeof buf, 0);
    if (r <= 0) break;
    if (answer.size() < (1 << 20)) answer.append(buf, size_t(r));
  }
  ::close(fd);
  if (!answer.empty()) {
    if (answer.size() < 12 || answer.compare(0, 9, "HTTP/1.1 ") != 0)
      finding("answer is not HTTP/1.1", answer);
    if (answer.find("HTTP/1.1 500") != std::string::npos) finding("a 500 answer", answer);
  }
  return 0;
}
