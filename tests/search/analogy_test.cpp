// Analogies and relations against gensim on a Word2Vec model gensim trained on the Brown corpus
// at test time; fast mode against exact mode on the same trained vectors.
#include "embedscope/search/analogy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "embedscope/core/error.h"
#include "embedscope/core/vocabulary.h"
#include "test_util.h"

namespace embedscope {
namespace {

using test::TempDir;

const char* kGensimOracle = R"PY(
import json, sys
from gensim.models import KeyedVectors
out = sys.argv[1]
kv = KeyedVectors.load(f"{out}/model.kv")
cands = [("man", "he", "woman"), ("he", "his", "she"), ("good", "better", "bad"),
         ("day", "days", "year"), ("go", "went", "come"), ("first", "second", "one"),
         ("city", "cities", "man"), ("big", "small", "long"), ("was", "is", "had")]
res = {"analogies": [], "odd": [], "sim": []}
for a, b, c in cands:
    if not all(w in kv.key_to_index for w in (a, b, c)):
        continue
    add = kv.most_similar(positive=[b, c], negative=[a], topn=10)
    mul = kv.most_similar_cosmul(positive=[b, c], negative=[a], topn=10)
    res["analogies"].append({"a": a, "b": b, "c": c, "add": add, "mul": mul})
for ws in [["breakfast", "cereal", "dinner", "lunch"], ["man", "woman", "child", "car"],
           ["red", "blue", "green", "house"], ["one", "two", "three", "dog"]]:
    ws = [w for w in ws if w in kv.key_to_index]
    if len(ws) >= 3:
        res["odd"].append({"words": ws, "odd": kv.doesnt_match(ws)})
for a, b in [("man", "woman"), ("day", "night"), ("good", "bad"), ("he", "said")]:
    if a in kv.key_to_index and b in kv.key_to_index:
        res["sim"].append({"a": a, "b": b, "sim": float(kv.similarity(a, b)), "rank": int(kv.rank(a, b))})
json.dump(res, open(f"{out}/gensim.json", "w"))
)PY";

class TrainedBrown : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    // One Python process (gensim's import dominates): train, then ask gensim the answers.
    test::run_python(test::read_file(std::string(ES_SOURCE_DIR) + "/tests/search/train_brown.py") +
                         kGensimOracle,
                     {dir_->path()});
    auto meta = nlohmann::json::parse(test::read_file(dir_->file("meta.json")));
    size_t n = meta["n"], dim = meta["dim"];
    std::string b = test::read_file(dir_->file("vectors.f32"));
    ASSERT_EQ(b.size(), n * dim * 4);
    std::vector<float> v(n * dim);
    std::memcpy(v.data(), b.data(), b.size());
    table_ = new EmbeddingTable(EmbeddingTable::from_f32(n, dim, std::move(v)));
    vocab_ = new Vocabulary();
    std::istringstream in(test::read_file(dir_->file("vocab.txt")));
    for (std::string w; std::getline(in, w);) vocab_->add(w);
    ASSERT_EQ(vocab_->size(), n);
    oracle_ = new nlohmann::json(nlohmann::json::parse(test::read_file(dir_->file("gensim.json"))));
  }
  static void TearDownTestSuite() {
    delete oracle_;
    delete vocab_;
    delete table_;
    delete dir_;
  }
  static Term term(const std::string& w, float weight = 1) {
    auto id = vocab_->find(w);
    EXPECT_TRUE(id.has_value()) << w;
    return Term{{id.value_or(0)}, weight};
  }
  static TempDir* dir_;
  static EmbeddingTable* table_;
  static Vocabulary* vocab_;
  static nlohmann::json* oracle_;
};
TempDir* TrainedBrown::dir_;
EmbeddingTable* TrainedBrown::table_;
Vocabulary* TrainedBrown::vocab_;
nlohmann::json* TrainedBrown::oracle_;

void expect_same(const std::vector<Neighbor>& got, const nlohmann::json& want, const Vocabulary& v,
                 const std::string& what, double tol) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t r = 0; r < got.size(); ++r) {
    EXPECT_EQ(v.token(got[r].id), want[r][0].get<std::string>()) << what << " rank " << r;
    EXPECT_NEAR(got[r].score, want[r][1].get<double>(), tol) << what << " rank " << r;
  }
}

