// Malformed and hostile tokenizer.json files (docs/reliability.md T17-T33): each case is a
// clear Error with the expected code and a message naming the JSON path and the value, or a
// documented policy; never a crash, a hang or an allocation sized by the file.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "embedscope/core/error.h"
#include "embedscope/tokenizer/tokenizer.h"

namespace embedscope {
namespace {

using nlohmann::json;

// A small valid byte-level-free BPE file: a, b, c, ab, abc, <s>.
json base() {
  return json::parse(R"({
    "version": "1.0", "truncation": null, "padding": null,
    "added_tokens": [{"id": 5, "content": "<s>", "single_word": false, "lstrip": false,
                      "rstrip": false, "normalized": false, "special": true}],
    "normalizer": null,
    "pre_tokenizer": {"type": "WhitespaceSplit"},
    "post_processor": {"type": "TemplateProcessing",
      "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
      "pair": [], "special_tokens": {"<s>": {"id": "<s>", "ids": [5], "tokens": ["<s>"]}}},
    "decoder": null,
    "model": {"type": "BPE", "unk_token": null, "vocab": {"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4},
              "merges": ["a b", "ab c"]}
  })");
}

// Loads j; expects Error(code) whose message contains every needle.
void expect_error(const json& j, ErrorCode code, std::initializer_list<std::string> needles) {
  try {
    load_tokenizer_json_text(j.dump(), "bad.json");
    ADD_FAILURE() << "loaded without error: " << j.dump().substr(0, 300);
  } catch (const Error& e) {
    EXPECT_EQ(error_code_name(e.code()), error_code_name(code)) << e.what();
    for (const std::string& n : needles)
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos)
          << "message lacks \"" << n << "\": " << e.what();
  }
}

TEST(HfTokenizerFile, BaseFileLoadsAndEncodes) {
  auto tok = load_tokenizer_json_text(base().dump(), "ok.json");
  EXPECT_EQ(tok->encode_ids("abc ab a"), (std::vector<TokenId>{4, 3, 0}));
  EXPECT_EQ(tok->encode_ids("<s>abc", {.add_special_tokens = true}),
            (std::vector<TokenId>{5, 5, 4}));
  EXPECT_EQ(tok->encode_ids("<s>", {.split_special_tokens = true}), (std::vector<TokenId>{}));
  EXPECT_EQ(tok->vocab_size(), 6u);
}

// An empty view (null data) must not reach simdjson's fast path; the reference parser names
// the file. Both a default string_view and an empty string's view.
TEST(HfTokenizerFile, EmptyTextIsACorruptFileNotACrash) {
  for (std::string_view text : {std::string_view(), std::string_view("")}) {
    try {
      load_tokenizer_json_text(text, "empty.json");
      ADD_FAILURE() << "empty text loaded";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kCorrupt) << e.what();
      EXPECT_NE(std::string(e.what()).find("empty.json"), std::string::npos) << e.what();
    }
  }
}

TEST(HfTokenizerFile, T17RejectsTextThatIsNotJson) {
  try {
    load_tokenizer_json_text("{\"model\": ", "bad.json");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("bad.json: not valid JSON"), std::string::npos);
  }
}

