// safetensors reader: the bad-file suite of docs/reliability.md 6.1 (one TEST per case, files from
// safetensors_cases.h), the accepted edge cases, matrix loading and the vocabulary layout.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "embedscope/core/error.h"
#include "embedscope/formats/safetensors.h"
#include "formats/safetensors_cases.h"
#include "test_util.h"

namespace embedscope {
namespace {

using test::TempDir;

const test::BadFile& bad_case(const std::string& id) {
  static const auto all = test::safetensors_bad_files();
  for (const auto& c : all)
    if (c.id == id) return c;
  ES_CHECK_MSG(false, "unknown case id");
  std::abort();
}

std::string good_case(const std::string& id) {
  for (const auto& c : test::safetensors_good_files())
    if (c.id == id) return c.bytes;
  ES_CHECK_MSG(false, "unknown case id");
  std::abort();
}

void expect_rejected(const std::string& id) {
  const auto& c = bad_case(id);
  TempDir d;
  const std::string path = d.file(id + ".safetensors");
  test::write_file(path, c.bytes);
  try {
    SafetensorsFile::open(path);
    ADD_FAILURE() << id << " was accepted";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_EQ(error_code_name(e.code()), error_code_name(c.code)) << m;
    EXPECT_NE(m.find(path), std::string::npos) << "message lacks the path: " << m;
    for (const auto& n : c.needles)
      EXPECT_NE(m.find(n), std::string::npos) << "lacks '" << n << "': " << m;
  }
}

SafetensorsFile open_bytes(TempDir& d, const std::string& bytes,
                           const std::string& name = "f.safetensors") {
  test::write_file(d.file(name), bytes);
  return SafetensorsFile::open(d.file(name));
}

std::vector<float> row(const EmbeddingTable& t, size_t i) { return t.row(i); }

TEST(SafetensorsReader, RejectsEmptyFile) { expect_rejected("S1-empty"); }
TEST(SafetensorsReader, RejectsSevenByteFile) { expect_rejected("S1-7bytes"); }
TEST(SafetensorsReader, RejectsZeroHeaderLength) { expect_rejected("S2-zero-length"); }
TEST(SafetensorsReader, RejectsHeaderOverLimit) { expect_rejected("S3-over-limit"); }
TEST(SafetensorsReader, RejectsHeaderLengthU64Max) { expect_rejected("S3-u64-max"); }
TEST(SafetensorsReader, RejectsHeaderLengthBeyondFile) { expect_rejected("S4-beyond-file"); }
TEST(SafetensorsReader, RejectsInvalidUtf8WithOffset) { expect_rejected("S5-not-utf8"); }
TEST(SafetensorsReader, RejectsTruncatedJson) { expect_rejected("S6-truncated"); }
TEST(SafetensorsReader, RejectsNonJson) { expect_rejected("S6-not-json"); }
TEST(SafetensorsReader, RejectsJsonArray) { expect_rejected("S6-array"); }
TEST(SafetensorsReader, RejectsDeeplyNestedJsonWithoutRecursing) {
  expect_rejected("S6-deep-nesting");
}
TEST(SafetensorsReader, RejectsNulPadding) { expect_rejected("S8-nul-padding"); }
TEST(SafetensorsReader, RejectsDuplicateNameWithDifferentInfo) {
  expect_rejected("S9-duplicate-different");
}
TEST(SafetensorsReader, RejectsDuplicateNameWithIdenticalInfo) {
  expect_rejected("S9-duplicate-identical");
}
TEST(SafetensorsReader, RejectsNumericMetadataValue) { expect_rejected("S10-metadata-number"); }
TEST(SafetensorsReader, RejectsNestedMetadataValue) { expect_rejected("S10-metadata-nested"); }
TEST(SafetensorsReader, RejectsNulInTensorName) { expect_rejected("S11-nul-in-name"); }
TEST(SafetensorsReader, RejectsLoneSurrogateInTensorName) { expect_rejected("S11-lone-surrogate"); }
TEST(SafetensorsReader, RejectsUnknownDtype) { expect_rejected("S12-unknown-dtype"); }
TEST(SafetensorsReader, RejectsLowerCaseDtype) { expect_rejected("S12-lowercase-dtype"); }
TEST(SafetensorsReader, RejectsNegativeShape) { expect_rejected("S13-negative-dim"); }
TEST(SafetensorsReader, RejectsFloatShape) { expect_rejected("S13-float-dim"); }
TEST(SafetensorsReader, RejectsExponentShape) { expect_rejected("S13-exponent-dim"); }
TEST(SafetensorsReader, RejectsShapeAboveU64) { expect_rejected("S13-above-u64"); }
TEST(SafetensorsReader, ReadsShapeAbove2Pow53Exactly) { expect_rejected("S13-above-2p53"); }
TEST(SafetensorsReader, RejectsShapeProductOverflow) { expect_rejected("S14-overflow"); }
TEST(SafetensorsReader, RejectsShapeProductWrappingToZero) { expect_rejected("S14-wraps-to-zero"); }
TEST(SafetensorsReader, RejectsOneDataOffset) { expect_rejected("S15-one-offset"); }
TEST(SafetensorsReader, RejectsThreeDataOffsets) { expect_rejected("S15-three-offsets"); }
TEST(SafetensorsReader, RejectsNegativeDataOffset) { expect_rejected("S15-negative-offset"); }
TEST(SafetensorsReader, RejectsBeginAfterEnd) { expect_rejected("S15-begin-after-end"); }
TEST(SafetensorsReader, RejectsGapBetweenTensors) { expect_rejected("S16-gap"); }
TEST(SafetensorsReader, RejectsFirstTensorNotAtZero) { expect_rejected("S16-first-not-at-zero"); }
TEST(SafetensorsReader, RejectsAliasedTensors) { expect_rejected("S17-alias"); }
TEST(SafetensorsReader, RejectsOverlappingOffsets) { expect_rejected("S17-overlap"); }
TEST(SafetensorsReader, RejectsSizeMismatch) { expect_rejected("S18-size-mismatch"); }
TEST(SafetensorsReader, RejectsTrailingBytes) { expect_rejected("S19-trailing-bytes"); }
TEST(SafetensorsReader, RejectsTruncatedData) { expect_rejected("S20-truncated"); }
TEST(SafetensorsReader, RejectsF4WithOddBitCount) { expect_rejected("S21-f4-odd-bits"); }
TEST(SafetensorsReader, RejectsF6WithOddBitCount) { expect_rejected("S21-f6-odd-bits"); }

TEST(SafetensorsReader, AcceptsWhitespaceAroundHeader) {  // S7
  TempDir d;
  auto f = open_bytes(d, good_case("S7-whitespace"));
  auto e = f.load_matrix("m");
  EXPECT_EQ(row(e.table, 1), (std::vector<float>{3, 4}));
}

TEST(SafetensorsReader, AcceptsZeroSizeAndScalarTensors) {  // S22
  TempDir d;
  auto f = open_bytes(d, good_case("S22-zero-size-and-scalar"));
  ASSERT_EQ(f.tensors().size(), 2u);
  auto z = f.load_matrix("z");
  EXPECT_EQ(z.table.n_rows(), 2u);
  EXPECT_EQ(z.table.dim(), 0u);
  ASSERT_NE(f.find("s"), nullptr);
  EXPECT_TRUE(f.find("s")->shape.empty());
  float v;
  std::memcpy(&v, f.tensor_bytes(*f.find("s")).data(), 4);
  EXPECT_EQ(v, 7.0f);
  try {
    f.load_matrix("s");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("shape [] (0-D)"), std::string::npos) << e.what();
  }
}

TEST(SafetensorsReader, SortsTensorsListedOutOfOrder) {  // S23
  TempDir d;
  auto f = open_bytes(d, good_case("S23-out-of-order"));
  ASSERT_EQ(f.tensors().size(), 2u);
  EXPECT_EQ(f.tensors()[0].name, "a");
  EXPECT_EQ(f.tensors()[1].name, "b");
  float v;
  std::memcpy(&v, f.tensor_bytes(*f.find("b")).data(), 4);
  EXPECT_EQ(v, 2.0f);
}

TEST(SafetensorsReader, CopiesUnalignedDataAndMapsAlignedData) {  // S24
  TempDir d;
  auto f = open_bytes(d, good_case("S24-unaligned"), "u.safetensors");
  ASSERT_NE(f.data_start() % 4, 0u);
  auto e = f.load_matrix("m");
  EXPECT_FALSE(e.table.zero_copy());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(e.table.data()) % 4, 0u);
  EXPECT_EQ(row(e.table, 0), (std::vector<float>{1, 2}));
  EXPECT_EQ(row(e.table, 1), (std::vector<float>{3, 4}));

