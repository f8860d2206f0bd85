// api/: the operations every front end calls give the same answers from many threads as from
// one, and their JSON is what the search layer computes (checked against a brute-force scan).
#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "embedscope/analysis/baseline.h"
#include "embedscope/api/explore.h"
#include "embedscope/api/info.h"
#include "embedscope/api/lookup.h"
#include "embedscope/api/neighbors.h"
#include "embedscope/api/relations.h"
#include "embedscope/core/error.h"
#include "embedscope/core/thread_pool.h"
#include "embedscope/formats/embeddings_file.h"
#include "test_util.h"

using namespace embedscope;
using namespace embedscope::test;

namespace {

ModelHandlePtr word_model(size_t n, size_t dim) {
  std::vector<float> data(n * dim);
  uint64_t s = 12345;
  for (float& x : data) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = float(int64_t(s >> 40) % 2001 - 1000) / 1000.0f;
  }
  std::vector<std::string> words;
  for (size_t i = 0; i < n; ++i) words.push_back("w" + std::to_string(i));
  Model m;
  m.emb.table = EmbeddingTable::from_f32(n, dim, std::move(data));
  for (auto& w : words) m.emb.vocab.add(std::move(w));
  m.ref = m.path = "synthetic";
  return ModelHandle::from_model(std::move(m));
}

// Brute-force cosine top-k over every row but `self`.
std::vector<TokenId> brute_top(const EmbeddingTable& t, size_t self, size_t k) {
  std::vector<float> q = t.row(self);
  std::vector<std::pair<double, TokenId>> all;
  for (size_t i = 0; i < t.n_rows(); ++i) {
    if (i == self) continue;
    std::vector<float> r = t.row(i);
    double d = 0, nq = 0, nr = 0;
    for (size_t j = 0; j < r.size(); ++j)
      d += double(q[j]) * r[j], nq += double(q[j]) * q[j], nr += double(r[j]) * r[j];
    all.push_back({-d / std::sqrt(nq * nr), TokenId(i)});
  }
  std::sort(all.begin(), all.end());
  std::vector<TokenId> out;
  for (size_t i = 0; i < k; ++i) out.push_back(all[i].second);
  return out;
}

double brute_cos(const EmbeddingTable& t, size_t a, size_t b) {
  std::vector<float> x = t.row(a), y = t.row(b);
  double d = 0, nx = 0, ny = 0;
  for (size_t j = 0; j < x.size(); ++j)
    d += double(x[j]) * y[j], nx += double(x[j]) * x[j], ny += double(y[j]) * y[j];
  return d / std::sqrt(nx * ny);
}

std::vector<std::string> keys(const nlohmann::json& j) {
  std::vector<std::string> k;
  for (auto it = j.begin(); it != j.end(); ++it) k.push_back(it.key());
  return k;
}

}  // namespace

