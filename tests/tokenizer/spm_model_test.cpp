// SentencePiece .model reading (tokenizer/sentencepiece.h) on hand-built protobuf bytes: a small
// valid model and each malformed or unsupported case with its error code and message (the
// parity with python3-sentencepiece on a trained model is in hf_parity_test.cpp).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "embedscope/core/error.h"
#include "embedscope/tokenizer/sentencepiece.h"

namespace embedscope {
namespace {

std::string varint(uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s += char((v & 0x7F) | 0x80);
    v >>= 7;
  }
  return s + char(v);
}
std::string key(uint64_t field, unsigned wire) { return varint(field << 3 | wire); }
std::string len_field(uint64_t field, const std::string& bytes) {
  return key(field, 2) + varint(bytes.size()) + bytes;
}
std::string piece(const std::string& text, float score, uint64_t type) {
  uint32_t u = 0;
  std::memcpy(&u, &score, 4);
  std::string f;
  for (int k = 0; k < 4; ++k) f += char((u >> (8 * k)) & 0xFF);
  return len_field(1, len_field(1, text) + key(2, 5) + f + key(3, 0) + varint(type));
}
std::string trainer(uint64_t model_type) { return len_field(2, key(3, 0) + varint(model_type)); }
std::string normalizer(const std::string& name, bool remove_extra_ws = false,
                       const std::string& charsmap = "") {
  return len_field(3, len_field(1, name) + (charsmap.empty() ? "" : len_field(2, charsmap)) +
                          key(4, 0) + varint(remove_extra_ws));
}
const std::string kWordStart = "\xE2\x96\x81";
std::string pieces() {
  return piece("<unk>", 0, 2) + piece(kWordStart + "a", -1, 1) + piece("a", -2, 1) +
         piece("b", -3, 1);
}

void expect_error(const std::string& bytes, ErrorCode code, const std::string& needle) {
  try {
    load_sentencepiece_model_bytes(bytes, "bad.model");
    ADD_FAILURE() << "loaded without error";
  } catch (const Error& e) {
    EXPECT_EQ(error_code_name(e.code()), error_code_name(code)) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "message lacks \"" << needle << "\": " << e.what();
  }
}

TEST(SentencePieceModel, SmallUnigramModelEncodes) {
  auto tok = load_sentencepiece_model_bytes(pieces() + trainer(1) + normalizer("identity"), "ok");
  EXPECT_EQ(tok->describe(), "SentencePiece .model (Unigram)");
  EXPECT_EQ(tok->vocab_size(), 4u);
  // "▁a▁b": "▁a", then "▁" has no piece (one <unk>), then "b".
  EXPECT_EQ(tok->encode_ids("a b"), (std::vector<TokenId>{1, 0, 3}));
  EXPECT_TRUE(tok->is_special(0));
  EXPECT_EQ(tok->decode(std::vector<TokenId>{1}), "a");
}

// BPE (model_type 2): merges by score; "▁a" is the only pair that is a piece, the lone "▁" is
// no piece and there are no byte pieces, so it is <unk> (the trained model's parity with
// SentencePiece is in gguf_vocab_test.cpp).
TEST(SentencePieceModel, SmallBpeModelEncodes) {
  auto tok = load_sentencepiece_model_bytes(pieces() + trainer(2) + normalizer("identity"), "ok");
  EXPECT_EQ(tok->describe(), "SentencePiece .model (SentencePiece BPE)");
  EXPECT_EQ(tok->encode_ids("a b"), (std::vector<TokenId>{1, 0, 3}));
  EXPECT_EQ(tok->encode_ids("ba"), (std::vector<TokenId>{0, 3, 2}));  // no pair is a piece
  EXPECT_EQ(tok->decode(std::vector<TokenId>{1}), "a");
}

TEST(SentencePieceModel, RejectsMalformedWireData) {
  expect_error(std::string("\x0a\xff", 2), ErrorCode::kCorrupt, "truncated varint");
  expect_error(std::string("\x0a\x10"
                           "abc",
                           5),
               ErrorCode::kCorrupt, "byte offset 2: length 16 runs past the 3 bytes left");
  expect_error(std::string("\x0b", 1), ErrorCode::kCorrupt, "ModelProto.pieces has wire type 3");
  expect_error(pieces() + key(9, 3), ErrorCode::kCorrupt, "wire type 3 is not used");
  expect_error(pieces() + key(9, 1) + "abc", ErrorCode::kCorrupt, "truncated 64-bit field");
  expect_error(trainer(1) + normalizer("identity"), ErrorCode::kCorrupt, "no pieces");
}

TEST(SentencePieceModel, RejectsBadPieces) {
  const std::string rest = trainer(1) + normalizer("identity");
  expect_error(pieces() + piece("a", -1, 1) + rest, ErrorCode::kCorrupt,
               "pieces[4] \"a\" repeats pieces[2]");
  expect_error(pieces() + piece("", -1, 1) + rest, ErrorCode::kCorrupt, "pieces[4] is empty");
  expect_error(pieces() + piece("c", -1, 9) + rest, ErrorCode::kCorrupt,
               "pieces[4] type 9 is not a piece type");
  expect_error(pieces() + piece("\xff", -1, 1) + rest, ErrorCode::kCorrupt,
               "pieces[4] is not valid UTF-8");
  expect_error(piece("a", -1, 1) + rest, ErrorCode::kCorrupt, "no piece of type UNKNOWN");
}

TEST(SentencePieceModel, RefusesWhatIsNotImplementedNamingIt) {
  expect_error(pieces() + trainer(3) + normalizer("identity"), ErrorCode::kUnsupported,
               "trainer_spec.model_type 3 is not supported (1 = UNIGRAM, 2 = BPE)");
  expect_error(pieces() + trainer(1) + normalizer("nmt_nfkc"), ErrorCode::kUnsupported,
               "normalizer_spec.name \"nmt_nfkc\" without a precompiled_charsmap");
  expect_error(pieces() + trainer(1) + len_field(3, key(5, 0) + varint(0)), ErrorCode::kUnsupported,
               "normalizer_spec.escape_whitespaces false");
}

// A charsmap that fails its checks names the .model field (the cases: precompiled_charsmap_test).
TEST(SentencePieceModel, RejectsABadPrecompiledCharsmap) {
  expect_error(pieces() + trainer(1) + normalizer("nmt_nfkc", true, "ab"), ErrorCode::kCorrupt,
               "bad.model: normalizer_spec.precompiled_charsmap: is 2 bytes");
}

// remove_extra_whitespaces (SentencePiece's default): leading and trailing spaces dropped, runs
// squeezed to one, for both model types.
TEST(SentencePieceModel, RemoveExtraWhitespacesSqueezesSpaces) {
  for (uint64_t type : {1, 2}) {
    auto tok = load_sentencepiece_model_bytes(
        pieces() + trainer(type) + normalizer("identity", true), "ok");
    EXPECT_EQ(tok->encode_ids("  a   b  "), (std::vector<TokenId>{1, 0, 3})) << type;
    EXPECT_EQ(tok->encode_ids("   "), (std::vector<TokenId>{})) << type;
  }
  auto keep = load_sentencepiece_model_bytes(pieces() + trainer(1) + normalizer("identity"), "ok");
  EXPECT_EQ(keep->encode_ids("a  b"), (std::vector<TokenId>{1, 0, 0, 3}));
}

}  // namespace
}  // namespace embedscope
