// The handcrafted safetensors files of docs/reliability.md 6.1, shared by the bad-input tests
// (tests/formats/safetensors_reader_test.cpp, one TEST per case) and the fuzz seed-corpus
// generator (fuzz/corpus_safetensors.cpp). Each file is built here from its bytes, at run time.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "embedscope/core/error.h"

namespace embedscope::test {

struct BadFile {
  std::string id;                    // "S17-alias": case number and a short slug
  std::string bytes;                 // the whole file
  ErrorCode code;                    // expected error code
  std::vector<std::string> needles;  // substrings the message must contain (besides the path)
};

struct GoodFile {
  std::string id;
  std::string bytes;
};

inline std::string le64(uint64_t v) {
  std::string s(8, '\0');
  std::memcpy(s.data(), &v, 8);
  return s;
}

// A safetensors file: 8-byte length, the header text as given, the data.
inline std::string st_file(const std::string& header, const std::string& data) {
  return le64(header.size()) + header + data;
}

inline std::string st_f32(std::initializer_list<float> v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), std::data(v), s.size());
  return s;
}

inline std::vector<BadFile> safetensors_bad_files() {
  using E = ErrorCode;
  const std::string one = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  const std::string four(4, '\x01');
  auto t = [](const std::string& name, const std::string& dtype, const std::string& shape,
              const std::string& offs, const std::string& extra = "") {
    return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
           ",\"data_offsets\":" + offs + extra + "}";
  };
  return {
      {"S1-empty", "", E::kCorrupt, {"header too small", "0 bytes"}},
      {"S1-7bytes", std::string(7, '\x02'), E::kCorrupt, {"header too small", "7 bytes", "8"}},
      {"S2-zero-length", le64(0) + "{}", E::kCorrupt, {"header length 0"}},
      {"S3-over-limit",
       le64(100'000'001) + "{}",
       E::kCorrupt,
       {"header too large", "100000001", "100000000"}},
      {"S3-u64-max",
       le64(UINT64_MAX) + "{}",
       E::kCorrupt,
       {"header too large", "18446744073709551615", "100000000"}},
      {"S4-beyond-file",
       le64(1000) + one,
       E::kCorrupt,
       {"header length 1000", "exceeds the file size", std::to_string(one.size())}},
      {"S5-not-utf8",
       st_file("{\"a\xff\":1}", ""),
       E::kCorrupt,
       {"not valid UTF-8", "byte 11", "\\xff"}},
      {"S6-truncated", st_file("{\"a\"", ""), E::kCorrupt, {"invalid JSON"}},
      {"S6-not-json", st_file("hello!!!", ""), E::kCorrupt, {"invalid JSON", "byte 1"}},
      {"S6-array", st_file("[1, 2, 3]", ""), E::kCorrupt, {"JSON array", "expected an object"}},
      // 20000 nested arrays: parsing, messages and destruction must not recurse that deep.
      {"S6-deep-nesting",
       st_file("{\"a\":" + std::string(20000, '[') + std::string(20000, ']') + "}", ""),
       E::kCorrupt,
       {"tensor 'a' is an array of 1 elements", "expected an object"}},
      {"S8-nul-padding",
       st_file(one + std::string(3, '\0'), four),
       E::kCorrupt,
       {"NUL byte", "byte " + std::to_string(8 + one.size()), "0x20"}},
      {"S9-duplicate-different",
       st_file("{" + t("x", "F32", "[1]", "[0,4]") + "," + t("x", "F32", "[2]", "[0,8]") + "}",
               std::string(8, '\x01')),
       E::kCorrupt,
       {"duplicate key 'x'"}},
      {"S9-duplicate-identical",
       st_file("{" + t("x", "F32", "[1]", "[0,4]") + "," + t("x", "F32", "[1]", "[0,4]") + "}",
               four),
       E::kCorrupt,
       {"duplicate key 'x'"}},
      {"S10-metadata-number",
       st_file(R"({"__metadata__":{"format":"pt","n":3},)" + t("a", "F32", "[1]", "[0,4]") + "}",
               four),
       E::kCorrupt,
       {"__metadata__", "'n'", "number", "expected a string"}},
      {"S10-metadata-nested",
       st_file(R"({"__metadata__":{"k":{"x":"y"}},)" + t("a", "F32", "[1]", "[0,4]") + "}", four),
       E::kCorrupt,
       {"__metadata__", "'k'", "object", "expected a string"}},
      {"S11-nul-in-name",
       st_file("{" + t("a\\u0000b", "F32", "[1]", "[0,4]") + "}", four),
       E::kCorrupt,
       {"tensor 'a\\x00b'", "NUL", "position 1"}},
      {"S11-lone-surrogate",
       st_file("{" + t("a\\ud800", "F32", "[1]", "[0,4]") + "}", four),
       E::kCorrupt,
       {"invalid JSON", "surrogate"}},
      {"S12-unknown-dtype",
       st_file("{" + t("a", "F128", "[1]", "[0,4]") + "}", four),
       E::kCorrupt,
       {"tensor 'a'", "unknown dtype 'F128'"}},
      {"S12-lowercase-dtype",
       st_file("{" + t("a", "f32", "[1]", "[0,4]") + "}", four),
       E::kCorrupt,
       {"tensor 'a'", "unknown dtype 'f32'"}},
      {"S13-negative-dim",
       st_file("{" + t("a", "F32", "[-1]", "[0,4]") + "}", four),
       E::kCorrupt,
       {"tensor 'a' shape[0] = -1", "negative"}},
      {"S13-float-dim",
       st_file("{" + t("a", "F32", "[1.0]", "[0,4]") + "}", four),
       E::kCorrupt,
       {"tensor 'a' shape[0] = 1.0", "not an integer"}},
      {"S13-exponent-dim",
       st_file("{" + t("a", "I8", "[1e3]", "[0,1000]") + "}", std::string(1000, 'x')),
       E::kCorrupt,
       {"tensor 'a' shape[0] = 1000.0", "not an integer"}},
      {"S13-above-u64",
       st_file("{" + t("a", "F32", "[18446744073709551616]", "[0,4]") + "}", four),
       E::kCorrupt,
       {"tensor 'a' shape[0]", "not an integer"}},
      // 2^53 + 1 is not representable as a double: the message proves it was read exactly.
      {"S13-above-2p53",
       st_file("{" + t("a", "I8", "[9007199254740993]", "[0,4]") + "}", four),
       E::kCorrupt,
       {"tensor 'a'", "[9007199254740993]", "needs 9007199254740993 bytes"}},
      {"S14-overflow",
       st_file("{" + t("a", "I8", "[2,18446744073709551614]", "[0,0]") + "}", ""),
       E::kCorrupt,
       {"tensor 'a'", "overflow", "[2, 18446744073709551614]"}},
      {"S14-wraps-to-zero",
       st_file("{" + t("a", "I8", "[4294967296,4294967296]", "[0,0]") + "}", ""),
       E::kCorrupt,
       {"tensor 'a'", "overflow", "[4294967296, 4294967296]"}},
      {"S15-one-offset",
       st_file("{" + t("a", "F32", "[1]", "[0]") + "}", four),
       E::kCorrupt,
       {"tensor 'a' data_offsets has 1 elements", "expected 2"}},
      {"S15-three-offsets",
       st_file("{" + t("a", "F32", "[1]", "[0,4,8]") + "}", four),
       E::kCorrupt,
       {"tensor 'a' data_offsets has 3 elements", "expected 2"}},
      {"S15-negative-offset",
       st_file("{" + t("a", "F32", "[1]", "[-4,0]") + "}", four),
       E::kCorrupt,
       {"tensor 'a' data_offsets[0] = -4", "negative"}},
      {"S15-begin-after-end",
       st_file("{" + t("a", "F32", "[1]", "[0,4]") + "," + t("b", "F32", "[1]", "[4,0]") + "}",
               four),
       E::kCorrupt,
       {"tensor 'b' data_offsets [4, 0]", "begin > end"}},
      {"S16-gap",
       st_file("{" + t("a", "F32", "[1]", "[0,4]") + "," + t("b", "F32", "[1]", "[8,12]") + "}",
               std::string(12, '\x01')),
       E::kCorrupt,
       {"tensor 'b' data_offsets [8, 12]", "begin expected 4", "gap of 4 bytes"}},
      {"S16-first-not-at-zero",
       st_file("{" + t("a", "F32", "[1]", "[4,8]") + "}", std::string(8, '\x01')),
       E::kCorrupt,
       {"tensor 'a' data_offsets [4, 8]", "must begin at 0"}},
      {"S17-alias",
       st_file("{" + t("a", "F32", "[1]", "[0,4]") + "," + t("b", "F32", "[1]", "[0,4]") + "}",
               four),
       E::kCorrupt,
       {"tensor 'b' data_offsets [0, 4] overlap tensor 'a'", "ends at 4"}},
      {"S17-overlap",
       st_file("{" + t("a", "F32", "[2]", "[0,8]") + "," + t("b", "F32", "[2]", "[4,12]") + "}",
               std::string(12, '\x01')),
       E::kCorrupt,
       {"tensor 'b' data_offsets [4, 12] overlap tensor 'a'", "ends at 8"}},
      {"S18-size-mismatch",
       st_file("{" + t("a", "I32", "[2,2]", "[0,4]") + "}", four),
       E::kCorrupt,
       {"tensor 'a' size mismatch", "needs 16 bytes", "[0, 4] hold 4"}},
      {"S19-trailing-bytes",
       st_file(one, four + "ZIP"),
       E::kCorrupt,
       {"3 unindexed trailing bytes", "tensors cover 4"}},
      {"S20-truncated",
       st_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", std::string(6, '\x01')),
       E::kCorrupt,
       {"truncated", "need 8 bytes", "only 6", "2 missing"}},
      {"S21-f4-odd-bits",
       st_file("{" + t("a", "F4", "[3]", "[0,1]") + "}", "\x11"),
       E::kCorrupt,
       {"tensor 'a' (F4, shape [3]) holds 12 bits", "whole number of bytes"}},
      {"S21-f6-odd-bits",
       st_file("{" + t("a", "F6_E2M3", "[3]", "[0,2]") + "}", "\x11\x22"),
       E::kCorrupt,
       {"tensor 'a' (F6_E2M3, shape [3]) holds 18 bits"}},
  };
}