  std::string h = R"({"m":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})";
  h.append((8 - h.size() % 8) % 8, ' ');
  auto g = open_bytes(d, test::st_file(h, test::st_f32({1, 2, 3, 4})), "a.safetensors");
  auto ea = g.load_matrix("m");
  EXPECT_TRUE(ea.table.zero_copy());
  EXPECT_EQ(row(ea.table, 1), (std::vector<float>{3, 4}));
}

TEST(SafetensorsReader, AcceptsNanAndInfAndCountsThem) {  // S25
  TempDir d;
  const float inf = std::numeric_limits<float>::infinity();
  auto f =
      open_bytes(d, test::st_file(R"({"m":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})",
                                  test::st_f32({1, std::nanf(""), -inf, 4})));
  auto e = f.load_matrix("m");
  EXPECT_EQ(e.table.n_nonfinite(), 2u);
}

TEST(SafetensorsReader, IgnoresUnknownTensorKeysWithWarning) {  // S26
  TempDir d;
  auto f = open_bytes(d, good_case("S26-extra-key"));
  ASSERT_EQ(f.warnings().size(), 1u);
  EXPECT_NE(f.warnings()[0].find("'note'"), std::string::npos) << f.warnings()[0];
  auto e = f.load_matrix("m");
  ASSERT_EQ(e.warnings.size(), 1u);
  EXPECT_EQ(row(e.table, 0), (std::vector<float>{1, 2}));
}

