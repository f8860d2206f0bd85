// HNSW index against exact search (its slow twin), save/load round trip, the model-hash guard
// and the bad-file cases of the index format.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
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
  EXPECT_NE(std::string(e.what()).find("header length 1099511627776 at byte 8"), std::string::npos)
      << e.what();
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

// The hnswlib payload as a hostile file would carry it: modified, then given a matching
// blob_hash, so each structural check is reached (the hash only catches accidents).
class HnswBadBlob : public HnswBadFile {
 protected:
  void SetUp() override {
    HnswBadFile::SetUp();
    std::memcpy(&hl_, good_.data() + 8, 8);
    header_ = nlohmann::json::parse(good_.substr(16, hl_));
    blob_ = good_.substr(16 + hl_);
    std::memcpy(&cur_, blob_.data() + 16, 8);
    std::memcpy(&sz_el_, blob_.data() + 24, 8);
    std::memcpy(&label_off_, blob_.data() + 32, 8);
    std::memcpy(&data_off_, blob_.data() + 40, 8);
    std::memcpy(&maxM_, blob_.data() + 56, 8);
    std::memcpy(&maxM0_, blob_.data() + 64, 8);
  }
  std::string file(const std::string& blob, nlohmann::json h) const {
    h["blob_bytes"] = blob.size();
    h["blob_hash"] = hash_hex(bytes_hash(std::as_bytes(std::span<const char>(blob))));
    std::string hs = h.dump();
    uint64_t n = hs.size();
    return good_.substr(0, 8) + std::string(reinterpret_cast<const char*>(&n), 8) + hs + blob;
  }
  Error load_blob(const std::string& blob) { return load(file(blob, header_)); }
  template <class T>
  void put(std::string& b, size_t off, T v) {
    std::memcpy(b.data() + off, &v, sizeof v);
  }
  size_t record(uint64_t i) const { return 96 + i * sz_el_; }
  uint64_t hl_ = 0, cur_ = 0, sz_el_ = 0, label_off_ = 0, data_off_ = 0, maxM_ = 0, maxM0_ = 0;
  nlohmann::json header_;
  std::string blob_;
};

void expect_corrupt(const Error& e, const std::string& part) {
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt) << e.what();
  EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
}

TEST_F(HnswBadBlob, RepairedHashOnAnUnchangedBlobLoads) {
  test::write_file(d_.file("same.hnsw"), file(blob_, header_));
  HnswIndex ix = HnswIndex::load(d_.file("same.hnsw"), table_content_hash(t_));
  EXPECT_EQ(ix.n_indexed(), 100u);
  EXPECT_EQ(cur_, 100u);
}

TEST_F(HnswBadBlob, RejectsALevelZeroLinkToANonElement) {
  std::string b = blob_;
  put<uint32_t>(b, record(3), 1);           // one link...
  put<uint32_t>(b, record(3) + 4, 100000);  // ...to an id beyond the element count
  expect_corrupt(load_blob(b), "element 3 level 0 links to 100000 (not an element)");
}

TEST_F(HnswBadBlob, RejectsALinkCountAboveMaxM0) {
  std::string b = blob_;
  put<uint32_t>(b, record(0), uint32_t(maxM0_ + 1));
  expect_corrupt(load_blob(b), "count must be <= " + std::to_string(maxM0_));
}

TEST_F(HnswBadBlob, RejectsADeletedMark) {
  std::string b = blob_;
  b[record(5) + 2] = 1;
  expect_corrupt(load_blob(b), "no deleted mark");
}

TEST_F(HnswBadBlob, RejectsAnEntryPointThatIsNotAnElement) {
  std::string b = blob_;
  put<uint32_t>(b, 52, 100);
  expect_corrupt(load_blob(b), "entry point 100 is not an element");
}

TEST_F(HnswBadBlob, RejectsALabelThatIsNotARow) {
  std::string b = blob_;
  put<uint64_t>(b, record(7) + label_off_, 100);
  expect_corrupt(load_blob(b), "element 7 label 100 is not a row (rows 100)");
}

