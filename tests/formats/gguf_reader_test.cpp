// GGUF bad-input suite: docs/reliability.md 6.2, cases U1-U19 each rejected with its own test
// (error code and key message content), U11/U20 acceptance cases. Files are built byte by byte
// here because each case needs one precise defect.
#include <gtest/gtest.h>

#include <cstring>

#include "embedscope/core/error.h"
#include "embedscope/formats/gguf.h"

namespace embedscope {
namespace {

// Little-endian GGUF byte builder.
struct B {
  std::string s;
  B& u8(uint8_t v) {
    s.push_back(char(v));
    return *this;
  }
  B& u32(uint32_t v) {
    s.append(reinterpret_cast<const char*>(&v), 4);
    return *this;
  }
  B& u64(uint64_t v) {
    s.append(reinterpret_cast<const char*>(&v), 8);
    return *this;
  }
  B& str(const std::string& x) {
    u64(x.size());
    s += x;
    return *this;
  }
  B& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    s += "GGUF";
    return u32(version).u64(n_tensors).u64(n_kv);
  }
  B& kv_u32(const std::string& k, uint32_t v) { return str(k).u32(4).u32(v); }
  B& kv_str(const std::string& k, const std::string& v) { return str(k).u32(8).str(v); }
  B& tensor(const std::string& name, std::vector<uint64_t> ne, uint32_t type, uint64_t off) {
    str(name).u32(uint32_t(ne.size()));
    for (uint64_t n : ne) u64(n);
    return u32(type).u64(off);
  }
  B& pad(size_t align) {
    while (s.size() % align) s.push_back('\0');
    return *this;
  }
  B& zeros(size_t n) {
    s.append(n, '\0');
    return *this;
  }
};

GgufFile parse(const std::string& bytes) {
  auto owner = std::make_shared<std::string>(bytes);
  return GgufFile::from_bytes(
      owner, {reinterpret_cast<const std::byte*>(owner->data()), owner->size()}, "t.gguf");
}

// Asserts that parsing throws `code` and that the message contains every fragment.
void expect_reject(const std::string& bytes, ErrorCode code, std::vector<std::string> fragments) {
  try {
    parse(bytes);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(error_code_name(e.code()), error_code_name(code)) << e.what();
    std::string m = e.what();
    EXPECT_EQ(m.rfind("t.gguf: ", 0), 0u) << m;
    for (const auto& f : fragments)
      EXPECT_NE(m.find(f), std::string::npos) << "'" << f << "' not in: " << m;
  }
}

// A valid one-tensor file: F32 [4 x 2] token_embd.weight, alignment 32.
B valid_one_tensor() {
  B b;
  b.header(1, 1)
      .kv_str("general.architecture", "llama")
      .tensor("token_embd.weight", {4, 2}, 0, 0)
      .pad(32);
  for (int k = 0; k < 8; ++k) {
    float f = float(k);
    b.s.append(reinterpret_cast<const char*>(&f), 4);
  }
  return b;
}

TEST(GgufReader, AcceptsValidFile) {
  GgufFile g = parse(valid_one_tensor().s);
  LoadedEmbeddings e = g.load_matrix("token_embd.weight");
  EXPECT_EQ(e.table.n_rows(), 2u);
  EXPECT_EQ(e.table.row(1), (std::vector<float>{4, 5, 6, 7}));
}

// U1
TEST(GgufReader, RejectsBadMagic) {
  B b = valid_one_tensor();
  std::memcpy(b.s.data(), "FUGG", 4);
  expect_reject(b.s, ErrorCode::kCorrupt, {"bad magic", "byte offset 0"});
}
TEST(GgufReader, RejectsFileShorterThanHeader) {
  expect_reject(std::string("GGUF\x03\x00\x00\x00\x00", 9), ErrorCode::kCorrupt,
                {"truncated", "n_tensors"});
  expect_reject("GG", ErrorCode::kCorrupt, {"bad magic"});
}
// U2
TEST(GgufReader, RejectsVersionZero) {
  expect_reject(B().header(0, 0, 0).s, ErrorCode::kCorrupt, {"version 0"});
}
TEST(GgufReader, RejectsVersionOne) {
  expect_reject(B().header(0, 0, 1).s, ErrorCode::kUnsupported, {"version 1"});
}
TEST(GgufReader, RejectsVersionFour) {
  expect_reject(B().header(0, 0, 4).s, ErrorCode::kUnsupported, {"version 4", "newer"});
}
TEST(GgufReader, RejectsByteSwappedVersion) {
  expect_reject(B().header(0, 0, 0x03000000).s, ErrorCode::kUnsupported, {"endianness mismatch?"});
}
// U3
TEST(GgufReader, RejectsHugeTensorCount) {
  expect_reject(B().header(UINT64_MAX, 0).s, ErrorCode::kCorrupt,
                {"n_tensors 18446744073709551615", "cannot fit"});
  B b;
  b.header(uint64_t(1) << 32, 0).zeros(76);  // a 100-byte file
  expect_reject(b.s, ErrorCode::kCorrupt, {"n_tensors 4294967296"});
}
TEST(GgufReader, RejectsHugeKvCount) {
  expect_reject(B().header(0, UINT64_MAX).s, ErrorCode::kCorrupt, {"n_kv 18446744073709551615"});
  B b;
  b.header(0, uint64_t(1) << 32).zeros(76);
  expect_reject(b.s, ErrorCode::kCorrupt, {"n_kv 4294967296"});
}
// U4
TEST(GgufReader, RejectsHugeKeyLength) {
  B b;
  b.header(0, 1).u64(UINT64_MAX).zeros(16);
  expect_reject(b.s, ErrorCode::kCorrupt,
                {"key of metadata entry 0 length 18446744073709551615", "exceeds"});
}
TEST(GgufReader, RejectsEmptyKey) {
  B b;
  b.header(0, 1).kv_u32("", 1);
  expect_reject(b.s, ErrorCode::kCorrupt, {"key of metadata entry 0 is empty"});
}
TEST(GgufReader, RejectsNonAsciiKey) {
  B b;
  b.header(0, 1).kv_u32("gen\xc3\xa9ral", 1);
  expect_reject(b.s, ErrorCode::kCorrupt, {"printable ASCII", "0xc3"});
}
// U5
TEST(GgufReader, RejectsInvalidValueType) {
  B b;
  b.header(0, 1).str("a.b").u32(13).u32(0);
  expect_reject(b.s, ErrorCode::kCorrupt, {"'a.b' has invalid value type 13"});
  B c;
  c.header(0, 1).str("a.b").u32(0xFFFFFFFFu).u32(0);
  expect_reject(c.s, ErrorCode::kCorrupt, {"invalid value type 4294967295"});
}
TEST(GgufReader, RejectsArrayOfArrays) {
  B b;
  b.header(0, 1).str("a.b").u32(9).u32(9).u64(1).u32(9).u64(1);
  for (int k = 0; k < 1000; ++k) b.u32(9).u64(1);  // deep nesting is never recursed into
  expect_reject(b.s, ErrorCode::kCorrupt, {"'a.b' is an array of arrays"});
}
// U6
TEST(GgufReader, RejectsStringLongerThanFile) {
  B b;
  b.header(0, 1).str("a.b").u32(8).u64(uint64_t(1) << 30).zeros(8);  // a 1 GiB string claimed
  expect_reject(b.s, ErrorCode::kCorrupt, {"value of key 'a.b' length 1073741824", "exceeds"});
}
TEST(GgufReader, RejectsArrayLongerThanFile) {
  B b;
  b.header(0, 1).str("a.b").u32(9).u32(4).u64(1000).zeros(16);
  expect_reject(b.s, ErrorCode::kCorrupt, {"'a.b' array length 1000 x 4 bytes"});
  B c;
  c.header(0, 1).str("a.b").u32(9).u32(8).u64(uint64_t(1) << 40).zeros(16);
  expect_reject(c.s, ErrorCode::kCorrupt, {"'a.b' array length 1099511627776"});
}
// U7
TEST(GgufReader, RejectsDuplicateKey) {
  B b;
  b.header(0, 2).kv_u32("a.b", 1).kv_u32("a.b", 2);
  expect_reject(b.s, ErrorCode::kCorrupt, {"duplicate key 'a.b'", "entries 0 and 1"});
}
TEST(GgufReader, RejectsDuplicateTensorName) {
  B b;
  b.header(2, 0).tensor("w", {4}, 0, 0).tensor("w", {4}, 0, 32).pad(32).zeros(64);
  expect_reject(b.s, ErrorCode::kCorrupt, {"duplicate tensor name 'w'", "0 and 1"});
}
// U8
TEST(GgufReader, RejectsAlignmentZero) {
  B b;
  b.header(0, 1).kv_u32("general.alignment", 0);
  expect_reject(b.s, ErrorCode::kCorrupt, {"general.alignment 0", "power of two"});
}
TEST(GgufReader, RejectsAlignmentThirteen) {
  B b;
  b.header(0, 1).kv_u32("general.alignment", 13);
  expect_reject(b.s, ErrorCode::kCorrupt, {"general.alignment 13"});
}
TEST(GgufReader, RejectsHugeAlignment) {
  B b;
  b.header(0, 1).kv_u32("general.alignment", 1u << 31);
  expect_reject(b.s, ErrorCode::kCorrupt, {"general.alignment 2147483648", "1048576"});
}
TEST(GgufReader, RejectsAlignmentStoredAsInt32) {
  B b;
  b.header(0, 1).str("general.alignment").u32(5).u32(32);
  expect_reject(b.s, ErrorCode::kCorrupt, {"general.alignment has type INT32 (expected UINT32)"});
}
// U9
TEST(GgufReader, RejectsTensorNameOf64Bytes) {
  B b;
  b.header(1, 0).tensor(std::string(64, 'x'), {4}, 0, 0).pad(32).zeros(16);
  expect_reject(b.s, ErrorCode::kCorrupt, {"name is 64 bytes (limit 63)"});
}
// U10
TEST(GgufReader, RejectsFiveDimensions) {
  B b;
  b.header(1, 0).tensor("w", {1, 1, 1, 1, 1}, 0, 0).pad(32).zeros(4);
  expect_reject(b.s, ErrorCode::kCorrupt, {"tensor 'w' has invalid number of dimensions: 5 > 4"});
  B c;
  c.header(1, 0).str("w").u32(0xFFFFFFFFu).zeros(64);
  expect_reject(c.s, ErrorCode::kCorrupt, {"4294967295 > 4"});
}
// U11
TEST(GgufReader, RejectsNegativeDimension) {
  B b;
  b.header(1, 0).tensor("w", {4, uint64_t(-2)}, 0, 0).pad(32).zeros(16);
  expect_reject(b.s, ErrorCode::kCorrupt, {"tensor 'w' dimension 1 is negative (-2)"});
}
TEST(GgufReader, AcceptsZeroDimensionAsEmptyTensor) {
  B b;
  b.header(2, 0).tensor("empty", {0, 4}, 2, 0).tensor("w", {4, 1}, 0, 0).pad(32).zeros(16);
  GgufFile g = parse(b.s);
  ASSERT_EQ(g.tensors().size(), 2u);
  EXPECT_EQ(g.tensors()[0].n_bytes, 0u);
  EXPECT_EQ(g.load_matrix("w").table.n_rows(), 1u);
}
// U12
TEST(GgufReader, RejectsElementCountOverflow) {
  B b;
  b.header(1, 0).tensor("w", {uint64_t(1) << 32, uint64_t(1) << 32}, 0, 0).pad(32);
  expect_reject(b.s, ErrorCode::kCorrupt, {"tensor 'w' element count overflows"});
}
TEST(GgufReader, RejectsByteSizeOverflow) {
  B b;
  // 2^62 F32 elements: the count fits int64, the byte size does not.
  b.header(1, 0).tensor("w", {uint64_t(1) << 62}, 0, 0).pad(32);
  expect_reject(b.s, ErrorCode::kCorrupt, {"tensor 'w' byte size overflows"});
}
// U13
TEST(GgufReader, RejectsTensorTypeOutOfRange) {
  B b;
  b.header(1, 0).tensor("w", {4}, 40, 0).pad(32).zeros(16);
  expect_reject(b.s, ErrorCode::kCorrupt, {"tensor 'w' has invalid ggml type 40"});
  B c;
  c.header(1, 0).tensor("w", {4}, 4, 0).pad(32).zeros(16);  // a retired id
  expect_reject(c.s, ErrorCode::kCorrupt, {"invalid ggml type 4", "removed"});
}
// U14
TEST(GgufReader, RejectsRowNotMultipleOfBlockSize) {
  B b;
  b.header(1, 0).tensor("w", {33, 1}, 2, 0).pad(32).zeros(64);
  expect_reject(b.s, ErrorCode::kCorrupt,
                {"type Q4_0 has ne[0] = 33, not a multiple of the block size 32"});
}
// U15
TEST(GgufReader, RejectsOffsetNotRunningSum) {
  B b;
  b.header(2, 0).tensor("a", {4}, 0, 0).tensor("b", {4}, 0, 16).pad(32).zeros(64);
  expect_reject(b.s, ErrorCode::kCorrupt, {"tensor 'b' has offset 16, expected 32"});
}
TEST(GgufReader, RejectsHugeOffset) {
  B b;
  b.header(1, 0).tensor("a", {4}, 0, UINT64_MAX).pad(32).zeros(16);
  expect_reject(b.s, ErrorCode::kCorrupt,
                {"tensor 'a' has offset 18446744073709551615, expected 0"});
}
// U16
TEST(GgufReader, RejectsDataOneByteShort) {
  B b = valid_one_tensor();
  b.s.pop_back();
  expect_reject(b.s, ErrorCode::kCorrupt,
                {"tensor 'token_embd.weight' data", "not within file bounds"});
}
// U17
TEST(GgufReader, RejectsTwoHugeTensors) {
  B b;
  b.header(2, 0)
      .tensor("a", {0x7FFFFFFFFFFFFFC0ull}, 24, 0)
      .tensor("b", {0x7FFFFFFFFFFFFFC0ull}, 24, 0x7FFFFFFFFFFFFFC0ull)
      .pad(32);
  expect_reject(b.s, ErrorCode::kCorrupt, {"tensor 'a' data", "not within file bounds"});
}
// U18: a tensor whose region (up to the next tensor) is smaller than its type needs.
TEST(GgufReader, RejectsRegionSmallerThanType) {
  B b;
  // 'a' is Q8_0 [32] = 34 bytes (64 with padding) but 'b' claims to start at 32.
  b.header(2, 0).tensor("a", {32}, 8, 0).tensor("b", {4}, 0, 32).pad(32).zeros(128);
  expect_reject(b.s, ErrorCode::kCorrupt, {"tensor 'b' has offset 32, expected 64"});
}
// U19
B with_tokens(uint32_t scores_type, uint64_t n_scores) {
  B b;
  b.header(0, 2).str("tokenizer.ggml.tokens").u32(9).u32(8).u64(2).str("a").str("b");
  b.str("tokenizer.ggml.scores").u32(9).u32(scores_type).u64(n_scores);
  for (uint64_t k = 0; k < n_scores; ++k) scores_type == 1 ? b.u8(0) : b.u32(0);
  return b;
}
TEST(GgufReader, RejectsScoresTypedInt8) {
  expect_reject(with_tokens(1, 2).s, ErrorCode::kCorrupt,
                {"tokenizer.ggml.scores has type ARRAY of INT8 (expected ARRAY of FLOAT32)"});
}
TEST(GgufReader, RejectsScoresShorterThanTokens) {
  expect_reject(with_tokens(6, 1).s, ErrorCode::kCorrupt,
                {"tokenizer.ggml.scores has 1 entries but tokenizer.ggml.tokens has 2"});
}
TEST(GgufReader, RejectsTokensNotStrings) {
  B b;
  b.header(0, 1).str("tokenizer.ggml.tokens").u32(9).u32(4).u64(1).u32(7);
  expect_reject(b.s, ErrorCode::kCorrupt,
                {"tokenizer.ggml.tokens has type ARRAY of UINT32 (expected ARRAY of STRING)"});
}
TEST(GgufReader, RejectsEmbeddingRowsNotTokenCount) {
  B b;
  b.header(1, 1).str("tokenizer.ggml.tokens").u32(9).u32(8).u64(3).str("a").str("b").str("c");
  b.tensor("token_embd.weight", {4, 2}, 0, 0).pad(32).zeros(32);
  GgufFile g = parse(b.s);
  try {
    g.load_matrix("token_embd.weight");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("has 2 rows but tokenizer.ggml.tokens has 3 entries"),
              std::string::npos)
        << e.what();
  }
}
// Valid structure, unsupported quantisation: named.
TEST(GgufReader, ReportsUnsupportedQuantisationByName) {
  B b;
  b.header(1, 0).tensor("token_embd.weight", {256, 1}, 10, 0).pad(32).zeros(96);  // Q2_K: 84 B
  GgufFile g = parse(b.s);
  try {
    g.load_matrix("token_embd.weight");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("has type Q2_K"), std::string::npos) << e.what();
  }
}
TEST(GgufReader, RejectsBoolOtherThanZeroOrOne) {
  B b;
  b.header(0, 1).str("a.b").u32(7).u8(2);
  expect_reject(b.s, ErrorCode::kCorrupt, {"'a.b' BOOL value 2"});
}
// U20 (the generated files are in gguf_python_test.cpp): zero tensors, zero KVs.
TEST(GgufReader, AcceptsEmptyFile) {
  GgufFile g = parse(B().header(0, 0).s);
  EXPECT_TRUE(g.kvs().empty());
  EXPECT_TRUE(g.tensors().empty());
}

}  // namespace
}  // namespace embedscope
