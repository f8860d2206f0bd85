// SentencePiece's precompiled_charsmap (src/tokenizer/precompiled_charsmap.h) in a
// tokenizer.json "Precompiled" normalizer: a hand-built double array whose layout is written out
// below, what it does to text, and each malformed blob as a clear error (docs/reliability.md
// T44-T50). The maps SentencePiece itself compiles (nmt_nfkc) are compared with Hugging Face and
// SentencePiece in hf_parity_test.cpp and gguf_vocab_test.cpp.
#include "tokenizer/precompiled_charsmap.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "embedscope/core/error.h"
#include "embedscope/tokenizer/tokenizer.h"

namespace embedscope {
namespace {

using nlohmann::json;

// darts-clone units: offset (< 2^21) << 10 | has_leaf << 8 | label; a value unit has bit 31.
uint32_t node(uint32_t offset, bool leaf, uint8_t label) {
  return offset << 10 | uint32_t(leaf) << 8 | label;
}
uint32_t value(uint32_t v) { return 1u << 31 | v; }

// A map of 768 units (three blocks of 256) with the keys "a" -> "b", "x" -> "" (removed) and
// "é" (C3 A9) -> "e"; strings "b\0e\0\0":
//   unit 0: the root, base 256
//   "a":  unit 256^0x61 = 353, leaf, base 512 (value unit 512: offset 0, "b")
//   "x":  unit 256^0x78 = 376, leaf, base 513 (value unit 513: offset 4, "")
//   0xC3: unit 256^0xC3 = 451, base 384
//   0xA9: unit 384^0xA9 = 297, leaf, base 514 (value unit 514: offset 2, "e")
struct Map {
  std::vector<uint32_t> units = std::vector<uint32_t>(768, 0);
  std::string strings = std::string("b\0e\0\0", 5);
  Map() {
    units[0] = node(256, false, 0);
    units[353] = node(353 ^ 512, true, 0x61);
    units[512] = value(0);
    units[376] = node(376 ^ 513, true, 0x78);
    units[513] = value(4);
    units[451] = node(451 ^ 384, false, 0xC3);
    units[297] = node(297 ^ 514, true, 0xA9);
    units[514] = value(2);
  }
  std::string blob(uint32_t trie_size = 0) const {
    std::string b;
    const uint32_t size = trie_size ? trie_size : uint32_t(units.size() * 4);
    for (int k = 0; k < 4; ++k) b += char((size >> (8 * k)) & 0xFF);
    for (uint32_t u : units)
      for (int k = 0; k < 4; ++k) b += char((u >> (8 * k)) & 0xFF);
    return b + strings;
  }
};

std::string base64(const std::string& bytes) {
  static const char* a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t w = uint32_t(uint8_t(bytes[i])) << 16 | uint32_t(uint8_t(bytes[i + 1])) << 8 |
                 uint8_t(bytes[i + 2]);
    for (int k = 3; k >= 0; --k) out += a[(w >> (6 * k)) & 63];
  }
  if (bytes.size() - i == 1) {
    uint32_t w = uint32_t(uint8_t(bytes[i])) << 16;
    out += std::string{a[w >> 18], a[(w >> 12) & 63]} + "==";
  } else if (bytes.size() - i == 2) {
    uint32_t w = uint32_t(uint8_t(bytes[i])) << 16 | uint32_t(uint8_t(bytes[i + 1])) << 8;
    out += std::string{a[w >> 18], a[(w >> 12) & 63], a[(w >> 6) & 63]} + "=";
  }
  return out;
}

// WordLevel-free Unigram file over single characters with the map as its normalizer.
json file(const std::string& charsmap_b64) {
  json vocab = json::array();
  for (const char* p : {"<unk>", "a", "b", "e", "x", "\xC3\xA9", "c"})
    vocab.push_back(json::array({p, -1.0}));
  return {{"version", "1.0"},
          {"truncation", nullptr},
          {"padding", nullptr},
          {"added_tokens", json::array()},
          {"normalizer", {{"type", "Precompiled"}, {"precompiled_charsmap", charsmap_b64}}},
          {"pre_tokenizer", nullptr},
          {"post_processor", nullptr},
          {"decoder", nullptr},
          {"model", {{"type", "Unigram"}, {"unk_id", 0}, {"vocab", vocab}}}};
}

void expect_error(const std::string& blob_b64, ErrorCode code,
                  std::initializer_list<std::string> needles) {
  try {
    load_tokenizer_json_text(file(blob_b64).dump(), "bad.json");
    ADD_FAILURE() << "loaded without error";
  } catch (const Error& e) {
    EXPECT_EQ(error_code_name(e.code()), error_code_name(code)) << e.what();
    for (const std::string& n : needles)
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos)
          << "message lacks \"" << n << "\": " << e.what();
  }
}