TEST(ApiRelations, SimilarityRankAndDoesntMatchEqualABruteForceComputation) {
  ModelHandlePtr h = word_model(300, 16);
  const EmbeddingTable& t = h->table();
  for (auto [a, b] : {std::pair{1, 2}, {7, 250}, {42, 43}}) {
    api::PairResult r = api::word_pair(
        *h, {.a = "w" + std::to_string(a), .b = "w" + std::to_string(b), .rank = true});
    const double want = brute_cos(t, a, b);
    EXPECT_NEAR(r.similarity, want, 1e-5);
    size_t closer = 0;  // gensim rank: 1 + rows (not a) more similar to a than b is
    for (size_t y = 0; y < t.n_rows(); ++y)
      if (y != size_t(a) && brute_cos(t, a, y) > want) ++closer;
    EXPECT_EQ(r.rank, closer + 1) << a << " " << b;
    nlohmann::json j = api::to_json(*h, r);
    EXPECT_EQ(keys(j),
              (std::vector<std::string>{"a", "b", "inputs", "model", "rank", "similarity"}));
    EXPECT_EQ(j["inputs"][1]["ids"], nlohmann::json::array({b}));
  }
  // The odd one out: the lowest cosine to the mean of the unit vectors.
  std::vector<size_t> ids = {3, 17, 101, 260};
  std::vector<double> mean(t.dim(), 0.0);
  for (size_t id : ids) {
    std::vector<float> x = t.row(id);
    double n = 0;
    for (float v : x) n += double(v) * v;
    for (size_t d = 0; d < x.size(); ++d) mean[d] += x[d] / std::sqrt(n);
  }
  double best = 2;
  size_t odd = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    std::vector<float> x = t.row(ids[i]);
    double d = 0, nx = 0, nm = 0;
    for (size_t k = 0; k < x.size(); ++k)
      d += x[k] * mean[k], nx += double(x[k]) * x[k], nm += mean[k] * mean[k];
    if (d / std::sqrt(nx * nm) < best) best = d / std::sqrt(nx * nm), odd = i;
  }
  api::DoesntMatchResult d = api::doesnt_match(*h, {.words = {"w3", "w17", "w101", "w260"}});
  EXPECT_EQ(d.odd, odd);
  EXPECT_NEAR(d.scores[odd], best, 1e-5);
  nlohmann::json j = api::to_json(*h, d);
  EXPECT_EQ(keys(j),
            (std::vector<std::string>{"inputs", "model", "odd_one_out", "scores", "words"}));
  EXPECT_EQ(j["odd_one_out"], "w" + std::to_string(ids[odd]));
  EXPECT_THROW(api::word_pair(*h, {.a = "w1", .b = "nope"}), Error);
  EXPECT_THROW(api::doesnt_match(*h, {.words = {"w1"}}), Error);
}

TEST(ApiLookup, IdsAndWordsGiveTheTableRowsAndBadIdsAreNamed) {
  ModelHandlePtr h = word_model(50, 4);
  api::LookupResult r = api::lookup(*h, {.ids = api::parse_id_list("3,0,49", "--ids")});
  ASSERT_EQ(r.ids, (std::vector<TokenId>{3, 0, 49}));
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(r.vectors[i], h->table().row(size_t(r.ids[i])));
  EXPECT_EQ(api::lookup(*h, {.word = "w7"}).ids, std::vector<TokenId>{7});
  nlohmann::json j = api::to_json(*h, r);
  EXPECT_EQ(keys(j), (std::vector<std::string>{"dim", "rows"}));
  EXPECT_EQ(j["rows"][0]["token"], "w3");
  EXPECT_EQ(j["rows"][2]["vector"].size(), 4u);
  auto code = [&](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::make_pair(std::optional<ErrorCode>(e.code()), std::string(e.what()));
    }
    return std::make_pair(std::optional<ErrorCode>(), std::string("no error"));
  };
  auto [c1, m1] = code([&] { api::lookup(*h, {.ids = {50}}); });
  EXPECT_EQ(c1, ErrorCode::kOutOfRange);
  EXPECT_NE(m1.find("id 50 out of range [0, 50)"), std::string::npos) << m1;
  for (const char* bad : {"-1", "1,,2", "x", "2147483648", "1.5", ""}) {
    auto [c, m] = code([&] { api::parse_id_list(bad, "--ids"); });
    EXPECT_EQ(c, ErrorCode::kInvalidArgument) << bad;
    EXPECT_NE(m.find("--ids: '"), std::string::npos) << m;
  }
  EXPECT_EQ(code([&] { api::lookup(*h, {}); }).first, ErrorCode::kInvalidArgument);
  EXPECT_EQ(code([&] { api::lookup(*h, {.word = "nope"}); }).first, ErrorCode::kNotFound);
}

