// GET /v1/projection and /v1/projection/status on an in-process server: the 202 -> 200 flow,
// the float32 body equal to numpy's PCA (SVD of the centred matrix, the sign rule of
// analysis/projection.h), the JSON variant equal to the float32 body, the disk cache reused by a
// fresh server, every bad parameter answered 400 (404 for another model), and the bound on the
// projections held in memory (least recently requested dropped, read back from disk).
#include "embedscope/api/projection.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "api_server.h"
#include "embedscope/core/thread_pool.h"
#include "embedscope/formats/npy.h"
#include "test_util.h"

namespace embedscope::server {
namespace {

using nlohmann::json;

const char* kMake = R"PY(
import sys, numpy as np
out = sys.argv[1]
rng = np.random.default_rng(5)
n, d = 20000, 24
X = (rng.normal(size=(n, d)) * np.linspace(6, 0.5, d) + 2.0).astype(np.float32)
np.save(f"{out}/t.npy", X)
C = X.astype(np.float64)
C -= C.mean(axis=0)
_, _, Vt = np.linalg.svd(C, full_matrices=False)
V = Vt[:2]
V *= np.sign(V[np.arange(2), np.argmax(np.abs(V), axis=1)])[:, None]
np.save(f"{out}/want.npy", (C @ V.T).astype(np.float32))
S = (rng.normal(size=(1200, 8)) + np.repeat(rng.normal(size=(6, 8)) * 4, 200, axis=0))
np.save(f"{out}/small.npy", S.astype(np.float32))
np.save(f"{out}/tiny.npy", rng.normal(size=(200, 4)).astype(np.float32))
B = rng.normal(size=(100, 4)).astype(np.float32)
B[37, 2] = np.nan
np.save(f"{out}/nan.npy", B)
)PY";

class ProjectionRoute : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    auto r = test::run_python(kMake, {dir_->path()});
    ASSERT_EQ(r.rc, 0) << r.err;
    // The disk cache goes under the embedscope home: a fresh one for this suite, the user's
    // restored afterwards (the other suites of this binary find GPT-2's vocabulary there).
    if (const char* h = std::getenv("EMBEDSCOPE_HOME")) saved_home_ = new std::string(h);
    ::setenv("EMBEDSCOPE_HOME", dir_->file("home").c_str(), 1);
  }
  static void TearDownTestSuite() {
    if (saved_home_)
      ::setenv("EMBEDSCOPE_HOME", saved_home_->c_str(), 1);
    else
      ::unsetenv("EMBEDSCOPE_HOME");
    delete saved_home_;
    saved_home_ = nullptr;
    delete dir_;
  }
  static test::TempDir* dir_;
  static std::string* saved_home_;

 protected:
  void start(const std::string& table = "t.npy") {
    HandleOptions ho;
    ho.tokenizer = "none";
    h_ = ModelHandle::open(dir_->file(table), ho);
    ServerOptions o;
    o.port = 0;
    o.access_log = false;
    server_ = std::make_unique<ApiServer>(h_, o);
    port_ = server_->start();
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
  }
  void TearDown() override {
    client_.reset();
    server_.reset();
  }
  httplib::Result get(const std::string& path) { return client_->Get(path); }
  json status(const std::string& query) {
    auto r = get("/v1/projection/status?" + query);
    EXPECT_TRUE(r);
    EXPECT_EQ(r->status, 200) << r->body;
    return json::parse(r->body);
  }

  ModelHandlePtr h_;
  std::unique_ptr<ApiServer> server_;
  std::unique_ptr<httplib::Client> client_;
  int port_ = 0;
};
test::TempDir* ProjectionRoute::dir_ = nullptr;
std::string* ProjectionRoute::saved_home_ = nullptr;