// Files the reader must accept (S7, S22-S26 and every spec dtype); also fuzz seeds.
inline std::vector<GoodFile> safetensors_good_files() {
  std::string m = R"({"m":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})";
  std::string data = st_f32({1, 2, 3, 4});
  std::string all = "{";
  std::string all_data;
  const std::pair<const char*, int> dtypes[] = {
      {"BOOL", 8},    {"U8", 8},          {"I8", 8},          {"F8_E5M2", 8}, {"F8_E4M3", 8},
      {"F8_E8M0", 8}, {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8}, {"F4", 4},      {"F6_E2M3", 6},
      {"F6_E3M2", 6}, {"I16", 16},        {"U16", 16},        {"F16", 16},    {"BF16", 16},
      {"I32", 32},    {"U32", 32},        {"F32", 32},        {"I64", 64},    {"U64", 64},
      {"F64", 64},    {"C64", 64}};
  for (const auto& [name, bits] : dtypes) {
    size_t bytes = size_t(bits);  // shape [8] -> 8 * bits / 8 bytes
    all += std::string(all.size() > 1 ? "," : "") + "\"t_" + name + "\":{\"dtype\":\"" + name +
           "\",\"shape\":[8],\"data_offsets\":[" + std::to_string(all_data.size()) + "," +
           std::to_string(all_data.size() + bytes) + "]}";
    all_data += std::string(bytes, '\x01');
  }
  all += "}";
  return {
      {"S7-whitespace", st_file("  \n" + m + "   \t\n  ", data)},
      {"S22-zero-size-and-scalar",
       st_file(R"({"z":{"dtype":"F32","shape":[2,0],"data_offsets":[0,0]},)"
               R"("s":{"dtype":"F32","shape":[],"data_offsets":[0,4]}})",
               st_f32({7}))},
      {"S23-out-of-order", st_file(R"({"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},)"
                                   R"("a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                                   st_f32({1, 2}))},
      {"S24-unaligned", st_file(m + " ", data)},
      {"S26-extra-key",
       st_file(R"({"m":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16],"note":"x"}})", data)},
      {"all-dtypes", st_file(all, all_data)},
  };
}

}  // namespace embedscope::test