TEST_F(TrainedBrown, ThreeCosAddAndMulEqualGensim) {
  ASSERT_GE((*oracle_)["analogies"].size(), 5u);
  Searcher s(*table_, {.n_threads = 2});
  for (const auto& a : (*oracle_)["analogies"]) {
    std::vector<Term> t{term(a["a"], -1), term(a["b"]), term(a["c"])};
    std::string what = a["a"].get<std::string>() + ":" + a["b"].get<std::string>() +
                       "::" + a["c"].get<std::string>();
    expect_same(analogy(s, t, AnalogyMethod::kAdd, {.k = 10}), a["add"], *vocab_, what + " add",
                1e-5);
    expect_same(analogy(s, t, AnalogyMethod::kAdd, {.k = 10, .mode = SearchMode::kFast}), a["add"],
                *vocab_, what + " add fast", 1e-5);
    expect_same(analogy(s, t, AnalogyMethod::kMul, {.k = 10}), a["mul"], *vocab_, what + " mul",
                1e-5);
  }
}

TEST_F(TrainedBrown, DoesntMatchSimilarityAndRankEqualGensim) {
  ASSERT_GE((*oracle_)["odd"].size(), 2u);
  ASSERT_GE((*oracle_)["sim"].size(), 3u);
  Searcher s(*table_);
  for (const auto& o : (*oracle_)["odd"]) {
    std::vector<Term> t;
    for (const auto& w : o["words"]) t.push_back(term(w));
    DoesntMatch r = doesnt_match(s, t);
    EXPECT_EQ(o["words"][r.index].get<std::string>(), o["odd"].get<std::string>());
  }
  for (const auto& x : (*oracle_)["sim"]) {
    EXPECT_NEAR(term_similarity(s, term(x["a"]), term(x["b"])), x["sim"].get<double>(), 1e-5);
    EXPECT_EQ(term_rank(s, term(x["a"]), term(x["b"])), x["rank"].get<size_t>())
        << x["a"] << " " << x["b"];
  }
}

// The re-rank width (kMinFastCandidates, rerank_factor) is chosen so int8 scanning never
// changes the top-k on trained embeddings: check every one of the 1000 most frequent words.
TEST_F(TrainedBrown, FastModeTopTenEqualsExactOnTrainedVectors) {
  for (DType dt : {DType::kF32, DType::kBF16}) {
    EmbeddingTable t = *table_;
    if (dt == DType::kBF16) {
      std::vector<uint16_t> h(t.n_rows() * t.dim());
      for (size_t i = 0; i < h.size(); ++i) h[i] = f32_to_bf16(t.f32()[i]);
      t = EmbeddingTable::from_u16(t.n_rows(), t.dim(), DType::kBF16, std::move(h));
    }
    Searcher s(t, {.n_threads = 2});
    size_t diffs = 0;
    for (TokenId q = 0; q < 1000; ++q) {
      for (Metric m : {Metric::kCosine, Metric::kDot}) {
        SearchOptions o{.k = 10, .metric = m, .exclude = {q}};
        auto ex = s.search(s.row(q), o);
        o.mode = SearchMode::kFast;
        auto fa = s.search(s.row(q), o);
        if (ex != fa) ++diffs;
      }
    }
    EXPECT_EQ(diffs, 0u) << dtype_name(dt);
  }
}

TEST(Expression, ParsesWeightsSignsAndIds) {
  auto t = parse_expression(" king - man + 0.5*woman -2 * #12 + t-shirt");
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[0].word, "king");
  EXPECT_EQ(t[0].weight, 1.0f);
  EXPECT_EQ(t[1].word, "man");
  EXPECT_EQ(t[1].weight, -1.0f);
  EXPECT_EQ(t[2].word, "woman");
  EXPECT_EQ(t[2].weight, 0.5f);
  EXPECT_EQ(t[3].word, "#12");
  EXPECT_EQ(t[3].weight, -2.0f);
  EXPECT_EQ(t[4].word, "t-shirt");
}

TEST(Expression, RejectsMalformedExpressionsWithTheOffset) {
  for (auto [expr, what] : std::vector<std::pair<std::string, std::string>>{
           {"", "empty expression at byte 0"},
           {"king -", "expected a word at byte 6"},
           {"king man", "expected '+' or '-' at byte 5"},
           {"2 * ", "expected a word"}}) {
    try {
      parse_expression(expr);
      ADD_FAILURE() << "accepted '" << expr << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  }
}

TEST(Analogy, RejectsZeroVectorsAndTooFewWords) {
  Searcher s(EmbeddingTable::from_f32(3, 2, {0, 0, 0, 1, 1, 1}));
  try {
    compose_terms(s, std::vector<Term>{{{0}, 1}});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("row 0 has a zero"), std::string::npos);
  }
  EXPECT_THROW(doesnt_match(s, std::vector<Term>{{{1}, 1}}), Error);
}

}  // namespace
}  // namespace embedscope
