// `embedscope serve` end to end: the real binary started on an ephemeral loopback port over
// fixtures numpy and gensim write at test time. Every route; /v1/neighbors, /v1/explore and
// /v1/tokenize documents equal the CLI's --json for the same request (timing fields aside);
// embeddings and similarity equal numpy's means and cosines of the same rows; the HTTP bad-input
// cases H1-H5, H8, H10, H15, H17 of reliability.md 6.7, a slowloris client, 200 concurrent
// connections, and SIGTERM under load (exit 0, every answer a 200).
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

namespace embedscope {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double secs_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// A 50257 x 16 GPT-2-shaped table (the tokenizer policy gives it GPT-2's BPE; row 11 is all
// zeros), and a 300 x 16 word2vec text file written by gensim (no tokenizer).
const char* kMake = R"PY(
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
const char* kMeans = R"PY(
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
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(fds[1], 2);
      ::close(fds[0]);
      ::close(fds[1]);
      std::string cli = test::cli_path();
      std::vector<std::string> all{cli, "serve", "--port", "0"};
      all.insert(all.end(), args.begin(), args.end());
      std::vector<char*> argv;
      for (auto& a : all) argv.push_back(a.data());
      argv.push_back(nullptr);
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

int connect_to(int port) {
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
std::string read_all(int fd, double secs) {
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
std::string raw_request(int port, const std::string& bytes, double secs = 10) {
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

int status_of(const std::string& response) {
  return response.size() > 12 && response.rfind("HTTP/1.", 0) == 0 ? std::atoi(response.c_str() + 9)
                                                                   : -1;
}

// The first response's body (Content-Length bytes; pipelined answers may follow it).
json body_of(const std::string& response) {
  size_t at = response.find("\r\n\r\n");
  if (at == std::string::npos) return json::value_t::discarded;
  size_t cl = response.find("Content-Length: ");
  size_t len = cl < at ? size_t(std::atol(response.c_str() + cl + 16)) : std::string::npos;
  return json::parse(response.substr(at + 4, len), nullptr, false);
}

// Drops fields that measure time (they differ from run to run).
json without_timing(json j) {
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
test::TempDir* Serve::dir_ = nullptr;
std::string Serve::fix_;
ServerProc* Serve::gpt2_ = nullptr;
ServerProc* Serve::w2v_ = nullptr;

TEST_F(Serve, HealthInfoModelsAndMetrics) {
  Reply h = get(gpt2_->port(), "/health");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(h.body["status"], "ok");
  Reply i = get(gpt2_->port(), "/v1/info");
  ASSERT_EQ(i.status, 200);
  EXPECT_EQ(i.body["rows"], 50257);
  EXPECT_EQ(i.body["dim"], 16);
  EXPECT_EQ(i.body["tokenizer"], "gpt2-shape");
  EXPECT_EQ(i.body["limits"]["payload_bytes"], 1 << 20);
  Reply m = get(gpt2_->port(), "/v1/models");
  ASSERT_EQ(m.status, 200);
  EXPECT_EQ(m.body["data"][0]["id"], model());
  EXPECT_EQ(m.body["data"][0]["rows"], 50257);

  // A request is counted by the access logger, which runs just after its answer is sent: poll
  // (bounded) until the /v1/info answer above is counted.
  httplib::Client c("127.0.0.1", gpt2_->port());
  httplib::Result r = c.Get("/metrics");
  for (int i = 0; i < 100 && r && r->body.find("route=\"/v1/info\"") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    r = c.Get("/metrics");
  }
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_NE(r->body.find("embedscope_http_requests_total{route=\"/v1/info\"}"), std::string::npos)
      << r->body;
  EXPECT_NE(r->body.find(
                "embedscope_http_request_duration_seconds_bucket{route=\"/health\",le=\"+Inf\"}"),
            std::string::npos);
  EXPECT_NE(r->body.find("embedscope_models_loaded 1"), std::string::npos);
}

TEST_F(Serve, NeighborsEqualCliJson) {
  for (const char* q : {"computer", "king", "#11"}) {
    Reply r = post(gpt2_->port(), "/v1/neighbors", json{{"query", q}, {"k", 7}}.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    json cli = cli_json("neighbors --model " + test::shell_quote(model()) + " " +
                        test::shell_quote(q) + " -k 7 --threads 2 --json");
    EXPECT_EQ(without_timing(r.body), without_timing(cli)) << q;
  }
  // A row id as a JSON integer is the CLI's --id.
  Reply r = post(gpt2_->port(), "/v1/neighbors", R"({"query": 3644, "k": 4, "metric": "l2"})");
  ASSERT_EQ(r.status, 200) << r.body;
  json cli = cli_json("neighbors --model " + test::shell_quote(model()) +
                      " --id 3644 -k 4 --metric l2 --threads 2 --json");
  EXPECT_EQ(without_timing(r.body), without_timing(cli));
}

TEST_F(Serve, NeighborsBatchEqualsCliBatchLines) {
  Reply r =
      post(gpt2_->port(), "/v1/neighbors", R"({"query": ["computer", "science", "#5"], "k": 5})");
  ASSERT_EQ(r.status, 200) << r.body;
  test::write_file(dir_->file("q.txt"), "computer\nscience\n#5\n");
  test::CommandResult c = test::run(
      test::shell_quote(test::cli_path()) + " neighbors --model " + test::shell_quote(model()) +
      " --batch " + test::shell_quote(dir_->file("q.txt")) + " -k 5 --threads 2 --json");
  ASSERT_EQ(c.rc, 0) << c.err;
  std::istringstream lines(c.out);
  std::string line;
  size_t i = 0;
  for (; std::getline(lines, line); ++i) {
    ASSERT_LT(i, r.body["results"].size());
    EXPECT_EQ(r.body["results"][i], json::parse(line)) << i;
  }
  EXPECT_EQ(i, 3u);
}

TEST_F(Serve, NeighborsByVectorAndExpression) {
  json v = json::array();
  for (int i = 0; i < 16; ++i) v.push_back(i % 3 - 1);
  Reply r = post(gpt2_->port(), "/v1/neighbors", json{{"query", v}, {"k", 3}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body["neighbors"].size(), 3u);
  Reply e =
      post(gpt2_->port(), "/v1/neighbors", R"({"query": {"expr": "king - man + woman"}, "k": 3})");
  ASSERT_EQ(e.status, 200) << e.body;
  json cli = cli_json("neighbors --model " + test::shell_quote(model()) +
                      " --expr 'king - man + woman' -k 3 --threads 2 --json");
  EXPECT_EQ(without_timing(e.body), without_timing(cli));
}

TEST_F(Serve, AnalogyEqualsCliJson) {
  for (const char* method : {"3cosadd", "3cosmul"}) {
    Reply r = post(
        gpt2_->port(), "/v1/analogy",
        json{{"a", "man"}, {"b", "king"}, {"c", "woman"}, {"k", 5}, {"method", method}}.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    json cli = cli_json("analogy --model " + test::shell_quote(model()) +
                        " man king woman -k 5 --method " + method + " --threads 2 --json");
    EXPECT_EQ(without_timing(r.body), without_timing(cli)) << method;
  }
  Reply bad = post(gpt2_->port(), "/v1/analogy", R"({"a": "man", "b": "king"})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body["error"]["message"].get<std::string>().find("'c'"), std::string::npos);
}

TEST_F(Serve, StatsEqualCliJson) {
  Reply r = get(w2v_->port(), "/v1/stats");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, cli_json("stats " + test::shell_quote(fixture("w.txt")) + " --json"));
  EXPECT_EQ(get(w2v_->port(), "/v1/stats").body, r.body);  // cached: the same document
}

TEST_F(Serve, ExploreEqualsCliJson) {
  Reply r = post(gpt2_->port(), "/v1/explore", R"({"query": "computer", "k": 5})");
  ASSERT_EQ(r.status, 200) << r.body;
  json cli = cli_json("explore --model " + test::shell_quote(model()) +
                      " computer -k 5 --threads 2 --json");
  EXPECT_EQ(without_timing(r.body), without_timing(cli));
}

TEST_F(Serve, TokenizeEqualsCliAndDecodeRoundTrips) {
  const std::string text = " The computer's résumé\n\xE2\x80 costs $3.14";
  Reply t = post(gpt2_->port(), "/v1/tokenize",
                 json{{"text", text}}.dump(-1, ' ', false, json::error_handler_t::replace));
  ASSERT_EQ(t.status, 200) << t.body;
  const std::string valid = " The computer's résumé costs $3.14";
  Reply tv = post(gpt2_->port(), "/v1/tokenize", json{{"text", valid}}.dump());
  json cli = cli_json("tokenize " + test::shell_quote(valid) + " --json");
  EXPECT_EQ(tv.body, cli);
  Reply d = post(gpt2_->port(), "/v1/decode", json{{"ids", tv.body["ids"]}}.dump());
  ASSERT_EQ(d.status, 200) << d.body;
  EXPECT_EQ(d.body["text"], valid);
  EXPECT_EQ(d.body["pieces"], tv.body["pieces"]);
  Reply bad = post(gpt2_->port(), "/v1/decode", R"({"ids": [1, 50257]})");
  EXPECT_EQ(bad.status, 422) << bad.body;
  // No tokenizer: 422 naming it.
  Reply none = post(w2v_->port(), "/v1/tokenize", R"({"text": "w1 w2"})");
  EXPECT_EQ(none.status, 422) << none.body;
}

TEST_F(Serve, EmbeddingsAreNumpyMeansOfTokenRows) {
  Reply t1 = post(gpt2_->port(), "/v1/tokenize", R"({"text": "hello world"})");
  Reply t2 = post(gpt2_->port(), "/v1/tokenize", R"({"text": " computer science"})");
  json lists = json::array({t1.body["ids"], t2.body["ids"], json::array({11, 3644})});
  test::CommandResult py = test::run_python(kMeans, {fixture("g.npy"), lists.dump()});
  json want = json::parse(py.out);

  Reply e =
      post(gpt2_->port(), "/v1/embeddings", R"({"input": ["hello world", " computer science"]})");
  ASSERT_EQ(e.status, 200) << e.body;
  EXPECT_EQ(e.body["object"], "list");
  ASSERT_EQ(e.body["data"].size(), 2u);
  size_t n_tokens = t1.body["ids"].size() + t2.body["ids"].size();
  EXPECT_EQ(e.body["usage"]["prompt_tokens"], n_tokens);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(e.body["data"][i]["index"], i);
    for (size_t d = 0; d < 16; ++d)
      EXPECT_NEAR(e.body["data"][i]["embedding"][d].get<double>(),
                  want["means"][i][d].get<double>(), 1e-6);
  }
  // Token-id lists (row 11 is zero), and base64 = the same float32 bytes.
  Reply ids = post(gpt2_->port(), "/v1/embeddings",
                   R"({"input": [[11, 3644]], "encoding_format": "base64"})");
  ASSERT_EQ(ids.status, 200) << ids.body;
  std::string b64 = ids.body["data"][0]["embedding"];
  std::string raw;
  {
    static const std::string t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    uint32_t acc = 0;
    int bits = 0;
    for (char c : b64) {
      if (c == '=') break;
      acc = acc << 6 | uint32_t(t.find(c));
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        raw += char((acc >> bits) & 0xff);
      }
    }
  }
  ASSERT_EQ(raw.size(), 16 * sizeof(float));
  for (size_t d = 0; d < 16; ++d) {
    float x;
    std::memcpy(&x, raw.data() + d * 4, 4);
    EXPECT_NEAR(x, want["means"][2][d].get<double>(), 1e-6);
  }
  // Similarity: cosines of the means.
  Reply s =
      post(gpt2_->port(), "/v1/similarity",
           R"({"inputs": {"source_sentence": "hello world", "sentences": [" computer science"]}})");
  ASSERT_EQ(s.status, 200) << s.body;
  EXPECT_NEAR(s.body["scores"][0].get<double>(), want["cos"][0].get<double>(), 1e-5);
}

TEST_F(Serve, ErrorsAreJsonWithTheRightStatus) {
  int p = w2v_->port();
  // 422: a word not in the vocabulary (no tokenizer to split it).
  Reply oov = post(p, "/v1/neighbors", R"({"query": "zzz", "k": 3})");
  EXPECT_EQ(oov.status, 422) << oov.body;
  EXPECT_NE(oov.body["error"]["message"].get<std::string>().find("zzz"), std::string::npos);
  EXPECT_EQ(oov.body["error"]["type"], "invalid_request_error");
  // 404: unknown route, unknown model.
  Reply route = get(p, "/v2/nothing");
  EXPECT_EQ(route.status, 404);
  EXPECT_TRUE(route.body["error"].is_object());
  Reply m = post(p, "/v1/neighbors", R"({"query": "w1", "model": "gpt-4"})");
  EXPECT_EQ(m.status, 404) << m.body;
  EXPECT_EQ(m.body["error"]["code"], "model_not_found");
  // H2: malformed JSON, wrong Content-Type, an array body, a missing field, wrong types.
  struct Case {
    std::string body, type, must_name;
  } cases[] = {
      {R"({"query": "w1", )", "application/json", "malformed JSON"},
      {R"({"query": "w1"})", "text/plain", "Content-Type"},
      {R"(["w1"])", "application/json", "JSON object"},
      {R"({"k": 3})", "application/json", "'query'"},
      {R"({"query": "w1", "k": "10"})", "application/json", "'k'"},
      {R"({"query": "w1", "k": 1.5})", "application/json", "1.5"},
      {R"({"query": "w1", "metric": "manhattan"})", "application/json", "manhattan"},
      {R"({"query": true})", "application/json", "'query'"},
      {R"({"query": [1.0, 2.0]})", "application/json", "16 numbers"},
  };
  for (const Case& c : cases) {
    Reply r = post(p, "/v1/neighbors", c.body, c.type);
    EXPECT_EQ(r.status, 400) << c.body;
    ASSERT_TRUE(r.body["error"].is_object()) << c.body;
    EXPECT_NE(r.body["error"]["message"].get<std::string>().find(c.must_name), std::string::npos)
        << c.body << " -> " << r.body;
  }
  // H3: k = 0, -1, 10^12, more than the rows: 400 naming k; never a crash.
  for (const char* k : {"0", "-1", "1000000000000", "301", "1e12"}) {
    Reply r = post(p, "/v1/neighbors", std::string(R"({"query": "w1", "k": )") + k + "}");
    EXPECT_EQ(r.status, 400) << k;
    EXPECT_NE(r.body["error"]["message"].get<std::string>().find("'k'"), std::string::npos)
        << r.body;
  }
  Reply ok = post(p, "/v1/neighbors", R"({"query": "w1", "k": 299})");
  EXPECT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(ok.body["neighbors"].size(), 299u);
}

TEST_F(Serve, BodyTooLargeIs413AnyFraming) {  // H1, H11
  std::string big = R"({"query": "w1", "pad": ")" + std::string(2 << 20, 'x') + "\"}";
  std::string r =
      raw_request(w2v_->port(),
                  "POST /v1/neighbors HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  "Content-Length: " +
                      std::to_string(big.size()) + "\r\n\r\n" + big);
  EXPECT_EQ(status_of(r), 413) << r.substr(0, 200);
  EXPECT_TRUE(body_of(r)["error"].is_object());
  // H11: a huge declared length and an endless chunked body stop at the limit (413), fast.
  auto t0 = Clock::now();
  r = raw_request(w2v_->port(),
                  "POST /v1/neighbors HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  "Content-Length: 1000000000000\r\n\r\n" +
                      std::string(3 << 20, 'x'));
  EXPECT_EQ(status_of(r), 413) << r.substr(0, 200);
  std::string chunked =
      "POST /v1/neighbors HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Transfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 3000; ++i) chunked += "400\r\n" + std::string(1024, 'x') + "\r\n";
  r = raw_request(w2v_->port(), chunked);
  EXPECT_EQ(status_of(r), 413) << r.substr(0, 200);
  EXPECT_LT(secs_since(t0), 5.0);
  // A compressed body is refused before it is read (no gzip bomb).
  r = raw_request(w2v_->port(),
                  "POST /v1/neighbors HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  "Content-Encoding: gzip\r\nContent-Length: 4\r\n\r\nabcd");
  EXPECT_EQ(status_of(r), 415) << r.substr(0, 200);
  EXPECT_EQ(get(w2v_->port(), "/health").status, 200);
}

TEST_F(Serve, DeepNestingIs400EvenInIgnoredFields) {  // H4
  for (const std::string& where : {std::string("query"), std::string("ignored")}) {
    std::string deep = std::string(100000, '[') + std::string(100000, ']');
    std::string body =
        where == "query" ? R"({"query": )" + deep + "}" : R"({"query": "w1", "x": )" + deep + "}";
    Reply r = post(w2v_->port(), "/v1/neighbors", body);
    EXPECT_EQ(r.status, 400) << where;
    EXPECT_EQ(r.body["error"]["code"], "nesting_too_deep") << r.body;
  }
  Reply ok = post(w2v_->port(), "/v1/neighbors", R"({"query": "w1", "x": [[[[1]]]]})");
  EXPECT_EQ(ok.status, 200);
}

TEST_F(Serve, BadBytesInQueriesGiveValidJson) {  // H5, H8
  int p = w2v_->port();
  // Invalid UTF-8 inside the JSON string: the JSON is malformed.
  Reply bad = post(p, "/v1/neighbors", "{\"query\": \"w\xFF\xFE\"}");
  EXPECT_EQ(bad.status, 400);
  EXPECT_TRUE(bad.body["error"].is_object());
  // NUL in the word: not in the vocabulary, echoed escaped.
  Reply nul = post(p, "/v1/neighbors", R"({"query": "w1\u0000x"})");
  EXPECT_EQ(nul.status, 422);
  EXPECT_TRUE(nul.body["error"].is_object());
  // A 1 MB word: 400 (query length limit), not 413 nor a crash.
  Reply huge = post(p, "/v1/neighbors", R"({"query": ")" + std::string(1000000, 'a') + "\"}");
  EXPECT_EQ(huge.status, 400);
  // H8: the all-zero row 11 has no cosine: scores are null or numbers, never NaN in the text.
  httplib::Client c("127.0.0.1", gpt2_->port());
  auto r = c.Post("/v1/neighbors", R"({"query": 11, "k": 3})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->body.find("NaN"), std::string::npos);
  EXPECT_FALSE(json::parse(r->body, nullptr, false).is_discarded());
}

TEST_F(Serve, OversizedHeadsAndUris) {  // H10
  int p = w2v_->port();
  std::string many = "GET /health HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 150; ++i) many += "X-H" + std::to_string(i) + ": v\r\n";
  EXPECT_EQ(status_of(raw_request(p, many + "\r\n")), 431);
  std::string long_line =
      "GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(9 * 1024, 'a') + "\r\n\r\n";
  int s = status_of(raw_request(p, long_line));
  EXPECT_TRUE(s == 400 || s == 431) << s;
  std::string long_uri =
      "GET /health?" + std::string(9 * 1024, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n";
  EXPECT_EQ(status_of(raw_request(p, long_uri)), 414);
  // The server still answers.
  EXPECT_EQ(get(p, "/health").status, 200);
}

TEST_F(Serve, IdleKeepAliveConnectionsDoNotExhaustThePool) {  // H17
  std::vector<int> idle;
  for (int i = 0; i < 100; ++i) {
    int fd = connect_to(w2v_->port());
    ASSERT_GE(fd, 0);
    idle.push_back(fd);
  }
  auto t0 = Clock::now();
  Reply r = post(w2v_->port(), "/v1/neighbors", R"({"query": "w3", "k": 2})");
  EXPECT_EQ(r.status, 200);
  EXPECT_LT(secs_since(t0), 2.0);
  for (int fd : idle) ::close(fd);
}

TEST_F(Serve, SlowlorisIsCutOffByTheRequestTimeout) {  // H16
  int fd = connect_to(w2v_->port());
  ASSERT_GE(fd, 0);
  const std::string head = "GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaa";
  auto t0 = Clock::now();
  std::string answer;
  std::atomic<int> served{0};
  std::thread others([&] {  // other clients are served meanwhile
    for (int i = 0; i < 10; ++i) {
      if (get(w2v_->port(), "/health").status == 200) served++;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  for (size_t i = 0; i < head.size() && secs_since(t0) < 15; ++i) {
    if (::send(fd, &head[i], 1, MSG_NOSIGNAL) != 1) break;  // cut off
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 500) > 0) break;  // the server answered (408) and closed
  }
  answer = read_all(fd, 3);
  double elapsed = secs_since(t0);
  others.join();
  ::close(fd);
  EXPECT_EQ(status_of(answer), 408) << answer;
  EXPECT_GT(elapsed, 4.0);
  EXPECT_LT(elapsed, 8.0);
  EXPECT_EQ(served.load(), 10);
}

// The value of a counter line in Prometheus text.
double metric(const std::string& text, const std::string& name) {
  size_t at = text.find("\n" + name + " ");
  return at == std::string::npos ? -1 : std::atof(text.c_str() + at + name.size() + 2);
}

TEST_F(Serve, AThousandConcurrentConnectionsGetTheirOwnAnswers) {
  // Answers alone (one request at a time: the single-query path) are the reference ...
  std::vector<json> alone(40);
  for (int q = 0; q < 40; ++q) {
    Reply r = post(gpt2_->port(), "/v1/neighbors",
                   json{{"query", "#" + std::to_string(1000 + q)}, {"k", 5}}.dump());
    ASSERT_EQ(r.status, 200);
    alone[q] = r.body["neighbors"];
  }
  httplib::Client c("127.0.0.1", gpt2_->port());
  auto m0 = c.Get("/metrics");
  ASSERT_TRUE(m0);
  // ... for 1,000 concurrent connections (H15: more than the 128 workers, fewer than the 1,024
  // the queue holds), whose queries the server merges into batched searches.
  std::atomic<int> ok{0};
  std::vector<std::thread> ts;
  for (int i = 0; i < 1000; ++i)
    ts.emplace_back([&, i] {
      int q = i % 40;
      Reply r = post(gpt2_->port(), "/v1/neighbors",
                     json{{"query", "#" + std::to_string(1000 + q)}, {"k", 5}}.dump());
      if (r.status != 200 || r.body["query"] != "#" + std::to_string(1000 + q) ||
          r.body["neighbors"].size() != 5)
        return;
      for (size_t j = 0; j < 5; ++j) {
        const json& a = r.body["neighbors"][j];
        const json& b = alone[q][j];
        if (a["id"] != b["id"] ||
            std::fabs(a["score"].get<double>() - b["score"].get<double>()) > 1e-5)
          return;
      }
      ok++;
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(ok.load(), 1000);
  auto m1 = c.Get("/metrics");
  ASSERT_TRUE(m1);
  double calls = metric(m1->body, "embedscope_neighbors_batches_total") -
                 metric(m0->body, "embedscope_neighbors_batches_total");
  double queries = metric(m1->body, "embedscope_neighbors_batched_queries_total") -
                   metric(m0->body, "embedscope_neighbors_batched_queries_total");
  EXPECT_EQ(queries, 1000);
  EXPECT_LT(calls, 1000) << "no two concurrent queries were merged";
}

TEST_F(Serve, FullQueueAnswers503AtOnce) {  // H15
  ServerProc s(
      {"--model", fixture("w.txt"), "--http-threads", "2", "--max-queued", "4", "--quiet"});
  ASSERT_GT(s.port(), 0) << s.log();
  std::vector<int> idle;
  for (int i = 0; i < 6;
       ++i) {  // 2 held by the workers + 4 queued (paced: workers take theirs first)
    idle.push_back(connect_to(s.port()));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  auto t0 = Clock::now();
  std::string r = raw_request(s.port(), "GET /health HTTP/1.1\r\nHost: x\r\n\r\n", 3);
  EXPECT_EQ(status_of(r), 503) << r;
  EXPECT_LT(secs_since(t0), 1.0);
  for (int fd : idle) ::close(fd);
  EXPECT_EQ(s.stop(), 0);
}

TEST_F(Serve, SigtermUnderLoadAnswersAcceptedRequestsAndExitsZero) {  // H18
  ServerProc s({"--model", model(), "--quiet"});
  ASSERT_GT(s.port(), 0) << s.log();
  std::atomic<bool> go{true};
  std::atomic<int> ok{0}, bad_status{0}, after_signal{0};
  std::atomic<bool> signalled{false};
  std::vector<std::thread> ts;
  for (int i = 0; i < 16; ++i)
    ts.emplace_back([&, i] {
      httplib::Client c("127.0.0.1", s.port());
      c.set_read_timeout(10, 0);
      for (int n = 0; go.load() && n < 100000; ++n) {
        auto r = c.Post("/v1/neighbors",
                        json{{"query", "#" + std::to_string(i * 100 + n % 100)}, {"k", 5}}.dump(),
                        "application/json");
        if (!r) {  // refused: the server stopped accepting
          if (signalled.load()) break;
          continue;
        }
        if (r->status == 200) {
          ok++;
          if (signalled.load()) after_signal++;
        } else {
          bad_status++;
        }
      }
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  signalled.store(true);
  int rc = s.stop();
  go.store(false);
  for (auto& t : ts) t.join();
  EXPECT_EQ(rc, 0);
  EXPECT_GT(ok.load(), 16);
  EXPECT_EQ(bad_status.load(), 0);
}

// H19 over the wire: seeded mutations (byte flips, insertions, cuts, repeats) of valid requests
// sent raw; every answer is a well-formed HTTP response whose body is JSON, or a closed
// connection, and the server keeps answering. (A libFuzzer target inside the process is still
// to be written.)
TEST_F(Serve, MutatedRequestsNeverBreakTheServer) {
  const std::string seeds[] = {
      "POST /v1/neighbors HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
      "28\r\n\r\n"
      "{\"query\": \"w1\", \"k\": 3}    ",
      "POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Type: "
      "application/json\r\nContent-Length: 29\r\n\r\n"
      "{\"input\": [\"w1 w2\", [1, 2]]} ",
      "GET /v1/info?x=1 HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n",
      "POST /v1/neighbors HTTP/1.1\r\nHost: x\r\nContent-Type: "
      "application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
      "a\r\n{\"query\": \r\n8\r\n\"w2\", \"k\r\n5\r\n\": 2}\r\n0\r\n\r\n",
  };
  uint64_t state = 12345;
  auto rnd = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return uint32_t(state >> 33);
  };
  int answered = 0;
  for (int i = 0; i < 300; ++i) {
    std::string m = seeds[rnd() % 4];
    for (int e = 0, n = 1 + int(rnd() % 4); e < n; ++e) {
      size_t at = rnd() % m.size();
      switch (rnd() % 5) {
        case 0:
          m[at] = char(rnd());
          break;
        case 1:
          m.insert(at, 1, "\r\n:{}[]\"\\ 0\xff"[rnd() % 12]);
          break;
        case 2:
          m.erase(at, 1 + rnd() % 8);
          break;
        case 3:
          m.insert(at, m.substr(at, rnd() % 64));
          break;
        case 4:
          m.resize(at);
          break;
      }
      if (m.empty()) m = "X";
    }
    std::string r = raw_request(w2v_->port(), m, 6);
    if (r.empty()) continue;  // closed without an answer (e.g. an empty or cut request)
    ASSERT_EQ(r.rfind("HTTP/1.1 ", 0), 0u) << i << ": " << r.substr(0, 80);
    int st = status_of(r);
    EXPECT_TRUE(st >= 200 && st < 600) << r.substr(0, 80);
    EXPECT_LT(st, 500) << "request " << i << " -> " << r.substr(0, 300);
    json b = body_of(r);
    EXPECT_FALSE(b.is_discarded()) << i << ": " << r.substr(0, 300);
    ++answered;
  }
  EXPECT_GT(answered, 150);
  EXPECT_EQ(get(w2v_->port(), "/health").status, 200);
}

TEST_F(Serve, NonLoopbackHostNeedsAnApiKey) {
  test::CommandResult r =
      test::run(test::shell_quote(test::cli_path()) + " serve --host 0.0.0.0 --port 0 --model " +
                test::shell_quote(fixture("w.txt")));
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--api-key"), std::string::npos) << r.err;
  // With a key: 401 without it, 200 with it; /health stays open.
  ServerProc s({"--model", fixture("w.txt"), "--api-key", "s3cret", "--quiet"});
  ASSERT_GT(s.port(), 0) << s.log();
  EXPECT_EQ(get(s.port(), "/health").status, 200);
  Reply no = get(s.port(), "/v1/info");
  EXPECT_EQ(no.status, 401);
  EXPECT_EQ(no.body["error"]["type"], "authentication_error");
  httplib::Client c("127.0.0.1", s.port());
  c.set_bearer_token_auth("s3cret");
  auto yes = c.Get("/v1/info");
  ASSERT_TRUE(yes);
  EXPECT_EQ(yes->status, 200);
  c.set_bearer_token_auth("s3cre");
  auto wrong = c.Get("/v1/info");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  EXPECT_EQ(s.stop(), 0);
}

// --models: one server, several tables; each request picks one by name, and /v1/compare
// compares two of them with the same document as `embedscope compare --json`.
TEST_F(Serve, SeveralModelsArePickedByNameAndCompared) {
  ServerProc s({"--models", "gpt=" + fixture("g.safetensors") + ",words=" + fixture("w.txt"),
                "--threads", "1", "--quiet"});
  ASSERT_GT(s.port(), 0) << s.log();
  Reply m = get(s.port(), "/v1/models");
  ASSERT_EQ(m.status, 200) << m.body;
  ASSERT_EQ(m.body["data"].size(), 2u);
  EXPECT_EQ(m.body["data"][0]["id"], "gpt");
  EXPECT_EQ(m.body["data"][0]["default"], true);
  EXPECT_EQ(m.body["data"][1]["id"], "words");
  EXPECT_EQ(m.body["data"][1]["rows"], get(w2v_->port(), "/v1/info").body["rows"]);
  // No model named: the first; a name: that one, with the single-model server's answer.
  Reply a = post(s.port(), "/v1/neighbors", R"({"query": "king", "k": 5})");
  Reply b = post(gpt2_->port(), "/v1/neighbors", R"({"query": "king", "k": 5})");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(without_timing(a.body)["neighbors"], without_timing(b.body)["neighbors"]);
  Reply w = post(s.port(), "/v1/neighbors", R"({"query": "w7", "k": 5, "model": "words"})");
  Reply w1 = post(w2v_->port(), "/v1/neighbors", R"({"query": "w7", "k": 5})");
  ASSERT_EQ(w.status, 200) << w.body;
  EXPECT_EQ(without_timing(w.body)["neighbors"], without_timing(w1.body)["neighbors"]);
  Reply info = get(s.port(), "/v1/info?model=words");
  ASSERT_EQ(info.status, 200);
  EXPECT_EQ(info.body["path"], fixture("w.txt"));
  Reply bad = post(s.port(), "/v1/explore", R"({"query": "king", "model": "nope"})");
  EXPECT_EQ(bad.status, 404);
  EXPECT_NE(bad.body["error"]["message"].get<std::string>().find("'gpt', 'words'"),
            std::string::npos)
      << bad.body;
  EXPECT_EQ(get(s.port(), "/v1/stats?model=nope").status, 404);
  // /v1/compare: the same document as the CLI (names instead of paths).
  Reply c = post(s.port(), "/v1/compare", R"({"a": "words", "b": "words", "k": 5, "words": 50})");
  ASSERT_EQ(c.status, 200) << c.body;
  json cli = cli_json("compare " + test::shell_quote(fixture("w.txt")) + " " +
                      test::shell_quote(fixture("w.txt")) + " -k 5 --words 50 --json");
  cli["a"] = "words";
  cli["b"] = "words";
  EXPECT_EQ(c.body, cli);
  EXPECT_DOUBLE_EQ(c.body["mean_overlap"].get<double>(), 1.0);
  EXPECT_EQ(post(s.port(), "/v1/compare", R"({"a": "words"})").status, 400);
  EXPECT_EQ(s.stop(), 0);
  // Two models with one name are refused at start.
  ServerProc dup({"--models", "x=" + fixture("w.txt") + ",x=" + fixture("w.txt"), "--quiet"});
  EXPECT_NE(dup.stop(), 0);
  EXPECT_NE(dup.log().find("two models named 'x'"), std::string::npos) << dup.log();
}

// H6: vocabulary entries that are not UTF-8 (raw bytes a tokenizer or corpus produced) reach
// the answers as U+FFFD; every answer stays valid JSON.
TEST_F(Serve, VocabularyBytesThatAreNotUtf8GiveValidJson) {
  test::TempDir d;
  std::string txt = "4 3\nok 1 0 0\nbad\xff\xfe 0.9 0.1 0\nhalf\xe2\x82 0.8 0.2 0\nfar 0 0 1\n";
  test::write_file(d.file("bytes.txt"), txt);
  ServerProc s({"--model", d.file("bytes.txt"), "--threads", "1", "--quiet"});
  ASSERT_GT(s.port(), 0) << s.log();
  Reply r = post(s.port(), "/v1/neighbors", R"({"query": "ok", "k": 3})");
  ASSERT_EQ(r.status, 200);
  ASSERT_FALSE(r.body.is_discarded());
  ASSERT_EQ(r.body["neighbors"].size(), 3u);
  EXPECT_EQ(r.body["neighbors"][0]["token"], "bad\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(r.body["neighbors"][1]["token"], "half\xEF\xBF\xBD");
  Reply st = get(s.port(), "/v1/stats");
  EXPECT_EQ(st.status, 200);
  EXPECT_FALSE(st.body.is_discarded());
  EXPECT_EQ(s.stop(), 0);
}

// mode "hnsw": answered from the index given with --index, the same document as the CLI's
// `neighbors --index`; without an index it is a 400 that says how to enable it.
TEST_F(Serve, HnswModeAnswersFromTheIndexLikeTheCli) {
  test::TempDir d;
  const std::string w = test::shell_quote(fixture("w.txt"));
  const std::string ix = d.file("w.hnsw");
  test::CommandResult b = test::run(test::shell_quote(test::cli_path()) + " index build --model " +
                                    w + " -o " + test::shell_quote(ix) + " --threads 1");
  ASSERT_EQ(b.rc, 0) << b.err;
  ServerProc s({"--model", fixture("w.txt"), "--index", ix, "--threads", "1", "--quiet"});
  ASSERT_GT(s.port(), 0) << s.log();
  for (const char* q : {"w7", "w123"}) {
    Reply r = post(s.port(), "/v1/neighbors",
                   json{{"query", q}, {"k", 6}, {"mode", "hnsw"}, {"ef", 80}}.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    json cli = cli_json("neighbors --model " + w + " " + q + " -k 6 --index " +
                        test::shell_quote(ix) + " --ef 80 --threads 1 --json");
    EXPECT_EQ(without_timing(r.body), without_timing(cli)) << q;
    EXPECT_EQ(r.body["mode"], "hnsw");
    EXPECT_EQ(r.body["neighbors"].size(), 6u);
  }
  EXPECT_EQ(post(s.port(), "/v1/neighbors", R"({"query": ["w1", "w2"], "mode": "hnsw"})").status,
            400);
  EXPECT_EQ(
      post(s.port(), "/v1/neighbors", R"({"query": "w1", "mode": "hnsw", "metric": "l2"})").status,
      400);
  Reply no = post(w2v_->port(), "/v1/neighbors", R"({"query": "w1", "mode": "hnsw"})");
  EXPECT_EQ(no.status, 400);
  EXPECT_NE(no.body["error"]["message"].get<std::string>().find("--index"), std::string::npos)
      << no.body;
  EXPECT_EQ(s.stop(), 0);
}

}  // namespace
}  // namespace embedscope