TEST(ApiInfo, NormStatisticsEqualABruteForcePassAndLargeTablesAreSampled) {
  ModelHandlePtr h = word_model(500, 8);
  const EmbeddingTable& t = h->table();
  double mn = 1e30, mx = 0, sum = 0;
  for (size_t r = 0; r < t.n_rows(); ++r) {
    std::vector<float> x = t.row(r);
    double n = 0;
    for (float v : x) n += double(v) * v;
    n = std::sqrt(n);
    mn = std::min(mn, n), mx = std::max(mx, n), sum += n;
  }
  api::ModelInfo i = api::model_info(h->model(), {});
  EXPECT_FALSE(i.norms.sampled);
  EXPECT_EQ(i.norms.rows, 500u);
  EXPECT_NEAR(i.norms.min, mn, 1e-5);
  EXPECT_NEAR(i.norms.max, mx, 1e-5);
  EXPECT_NEAR(i.norms.mean, sum / 500, 1e-5);
  nlohmann::json j = api::to_json(i);
  EXPECT_EQ(j["rows"], 500);
  EXPECT_EQ(j["dim"], 8);
  EXPECT_EQ(j["tokenizer"]["source"], "none");
  // The document `embedscope info --json` prints (api/info.h).
  EXPECT_EQ(keys(j), (std::vector<std::string>{"dim",           "dir",
                                               "dtype",         "format",
                                               "init_hint",     "load_ms",
                                               "matrix",        "metadata",
                                               "model_type",    "n_search_rows",
                                               "nonfinite",     "norms",
                                               "padded_rows",   "path",
                                               "ref",           "rows",
                                               "source_dtype",  "tensor",
                                               "tensor_reason", "tied",
                                               "tokenizer",     "tokenizer_files",
                                               "vocab_size",    "warnings",
                                               "zero_copy"}));
  // Over 32 MB and 4,096 rows: 64 runs of 64 rows unless full statistics are asked for.
  ModelHandlePtr big = word_model(4200, 2048);
  api::NormStats s = api::norm_stats(big->table(), false);
  EXPECT_TRUE(s.sampled);
  EXPECT_EQ(s.rows, 4096u);
  api::NormStats f = api::norm_stats(big->table(), true);
  EXPECT_FALSE(f.sampled);
  EXPECT_EQ(f.rows, 4200u);
  EXPECT_GE(s.min, f.min);
  EXPECT_LE(s.max, f.max);
}

TEST(ApiNeighbors, SingleAndBatchEqualABruteForceScan) {
  auto h = word_model(3000, 24);
  api::NeighborsRequest r;
  r.k = 5;
  r.queries = {api::NeighborQuery::word("w17")};
  auto one = api::neighbors(*h, r);
  ASSERT_EQ(one.answers.size(), 1u);
  std::vector<TokenId> got;
  for (auto& n : one.answers[0].neighbors) got.push_back(n.id);
  EXPECT_EQ(got, brute_top(h->table(), 17, 5));
  r.queries = {api::NeighborQuery::word("w17"), api::NeighborQuery::word("nope"),
               api::NeighborQuery::row(99)};
  auto batch = api::neighbors(*h, r);
  ASSERT_EQ(batch.answers.size(), 3u);
  EXPECT_TRUE(batch.batch);
  std::vector<TokenId> got_b;
  for (auto& n : batch.answers[0].neighbors) got_b.push_back(n.id);
  EXPECT_EQ(got_b, got);
  EXPECT_NE(batch.answers[1].error.find("'nope' is not in the vocabulary"), std::string::npos)
      << batch.answers[1].error;
  std::vector<TokenId> got_id;
  for (auto& n : batch.answers[2].neighbors) got_id.push_back(n.id);
  EXPECT_EQ(got_id, brute_top(h->table(), 99, 5));
  auto j = api::to_json(*h, batch);
  ASSERT_EQ(j["results"].size(), 3u);
  EXPECT_EQ(j["results"][1]["error"].get<std::string>(), batch.answers[1].error);
  EXPECT_EQ(j["results"][0]["neighbors"][0]["token"], "w" + std::to_string(got[0]));
}

TEST(ApiNeighbors, ManyThreadsGetTheSameAnswersAsOne) {
  auto h = word_model(4000, 32);
  std::vector<std::vector<TokenId>> want(16);
  for (size_t q = 0; q < 16; ++q) {
    api::NeighborsRequest r;
    r.k = 10;
    r.queries = {api::NeighborQuery::row(int64_t(q * 37))};
    api::NeighborsResult res = api::neighbors(*h, r);
    for (auto& n : res.answers[0].neighbors) want[q].push_back(n.id);
  }
  std::vector<std::vector<std::vector<TokenId>>> got(4, std::vector<std::vector<TokenId>>(16));
  std::vector<std::thread> ts;
  for (size_t t = 0; t < 4; ++t)
    ts.emplace_back([&, t] {
      for (size_t rep = 0; rep < 3; ++rep)
        for (size_t q = 0; q < 16; ++q) {
          api::NeighborsRequest r;
          r.k = 10;
          r.queries = {api::NeighborQuery::row(int64_t(q * 37))};
          got[t][q].clear();
          api::NeighborsResult res = api::neighbors(*h, r);
          for (auto& n : res.answers[0].neighbors) got[t][q].push_back(n.id);
        }
    });
  for (auto& t : ts) t.join();
  for (size_t t = 0; t < 4; ++t) EXPECT_EQ(got[t], want) << "thread " << t;
}

