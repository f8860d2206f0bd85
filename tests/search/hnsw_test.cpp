// HNSW index against exact search (its slow twin), save/load round trip, the model-hash guard
// and the bad-file cases of the index format.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <random>

#include "embedscope/core/error.h"
#include "embedscope/search/hnsw_index.h"
#include "embedscope/search/searcher.h"
#include "test_util.h"

namespace embedscope {
namespace {

using test::TempDir;

// Clustered data (what trained embeddings look like to a graph index): 40 centres, noise.
EmbeddingTable clustered(size_t n, size_t dim, uint32_t seed) {
  std::mt19937 g(seed);
  std::normal_distribution<float> nd;
  std::vector<float> c(40 * dim), d(n * dim);
  for (float& x : c) x = nd(g);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < dim; ++j) d[i * dim + j] = c[(i % 40) * dim + j] + 0.6f * nd(g);
  return EmbeddingTable::from_f32(n, dim, std::move(d));
}

double recall(const HnswIndex& ix, const Searcher& s, size_t ef) {
  size_t hit = 0, total = 0;
  for (TokenId q = 0; q < 200; ++q) {
    auto ex = s.search(s.row(q), {.k = 10, .exclude = {q}});
    auto ap = ix.search(s.row(q), {.k = 10, .ef = ef, .exclude = {q}});
    for (auto& e : ex)
      for (auto& a : ap) hit += a.id == e.id;
    total += ex.size();
  }
  return double(hit) / double(total);
}

Error error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  return Error(ErrorCode::kIo, "no error thrown");
}

TEST(HnswIndex, RecallAtTenAgainstExactAndScoresAreCosines) {
  EmbeddingTable t = clustered(3000, 32, 1);
  Searcher s(t);
  HnswIndex ix = HnswIndex::build(t, {.M = 16, .ef_construction = 100, .n_threads = 2});
  EXPECT_GE(recall(ix, s, 64), 0.95);
  auto ap = ix.search(s.row(5), {.k = 3, .ef = 64, .exclude = {5}});
  ASSERT_EQ(ap.size(), 3u);
  for (auto& a : ap) EXPECT_NEAR(a.score, s.score(s.row(5), a.id, Metric::kCosine), 1e-5);
  EXPECT_TRUE(std::is_sorted(ap.begin(), ap.end(), neighbor_before));
}

TEST(HnswIndex, SavedIndexLoadsAndAnswersTheSame) {
  TempDir d;
  EmbeddingTable t = clustered(1000, 16, 2);
  HnswIndex ix = HnswIndex::build(t, {.M = 8, .ef_construction = 50});
  uint64_t h = table_content_hash(t);
  ix.save(d.file("a.hnsw"), h);
  HnswIndex back = HnswIndex::load(d.file("a.hnsw"), h);
  EXPECT_EQ(back.n_rows(), 1000u);
  EXPECT_EQ(back.dim(), 16u);
  EXPECT_EQ(back.M(), 8u);
  Searcher s(t);
  for (TokenId q = 0; q < 20; ++q)
    EXPECT_EQ(ix.search(s.row(q), {.k = 5, .ef = 40}), back.search(s.row(q), {.k = 5, .ef = 40}));
}

TEST(HnswIndex, RefusesAnIndexBuiltForAnotherModel) {
  TempDir d;
  EmbeddingTable t = clustered(200, 8, 3);
  HnswIndex::build(t, {}).save(d.file("a.hnsw"), table_content_hash(t));
  std::vector<float> changed(t.f32(), t.f32() + 200 * 8);
  changed[77] += 1.0f;
  uint64_t h2 = table_content_hash(EmbeddingTable::from_f32(200, 8, changed));
  EXPECT_NE(h2, table_content_hash(t));
  Error e = error_of([&] { HnswIndex::load(d.file("a.hnsw"), h2); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("different model"), std::string::npos) << e.what();
}

class HnswBadFile : public ::testing::Test {
 protected:
  void SetUp() override {
    t_ = clustered(100, 8, 4);
    HnswIndex::build(t_, {}).save(d_.file("good.hnsw"), table_content_hash(t_));
    good_ = test::read_file(d_.file("good.hnsw"));
  }
  Error load(const std::string& bytes) {
    test::write_file(d_.file("bad.hnsw"), bytes);
    return error_of([&] { HnswIndex::load(d_.file("bad.hnsw"), table_content_hash(t_)); });
  }
  TempDir d_;
  EmbeddingTable t_;
  std::string good_;
};

TEST_F(HnswBadFile, RejectsAMissingFile) {
  Error e = error_of([&] { HnswIndex::load(d_.file("none.hnsw"), 0); });
  EXPECT_EQ(e.code(), ErrorCode::kNotFound);
  EXPECT_NE(std::string(e.what()).find("none.hnsw"), std::string::npos);
}

TEST_F(HnswBadFile, RejectsWrongMagic) {
  std::string b = good_;
  b[0] = 'X';
  Error e = load(b);
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_NE(std::string(e.what()).find("bytes 0..7"), std::string::npos) << e.what();
}

TEST_F(HnswBadFile, RejectsAHeaderLengthBeyondTheFile) {
  std::string b = good_;
  uint64_t big = uint64_t(1) << 40;
  std::memcpy(b.data() + 8, &big, 8);
  Error e = load(b);
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_NE(std::string(e.what()).find("header length 1099511627776 at byte 8"), std::string::npos) << e.what();
}

TEST_F(HnswBadFile, RejectsUnparsableHeaderJson) {
  std::string b = good_;
  b[16] = '#';
  Error e = load(b);
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_NE(std::string(e.what()).find("header JSON at byte 16"), std::string::npos) << e.what();
}

TEST_F(HnswBadFile, RejectsATruncatedBlob) {
  Error e = load(good_.substr(0, good_.size() - 10));
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_NE(std::string(e.what()).find("blob_bytes"), std::string::npos) << e.what();
}

TEST_F(HnswBadFile, RejectsAModifiedBlob) {
  std::string b = good_;
  b[b.size() - 5] ^= 0x5a;
  Error e = load(b);
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_NE(std::string(e.what()).find("does not match blob_hash"), std::string::npos) << e.what();
}

TEST_F(HnswBadFile, RejectsAShortFile) {
  Error e = load("ESHN");
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_NE(std::string(e.what()).find("file has 4 bytes"), std::string::npos) << e.what();
}

TEST(HnswIndex, RejectsBadBuildOptions) {
  EmbeddingTable t = clustered(50, 4, 5);
  EXPECT_EQ(error_of([&] { HnswIndex::build(t, {.M = 1}); }).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(error_of([&] { HnswIndex::build(t, {.ef_construction = 0}); }).code(),
            ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace embedscope