TEST_F(ProjectionRoute, ComputesInTheBackgroundThenAnswersNumpysPca) {
  start();
  EXPECT_EQ(status("method=pca&dims=2")["state"], "idle");
  auto first = get("/v1/projection?method=pca&dims=2");
  ASSERT_TRUE(first);
  EXPECT_EQ(first->status, 202) << first->body;
  json st = json::parse(first->body);
  EXPECT_EQ(st["state"], "computing");
  EXPECT_EQ(st["stage"], "pca");
  auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    st = status("method=pca&dims=2");
    ASSERT_TRUE(st["state"] == "computing" || st["state"] == "ready") << st.dump();
    EXPECT_GE(st["progress"].get<double>(), 0.0);
    EXPECT_LE(st["progress"].get<double>(), 1.0);
    if (st["state"] == "ready") break;
    ASSERT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(60));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  auto r = get("/v1/projection?method=pca&dims=2&model=" + dir_->file("t.npy"));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/octet-stream");
  EXPECT_EQ(r->get_header_value("X-Rows"), "20000");
  EXPECT_EQ(r->get_header_value("X-Dims"), "2");
  ASSERT_EQ(r->body.size(), 20000u * 2 * sizeof(float));
  std::vector<float> got(40000);
  std::memcpy(got.data(), r->body.data(), r->body.size());
  LoadedEmbeddings want = load_npy(dir_->file("want.npy"));
  double max_err = 0;
  for (size_t i = 0; i < got.size(); ++i)
    max_err = std::max(max_err, std::fabs(double(got[i]) - want.table.f32()[i]));
  EXPECT_LT(max_err, 1e-3);

  auto j = get("/v1/projection?method=pca&dims=2&format=json");
  ASSERT_TRUE(j);
  ASSERT_EQ(j->status, 200) << j->body;
  json doc = json::parse(j->body);
  EXPECT_EQ(doc["model"], dir_->file("t.npy"));
  EXPECT_EQ(doc["method"], "pca");
  EXPECT_EQ(doc["dims"], 2);
  EXPECT_EQ(doc["rows"], 20000);
  ASSERT_EQ(doc["coords"].size(), 20000u);
  for (size_t i = 0; i < 20000; i += 997) {
    ASSERT_EQ(doc["coords"][i].size(), 2u);
    EXPECT_EQ(doc["coords"][i][0].get<float>(), got[i * 2]);
    EXPECT_EQ(doc["coords"][i][1].get<float>(), got[i * 2 + 1]);
  }

  // A fresh server on the same model reads the disk cache: ready at once, the same bytes.
  std::string body = r->body;
  TearDown();
  h_.reset();
  start();
  EXPECT_EQ(status("method=pca&dims=2")["state"], "ready");
  auto again = get("/v1/projection?method=pca&dims=2");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200);
  EXPECT_EQ(again->body, body);
  size_t n_files = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir_->file("home") + "/projections")) {
    EXPECT_EQ(f.path().extension(), ".npy") << f.path();
    ++n_files;
  }
  EXPECT_EQ(n_files, 1u);
}

TEST_F(ProjectionRoute, ThreeDimsAreTheirOwnProjection) {
  start();
  auto t0 = std::chrono::steady_clock::now();
  httplib::Result r = get("/v1/projection?dims=3");
  for (; r && r->status == 202; r = get("/v1/projection?dims=3")) {
    ASSERT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(60));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->get_header_value("X-Dims"), "3");
  EXPECT_EQ(r->body.size(), 20000u * 3 * sizeof(float));
}

TEST_F(ProjectionRoute, UmapRunsItsStagesThenEqualsTheCli) {
  start("small.npy");
  const std::string q = "method=umap&n_neighbors=5&seed=7";
  auto first = get("/v1/projection?" + q);
  ASSERT_TRUE(first);
  ASSERT_EQ(first->status, 202) << first->body;
  EXPECT_EQ(json::parse(first->body)["stage"], "knn");
  auto t0 = std::chrono::steady_clock::now();
  double last = 0;
  json st;
  for (st = status(q); st["state"] == "computing"; st = status(q)) {
    std::string stage = st["stage"];
    EXPECT_TRUE(stage == "knn" || stage == "fuzzy" || stage == "layout") << stage;
    EXPECT_GE(st["progress"].get<double>(), last);  // the stages' weights keep it monotone
    last = st["progress"].get<double>();
    ASSERT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(120));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(st["state"], "ready") << st.dump();
  auto r = get("/v1/projection?" + q);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  ASSERT_EQ(r->body.size(), 1200u * 2 * sizeof(float));
  // The CLI, computing afresh with the same seed and thread count, writes the same floats.
  auto cli = test::run(test::shell_quote(test::cli_path()) + " project " + dir_->file("small.npy") +
                       " --method umap --n-neighbors 5 --seed 7 --no-cache -q --threads " +
                       std::to_string(process_threads()) + " -o " + dir_->file("u.npy"));
  ASSERT_EQ(cli.rc, 0) << cli.err;
  LoadedEmbeddings u = load_npy(dir_->file("u.npy"));
  ASSERT_EQ(u.table.n_rows(), 1200u);
  EXPECT_EQ(std::memcmp(u.table.f32(), r->body.data(), r->body.size()), 0);
}