TEST(HfTokenizerFile, T18RejectsUnknownTypesNamingThePath) {
  json j = base();
  j["model"]["type"] = "WordLevel";
  expect_error(j, ErrorCode::kUnsupported, {"model.type \"WordLevel\"", "BPE, WordPiece, Unigram"});
  j = base();
  // Precompiled is read (precompiled_charsmap_test.cpp): three zero bytes are no charsmap.
  j["normalizer"] = {{"type", "Precompiled"}, {"precompiled_charsmap", "AAAA"}};
  expect_error(j, ErrorCode::kCorrupt,
               {"normalizer.precompiled_charsmap: is 3 bytes, less than its 4-byte trie_size"});
  j = base();
  j["pre_tokenizer"] = {
      {"type", "Sequence"},
      {"pretokenizers", {{{"type", "WhitespaceSplit"}}, {{"type", "UnicodeScripts"}}}}};
  expect_error(j, ErrorCode::kUnsupported,
               {"pre_tokenizer.pretokenizers[1].type \"UnicodeScripts\""});
  j = base();
  j["decoder"] = {{"type", "CTC"}};
  expect_error(j, ErrorCode::kUnsupported, {"decoder.type \"CTC\""});
  j = base();
  j["truncation"] = {{"max_length", 512}};
  expect_error(j, ErrorCode::kUnsupported, {"truncation"});
  j = base();
  j["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "a"}}}, {"behavior", "Sideways"}};
  expect_error(j, ErrorCode::kUnsupported, {"pre_tokenizer.behavior \"Sideways\""});
}

TEST(HfTokenizerFile, T19RejectsWrongJsonTypesAndMissingKeys) {
  json j = base();
  j["model"].erase("vocab");
  expect_error(j, ErrorCode::kCorrupt, {"model.vocab is missing"});
  j = base();
  j["model"]["vocab"]["a"] = "zero";
  expect_error(j, ErrorCode::kCorrupt, {"model.vocab[\"a\"]", "expected an integer id"});
  j = base();
  j["model"]["merges"] = "a b";
  expect_error(j, ErrorCode::kCorrupt, {"model.merges is not an array"});
  j = base();
  j["added_tokens"][0]["special"] = "yes";
  expect_error(j, ErrorCode::kCorrupt, {"added_tokens[0].special", "expected a boolean"});
}

TEST(HfTokenizerFile, T20RejectsMergesNamingMissingTokens) {
  json j = base();
  j["model"]["merges"][1] = "ab d";
  expect_error(j, ErrorCode::kCorrupt,
               {"model.merges[1]", "right part \"d\" is not in model.vocab"});
  j = base();
  j["model"]["merges"].push_back("c a");
  expect_error(j, ErrorCode::kCorrupt, {"model.merges[2]", "result \"ca\" is not in model.vocab"});
  j = base();
  j["model"]["merges"][0] = "a b c";
  expect_error(j, ErrorCode::kCorrupt, {"model.merges[0]", "not two tokens"});
}

TEST(HfTokenizerFile, T21MergeCyclesAndMissingRanksArePolicyNotErrors) {
  // A merge whose result is one of its own parts' ancestors cannot loop: every merge joins two
  // symbols into one, so a word of n symbols takes at most n - 1 merges. Tokens no merge
  // reaches (missing ranks) are simply never produced by BPE.
  json j = base();
  j["model"]["vocab"]["ba"] = 6;
  j["model"]["vocab"]["aba"] = 7;
  j["added_tokens"][0]["id"] = 8;
  j["post_processor"]["special_tokens"]["<s>"]["ids"] = {8};
  j["model"]["merges"] = {"ab a", "a b", "b a", "a ba"};
  auto tok = load_tokenizer_json_text(j.dump(), "cycle.json");
  // "aba": pairs (a,b) rank 1 and (b,a) rank 2 -> "ab" + "a" -> rank 0 -> "aba".
  EXPECT_EQ(tok->encode_ids("aba"), (std::vector<TokenId>{7}));
  EXPECT_EQ(tok->encode_ids("abababab"), (std::vector<TokenId>{7, 1, 7, 1}));  // aba b aba b
  // Repeated pair: the later rank wins (HF inserts into a map in order).
  j = base();
  j["model"]["merges"] = {"a b", "ab c", "a b"};
  EXPECT_EQ(load_tokenizer_json_text(j.dump(), "dup.json")->encode_ids("abc"),
            (std::vector<TokenId>{4}));
}

TEST(HfTokenizerFile, T22RejectsIdsOutOfRangeWithoutAllocatingThem) {
  json j = base();
  j["model"]["vocab"]["abc"] = 4000000000LL;
  expect_error(j, ErrorCode::kCorrupt, {"model.vocab[\"abc\"]", "id 4000000000 is out of range"});
  j = base();
  j["model"]["vocab"]["abc"] = -1;
  expect_error(j, ErrorCode::kCorrupt, {"id -1 is out of range"});
  j = base();
  j["added_tokens"][0]["id"] = 1 << 30;
  expect_error(j, ErrorCode::kCorrupt, {"added_tokens[0].id 1073741824 is out of range"});
  j = base();
  j["post_processor"]["special_tokens"]["<s>"]["ids"] = {99};
  expect_error(j, ErrorCode::kCorrupt, {"post_processor.special_tokens[\"<s>\"].ids[0] 99"});
  // GPT-4o-style holes are allowed: ids 6..9 have no token.
  j = base();
  j["added_tokens"][0]["id"] = 10;
  j["post_processor"]["special_tokens"]["<s>"]["ids"] = {10};
  auto tok = load_tokenizer_json_text(j.dump(), "holes.json");
  EXPECT_EQ(tok->vocab_size(), 11u);
  EXPECT_FALSE(tok->token(7).has_value());
  std::vector<TokenId> hole{7};
  try {
    tok->decode(hole);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kOutOfRange);
  }
}

TEST(HfTokenizerFile, T23RejectsDuplicateTokensAndIds) {
  json j = base();
  j["model"]["vocab"]["abc"] = 3;  // "ab" has id 3 too
  expect_error(j, ErrorCode::kCorrupt, {"id 3 is also the id of"});
  j = base();
  j["added_tokens"].push_back(j["added_tokens"][0]);
  j["added_tokens"][1]["id"] = 6;
  expect_error(j, ErrorCode::kCorrupt, {"added_tokens[1].content \"<s>\" repeats added_tokens[0]"});
  j = base();
  j["added_tokens"][0]["id"] = 2;  // id of "c"
  expect_error(j, ErrorCode::kCorrupt, {"added_tokens[0] id 2", "already the id of \"c\""});
}

