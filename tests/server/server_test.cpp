// `embedscope serve` end to end, the routes (fixture: serve_fixture.h): every route;
// /v1/neighbors, /v1/explore and /v1/tokenize documents equal the CLI's --json for the same
// request (timing fields aside); embeddings and similarity equal numpy's means and cosines of the
// same rows; several models, /v1/compare and the hnsw mode against the CLI.
#include "serve_fixture.h"

namespace embedscope::serve_test {

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
  // A --models item without a name, and an --index for no served model, are refused naming them.
  ServerProc unnamed({"--models", "x=" + fixture("w.txt") + "," + fixture("w.txt"), "--quiet"});
  EXPECT_EQ(unnamed.stop(), 2);
  EXPECT_NE(unnamed.log().find("is not name=REF"), std::string::npos) << unnamed.log();
  ServerProc orphan({"--model", fixture("w.txt"), "--index", "nope=x.hnsw", "--quiet"});
  EXPECT_EQ(orphan.stop(), 2);
  EXPECT_NE(orphan.log().find("no model named 'nope'"), std::string::npos) << orphan.log();
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

}  // namespace embedscope::serve_test