TEST_F(ProjectionRoute, UmapInThreeDimsIsItsOwnCachedProjectionInBothFormatsAndEqualsTheCli) {
  start("tiny.npy");
  const std::string q3 = "method=umap&dims=3&n_neighbors=5&seed=11",
                    q2 = "method=umap&dims=2&n_neighbors=5&seed=11";
  auto ready = [&](const std::string& q) {
    auto t0 = std::chrono::steady_clock::now();
    httplib::Result r = get("/v1/projection?" + q);
    for (; r && r->status == 202; r = get("/v1/projection?" + q)) {
      EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(60));
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return r;
  };
  auto r3 = ready(q3);
  ASSERT_TRUE(r3);
  ASSERT_EQ(r3->status, 200) << r3->body;
  EXPECT_EQ(r3->get_header_value("X-Rows"), "200");
  EXPECT_EQ(r3->get_header_value("X-Dims"), "3");
  ASSERT_EQ(r3->body.size(), 200u * 3 * sizeof(float));
  std::vector<float> got(600);
  std::memcpy(got.data(), r3->body.data(), r3->body.size());
  for (float v : got) ASSERT_TRUE(std::isfinite(v));

  auto j = get("/v1/projection?" + q3 + "&format=json");
  ASSERT_TRUE(j);
  ASSERT_EQ(j->status, 200) << j->body;
  json doc = json::parse(j->body);
  EXPECT_EQ(doc["method"], "umap");
  EXPECT_EQ(doc["dims"], 3);
  EXPECT_EQ(doc["rows"], 200);
  ASSERT_EQ(doc["coords"].size(), 200u);
  for (size_t i = 0; i < 200; ++i) {
    ASSERT_EQ(doc["coords"][i].size(), 3u);
    for (size_t c = 0; c < 3; ++c) EXPECT_EQ(doc["coords"][i][c].get<float>(), got[i * 3 + c]);
  }

  // The 2-D projection with the same parameters is another one: computed, with its own shape.
  EXPECT_EQ(status(q2)["state"], "idle");
  auto r2 = ready(q2);
  ASSERT_TRUE(r2);
  ASSERT_EQ(r2->status, 200) << r2->body;
  EXPECT_EQ(r2->get_header_value("X-Dims"), "2");
  EXPECT_EQ(r2->body.size(), 200u * 2 * sizeof(float));

  // Both are on disk, each in its own file; a fresh server answers the 3-D one from its cache.
  size_t n2 = 0, n3 = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir_->file("home") + "/projections")) {
    const std::string name = f.path().filename().string();
    if (name.find("umap-3d-n5-md0.1-s11") != std::string::npos) ++n3;
    if (name.find("umap-2d-n5-md0.1-s11") != std::string::npos) ++n2;
  }
  EXPECT_EQ(n3, 1u);
  EXPECT_EQ(n2, 1u);
  TearDown();
  h_.reset();
  start("tiny.npy");
  EXPECT_EQ(status(q3)["state"], "ready");
  auto cached = get("/v1/projection?" + q3);
  ASSERT_TRUE(cached);
  EXPECT_EQ(cached->body, r3->body);

  // The CLI, computing afresh with the same seed and thread count, writes the same floats.
  auto cli =
      test::run(test::shell_quote(test::cli_path()) + " project " + dir_->file("tiny.npy") +
                " --method umap --dims 3 --n-neighbors 5 --seed 11 --no-cache -q --threads " +
                std::to_string(process_threads()) + " -o " + dir_->file("u3.npy"));
  ASSERT_EQ(cli.rc, 0) << cli.err;
  LoadedEmbeddings u = load_npy(dir_->file("u3.npy"));
  ASSERT_EQ(u.table.n_rows(), 200u);
  ASSERT_EQ(u.table.dim(), 3u);
  EXPECT_EQ(std::memcmp(u.table.f32(), r3->body.data(), r3->body.size()), 0);
}

TEST_F(ProjectionRoute, AFailedComputationIsAnsweredOnceThenRetried) {
  start("nan.npy");
  auto first = get("/v1/projection");
  ASSERT_TRUE(first);
  EXPECT_EQ(first->status, 202);
  auto t0 = std::chrono::steady_clock::now();
  json st;
  for (st = status(""); st["state"] == "computing"; st = status("")) {
    ASSERT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(60));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(st["state"], "failed");
  EXPECT_NE(st["message"].get<std::string>().find("row 37 column 2"), std::string::npos) << st;
  auto err = get("/v1/projection");
  ASSERT_TRUE(err);
  EXPECT_EQ(err->status, 400) << err->body;
  EXPECT_NE(err->body.find("row 37 column 2"), std::string::npos) << err->body;
  EXPECT_EQ(status("")["state"], "idle");
  auto again = get("/v1/projection");  // retried: computing again (and failing again)
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 202) << again->body;
}

TEST_F(ProjectionRoute, AThirdComputationAtOnceIsRefusedBusy) {
  start();  // 20,000 rows: UMAP takes seconds, so the first two are still running
  for (const char* seed : {"1", "2"}) {
    auto r = get(std::string("/v1/projection?method=umap&seed=") + seed);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 202) << r->body;
  }
  auto busy = get("/v1/projection?method=umap&seed=3");
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->status, 503) << busy->body;
  EXPECT_EQ(busy->get_header_value("Retry-After"), "5");
  EXPECT_EQ(json::parse(busy->body)["error"]["code"], "busy");
  EXPECT_EQ(status("method=umap&seed=3")["state"], "idle");  // nothing started
  // Running ones still answer their progress (the server's end cancels them).
  auto again = get("/v1/projection?method=umap&seed=1");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 202) << again->body;
}