TEST(PrecompiledCharsMap, HandBuiltMapRewritesItsKeysOnly) {
  auto tok = load_tokenizer_json_text(file(base64(Map().blob())).dump(), "map.json");
  // a -> b, é -> e, x removed, c kept; ids: <unk> 0, a 1, b 2, e 3, x 4, é 5, c 6.
  EXPECT_EQ(tok->encode_ids("a"), (std::vector<TokenId>{2}));
  EXPECT_EQ(tok->encode_ids("ac\xC3\xA9xa"), (std::vector<TokenId>{2, 6, 3, 2}));
  Encoding e = tok->encode("cx\xC3\xA9");
  ASSERT_EQ(e.ids, (std::vector<TokenId>{6, 3}));
  EXPECT_EQ(e.offsets[1].begin, 2u);  // "e" keeps the range of "é"
  EXPECT_EQ(e.offsets[1].end, 4u);
}

TEST(PrecompiledCharsMap, LongestAndShortestMatchDiffer) {
  // Add the key "ab" -> "z" under "a": the value of "a" stays at unit 512; "b" from base 512 is
  // unit 512^0x62 = 610, a leaf with base 515 (value unit 515 -> offset 5, "z").
  Map m;
  m.units[610] = node(610 ^ 515, true, 0x62);
  m.units[515] = value(5);
  m.strings += std::string("z\0", 2);
  auto map = hf::CharsMap::read(m.blob(), "t");
  std::string_view out;
  EXPECT_EQ(map->longest("abc", &out), 2u);
  EXPECT_EQ(out, "z");
  EXPECT_EQ(map->shortest("abc", &out), 1u);
  EXPECT_EQ(out, "b");
  EXPECT_EQ(map->longest("c", &out), 0u);
}

TEST(PrecompiledCharsMap, T44RejectsBadTrieSizes) {
  expect_error(base64("ab"), ErrorCode::kCorrupt,
               {"normalizer.precompiled_charsmap", "is 2 bytes, less than its 4-byte trie_size"});
  const Map m;
  expect_error(base64(m.blob(4096)), ErrorCode::kCorrupt,
               {"trie_size 4096 leaves no room", "3077 bytes after it"});
  expect_error(base64(m.blob(3071)), ErrorCode::kCorrupt,
               {"trie_size 3071 is not a positive multiple of 4"});
}

TEST(PrecompiledCharsMap, T45RejectsNodesOutsideTheArray) {
  Map m;
  m.units[0] = node(800, false, 0);
  expect_error(base64(m.blob()), ErrorCode::kCorrupt,
               {"unit 0 (the root) leads to unit 800", "run past the 768 units"});
  m = Map();
  m.units[353] = node(353 ^ 5000, true, 0x61);
  expect_error(base64(m.blob()), ErrorCode::kCorrupt,
               {"unit 353 has its value at unit 5000, past the 768 units"});
}

TEST(PrecompiledCharsMap, T46RejectsCycles) {
  Map m;
  m.units[353] = node(353 ^ 256, false, 0x61);  // "a" leads back to the root's base
  expect_error(base64(m.blob()), ErrorCode::kCorrupt,
               {"unit 353 leads back to unit 256 (a cycle)"});
}

TEST(PrecompiledCharsMap, T47RejectsValuesOutsideTheStrings) {
  Map m;
  m.units[512] = value(99);
  expect_error(base64(m.blob()), ErrorCode::kCorrupt,
               {"unit 353 maps to offset 99, past the 5 bytes of replacement strings"});
  m = Map();
  m.strings = std::string("b\0e\0x", 5);  // "x"'s replacement (offset 4) lacks its NUL
  expect_error(base64(m.blob()), ErrorCode::kCorrupt,
               {"unit 376 maps to offset 4, whose replacement has no NUL"});
}

TEST(PrecompiledCharsMap, T48RejectsKeysAndReplacementsThatAreNotUtf8) {
  Map m;
  m.units[451] = node(451 ^ 516, true, 0xC3);  // a key ending after a lead byte
  m.units[516] = value(0);
  expect_error(base64(m.blob()), ErrorCode::kCorrupt,
               {"unit 451 ends a key inside a UTF-8 character"});
  m = Map();
  m.strings = std::string("\xFF\0e\0\0", 5);
  expect_error(base64(m.blob()), ErrorCode::kCorrupt,
               {"unit 353 maps to offset 0, whose replacement is not UTF-8"});
}

TEST(PrecompiledCharsMap, T49RejectsTextThatIsNotBase64) {
  expect_error("AAA", ErrorCode::kCorrupt, {"is not base64: 3 characters, not a multiple of 4"});
  expect_error("AA!A", ErrorCode::kCorrupt, {"is not base64: character 2 is '!'"});
  expect_error("A=AA", ErrorCode::kCorrupt, {"is not base64: character 1 is '='"});
}

}  // namespace
}  // namespace embedscope
