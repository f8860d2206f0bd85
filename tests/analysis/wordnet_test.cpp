// WordNet reader and morphy against the Debian wordnet-base dict files (setup installs them;
// these tests fail, not skip, when they are missing), plus an enumerated bad-file suite.
#include "embedscope/analysis/wordnet.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "embedscope/core/error.h"
#include "test_util.h"

namespace embedscope {
namespace {

const WordNet& wn() {
  static WordNet w = WordNet::open();
  return w;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(WordNet, FindsCarSynsetWithItsSynonyms) {
  auto ids = wn().synsets("car", WnPos::kNoun);
  ASSERT_EQ(ids.size(), 5u);  // WordNet 3.0: car has 5 noun senses
  Synset s = wn().synset(ids[0]);
  EXPECT_EQ(s.words,
            (std::vector<std::string>{"car", "auto", "automobile", "machine", "motorcar"}));
  EXPECT_EQ(wn().synset_name(s), "car.n.01");
  EXPECT_NE(s.gloss.find("motor vehicle"), std::string::npos);
  EXPECT_EQ(wn().synsets("automobile", WnPos::kNoun), std::vector<SynsetId>{ids[0]});
}

TEST(WordNet, LookupIsCaseAndSpaceInsensitive) {
  EXPECT_EQ(wn().synsets("Car", WnPos::kNoun), wn().synsets("car", WnPos::kNoun));
  EXPECT_FALSE(wn().synsets("ice cream", WnPos::kNoun).empty());
  EXPECT_EQ(wn().synsets("ice cream", WnPos::kNoun), wn().synsets("ice_cream", WnPos::kNoun));
}

TEST(WordNet, AbsentLemmaIsEmptyNotAnError) {
  EXPECT_TRUE(wn().synsets("qwzxv", WnPos::kNoun).empty());
  EXPECT_TRUE(wn().synsets("", WnPos::kNoun).empty());
  EXPECT_TRUE(wn().synsets("zzzzzzzzzz", WnPos::kAdv).empty());  // past the last line
  EXPECT_TRUE(wn().synsets("!", WnPos::kAdj).empty());           // before the first line
}

TEST(WordNet, FirstAndLastIndexLinesAreFound) {
  // index.noun's first lemma after the license and one near the end of the file.
  EXPECT_FALSE(wn().synsets("'hood", WnPos::kNoun).empty());
  EXPECT_FALSE(wn().synsets("zyrian", WnPos::kNoun).empty());
}

TEST(WordNet, ParsesPointersOfComputer) {
  auto ids = wn().synsets("computer", WnPos::kNoun);
  ASSERT_EQ(ids.size(), 2u);
  Synset s = wn().synset(ids[0]);
  auto hyper = std::find_if(s.pointers.begin(), s.pointers.end(),
                            [](const WnPointer& p) { return p.symbol == "@"; });
  ASSERT_NE(hyper, s.pointers.end());
  EXPECT_TRUE(has(wn().synset(hyper->target).words, "machine"));
  // Derivation pointers are lexical: "+" from word 1 (computer) to compute.v.
  bool to_compute = false;
  for (const auto& p : s.pointers)
    if (p.symbol == "+" && p.source_word == 1) {
      Synset t = wn().synset(p.target);
      if (t.words[p.target_word - 1] == "compute") to_compute = true;
    }
  EXPECT_TRUE(to_compute);
}

TEST(WordNet, StripsAdjectiveMarkers) {
  auto ids = wn().synsets("galore", WnPos::kAdj);
  ASSERT_FALSE(ids.empty());
  EXPECT_TRUE(has(wn().synset(ids[0]).words, "galore"));
}

TEST(WordNetMorphy, DetachesRegularSuffixes) {
  EXPECT_EQ(wn().morphy("computers", WnPos::kNoun), std::vector<std::string>{"computer"});
  EXPECT_EQ(wn().morphy("boxes", WnPos::kNoun), std::vector<std::string>{"box"});
  EXPECT_EQ(wn().morphy("ladies", WnPos::kNoun), std::vector<std::string>{"lady"});
  EXPECT_TRUE(has(wn().morphy("computing", WnPos::kVerb), "compute"));
  EXPECT_TRUE(has(wn().morphy("walked", WnPos::kVerb), "walk"));
  EXPECT_TRUE(has(wn().morphy("bigger", WnPos::kAdj), "big"));
}

TEST(WordNetMorphy, UsesExceptionLists) {
  EXPECT_EQ(wn().morphy("geese", WnPos::kNoun), std::vector<std::string>{"goose"});
  EXPECT_TRUE(has(wn().morphy("better", WnPos::kAdj), "good"));
  EXPECT_TRUE(has(wn().morphy("ran", WnPos::kVerb), "run"));
  EXPECT_TRUE(has(wn().morphy("was", WnPos::kVerb), "be"));
}

TEST(WordNetMorphy, RulesAppliedOnceWhenAsked) {
  // NLTK's _morphy detaches again when one pass finds nothing: murderess -> murderes -> murder.
  EXPECT_EQ(wn().morphy("murderess", WnPos::kVerb), std::vector<std::string>{"murder"});
  // WordNet's morph.c applies the rules once: no verb "murder" in "murderess".
  EXPECT_TRUE(wn().morphy("murderess", WnPos::kVerb, /*repeat=*/false).empty());
  EXPECT_EQ(wn().morphy("murderess", WnPos::kNoun, false), std::vector<std::string>{"murderess"});
  EXPECT_EQ(wn().morphy("boxes", WnPos::kNoun, false), std::vector<std::string>{"box"});
}

TEST(WordNetMorphy, UnknownWordHasNoLemma) {
  EXPECT_TRUE(wn().lemmas("qwzxvs").empty());
  EXPECT_TRUE(has(wn().lemmas("dogs"), "dog"));
}

// --- bad dict files ---------------------------------------------------------------------

struct FakeDict {
  test::TempDir dir;
  explicit FakeDict(const std::string& index_noun, const std::string& data_noun) {
    for (const char* p : {"noun", "verb", "adj", "adv"}) {
      test::write_file(dir.file(std::string("index.") + p), "");
      test::write_file(dir.file(std::string("data.") + p), "");
    }
    test::write_file(dir.file("index.noun"), index_noun);
    test::write_file(dir.file("data.noun"), data_noun);
  }
};

template <typename F>
void expect_error(F f, ErrorCode code, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const auto& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

const std::string kGoodData = "00000000 05 n 01 dog 0 000 | a dog\n";

TEST(WordNetBadFiles, MissingFolderNamesThePackage) {
  expect_error([] { WordNet::open("/nonexistent/wordnet"); }, ErrorCode::kNotFound,
               {"/nonexistent/wordnet", "wordnet-base"});
}

TEST(WordNetBadFiles, RejectsIndexCountMismatch) {
  FakeDict d("  1 license\ndog n 3 0 1 0 00000000\n", kGoodData);
  WordNet w = WordNet::open(d.dir.path());
  expect_error([&] { w.synsets("dog", WnPos::kNoun); }, ErrorCode::kCorrupt,
               {"index.noun", "byte 12", "synset_cnt 3"});
}

TEST(WordNetBadFiles, RejectsNonNumericIndexOffset) {
  FakeDict d("dog n 1 0 1 0 0000x000\n", kGoodData);
  WordNet w = WordNet::open(d.dir.path());
  expect_error([&] { w.synsets("dog", WnPos::kNoun); }, ErrorCode::kCorrupt,
               {"index.noun", "synset_offset '0000x000'"});
}

TEST(WordNetBadFiles, RejectsOffsetBeyondDataFile) {
  FakeDict d("dog n 1 0 1 0 00099999\n", kGoodData);
  WordNet w = WordNet::open(d.dir.path());
  auto ids = w.synsets("dog", WnPos::kNoun);
  ASSERT_EQ(ids.size(), 1u);
  expect_error([&] { w.synset(ids[0]); }, ErrorCode::kOutOfRange,
               {"data.noun", "offset 99999", "file size 35"});
}

TEST(WordNetBadFiles, RejectsOffsetNotAtASynset) {
  FakeDict d("dog n 1 0 1 0 00000003\n", kGoodData);
  WordNet w = WordNet::open(d.dir.path());
  expect_error([&] { w.synset(w.synsets("dog", WnPos::kNoun)[0]); }, ErrorCode::kCorrupt,
               {"data.noun", "byte 3", "expected its own offset 00000003"});
}

TEST(WordNetBadFiles, RejectsWordCountBeyondLine) {
  FakeDict d("dog n 1 0 1 0 00000000\n", "00000000 05 n 09 dog 0 000 | a dog\n");
  WordNet w = WordNet::open(d.dir.path());
  expect_error([&] { w.synset({WnPos::kNoun, 0}); }, ErrorCode::kCorrupt, {"data.noun", "w_cnt 9"});
}

TEST(WordNetBadFiles, RejectsPointerCountBeyondLine) {
  FakeDict d("dog n 1 0 1 0 00000000\n", "00000000 05 n 01 dog 0 004 @ 00000000 n 0000 | a dog\n");
  WordNet w = WordNet::open(d.dir.path());
  expect_error([&] { w.synset({WnPos::kNoun, 0}); }, ErrorCode::kCorrupt, {"data.noun", "p_cnt 4"});
}

TEST(WordNetBadFiles, RejectsUnknownPointerPos) {
  FakeDict d("dog n 1 0 1 0 00000000\n", "00000000 05 n 01 dog 0 001 @ 00000000 q 0000 | a dog\n");
  WordNet w = WordNet::open(d.dir.path());
  expect_error(
      [&] {
        w.synset({WnPos::kNoun, 0});
      },
      ErrorCode::kCorrupt, {"data.noun", "pos 'q'", "n v a s r"});
}

TEST(WordNetBadFiles, RejectsSourceWordBeyondWordCount) {
  FakeDict d("dog n 1 0 1 0 00000000\n", "00000000 05 n 01 dog 0 001 + 00000000 n 0501 | a dog\n");
  WordNet w = WordNet::open(d.dir.path());
  expect_error(
      [&] {
        w.synset({WnPos::kNoun, 0});
      },
      ErrorCode::kCorrupt, {"data.noun", "source word 5 > w_cnt 1"});
}

TEST(WordNetBadFiles, RejectsOneFieldExceptionLine) {
  FakeDict d("dog n 1 0 1 0 00000000\n", kGoodData);
  test::write_file(d.dir.file("noun.exc"), "geese goose\nmice\n");
  expect_error([&] { WordNet::open(d.dir.path()); }, ErrorCode::kCorrupt,
               {"noun.exc", "line 2", "'mice'"});
}

TEST(WordNetBadFiles, GoodFakeDictParses) {
  FakeDict d("  1 license\ncat n 1 0 1 0 00000000\ndog n 1 0 1 0 00000000\n", kGoodData);
  WordNet w = WordNet::open(d.dir.path());
  ASSERT_EQ(w.synsets("dog", WnPos::kNoun).size(), 1u);
  EXPECT_EQ(w.synset(w.synsets("dog", WnPos::kNoun)[0]).words, std::vector<std::string>{"dog"});
  EXPECT_EQ(w.synset({WnPos::kNoun, 0}).gloss, "a dog");
}

}  // namespace
}  // namespace embedscope