// Computes a request's job to the end; the caller's reference is dropped on return.
bool compute(const ModelHandle& h, const api::ProjectionRequest& r) {
  auto job = api::projection_job(h, r);
  job->ensure();
  auto t0 = std::chrono::steady_clock::now();
  while (job->status().state == "computing") {
    if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(60)) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return job->status().state == "ready" && job->result() != nullptr;
}

TEST_F(ProjectionRoute, HoldsOnlyTheMostRecentlyRequestedProjectionsInMemory) {
  start("tiny.npy");
  auto req = [](const std::string& method, size_t dims, uint64_t seed) {
    api::ProjectionRequest r;
    r.method = method;
    r.dims = dims;
    r.n_neighbors = 5;
    r.seed = seed;
    return r;
  };
  const auto p2 = req("pca", 2, 0), p3 = req("pca", 3, 0);
  const auto u1 = req("umap", 2, 1), u2 = req("umap", 2, 2), u3 = req("umap", 2, 3);
  ASSERT_EQ(api::kProjectionsInMemory, 4u);
  for (const auto& r : {p2, p3, u1, u2}) ASSERT_TRUE(compute(*h_, r));
  EXPECT_EQ(api::projection_jobs_in_memory(*h_), 4u);
  ASSERT_TRUE(compute(*h_, p2));             // asked again: the most recent now
  auto held = api::projection_job(*h_, u1);  // a caller holds this one
  ASSERT_TRUE(compute(*h_, u3));             // evicts p3, the least recently asked
  EXPECT_EQ(api::projection_jobs_in_memory(*h_), 4u);
  // p2 is still the result computed in memory ...
  auto kept = api::projection_job(*h_, p2)->result();
  ASSERT_NE(kept, nullptr);
  EXPECT_FALSE(kept->from_cache);
  // ... p3 is a fresh job: nothing in memory, ready from its disk cache, the same floats.
  std::vector<float> p3_coords;
  {
    auto again = api::projection_job(*h_, p3);  // evicts u2
    EXPECT_EQ(again->result(), nullptr);
    EXPECT_EQ(again->status().state, "ready");
    EXPECT_EQ(again->ensure().state, "ready");
    ASSERT_NE(again->result(), nullptr);
    EXPECT_TRUE(again->result()->from_cache);
    p3_coords = again->result()->projection.coords;
  }
  EXPECT_EQ(api::projection_jobs_in_memory(*h_), 4u);
  EXPECT_EQ(p3_coords, api::project(*h_, p3, {}, false).projection.coords);
  // The held u1 is now the least recent, but is kept: the next one goes instead (p2).
  api::projection_job(*h_, u3);
  api::projection_job(*h_, p3);
  api::projection_job(*h_, u2);  // from disk; evicts p2, not u1
  EXPECT_EQ(api::projection_jobs_in_memory(*h_), 4u);
  EXPECT_EQ(api::projection_job(*h_, u1), held);
  EXPECT_EQ(api::projection_job(*h_, p2)->result(), nullptr);
}

TEST_F(ProjectionRoute, RejectsBadParametersNamingThem) {
  start();
  struct Case {
    std::string query, needle;
    int status;
  };
  const Case cases[] = {
      {"method=tsne", "'method'", 400},
      {"dims=4", "'dims'", 400},
      {"dims=1", "'dims'", 400},
      {"dims=two", "'dims'", 400},
      {"dims=2&dims=3", "'dims'", 400},
      {"format=xml", "'format'", 400},
      {"colour=red", "'colour'", 400},
      {"method=umap&n_neighbors=1", "'n_neighbors'", 400},
      {"method=umap&n_neighbors=100000", "'n_neighbors'", 400},
      {"method=umap&min_dist=nan", "'min_dist'", 400},
      {"method=umap&min_dist=2", "'min_dist'", 400},
      {"seed=-1", "'seed'", 400},
      {"model=other", "model 'other' is not served here", 404},
  };
  for (const Case& c : cases) {
    for (const char* route : {"/v1/projection?", "/v1/projection/status?"}) {
      auto r = get(route + c.query);
      ASSERT_TRUE(r) << c.query;
      EXPECT_EQ(r->status, c.status) << route << c.query << " " << r->body;
      EXPECT_NE(r->body.find(c.needle), std::string::npos) << c.query << " " << r->body;
    }
  }
  // None of them started a computation (PCA may be on disk from the test above; UMAP is not).
  EXPECT_EQ(status("method=umap&n_neighbors=5")["state"], "idle");
}

}  // namespace
}  // namespace embedscope::server
