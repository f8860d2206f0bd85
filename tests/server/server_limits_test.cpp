// `embedscope serve` under bad input and load (fixture: serve_fixture.h): the HTTP cases H1-H6,
// H8, H10, H15-H19 of docs/reliability.md 6.7: oversized and malformed requests, a slowloris
// client, 1,000 concurrent connections, a full queue, SIGTERM under load (exit 0, every answer a
// 200), mutated requests, and the API key.
#include "serve_fixture.h"

namespace embedscope::serve_test {
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

// H17, the other half: clients that made a request and keep the connection open hold their
// workers only until someone else waits. Two workers, a 120 s keep-alive: two idle clients, then
// a third client is answered (httplib's 5 s read timeout; without the shedding it would wait the
// 120 s), and the server has closed an idle connection to make room.
TEST_F(Serve, IdleKeepAliveClientsGiveTheirWorkersToWaitingConnections) {
  ServerProc s(
      {"--model", fixture("w.txt"), "--http-threads", "2", "--keep-alive", "120", "--quiet"});
  ASSERT_GT(s.port(), 0) << s.log();
  const std::string req = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
  std::vector<int> idle;
  for (int i = 0; i < 2; ++i) {
    int fd = connect_to(s.port());
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::send(fd, req.data(), req.size(), MSG_NOSIGNAL), ssize_t(req.size()));
    // One whole answer (its head and Content-Length body); the connection stays open.
    std::string got;
    auto t0 = Clock::now();
    while (secs_since(t0) < 10) {
      size_t head = got.find("\r\n\r\n");
      size_t cl = got.find("Content-Length: ");
      if (head != std::string::npos && cl < head &&
          got.size() >= head + 4 + size_t(std::atol(got.c_str() + cl + 16)))
        break;
      char buf[4096];
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      ASSERT_GT(n, 0) << "closed before answering";
      got.append(buf, size_t(n));
    }
    ASSERT_EQ(status_of(got), 200) << got;
    EXPECT_NE(got.find("Keep-Alive"), std::string::npos) << got;
    idle.push_back(fd);
  }
  Reply r = post(s.port(), "/v1/neighbors", R"({"query": "w3", "k": 2})");
  EXPECT_EQ(r.status, 200);
  int closed = 0;
  for (int fd : idle) {
    std::string rest = read_all(fd, 2);  // returns at the server's close (or after 2 s)
    EXPECT_EQ(rest, "");
    pollfd p{fd, POLLIN, 0};
    char c;
    if (::poll(&p, 1, 0) == 1 && ::recv(fd, &c, 1, MSG_DONTWAIT) == 0) ++closed;
    ::close(fd);
  }
  EXPECT_GE(closed, 1);
  EXPECT_EQ(s.stop(), 0);
  // Values outside 1..3600 seconds, or not a number, are refused at start naming the flag.
  for (const char* bad : {"0", "3601", "-5", "soon"}) {
    ServerProc b({"--model", fixture("w.txt"), "--keep-alive", bad, "--quiet"});
    EXPECT_EQ(b.stop(), 2) << bad;
    EXPECT_NE(b.log().find("--keep-alive"), std::string::npos) << bad << ": " << b.log();
  }
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

}  // namespace embedscope::serve_test
