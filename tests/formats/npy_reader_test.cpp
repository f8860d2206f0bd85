// .npy reader: the bad-file suite of docs/reliability.md 6.4 (one TEST per case, files from
// npy_cases.h) and the handcrafted accepted cases. Files numpy writes: npy_numpy_test.cpp.
#include <gtest/gtest.h>

#include "embedscope/core/error.h"
#include "embedscope/formats/npy.h"
#include "formats/npy_cases.h"
#include "test_util.h"

namespace embedscope {
namespace {

using test::TempDir;

void expect_rejected(const std::string& id) {
  static const auto all = test::npy_bad_files();
  const test::BadFile* c = nullptr;
  for (const auto& x : all)
    if (x.id == id) c = &x;
  ASSERT_NE(c, nullptr) << id;
  TempDir d;
  const std::string path = d.file(id + ".npy");
  test::write_file(path, c->bytes);
  try {
    load_npy(path, {});
    ADD_FAILURE() << id << " was accepted";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_EQ(error_code_name(e.code()), error_code_name(c->code)) << m;
    EXPECT_NE(m.find(path), std::string::npos) << "message lacks the path: " << m;
    for (const auto& n : c->needles)
      EXPECT_NE(m.find(n), std::string::npos) << "lacks '" << n << "': " << m;
  }
}

LoadedEmbeddings load_good(const std::string& id) {
  for (const auto& c : test::npy_good_files())
    if (c.id == id) {
      TempDir d;
      test::write_file(d.file("g.npy"), c.bytes);
      return load_npy(d.file("g.npy"), {});  // the table keeps the mapping alive
    }
  ES_CHECK_MSG(false, "unknown case");
  std::abort();
}

TEST(NpyReader, RejectsBadMagic) { expect_rejected("N1-bad-magic"); }
TEST(NpyReader, RejectsZeroedFile) { expect_rejected("N1-zeroed"); }
TEST(NpyReader, RejectsVersion4) { expect_rejected("N2-version-4"); }
TEST(NpyReader, RejectsVersion0) { expect_rejected("N2-version-0"); }
TEST(NpyReader, RejectsV1HeaderOverLimitBeforeReading) { expect_rejected("N3-v1-over-limit"); }
TEST(NpyReader, RejectsV2Header4GBBeforeReading) { expect_rejected("N3-v2-4e9"); }
TEST(NpyReader, RejectsHeaderThatIsNotADict) { expect_rejected("N5-not-a-dict"); }
TEST(NpyReader, RejectsMissingDescr) { expect_rejected("N5-missing-descr"); }
TEST(NpyReader, RejectsMissingShape) { expect_rejected("N5-missing-shape"); }
TEST(NpyReader, RejectsMissingFortranOrder) { expect_rejected("N5-missing-fortran"); }
TEST(NpyReader, RejectsNumpyIntCallInShape) { expect_rejected("N5-numpy-int-in-shape"); }
TEST(NpyReader, RejectsExtraKey) { expect_rejected("N5-extra-key"); }
TEST(NpyReader, RejectsDuplicateKey) { expect_rejected("N5-duplicate-key"); }
TEST(NpyReader, NeverEvaluatesHeaderCode) { expect_rejected("N5-eval-attempt"); }
TEST(NpyReader, RejectsObjectArrays) { expect_rejected("N6-object"); }
TEST(NpyReader, RejectsStructuredDtype) { expect_rejected("N6-structured"); }
TEST(NpyReader, RejectsIntegerDtype) { expect_rejected("N6-int32"); }
TEST(NpyReader, RejectsHugeShapeInSmallFile) { expect_rejected("N9-huge-shape"); }
TEST(NpyReader, RejectsNegativeDimension) { expect_rejected("N9-negative-dim"); }
TEST(NpyReader, RejectsDimensionOf2Pow64) { expect_rejected("N9-dim-2p64"); }
TEST(NpyReader, RejectsShapeProductOverflow) { expect_rejected("N9-product-overflow"); }
TEST(NpyReader, RejectsShortData) { expect_rejected("N10-short"); }
TEST(NpyReader, RejectsLongData) { expect_rejected("N10-long"); }
TEST(NpyReader, RejectsRank3) { expect_rejected("N-rank-3"); }
TEST(NpyReader, RejectsScalar) { expect_rejected("N-scalar"); }

TEST(NpyReader, AcceptsHeaderLongerThan256Bytes) {  // N4
  auto e = load_good("N4-long-header");
  EXPECT_EQ(e.table.n_rows(), 2u);
  EXPECT_EQ(e.table.row(1), (std::vector<float>{4, 5, 6}));
}

TEST(NpyReader, ReadsVersion2) {
  auto e = load_good("v2-f4");
  EXPECT_EQ(e.table.row(0), (std::vector<float>{1, 2, 3}));
}

TEST(NpyReader, ReadsOneDimensionalArrayAsOneRow) {
  auto e = load_good("v3-f4-1d");
  EXPECT_EQ(e.table.n_rows(), 1u);
  EXPECT_EQ(e.table.row(0), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(NpyReader, TransposesFortranOrder) {  // N8
  auto e = load_good("fortran");
  EXPECT_FALSE(e.table.zero_copy());
  // Column-major (2, 3) holding 1..6: column 0 = {1, 2}, column 1 = {3, 4}, column 2 = {5, 6}.
  EXPECT_EQ(e.table.row(0), (std::vector<float>{1, 3, 5}));
  EXPECT_EQ(e.table.row(1), (std::vector<float>{2, 4, 6}));
}

TEST(NpyReader, AcceptsPython2LongIntegers) {
  auto e = load_good("legacy-long-ints");
  EXPECT_EQ(e.table.n_rows(), 3u);
  EXPECT_EQ(e.table.dim(), 4u);
  EXPECT_EQ(e.table.dtype(), DType::kF16);
  EXPECT_EQ(e.table.u16()[11], 0x3c3c);
}

TEST(NpyReader, SwapsBigEndianF8) {  // N7
  TempDir d;
  double v[2] = {0.25, -3.5};
  std::string data(16, '\0');
  for (int i = 0; i < 2; ++i)
    for (int b = 0; b < 8; ++b) data[i * 8 + b] = reinterpret_cast<const char*>(&v[i])[7 - b];
  test::write_file(d.file("be.npy"), test::npy_file(1, test::npy_dict(">f8", "(1, 2)"), data));
  auto e = load_npy(d.file("be.npy"), {});
  EXPECT_EQ(e.source_dtype, ">f8");
  EXPECT_EQ(e.table.row(0), (std::vector<float>{0.25f, -3.5f}));
}

TEST(NpyWriter, WritesPaddedVersion1HeaderAndReadsBack) {
  TempDir d;
  auto t = EmbeddingTable::from_f32(2, 2, {1, -2, 3.5f, 4});
  save_npy(d.file("w.npy"), t);
  std::string s = test::read_file(d.file("w.npy"));
  EXPECT_EQ(s.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  uint16_t hl;
  std::memcpy(&hl, s.data() + 8, 2);
  EXPECT_EQ((10 + hl) % 64, 0u);
  EXPECT_EQ(s[10 + hl - 1], '\n');
  auto e = load_npy(d.file("w.npy"), {});
  EXPECT_TRUE(e.table.zero_copy());
  EXPECT_EQ(e.table.row(1), (std::vector<float>{3.5f, 4}));
}

TEST(NpyWriter, WritesBF16AsF32) {
  TempDir d;
  auto t = EmbeddingTable::from_u16(1, 2, DType::kBF16, {0x3f80, 0xc040});  // 1.0, -3.0
  save_npy(d.file("b.npy"), t);
  auto e = load_npy(d.file("b.npy"), {});
  EXPECT_EQ(e.table.dtype(), DType::kF32);
  EXPECT_EQ(e.table.row(0), (std::vector<float>{1.0f, -3.0f}));
}

}  // namespace
}  // namespace embedscope