TEST(SafetensorsReader, RecognisesEveryDtypeOfTheSpec) {
  TempDir d;
  auto f = open_bytes(d, good_case("all-dtypes"));
  EXPECT_EQ(f.tensors().size(), 22u);
  EXPECT_EQ(f.find("t_F4")->end - f.find("t_F4")->begin, 4u);
  EXPECT_EQ(f.find("t_F6_E3M2")->end - f.find("t_F6_E3M2")->begin, 6u);
  EXPECT_EQ(f.find("t_C64")->end - f.find("t_C64")->begin, 64u);
  EXPECT_EQ(safetensors_dtype_bits("F8_E4M3FNUZ"), 8);
  EXPECT_EQ(safetensors_dtype_bits("bf16"), 0);
}

TEST(SafetensorsReader, ReadsMetadata) {
  TempDir d;
  auto f = open_bytes(d, test::st_file(R"({"__metadata__":{"format":"pt","x":"é"},)"
                                       R"("m":{"dtype":"F32","shape":[1,1],"data_offsets":[0,4]}})",
                                       test::st_f32({1})));
  EXPECT_EQ(f.metadata().at("format"), "pt");
  EXPECT_EQ(f.metadata().at("x"), "é");
  EXPECT_EQ(f.load_matrix("m").metadata.at("format"), "pt");
}

TEST(SafetensorsReader, ConvertsF64ToF32) {
  TempDir d;
  double v[2] = {0.1, -1e-3};
  std::string data(16, '\0');
  std::memcpy(data.data(), v, 16);
  auto f = open_bytes(
      d, test::st_file(R"({"m":{"dtype":"F64","shape":[1,2],"data_offsets":[0,16]}})", data));
  auto e = f.load_matrix("m");
  EXPECT_EQ(e.table.dtype(), DType::kF32);
  EXPECT_EQ(e.source_dtype, "F64");
  EXPECT_EQ(row(e.table, 0), (std::vector<float>{float(0.1), float(-1e-3)}));
}

TEST(SafetensorsReader, RejectsIntegerMatrixAsUnsupported) {
  TempDir d;
  auto f =
      open_bytes(d, test::st_file(R"({"ids":{"dtype":"I32","shape":[1,1],"data_offsets":[0,4]}})",
                                  std::string(4, '\0')));
  try {
    f.load_matrix("ids");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("tensor 'ids' has dtype I32"), std::string::npos)
        << e.what();
  }
}

