// BpeTokenizer: loading and validation (docs/reliability.md T1-T7), encode / decode, display,
// word variants, bad input (T8-T14), and the fast paths against their slow twins.
#include "embedscope/tokenizer/bpe.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "embedscope/core/error.h"
#include "embedscope/core/thread_pool.h"
#include "tokenizer_fixtures.h"

namespace embedscope {
namespace {

using test::TempDir;

BpeTokenizer load_tiny(const TempDir& d, const std::string& which = "ok") {
  EXPECT_TRUE(test::write_tiny_bpe(d, which));
  return BpeTokenizer::from_files(d.file("vocab.json"), d.file("merges.txt"));
}

// Loads a broken case and returns the error (fails the test when it loads).
Error load_error(const std::string& which) {
  TempDir d;
  EXPECT_TRUE(test::write_tiny_bpe(d, which));
  try {
    BpeTokenizer::from_files(d.file("vocab.json"), d.file("merges.txt"));
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << which << " loaded";
  return Error(ErrorCode::kIo, "");
}

const BpeTokenizer& gpt2() {
  static const BpeTokenizer tok = BpeTokenizer::gpt2_default();
  return tok;
}

// ---- loading ---------------------------------------------------------------------------------

TEST(BpeLoad, TinyVocabularyEncodesWithItsMerges) {
  TempDir d;
  BpeTokenizer tok = load_tiny(d);
  EXPECT_EQ(tok.vocab_size(), 256u + 8u + 1u);
  // " the" -> " t" + "he" -> " the" (merges 1, 2, 3)
  std::vector<TokenId> ids = tok.encode(" the");
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(tok.token_bytes(ids[0]), " the");
  // "aaaaaaaaa" (9): aa aa aa aa a -> aaaa aaaa a -> aaaaaaaa a
  ids = tok.encode("aaaaaaaaa");
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(tok.token_bytes(ids[0]), "aaaaaaaa");
  EXPECT_EQ(tok.token_bytes(ids[1]), "a");
  EXPECT_TRUE(tok.is_special(*tok.token_id("<|endoftext|>")));
  EXPECT_FALSE(tok.is_special(ids[0]));
}

TEST(BpeLoad, AcceptsMergesWithCrlfAndBlankLines) {  // T2
  TempDir d;
  BpeTokenizer tok = load_tiny(d, "crlf_blank");
  EXPECT_EQ(tok.encode(" the").size(), 1u);
}

TEST(BpeLoad, AcceptsMergesWithoutVersionLine) {  // T2
  TempDir d;
  BpeTokenizer tok = load_tiny(d, "no_version");
  EXPECT_EQ(tok.encode(" the").size(), 1u);
}

TEST(BpeLoad, RejectsVocabThatIsNotAnObject) {  // T1
  Error e = load_error("vocab_array");
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_NE(std::string(e.what()).find("must be an object"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("vocab.json"), std::string::npos) << e.what();
}

TEST(BpeLoad, RejectsStringId) {  // T1
  Error e = load_error("id_string");
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_NE(std::string(e.what()).find("must be an integer"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("\"260\""), std::string::npos) << e.what();
}

TEST(BpeLoad, RejectsFloatId) {  // T1
  Error e = load_error("id_float");
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_NE(std::string(e.what()).find("260.5"), std::string::npos) << e.what();
}

TEST(BpeLoad, RejectsDuplicateId) {  // T1
  Error e = load_error("dup_id");
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_NE(std::string(e.what()).find("duplicate id"), std::string::npos) << e.what();
}

TEST(BpeLoad, RejectsNegativeId) {  // T1
  Error e = load_error("negative_id");
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_NE(std::string(e.what()).find("negative id -3"), std::string::npos) << e.what();
}

TEST(BpeLoad, RejectsIdGap) {  // T1
  Error e = load_error("id_gap");
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_NE(std::string(e.what()).find("not contiguous"), std::string::npos) << e.what();
}

TEST(BpeLoad, RejectsVocabMissingAByte) {
  Error e = load_error("missing_byte");
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_NE(std::string(e.what()).find("byte 0x71"), std::string::npos) << e.what();
}

TEST(BpeLoad, RejectsKeyOutsideByteLevelAlphabet) {
  Error e = load_error("bad_alphabet");
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_NE(std::string(e.what()).find("[\"a b\"]"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("byte 1"), std::string::npos) << e.what();
}

TEST(BpeLoad, RejectsInvalidJson) {
  Error e = load_error("not_json");
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_NE(std::string(e.what()).find("invalid JSON at byte"), std::string::npos) << e.what();
}

TEST(BpeLoad, RejectsMergeLineWithOneField) {  // T3
  Error e = load_error("one_field");
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_NE(std::string(e.what()).find("merges.txt: line 5: expected 2 tokens"), std::string::npos)
      << e.what();
  EXPECT_NE(std::string(e.what()).find("found 1 field"), std::string::npos) << e.what();
}

TEST(BpeLoad, RejectsMergeLineWithThreeFields) {  // T3
  Error e = load_error("three_fields");
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_NE(std::string(e.what()).find("line 5: expected 2 tokens"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("found 3 field"), std::string::npos) << e.what();
}

TEST(BpeLoad, RejectsMergeOfUnknownToken) {  // T4
  Error e = load_error("unknown_part");
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_NE(std::string(e.what()).find("line 5: 'zq' is not in the vocabulary"), std::string::npos)
      << e.what();
}

TEST(BpeLoad, RejectsMergeWhoseResultIsUnknown) {  // T4
  Error e = load_error("unknown_result");
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_NE(std::string(e.what()).find("merged token 'th' is not in the vocabulary"),
            std::string::npos)
      << e.what();
}

TEST(BpeLoad, RejectsZeroMerges) {  // T5
  Error e = load_error("zero_merges");
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_NE(std::string(e.what()).find("no merges loaded"), std::string::npos) << e.what();
}

TEST(BpeLoad, RejectsDuplicateMerge) {
  Error e = load_error("dup_merge");
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_NE(std::string(e.what()).find("duplicate merge"), std::string::npos) << e.what();
}

// A file past the 256 MiB limit is refused by its size, before any parsing or reservation
// sized by it (a sparse file: no disk is used).
TEST(BpeLoad, RejectsVocabOverTheSizeLimit) {
  TempDir d;
  ASSERT_TRUE(test::write_tiny_bpe(d, "ok"));
  std::filesystem::resize_file(d.file("vocab.json"), (uintmax_t(256) << 20) + 1);
  try {
    BpeTokenizer::from_files(d.file("vocab.json"), d.file("merges.txt"));
    FAIL() << "a 256 MiB + 1 byte vocab.json was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    const std::string m = e.what();
    EXPECT_NE(m.find("vocab.json: file is 268435457 bytes, limit 268435456"), std::string::npos)
        << m;
  }
  std::ofstream(d.file("tokenizer.json")) << "{}";
  std::filesystem::resize_file(d.file("tokenizer.json"), (uintmax_t(256) << 20) + 1);
  try {
    BpeTokenizer::from_tokenizer_json(d.file("tokenizer.json"));
    FAIL() << "a 256 MiB + 1 byte tokenizer.json was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("268435456"), std::string::npos) << e.what();
  }
}

// nlohmann's parser throws out_of_range, not parse_error, for a number beyond double's range:
// still a kCorrupt naming the file (libFuzzer found it terminating the process).
TEST(BpeLoad, RejectsJsonNumberOutOfRange) {
  try {
    BpeTokenizer::from_tokenizer_json_text(R"({"model": {"vocab": {"a": 1e999}}})", "t.json");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    const std::string m = e.what();
    EXPECT_NE(m.find("t.json: invalid JSON"), std::string::npos) << m;
    EXPECT_NE(m.find("number overflow"), std::string::npos) << m;
  }
}

TEST(BpeLoad, MissingFileIsNotFound) {
  TempDir d;
  try {
    BpeTokenizer::from_files(d.file("nope.json"), d.file("merges.txt"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
  }
}

TEST(BpeLoad, DefaultGpt2NamesSetupWhenAbsent) {
  TempDir d;
  const char* old = std::getenv("EMBEDSCOPE_HOME");
  std::string saved = old ? old : "";
  ::setenv("EMBEDSCOPE_HOME", d.path().c_str(), 1);
  try {
    BpeTokenizer::gpt2_default();
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("scripts/setup.sh"), std::string::npos);
  }
  if (old)
    ::setenv("EMBEDSCOPE_HOME", saved.c_str(), 1);
  else
    ::unsetenv("EMBEDSCOPE_HOME");
}

TEST(BpeLoad, FindInDirFindsVocabAndMerges) {
  TempDir d;
  ASSERT_TRUE(test::write_tiny_bpe(d, "ok"));
  std::optional<BpeTokenizer> tok = BpeTokenizer::find_in_dir(d.path());
  ASSERT_TRUE(tok.has_value());
  EXPECT_EQ(tok->vocab_size(), 265u);
  TempDir empty;
  EXPECT_FALSE(BpeTokenizer::find_in_dir(empty.path()).has_value());
}

TEST(BpeLoad, CopyIsIndependentAndEqual) {
  BpeTokenizer a = gpt2();
  BpeTokenizer b = a;
  EXPECT_EQ(a.encode("Hello world"), b.encode("Hello world"));
  BpeTokenizer c = std::move(a);
  EXPECT_EQ(c.encode("Hello world"), b.encode("Hello world"));
}

// ---- GPT-2 encode / decode -------------------------------------------------------------------

TEST(BpeEncode, Gpt2ComputerIsOneTokenWithItsSpace) {
  // id 3644 is " computer" in OpenAI's encoder.json (the issue's example; parity_test checks
  // every id against the references).
  EXPECT_EQ(gpt2().encode(" computer"), std::vector<TokenId>{3644});
  EXPECT_EQ(gpt2().token_bytes(3644), " computer");
  EXPECT_EQ(gpt2().token_id(" computer"), std::optional<TokenId>(3644));
  EXPECT_EQ(gpt2().token_id("no such token here"), std::nullopt);
}

TEST(BpeEncode, OffsetsPointAtEachTokensFirstByte) {
  std::string text = "Hello, naïve world\n\n日本";
  std::vector<size_t> offsets;
  std::vector<TokenId> ids = gpt2().encode_with_offsets(text, &offsets);
  ASSERT_EQ(ids.size(), offsets.size());
  size_t expect = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(offsets[i], expect);
    EXPECT_EQ(
        text.compare(offsets[i], gpt2().token_bytes(ids[i]).size(), gpt2().token_bytes(ids[i])), 0);
    expect += gpt2().token_bytes(ids[i]).size();
  }
  EXPECT_EQ(expect, text.size());
}

TEST(BpeEncode, EndOfTextIsPlainTextUnlessAllowed) {  // T12
  std::string text = "a<|endoftext|>b";
  TokenId eot = *gpt2().token_id("<|endoftext|>");
  std::vector<TokenId> plain = gpt2().encode(text);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), eot), 0);
  EXPECT_EQ(gpt2().decode(plain), text);
  std::vector<TokenId> special = gpt2().encode(text, true);
  ASSERT_EQ(special.size(), 3u);
  EXPECT_EQ(special[1], eot);
  EXPECT_EQ(special[0], gpt2().encode("a")[0]);
  EXPECT_EQ(special[2], gpt2().encode("b")[0]);
  std::vector<size_t> offsets;
  gpt2().encode_with_offsets(text, &offsets, true);
  EXPECT_EQ(offsets, (std::vector<size_t>{0, 1, 14}));
}

TEST(BpeEncode, InvalidUtf8BytesAreEncodedAsBytes) {  // T8
  for (std::string bad : {std::string("\xE2\x80"), std::string("\x80"), std::string("\xC0\xAF"),
                          std::string("\xED\xA0\x80"), std::string("\xF4\x90\x80\x80")}) {
    std::string text = "ab " + bad + " cd" + bad;
    std::vector<TokenId> ids = gpt2().encode(text);
    EXPECT_EQ(gpt2().decode_bytes(ids), text);
    std::string shown = gpt2().decode(ids);
    EXPECT_NE(shown.find("\xEF\xBF\xBD"), std::string::npos);
    EXPECT_EQ(shown.find(bad), std::string::npos);
  }
}

TEST(BpeEncode, NulIsAnOrdinaryByte) {  // T9
  std::string text("a\0b\0\0 c", 7);
  std::vector<TokenId> ids = gpt2().encode(text);
  EXPECT_EQ(gpt2().decode(ids), text);
  EXPECT_EQ(gpt2().decode_bytes(ids).size(), 7u);
}

TEST(BpeEncode, OneMegabyteRunsComplete) {  // T10, T11: correctness, not time
  // Each text is one pre-token, so encode (heap merge) must equal encoder.py's loop
  // (bpe_reference), which is fast on periodic input (few passes).
  std::string cjk;
  while (cjk.size() < (size_t(1) << 20)) cjk += "日本語中文";
  for (std::string text : {std::string(size_t(1) << 20, 'a'), std::string(size_t(1) << 20, '_'),
                           std::string(size_t(1) << 20, ' '), std::string(size_t(1) << 20, '\n'),
                           std::string(size_t(1) << 20, '7'), cjk}) {
    ASSERT_EQ(pre_tokenize(PreTokenizerKind::kGpt2, text).size(), 1u);
    std::vector<TokenId> ids = gpt2().encode(text);
    EXPECT_EQ(gpt2().decode_bytes(ids), text) << text.substr(0, 8);
    EXPECT_EQ(ids, gpt2().bpe_reference(text)) << text.substr(0, 8);
  }
}

TEST(BpeEncode, HeapMergeMatchesReferenceLoopOnLongPieces) {
  // Long single pre-tokens (letters / digits runs) go through the O(n log n) path; the O(n^2)
  // encoder.py loop is the reference.
  std::mt19937 rng(7);
  const std::string alphabet = "abcdeeeeeetttthhhhhsssnnr";
  for (int k = 0; k < 200; ++k) {
    std::string piece;
    size_t n = 65 + rng() % 400;
    for (size_t i = 0; i < n; ++i) piece += alphabet[rng() % alphabet.size()];
    EXPECT_EQ(gpt2().encode(piece), gpt2().bpe_reference(piece)) << piece;
    std::string digits;
    for (size_t i = 0; i < n; ++i) digits += char('0' + rng() % 10);
    EXPECT_EQ(gpt2().encode(digits), gpt2().bpe_reference(digits)) << digits;
  }
  std::string run(5000, 'a');
  EXPECT_EQ(gpt2().encode(run), gpt2().bpe_reference(run));
}

TEST(BpeEncode, WholeTokenShortcutMatchesReferenceForEveryToken) {
  // Every regular GPT-2 token's bytes, encoded as one piece, must give what encoder.py's loop
  // gives (tokens unreachable by merges are handled by the lazily computed per-token flag).
  const BpeTokenizer& tok = gpt2();
  size_t checked = 0;
  for (TokenId id = 0; id < TokenId(tok.vocab_size()); ++id) {
    if (tok.is_special(id)) continue;
    const std::string& b = tok.token_bytes(id);
    std::vector<size_t> ends = pre_tokenize(PreTokenizerKind::kGpt2, b);
    if (ends.size() != 1) continue;  // not a single pre-token
    ASSERT_EQ(tok.encode(b), tok.bpe_reference(b)) << id;
    ++checked;
  }
  EXPECT_GT(checked, 45000u);
}

TEST(BpeEncode, ParallelAndBatchMatchSerial) {
  std::string text = test::brown_plain_text().substr(0, size_t(1) << 20);
  ThreadPool pool(2);
  EXPECT_EQ(gpt2().encode_parallel(text, pool), gpt2().encode(text));
  std::vector<std::string_view> lines;
  for (size_t p = 0; p < text.size();) {
    size_t e = text.find('\n', p);
    if (e == std::string::npos) e = text.size();
    lines.push_back(std::string_view(text).substr(p, e - p));
    p = e + 1;
  }
  auto batch = gpt2().encode_batch(lines, pool);
  ASSERT_EQ(batch.size(), lines.size());
  for (size_t i = 0; i < lines.size(); i += 97) EXPECT_EQ(batch[i], gpt2().encode(lines[i]));
}

TEST(BpeEncode, EncodeIntoNeverWritesPastTheBuffer) {  // T14
  std::string text = "Hello world, this is a test";
  std::vector<TokenId> full = gpt2().encode(text);
  std::vector<TokenId> buf(full.size() + 4, -7);
  size_t need = gpt2().encode_into(text, std::span<TokenId>(buf.data(), 3));
  EXPECT_EQ(need, full.size());
  EXPECT_EQ(std::vector<TokenId>(buf.begin(), buf.begin() + 3),
            std::vector<TokenId>(full.begin(), full.begin() + 3));
  for (size_t i = 3; i < buf.size(); ++i) EXPECT_EQ(buf[i], -7);
}

TEST(BpeDecode, OutOfRangeIdsAreErrors) {  // T13
  for (TokenId bad : {TokenId(-1), TokenId(gpt2().vocab_size()), TokenId(1 << 30)}) {
    std::vector<TokenId> ids{31373, bad};
    try {
      gpt2().decode(ids);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kOutOfRange);
      EXPECT_NE(std::string(e.what()).find(std::to_string(bad)), std::string::npos);
      EXPECT_NE(std::string(e.what()).find("50257"), std::string::npos);
    }
    EXPECT_THROW(gpt2().display(bad), Error);
  }
}

TEST(BpeDecode, PartialCharacterIsReplacementInTextApiAndExactInBytesApi) {  // T13
  std::vector<TokenId> ids = gpt2().encode("日");
  ASSERT_GT(ids.size(), 1u);  // 日 is split into byte tokens
  std::vector<TokenId> head(ids.begin(), ids.end() - 1);
  EXPECT_EQ(gpt2().decode(head), "\xEF\xBF\xBD");
  EXPECT_EQ(gpt2().decode_bytes(head),
            std::string("日").substr(0, gpt2().decode_bytes(head).size()));
  EXPECT_EQ(gpt2().decode(ids), "日");
}

TEST(Utf8Replace, MaximalSubpartsBecomeOneReplacementEach) {
  // Unicode §3.9 "U+FFFD substitution of maximal subparts" examples (as Python's "replace").
  EXPECT_EQ(utf8_replace_invalid("a\xF1\x80\x80z"), "a\xEF\xBF\xBDz");
  EXPECT_EQ(utf8_replace_invalid("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(utf8_replace_invalid("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(utf8_replace_invalid("\xE2\x80"), "\xEF\xBF\xBD");
  EXPECT_EQ(utf8_replace_invalid("ok é"), "ok é");
}

// ---- display and word variants ---------------------------------------------------------------

TEST(Display, ShowsSpacesControlsAndPartialUtf8) {
  EXPECT_EQ(display_token(" computer"), "␣computer");
  EXPECT_EQ(display_token("\n"), "<0x0A>");
  EXPECT_EQ(display_token("\t\x7F"), "<0x09><0x7F>");
  EXPECT_EQ(display_token("\xE6\x97"), "<0xE6><0x97>");
  EXPECT_EQ(display_token("\xC2\x85"), "<0xC2><0x85>");  // U+0085, a C1 control
  EXPECT_EQ(display_token("日本"), "日本");
  EXPECT_EQ(gpt2().display(3644), "␣computer");
}

TEST(WordVariants, GivesCaseAndSpaceVariantsWithIds) {
  std::vector<WordVariant> v = word_variants(gpt2(), "computer");
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0].text, "computer");
  EXPECT_EQ(v[1].text, " computer");
  EXPECT_EQ(v[2].text, "Computer");
  EXPECT_EQ(v[3].text, " Computer");
  EXPECT_TRUE(v[1].single_token());
  EXPECT_EQ(v[1].ids, std::vector<TokenId>{3644});
  for (auto& w : v) EXPECT_EQ(gpt2().decode(w.ids), w.text);
  EXPECT_EQ(default_variant(v), 1u);
  std::vector<WordVariant> rare = word_variants(gpt2(), " Zyzzyvaxq");
  EXPECT_EQ(rare[0].text, "Zyzzyvaxq");
  EXPECT_FALSE(rare[1].single_token());
  EXPECT_EQ(default_variant(rare), 1u);
}

}  // namespace
}  // namespace embedscope
