// api/: the operations every front end calls give the same answers from many threads as from
// one, and their JSON is what the search layer computes (checked against a brute-force scan).
#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "embedscope/api/neighbors.h"
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

}  // namespace

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
