// Explorer end to end on word2vec files written by numpy at test time, with vectors placed so
// that the nearest neighbours are known: labels, exclusions, baseline shape and verdict.
#include "embedscope/analysis/explore.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "embedscope/core/error.h"
#include "test_util.h"

namespace embedscope {
namespace {

// computer at c; its neighbours at c + decreasing noise, fillers random. Written as word2vec
// text by a plain numpy script (the format's reference writer is a printf loop).
const char* kWriter = R"(
import sys, numpy as np
rng = np.random.default_rng(0)
dim = 32
c = rng.normal(size=dim)
near = [("computers", 0.05), ("Computer", 0.1), ("calculator", 0.2), ("machine", 0.3),
        ("1990", 0.01), ("...", 0.02), ("banana", 0.4)]
words = [("computer", c)] + [(w, c + s * rng.normal(size=dim) * np.sqrt(dim) / 3) for w, s in near]
fillers = ["table", "river", "happy", "quickly", "stone", "music", "cloud", "garden"]
words += [(w, rng.normal(size=dim) * 3) for w in fillers]
with open(sys.argv[1], "w") as f:
    f.write("%d %d\n" % (len(words), dim))
    for w, v in words:
        f.write(w + " " + " ".join("%.6f" % x for x in v) + "\n")
)";

struct Fixture {
  test::TempDir dir;
  Model model;
  Fixture() {
    std::string path = dir.file("vec.txt");
    auto r = test::run_python(kWriter, {path});
    EXPECT_EQ(r.rc, 0) << r.err;
    model = load_model(path);
  }
};

const Labeller& lab() {
  static WordNet wn = WordNet::open();
  static Labeller l(wn);
  return l;
}

TEST(Explorer, LabelsTheKnownNeighbourhood) {
  Fixture f;
  Explorer ex(f.model, nullptr, lab(), {.k = 5});
  ExploreResult r = ex.explore("computer");
  ASSERT_EQ(r.neighbors.size(), 5u);
  std::vector<std::string> toks;
  for (auto& n : r.neighbors) toks.push_back(n.token);
  // Numbers and punctuation are not whole-word candidates; the query row is excluded.
  EXPECT_EQ(toks,
            (std::vector<std::string>{"computers", "Computer", "calculator", "machine", "banana"}));
  EXPECT_EQ(r.neighbors[0].label.label, Label::kVariant);
  EXPECT_EQ(r.neighbors[1].label.label, Label::kVariant);
  EXPECT_EQ(r.neighbors[2].label.label, Label::kSynonym);  // calculator: computer.n.02
  EXPECT_EQ(r.neighbors[3].label.label, Label::kRelated);  // machine: hypernym
  EXPECT_EQ(r.neighbors[4].label.label, Label::kNoise);
  EXPECT_EQ(r.labels[Label::kVariant], 2u);
  EXPECT_EQ(r.labels[Label::kNoise], 1u);
  for (size_t i = 1; i < r.neighbors.size(); ++i)
    EXPECT_GE(r.neighbors[i - 1].score, r.neighbors[i].score);
  EXPECT_GT(r.neighbors[0].score, 0.9f);
  EXPECT_EQ(r.n_candidates, 13u);  // 16 rows - 1990 - "..." - the query
  ASSERT_EQ(r.rows.size(), 2u);    // "computer" and "Computer"
  EXPECT_EQ(r.rows[r.query_variant].text, "computer");
  EXPECT_FALSE(r.composed);
  EXPECT_NE(r.verdict.find("2 of 5 neighbours are spelling or inflection variants"),
            std::string::npos)
      << r.verdict;
}

TEST(Explorer, AllTokensIncludesNumbers) {
  Fixture f;
  Explorer ex(f.model, nullptr, lab(), {.k = 2, .all_tokens = true});
  ExploreResult r = ex.explore("computer");
  EXPECT_EQ(r.neighbors[0].token, "1990");
  EXPECT_EQ(r.neighbors[0].label.noise, NoiseKind::kNumberOrPunct);
  EXPECT_EQ(r.neighbors[1].token, "...");
}

TEST(Explorer, BaselineHasSameShapeAndIsSeeded) {
  Fixture f;
  Explorer ex(f.model, nullptr, lab(), {.k = 5, .seed = 3});
  ExploreResult a = ex.explore("computer"), b = ex.explore("computer");
  ASSERT_EQ(a.baseline.neighbors.size(), 5u);
  ASSERT_EQ(a.baseline.top_scores.size(), 5u);
  ASSERT_EQ(a.baseline.expected_top_scores.size(), 5u);
  EXPECT_EQ(a.baseline.top_scores, b.baseline.top_scores);
  EXPECT_EQ(a.baseline.labels.total(), 5u);
  EXPECT_EQ(a.baseline.init, "uniform:0.015625");  // word2vec's (rand - 0.5) / dim
  EXPECT_EQ(a.baseline.scores.n, a.scores.n);      // same candidates
  // The baseline never returns the query's own row or a non-candidate.
  for (auto& n : a.baseline.neighbors) {
    EXPECT_NE(n.token, "computer");
    EXPECT_NE(n.token, "1990");
  }
  Explorer other(f.model, nullptr, lab(), {.k = 5, .seed = 4});
  EXPECT_NE(other.explore("computer").baseline.top_scores, a.baseline.top_scores);
  EXPECT_GT(a.mean_top, a.baseline_mean_top);
}

TEST(Explorer, FindsOtherCaseSpelling) {
  Fixture f;
  Explorer ex(f.model, nullptr, lab(), {.k = 3});
  ExploreResult r = ex.explore("Banana");
  EXPECT_EQ(r.rows[r.query_variant].text, "banana");
}

TEST(Explorer, UnknownWordIsNotFound) {
  Fixture f;
  Explorer ex(f.model, nullptr, lab(), {.k = 3});
  try {
    ex.explore("zebra");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("'zebra'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("vec.txt"), std::string::npos) << e.what();
  }
}

TEST(Explorer, RejectsZeroK) {
  Fixture f;
  EXPECT_THROW(Explorer(f.model, nullptr, lab(), {.k = 0}), Error);
}

TEST(Explorer, SampleAggregatesLabels) {
  Fixture f;
  Explorer ex(f.model, nullptr, lab(), {.k = 3, .seed = 1});
  SampleResult s = ex.sample(4);
  EXPECT_EQ(s.words.size(), 4u);
  EXPECT_EQ(s.labels.total(), 12u);
  EXPECT_EQ(s.baseline_labels.total(), 12u);
  EXPECT_NE(s.verdict.find("Over 4 frequent words"), std::string::npos) << s.verdict;
  SampleResult again = ex.sample(4);
  EXPECT_EQ(s.words, again.words);
}

TEST(ExploreVerdict, SaysWhatTheCountsSay) {
  LabelCounts m, b;
  m.by_label = {6, 0, 3, 1};
  m.noise_kinds["unrelated"] = 1;
  b.by_label = {0, 0, 0, 10};
  std::string v = explore_verdict(m, b, 0.62, 0.14, 0.146);
  EXPECT_NE(
      v.find("6 of 10 neighbours are spelling or inflection variants of the query; 3 are related "
             "concepts; none is a synonym; 1 is noise"),
      std::string::npos)
      << v;
  EXPECT_NE(v.find("groups surface forms more than meanings"), std::string::npos) << v;
  EXPECT_NE(v.find("gives 10 noise neighbours with cosine under 0.15"), std::string::npos) << v;
  m.by_label = {0, 0, 0, 10};
  v = explore_verdict(m, b, 0.7, 0.3, 0.33);
  EXPECT_NE(v.find("0 of 10 neighbours are spelling or inflection variants of the query; none is a "
                   "related concept; none is a synonym; 10 are noise"),
            std::string::npos)
      << v;
  m.by_label = {1, 1, 1, 7};
  v = explore_verdict(m, b, 0.1, 0.14, 0.146);
  EXPECT_NE(v.find("Most neighbours are noise"), std::string::npos) << v;
  EXPECT_NE(v.find("no higher than chance"), std::string::npos) << v;
}

}  // namespace
}  // namespace embedscope