TEST_F(HnswBadBlob, RejectsANonFiniteVectorValue) {
  std::string b = blob_;
  put<float>(b, record(2) + data_off_ + 4 * 3, std::numeric_limits<float>::quiet_NaN());
  expect_corrupt(load_blob(b), "element 2 value 3 is not finite");
}

TEST_F(HnswBadBlob, RejectsARecordLayoutForAnotherDim) {
  nlohmann::json h = header_;
  h["dim"] = 9;
  expect_corrupt(load(file(blob_, h)), "does not match dim 9");
}

TEST_F(HnswBadBlob, RejectsAnElementCountBeyondTheData) {
  std::string b = blob_;
  put<uint64_t>(b, 16, uint64_t(1) << 30);
  put<uint64_t>(b, 8, uint64_t(1) << 30);
  nlohmann::json h = header_;
  h["rows"] = uint64_t(1) << 31;
  expect_corrupt(load(file(b, h)), "element count 1073741824 x record size");
}

TEST_F(HnswBadBlob, RejectsBytesAfterTheLastLinkList) {
  expect_corrupt(load_blob(blob_ + std::string(4, '\0')),
                 "4 bytes follow the last element's links");
}

TEST_F(HnswBadBlob, RejectsALinkListSizeThatIsNotWholeLevels) {
  std::string b = blob_;
  put<uint32_t>(b, record(cur_), 3);  // element 0's upper-level list size
  expect_corrupt(load_blob(b), "link list size 3 of element 0");
}

TEST_F(HnswBadBlob, RejectsAnUpperLevelLinkToAnElementWithoutThatLevel) {
  // Walk the upper-level lists for an element with level >= 1 and one with level 0.
  std::string b = blob_;
  const size_t links = 4 + 4 * maxM_;
  size_t pos = record(cur_), upper_at = 0;
  uint32_t ground = UINT32_MAX, owner = 0;
  for (uint32_t i = 0; i < cur_; ++i) {
    uint32_t ls;
    std::memcpy(&ls, b.data() + pos, 4);
    if (ls == 0 && ground == UINT32_MAX) ground = i;
    if (ls >= links && upper_at == 0) {
      upper_at = pos + 4;
      owner = i;
    }
    pos += 4 + ls;
  }
  ASSERT_NE(upper_at, 0u);
  ASSERT_NE(ground, UINT32_MAX);
  put<uint32_t>(b, upper_at, 1);
  put<uint32_t>(b, upper_at + 4, ground);
  expect_corrupt(load_blob(b), "element " + std::to_string(owner) + " level 1 links to " +
                                   std::to_string(ground) + " (which has no such level)");
}

TEST(HnswIndex, IndexesOnlyAllowedRowsAndAnswersFromThem) {
  EmbeddingTable t = clustered(300, 8, 6);
  std::vector<uint8_t> allow(300, 0);
  for (size_t i = 0; i < 300; i += 3) allow[i] = 1;
  HnswIndex ix = HnswIndex::build(t, {.M = 8, .ef_construction = 100, .allow = &allow});
  EXPECT_EQ(ix.n_indexed(), 100u);
  EXPECT_EQ(ix.n_rows(), 300u);
  Searcher s(t);
  size_t hit = 0;
  for (TokenId q = 0; q < 60; ++q) {
    auto ex = s.search(s.row(q), {.k = 10, .allow = &allow});
    auto ap = ix.search(s.row(q), {.k = 10, .ef = 100});
    ASSERT_EQ(ap.size(), 10u);
    for (auto& a : ap) EXPECT_EQ(a.id % 3, 0) << a.id;
    for (auto& e : ex)
      for (auto& a : ap) hit += a.id == e.id;
  }
  EXPECT_GE(double(hit) / 600.0, 0.98);
  std::vector<uint8_t> none(300, 0);
  EXPECT_EQ(error_of([&] { HnswIndex::build(t, {.allow = &none}); }).code(),
            ErrorCode::kInvalidArgument);
}

TEST(HnswIndex, RejectsBadBuildOptions) {
  EmbeddingTable t = clustered(50, 4, 5);
  EXPECT_EQ(error_of([&] { HnswIndex::build(t, {.M = 1}); }).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(error_of([&] { HnswIndex::build(t, {.ef_construction = 0}); }).code(),
            ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace embedscope