TEST(HfTokenizerFile, T24RejectsHugeCounts) {
  json j = base();
  j["decoder"] = {{"type", "Strip"}, {"content", " "}, {"start", 1000000000000LL}, {"stop", 0}};
  expect_error(j, ErrorCode::kCorrupt, {"decoder.start 1000000000000"});
  j = base();
  j["model"] = {{"type", "WordPiece"},
                {"unk_token", "a"},
                {"max_input_chars_per_word", -5},
                {"vocab", {{"a", 0}}}};
  j["added_tokens"] = json::array();
  j["post_processor"] = nullptr;
  expect_error(j, ErrorCode::kCorrupt, {"model.max_input_chars_per_word -5"});
}

TEST(HfTokenizerFile, T25RejectsAnUnkTokenOutsideTheVocabulary) {
  json j = base();
  j["model"]["unk_token"] = "<unk>";
  expect_error(j, ErrorCode::kCorrupt, {"model.unk_token \"<unk>\" is not in model.vocab"});
}

TEST(HfTokenizerFile, T26CatastrophicRegexHitsTheMatchLimitInsteadOfHanging) {
  json j = base();
  j["pre_tokenizer"] = {
      {"type", "Split"}, {"pattern", {{"Regex", "(a+)+$"}}}, {"behavior", "Isolated"}};
  auto tok = load_tokenizer_json_text(j.dump(), "evil.json");
  EXPECT_EQ(tok->encode_ids("abab"), (std::vector<TokenId>{3, 3}));  // no match: one piece
  try {
    tok->encode(std::string(40, 'a') + "b");
    ADD_FAILURE() << "no match-limit error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("(a+)+$"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("match limit"), std::string::npos) << e.what();
  }
}

TEST(HfTokenizerFile, T27RejectsARegexPcre2CannotCompile) {
  json j = base();
  j["pre_tokenizer"] = {
      {"type", "Split"}, {"pattern", {{"Regex", "(ab"}}}, {"behavior", "Isolated"}};
  expect_error(j, ErrorCode::kUnsupported, {"pre_tokenizer.pattern.Regex \"(ab\"", "PCRE2"});
}

TEST(HfTokenizerFile, T28TemplateNamingAnUndeclaredSpecialTokenIsCorrupt) {
  json j = base();
  j["post_processor"]["single"][0]["SpecialToken"]["id"] = "<bos>";
  expect_error(j, ErrorCode::kCorrupt, {"post_processor.single[0].SpecialToken.id \"<bos>\""});
}

TEST(HfTokenizerFile, T29InvalidUtf8InputBecomesReplacementCharacters) {
  json j = base();
  j["model"]["vocab"]["\xEF\xBF\xBD"] = 6;
  j["added_tokens"][0]["id"] = 7;
  j["post_processor"]["special_tokens"]["<s>"]["ids"] = {7};
  auto tok = load_tokenizer_json_text(j.dump(), "fffd.json");
  Encoding e = tok->encode(std::string("ab\xE2\x80 c\x80", 7));
  EXPECT_EQ(e.ids, (std::vector<TokenId>{3, 6, 2, 6}));
  EXPECT_EQ(e.offsets[1], (TokenSpan{2, 4}));  // the two bytes of the broken sequence
  EXPECT_EQ(e.offsets[3], (TokenSpan{6, 7}));
}

TEST(HfTokenizerFile, T30DecodeRejectsIdsOutOfRange) {
  auto tok = load_tokenizer_json_text(base().dump(), "ok.json");
  for (TokenId bad : {-1, 6, 1 << 30}) {
    std::vector<TokenId> ids{0, bad};
    try {
      tok->decode(ids);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kOutOfRange);
      EXPECT_NE(std::string(e.what()).find(std::to_string(bad)), std::string::npos);
    }
  }
}

// A small Unigram file: pieces with log-probabilities, <unk> = 0.
json unigram() {
  json j = base();
  j["post_processor"] = nullptr;
  j["added_tokens"] = json::array();
  j["model"] = json::parse(R"({"type": "Unigram", "unk_id": 0, "byte_fallback": false,
    "vocab": [["<unk>", 0.0], ["a", -2.0], ["b", -2.5], ["ab", -3.0], ["abb", -9.0]]})");
  return j;
}