TEST(ApiNeighbors, BadRequestsAreErrorsNamingTheProblem) {
  auto h = word_model(100, 8);
  api::NeighborsRequest r;
  EXPECT_THROW(api::neighbors(*h, r), Error);  // no query
  r.queries = {api::NeighborQuery::word("w1")};
  r.k = 0;
  EXPECT_THROW(api::neighbors(*h, r), Error);
  r.k = 3;
  r.queries = {api::NeighborQuery::vec({1, 2, 3})};
  try {
    api::neighbors(*h, r);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("3 values, the model's dim is 8"), std::string::npos)
        << e.what();
  }
  r.queries = {api::NeighborQuery::vec({1, 2, 3, 4, 5, 6, 7, NAN})};
  EXPECT_THROW(api::neighbors(*h, r), Error);
  r.queries = {api::NeighborQuery::row(-1)};
  try {
    api::neighbors(*h, r);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kOutOfRange);
  }
  r.queries = {api::NeighborQuery::row(100)};
  EXPECT_THROW(api::neighbors(*h, r), Error);
}

// The baseline's init override is a per-call argument of the shared explorer: a request naming
// one gets the same baseline a private Explorer built with that init gives, the next request
// without one gets the model's own again, and a bad hint is refused naming it.
TEST(ApiExplore, InitOverrideIsPerCallAndEqualsAPrivateExplorer) {
  // Explore's candidates are whole words WordNet knows: rename the synthetic rows.
  const char* kWords[] = {"cat",   "dog",   "house", "tree",   "car",    "river", "music",
                          "paper", "green", "water", "stone",  "bread",  "horse", "glass",
                          "chair", "light", "money", "school", "garden", "window"};
  ModelHandlePtr base = word_model(20, 16);
  Model m;
  m.emb.table = EmbeddingTable::from_f32(20, 16, [&] {
    std::vector<float> v;
    for (size_t i = 0; i < 20; ++i) {
      std::vector<float> row = base->table().row(i);
      v.insert(v.end(), row.begin(), row.end());
    }
    return v;
  }());
  for (const char* w : kWords) m.emb.vocab.add(w);
  m.ref = m.path = "synthetic";
  ModelHandlePtr h = ModelHandle::from_model(std::move(m));
  api::ExploreRequest r;
  r.word = "cat";
  r.k = 5;
  r.seed = 11;
  r.init = "uniform:0.5";
  ExploreResult a = api::explore(*h, r);
  EXPECT_EQ(a.baseline.init, "uniform:0.5");
  Explorer own(h->model(), nullptr, api::shared_labeller(),
               {.k = 5, .seed = 11, .init = "uniform:0.5", .n_threads = 1});
  ExploreResult b = own.explore("cat");
  ASSERT_EQ(b.baseline.top_scores.size(), 5u);
  ASSERT_EQ(a.baseline.top_scores.size(), b.baseline.top_scores.size());
  for (size_t i = 0; i < b.baseline.top_scores.size(); ++i) {
    EXPECT_EQ(a.baseline.top_scores[i], b.baseline.top_scores[i]) << i;
    EXPECT_EQ(a.baseline.neighbors[i].id, b.baseline.neighbors[i].id) << i;
  }
  r.init.clear();
  ExploreResult c = api::explore(*h, r);
  EXPECT_EQ(c.baseline.init, parse_init_hint("").describe());
  EXPECT_NE(c.baseline.top_scores, a.baseline.top_scores);
  r.init = "normal:-1";
  try {
    api::explore(*h, r);
    ADD_FAILURE() << "a negative scale was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("normal:-1"), std::string::npos) << e.what();
  }
}
