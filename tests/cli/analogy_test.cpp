// CLI analogy / similarity / rank / doesnt-match against gensim on a Word2Vec model gensim
// trained on the Brown corpus at test time and saved in word2vec text format.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace embedscope {
namespace {

using nlohmann::json;
using test::TempDir;

const char* kOracle = R"PY(
import json, sys
from gensim.models import KeyedVectors
out = sys.argv[1]
kv = KeyedVectors.load(f"{out}/model.kv")
kv.save_word2vec_format(f"{out}/brown.txt", binary=False)
kv = KeyedVectors.load_word2vec_format(f"{out}/brown.txt")   # what the file holds
res = {"analogy": [], "odd": [], "pairs": []}
for a, b, c in [("man", "he", "woman"), ("day", "days", "year"), ("good", "better", "bad")]:
    if all(w in kv.key_to_index for w in (a, b, c)):
        res["analogy"].append({"abc": [a, b, c],
            "add": kv.most_similar(positive=[b, c], negative=[a], topn=5),
            "mul": kv.most_similar_cosmul(positive=[b, c], negative=[a], topn=5)})
for ws in [["man", "woman", "child", "year"], ["one", "two", "three", "house"]]:
    ws = [w for w in ws if w in kv.key_to_index]
    res["odd"].append({"words": ws, "odd": kv.doesnt_match(ws)})
for a, b in [("man", "woman"), ("day", "night"), ("he", "said")]:
    if a in kv.key_to_index and b in kv.key_to_index:
        res["pairs"].append({"a": a, "b": b, "sim": float(kv.similarity(a, b)), "rank": int(kv.rank(a, b))})
json.dump(res, open(f"{out}/gensim.json", "w"))
)PY";

class RelationsCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    test::run_python(
        test::read_file(std::string(ES_SOURCE_DIR) + "/tests/search/train_brown.py") + kOracle,
        {dir_->path(), "--files", "120"});
    e_ = new json(json::parse(test::read_file(dir_->file("gensim.json"))));
  }
  static void TearDownTestSuite() {
    delete e_;
    delete dir_;
  }
  static json cli(const std::string& cmd, const std::string& args) {
    auto r = test::run(test::shell_quote(test::cli_path()) + " " + cmd + " " +
                       test::shell_quote(dir_->file("brown.txt")) + " " + args + " --json");
    EXPECT_EQ(r.rc, 0) << cmd << " " << args << "\n" << r.err;
    return r.rc == 0 ? json::parse(r.out) : json::object();
  }
  static TempDir* dir_;
  static json* e_;
};
TempDir* RelationsCli::dir_;
json* RelationsCli::e_;

TEST_F(RelationsCli, AnalogyEqualsGensimMostSimilarAndCosmul) {
  ASSERT_GE((*e_)["analogy"].size(), 2u);
  for (const auto& a : (*e_)["analogy"]) {
    std::string abc = a["abc"][0].get<std::string>() + " " + a["abc"][1].get<std::string>() + " " +
                      a["abc"][2].get<std::string>();
    for (std::string m : {"3cosadd", "3cosmul"}) {
      json got = cli("analogy", abc + " -k 5 --method " + m);
      const json& want = a[m == "3cosadd" ? "add" : "mul"];
      EXPECT_EQ(got["method"], m);
      ASSERT_EQ(got["neighbors"].size(), want.size()) << abc;
      for (size_t r = 0; r < want.size(); ++r) {
        EXPECT_EQ(got["neighbors"][r]["token"], want[r][0]) << abc << " " << m << " rank " << r;
        EXPECT_NEAR(got["neighbors"][r]["score"].get<double>(), want[r][1].get<double>(), 1e-5);
      }
    }
  }
}

TEST_F(RelationsCli, SimilarityRankAndDoesntMatchEqualGensim) {
  ASSERT_GE((*e_)["pairs"].size(), 2u);
  for (const auto& p : (*e_)["pairs"]) {
    std::string ab = p["a"].get<std::string>() + " " + p["b"].get<std::string>();
    EXPECT_NEAR(cli("similarity", ab)["similarity"].get<double>(), p["sim"].get<double>(), 1e-5)
        << ab;
    EXPECT_EQ(cli("rank", ab)["rank"], p["rank"]) << ab;
  }
  for (const auto& o : (*e_)["odd"]) {
    std::string ws;
    for (const auto& w : o["words"]) ws += w.get<std::string>() + " ";
    EXPECT_EQ(cli("doesnt-match", ws)["odd_one_out"], o["odd"]) << ws;
  }
}

TEST_F(RelationsCli, UnknownWordsAndWrongArityAreUsageErrors) {
  std::string f = test::shell_quote(dir_->file("brown.txt"));
  auto r = test::run(test::shell_quote(test::cli_path()) + " analogy " + f + " man he");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("analogy needs three words"), std::string::npos) << r.err;
  r = test::run(test::shell_quote(test::cli_path()) + " similarity " + f + " man zzzqqq");
  EXPECT_EQ(r.rc, 3);
  EXPECT_NE(r.err.find("'zzzqqq' is not in the vocabulary"), std::string::npos) << r.err;
  r = test::run(test::shell_quote(test::cli_path()) + " analogy " + f +
                " man he woman --method 4cos");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("unknown analogy method '4cos'"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace embedscope
