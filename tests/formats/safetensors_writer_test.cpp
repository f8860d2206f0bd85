// safetensors writer: S27 refusals, header padding, atomic replacement, and the S28 structured
// round trip (random dtypes, shapes and metadata -> write -> read identical).
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "embedscope/core/error.h"
#include "embedscope/formats/safetensors.h"
#include "formats/safetensors_cases.h"
#include "test_util.h"

namespace embedscope {
namespace {

using test::TempDir;

std::span<const std::byte> as_bytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

void expect_refused(const std::vector<SafetensorsWriteTensor>& ts,
                    const std::map<std::string, std::string>& meta, const std::string& needle) {
  TempDir d;
  const std::string path = d.file("out.safetensors");
  try {
    save_safetensors(path, ts, meta);
    ADD_FAILURE() << "writer accepted; expected '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(std::filesystem::is_empty(d.path())) << "a temp file was left behind";
}

const std::string kFour(4, '\x01');

TEST(SafetensorsWriter, RefusesReservedMetadataName) {
  expect_refused({{"__metadata__", "F32", {1}, as_bytes(kFour)}}, {}, "reserved");
}

TEST(SafetensorsWriter, RefusesNulInName) {
  expect_refused({{std::string("a\0b", 3), "F32", {1}, as_bytes(kFour)}}, {},
                 "NUL character at position 1");
}

TEST(SafetensorsWriter, RefusesInvalidUtf8Name) {
  expect_refused({{"a\xff", "F32", {1}, as_bytes(kFour)}}, {}, "not valid UTF-8");
}

TEST(SafetensorsWriter, RefusesDuplicateNames) {
  expect_refused({{"a", "F32", {1}, as_bytes(kFour)}, {"a", "F32", {1}, as_bytes(kFour)}}, {},
                 "tensor 'a' appears twice");
}

TEST(SafetensorsWriter, RefusesUnknownDtype) {
  expect_refused({{"a", "f32", {1}, as_bytes(kFour)}}, {}, "unknown dtype 'f32'");
}

TEST(SafetensorsWriter, RefusesDataSizeMismatch) {
  expect_refused({{"a", "F32", {2}, as_bytes(kFour)}}, {}, "needs 8 bytes (64 bits), data has 4");
}

TEST(SafetensorsWriter, RefusesHeaderOverLimit) {
  std::map<std::string, std::string> meta{{"big", std::string(kSafetensorsMaxHeaderSize, 'x')}};
  expect_refused({{"a", "F32", {1}, as_bytes(kFour)}}, meta, "limit 100000000");
}

TEST(SafetensorsWriter, PadsHeaderWithSpacesToEight) {
  TempDir d;
  save_safetensors(d.file("p.safetensors"),
                   std::vector<SafetensorsWriteTensor>{{"abc", "U8", {3}, as_bytes("xyz")}}, {});
  std::string s = test::read_file(d.file("p.safetensors"));
  uint64_t n;
  std::memcpy(&n, s.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  std::string header = s.substr(8, n);
  size_t end = header.rfind('}');
  EXPECT_EQ(header.find_first_not_of(' ', end + 1), std::string::npos) << header;
  EXPECT_EQ(s.substr(8 + n), "xyz");
}

TEST(SafetensorsWriter, ReplacesAMappedFileWithoutDisturbingIt) {
  TempDir d;
  const std::string path = d.file("m.safetensors");
  std::string one = test::st_f32({1.5f}), two = test::st_f32({2.5f});
  save_safetensors(path, std::vector<SafetensorsWriteTensor>{{"a", "F32", {1, 1}, as_bytes(one)}},
                   {});
  auto old = SafetensorsFile::open(path);
  auto old_table = old.load_matrix("a").table;
  save_safetensors(path, std::vector<SafetensorsWriteTensor>{{"a", "F32", {1, 1}, as_bytes(two)}},
                   {});
  EXPECT_EQ(old_table.row(0), std::vector<float>{1.5f});  // the old mapping still reads old data
  EXPECT_EQ(SafetensorsFile::open(path).load_matrix("a").table.row(0), std::vector<float>{2.5f});
}

TEST(SafetensorsWriter, RoundTripsRandomTensorsAndMetadata) {  // S28
  const char* dtypes[] = {"BOOL",        "U8",          "I8",   "F8_E5M2", "F8_E4M3", "F8_E8M0",
                          "F8_E4M3FNUZ", "F8_E5M2FNUZ", "F4",   "F6_E2M3", "F6_E3M2", "I16",
                          "U16",         "F16",         "BF16", "I32",     "U32",     "F32",
                          "I64",         "U64",         "F64",  "C64"};
  std::mt19937_64 rng(42);
  TempDir d;
  for (int iter = 0; iter < 30; ++iter) {
    size_t n = rng() % 6;
    std::vector<std::string> datas(n);
    std::vector<SafetensorsWriteTensor> ts;
    for (size_t i = 0; i < n; ++i) {
      SafetensorsWriteTensor t;
      t.name = "t" + std::to_string(iter) + "." + std::to_string(i) + (i % 2 ? "é" : "");
      t.dtype = dtypes[rng() % std::size(dtypes)];
      size_t rank = rng() % 4;
      uint64_t numel = 1;
      for (size_t r = 0; r < rank; ++r) {
        t.shape.push_back(rng() % 4);
        numel *= t.shape.back();
      }
      int bits = safetensors_dtype_bits(t.dtype);
      if (numel * bits % 8 != 0) {  // sub-byte dtypes need a whole number of bytes
        t.shape.push_back(8);
        numel *= 8;
      }
      datas[i].resize(numel * bits / 8);
      for (char& c : datas[i]) c = char(rng());
      ts.push_back(t);
    }
    for (size_t i = 0; i < n; ++i) ts[i].data = as_bytes(datas[i]);
    std::map<std::string, std::string> meta;
    for (size_t k = rng() % 3; k > 0; --k)
      meta["k" + std::to_string(k)] = std::string(rng() % 20, 'v');
    const std::string path = d.file("r" + std::to_string(iter) + ".safetensors");
    save_safetensors(path, ts, meta);
    auto f = SafetensorsFile::open(path);
    EXPECT_EQ(f.metadata(), meta);
    ASSERT_EQ(f.tensors().size(), n);
    for (size_t i = 0; i < n; ++i) {
      const auto* got = f.find(ts[i].name);
      ASSERT_NE(got, nullptr) << ts[i].name;
      EXPECT_EQ(got->dtype, ts[i].dtype);
      EXPECT_EQ(got->shape, ts[i].shape);
      auto b = f.tensor_bytes(*got);
      EXPECT_EQ(std::string(reinterpret_cast<const char*>(b.data()), b.size()), datas[i]);
    }
  }
}

}  // namespace
}  // namespace embedscope