TEST(SafetensorsReader, NamesTheTensorsWhenOneIsMissing) {
  TempDir d;
  auto f = open_bytes(d, good_case("S23-out-of-order"));
  try {
    f.load_matrix("wte");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("no tensor 'wte'; tensors: 'a', 'b'"), std::string::npos)
        << e.what();
  }
}

TEST(SafetensorsEmbeddings, ListsCandidatesWhenSeveralMatrices) {
  TempDir d;
  test::write_file(d.file("two.safetensors"),
                   test::st_file(R"({"wte":{"dtype":"F32","shape":[1,1],"data_offsets":[0,4]},)"
                                 R"("wpe":{"dtype":"F32","shape":[1,1],"data_offsets":[4,8]}})",
                                 test::st_f32({1, 2})));
  try {
    load_safetensors_embeddings(d.file("two.safetensors"), {});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("2 2-D tensors"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'wte', 'wpe'"), std::string::npos) << e.what();
  }
  LoadOptions o;
  o.tensor = "wpe";
  auto e = load_safetensors_embeddings(d.file("two.safetensors"), o);
  EXPECT_EQ(e.tensor, "wpe");
  EXPECT_EQ(row(e.table, 0), (std::vector<float>{2}));
}

TEST(SafetensorsEmbeddings, RoundTripsTableWithVocabulary) {
  TempDir d;
  auto t = EmbeddingTable::from_f32(4, 2, {1, 2, 3, 4, 5, 6, 7, 8});
  Vocabulary v;
  v.add("king");
  v.add(std::string("\xff\x00q", 3));  // not UTF-8, holds a NUL: stored as bytes
  v.add("");
  v.add("émile");
  v.set_counts({10, 0, 3, 1ull << 40});
  SaveOptions so;
  so.tensor = "wte";
  so.metadata["source"] = "test";
  save_safetensors_embeddings(d.file("v.safetensors"), t, &v, so);

  auto e = load_safetensors_embeddings(d.file("v.safetensors"), {});  // vocab tensors are 1-D
  EXPECT_EQ(e.tensor, "wte");
  EXPECT_EQ(e.format, FileFormat::kSafetensors);
  EXPECT_TRUE(e.table.zero_copy());
  EXPECT_EQ(row(e.table, 3), (std::vector<float>{7, 8}));
  ASSERT_EQ(e.vocab.size(), 4u);
  EXPECT_EQ(e.vocab.tokens(), v.tokens());
  EXPECT_EQ(e.vocab.counts(), v.counts());
  EXPECT_EQ(e.metadata.at("source"), "test");
  EXPECT_EQ(e.metadata.at("embedscope.version"), "1");
}

TEST(SafetensorsEmbeddings, KeepsF16AndBF16Bits) {
  TempDir d;
  for (DType dt : {DType::kF16, DType::kBF16}) {
    std::vector<uint16_t> bits = {0x3c00, 0xc000, 0x7bff, 0x0001, 0x8000, 0x3555};
    auto t = EmbeddingTable::from_u16(3, 2, dt, bits);
    save_safetensors_embeddings(d.file("h.safetensors"), t, nullptr, {});
    auto e = load_safetensors_embeddings(d.file("h.safetensors"), {});
    ASSERT_EQ(e.table.dtype(), dt);
    EXPECT_EQ(e.source_dtype, dtype_name(dt));
    EXPECT_EQ(std::vector<uint16_t>(e.table.u16(), e.table.u16() + 6), bits);
    EXPECT_TRUE(e.vocab.empty());
  }
}

TEST(SafetensorsEmbeddings, RejectsVocabularyOffsetsOutOfOrder) {
  TempDir d;
  int64_t offs[3] = {0, 3, 2};
  std::string o(24, '\0');
  std::memcpy(o.data(), offs, 24);
  test::write_file(
      d.file("v.safetensors"),
      test::st_file(
          R"({"m":{"dtype":"F32","shape":[2,1],"data_offsets":[0,8]},)"
          R"("embedscope.vocab.bytes":{"dtype":"U8","shape":[2],"data_offsets":[8,10]},)"
          R"("embedscope.vocab.offsets":{"dtype":"I64","shape":[3],"data_offsets":[10,34]}})",
          test::st_f32({1, 2}) + "ab" + o));
  try {
    load_safetensors_embeddings(d.file("v.safetensors"), {});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("embedscope.vocab.offsets[1] = 3"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace embedscope