TEST(HfTokenizerFile, UnigramBaseFileTakesTheBestPathAndFusesUnknowns) {
  auto tok = load_tokenizer_json_text(unigram().dump(), "uni.json");
  EXPECT_EQ(tok->describe(), "tokenizer.json (Unigram)");
  // "abb": ab + b (-5.5) beats abb (-9.0) and a + b + b (-7.0); "xy" is one fused <unk>.
  EXPECT_EQ(tok->encode_ids("abb"), (std::vector<TokenId>{3, 2}));
  EXPECT_EQ(tok->encode_ids("axyb"), (std::vector<TokenId>{1, 0, 2}));
  Encoding e = tok->encode("axyb");
  EXPECT_EQ(e.offsets[1], (TokenSpan{1, 3}));
}

TEST(HfTokenizerFile, T31RejectsMalformedUnigramVocabularies) {
  json j = unigram();
  j["model"]["vocab"] = {{"a", -1.0}};
  expect_error(j, ErrorCode::kCorrupt, {"model.vocab", "expected an array of [piece, score]"});
  j = unigram();
  j["model"]["vocab"][2] = json::array({"b"});
  expect_error(j, ErrorCode::kCorrupt, {"model.vocab[2]", "is not [piece, score]"});
  j = unigram();
  j["model"]["vocab"][2] = json::array({"b", "high"});
  expect_error(j, ErrorCode::kCorrupt, {"model.vocab[2]", "is not [piece, score]"});
  j = unigram();
  j["model"]["vocab"][2] = json::array({"", -1.0});
  expect_error(j, ErrorCode::kCorrupt, {"model.vocab[2]", "piece is empty"});
  j = unigram();
  j["model"]["vocab"][4] = json::array({"a", -1.0});
  expect_error(j, ErrorCode::kCorrupt, {"model.vocab[4]", "\"a\" repeats model.vocab[1]"});
  j = unigram();
  j["model"]["vocab"][4] = json::array({std::string(5000, 'a'), -1.0});
  expect_error(j, ErrorCode::kCorrupt, {"model.vocab[4]", "5000 bytes, more than 1024"});
  j = unigram();
  j["model"]["vocab"] = json::array();
  expect_error(j, ErrorCode::kCorrupt, {"model.vocab", "is empty"});
}

TEST(HfTokenizerFile, T32RejectsAUnigramUnkIdOutOfRange) {
  json j = unigram();
  j["model"]["unk_id"] = 5;
  expect_error(j, ErrorCode::kCorrupt, {"model.unk_id", "5 is not an id in [0, 5)"});
  j["model"]["unk_id"] = -1;
  expect_error(j, ErrorCode::kCorrupt, {"model.unk_id", "-1"});
  j["model"]["unk_id"] = "0";
  expect_error(j, ErrorCode::kCorrupt, {"model.unk_id"});
}

TEST(HfTokenizerFile, T33RefusesAUnigramModelWithoutUnkId) {
  json j = unigram();
  j["model"]["unk_id"] = nullptr;
  expect_error(j, ErrorCode::kUnsupported, {"model.unk_id", "null"});
  j["model"].erase("unk_id");
  expect_error(j, ErrorCode::kUnsupported, {"model.unk_id"});
}

// The fast reader (simdjson) and the reference (nlohmann's DOM) must agree on what a file
// means; where they might not, the reference decides (docs/tokenizer.md "Any tokenizer.json").
TEST(HfTokenizerFile, RepeatedVocabKeyKeepsItsLastIdAsTheReferenceParserDoes) {
  std::string text = base().dump();
  const std::string vocab = R"("vocab":{"a":0,)";
  ASSERT_NE(text.find(vocab), std::string::npos);
  text.replace(text.find(vocab), vocab.size(), R"("vocab":{"a":0,"a":7,)");
  auto tok = load_tokenizer_json_text(text, "repeat.json");
  EXPECT_EQ(tok->token_id("a"), std::optional<TokenId>(7));
  EXPECT_EQ(tok->token(0), std::nullopt);
  EXPECT_EQ(tok->encode_ids("abc b"), (std::vector<TokenId>{4, 1}));
}

TEST(HfTokenizerFile, LoneSurrogateEscapeIsNotValidJson) {
  std::string text = base().dump();
  const std::string key = R"("abc":4)";
  ASSERT_NE(text.find(key), std::string::npos);
  text.replace(text.find(key), key.size(), R"("abc":4,"\udc00":9)");
  try {
    load_tokenizer_json_text(text, "bad.json");
    ADD_FAILURE() << "loaded a lone low surrogate";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("bad.json: not valid JSON"), std::string::npos)
        << e.what();
  }
}

TEST(HfTokenizerFile, PairAndStringMergesGiveTheSameIds) {
  json j = base();
  j["model"]["merges"] = {{"a", "b"}, "ab c"};
  auto tok = load_tokenizer_json_text(j.dump(), "pairs.json");
  EXPECT_EQ(tok->encode_ids("abc ab a"), (std::vector<TokenId>{4, 3, 0}));
}

}  // namespace
}  // namespace embedscope
