// Analogy and word-pair evaluation equal gensim's evaluate_word_analogies /
// evaluate_word_pairs on the same word2vec file (gensim runs at test time).
#include "embedscope/analysis/evaluate.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "embedscope/core/error.h"
#include "test_util.h"

namespace embedscope {
namespace {

// Vectors with planted structure (capital = country + offset + noise; plural = word + offset
// + noise) so that some analogies succeed and some fail; mixed-case duplicates and rows past
// restrict_vocab exercise gensim's case folding and restriction. gensim writes the file.
const char* kScript = R"(
import sys, json, numpy as np
from gensim.models import KeyedVectors
out = sys.argv[1]
rng = np.random.default_rng(1)
dim = 24
cap = rng.normal(size=dim); plu = rng.normal(size=dim)
countries = ["france", "germany", "italy", "spain", "japan", "china", "egypt", "peru"]
capitals = ["paris", "berlin", "rome", "madrid", "tokyo", "beijing", "cairo", "lima"]
nouns = ["cat", "dog", "car", "tree", "house", "river", "bird", "stone"]
keys, vecs = [], []
def add(w, v): keys.append(w); vecs.append(v)
for c, k in zip(countries, capitals):
    v = rng.normal(size=dim); add(c, v); add(k, v + cap + rng.normal(size=dim) * 0.9)
for n in nouns:
    v = rng.normal(size=dim); add(n, v); add(n + "s", v + plu + rng.normal(size=dim) * 0.9)
add("Paris", rng.normal(size=dim))   # a later case variant: gensim keeps the first row
for i in range(40): add("filler%d" % i, rng.normal(size=dim))
add("lima2", rng.normal(size=dim))
kv = KeyedVectors(dim); kv.add_vectors(keys, np.array(vecs, dtype=np.float32))
kv.save_word2vec_format(out + "/vec.txt")
with open(out + "/q.txt", "w") as f:
    f.write(": capital-common\n")
    for i in range(len(countries)):
        for j in range(len(countries)):
            if i != j: f.write("%s %s %s %s\n" % (countries[i].upper() if j % 3 == 0 else countries[i], capitals[i], countries[j], capitals[j]))
    f.write("france paris zzz qqq\n")   # OOV
    f.write("this line is invalid here\n")
    f.write(": plural\n")
    for i in range(len(nouns)):
        for j in range(len(nouns)):
            if i != j: f.write("%s %ss %s %ss\n" % (nouns[i], nouns[i], nouns[j], nouns[j]))
with open(out + "/pairs.tsv", "w") as f:
    f.write("# comment\n")
    for a, b in zip(countries + nouns, capitals + [n + "s" for n in nouns]):
        f.write("%s\t%s\t%.2f\n" % (a, b, rng.uniform(0, 10)))
    f.write("cat\tdog\t5\n"); f.write("Cat\tDOG\t5\n"); f.write("cat\tunicorn\t3\n")
    f.write("bad line\n"); f.write("cat\tdog\tnotanumber\n")
    f.write("paris\tcat\t1.5\n")
res = {}
for rv in (300000, 40):
    score, sections = kv.evaluate_word_analogies(out + "/q.txt", restrict_vocab=rv)
    res["analogy_%d" % rv] = {"score": score, "sections": [[s["section"], len(s["correct"]), len(s["incorrect"])] for s in sections]}
    p, s, oov = kv.evaluate_word_pairs(out + "/pairs.tsv", restrict_vocab=rv)
    res["pairs_%d" % rv] = {"pearson": float(p[0]), "spearman": float(s[0]), "oov": oov}
print(json.dumps(res))
)";

// One gensim run shared by every test (importing gensim takes seconds).
struct Gensim {
  test::TempDir dir;
  nlohmann::json res;
  LoadedEmbeddings emb;
  Gensim() {
    auto r = test::run_python(kScript, {dir.path()});
    EXPECT_EQ(r.rc, 0) << r.err;
    res = nlohmann::json::parse(r.out);
    emb = load_embeddings(dir.file("vec.txt"));
  }
  static const Gensim& get() {
    static Gensim g;
    return g;
  }
};

void expect_analogies_equal(const AnalogyResult& ours, const nlohmann::json& g) {
  ASSERT_EQ(ours.sections.size(), g["sections"].size());
  for (size_t i = 0; i < ours.sections.size(); ++i) {
    EXPECT_EQ(ours.sections[i].name, g["sections"][i][0].get<std::string>());
    EXPECT_EQ(ours.sections[i].correct, g["sections"][i][1].get<size_t>()) << ours.sections[i].name;
    EXPECT_EQ(ours.sections[i].incorrect, g["sections"][i][2].get<size_t>())
        << ours.sections[i].name;
  }
  EXPECT_NEAR(ours.score, g["score"].get<double>(), 1e-12);
}

TEST(EvaluateAnalogies, EqualsGensim) {
  const Gensim& g = Gensim::get();
  AnalogyResult r = evaluate_analogies(g.emb, nullptr, g.dir.file("q.txt"), {});
  expect_analogies_equal(r, g.res["analogy_300000"]);
  EXPECT_GT(r.sections.back().correct, 0u);    // the planted structure is found...
  EXPECT_GT(r.sections.back().incorrect, 0u);  // ...but not always
  EXPECT_EQ(r.n_oov, 1u);
  EXPECT_EQ(r.n_questions, 56u + 1u + 56u);
}

TEST(EvaluateAnalogies, EqualsGensimWithRestrictedVocab) {
  const Gensim& g = Gensim::get();
  AnalogyResult r = evaluate_analogies(g.emb, nullptr, g.dir.file("q.txt"), {.restrict_vocab = 40});
  expect_analogies_equal(r, g.res["analogy_40"]);
}

TEST(EvaluateAnalogies, RejectsQuestionBeforeSection) {
  test::TempDir d;
  const Gensim& g = Gensim::get();
  test::write_file(d.file("bad.txt"), "a b c d\n");
  try {
    evaluate_analogies(g.emb, nullptr, d.file("bad.txt"), {});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("bad.txt: line 1"), std::string::npos) << e.what();
  }
}

TEST(EvaluateWordPairs, EqualsGensim) {
  const Gensim& g = Gensim::get();
  for (size_t rv : {300000u, 40u}) {
    PairsResult r =
        evaluate_word_pairs(g.emb, nullptr, g.dir.file("pairs.tsv"), {.restrict_vocab = rv});
    const auto& want = g.res["pairs_" + std::to_string(rv)];
    EXPECT_NEAR(r.pearson, want["pearson"].get<double>(), 1e-6) << rv;
    EXPECT_NEAR(r.spearman, want["spearman"].get<double>(), 1e-9) << rv;
    EXPECT_NEAR(r.oov_ratio, want["oov"].get<double>(), 1e-9) << rv;
  }
}

TEST(EvaluateWordPairs, NoPairInVocabularyIsAnError) {
  test::TempDir d;
  const Gensim& g = Gensim::get();
  test::write_file(d.file("p.tsv"), "zzz\tqqq\t1\n");
  try {
    evaluate_word_pairs(g.emb, nullptr, d.file("p.tsv"), {});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("p.tsv"), std::string::npos);
  }
}

TEST(Correlation, SpearmanUsesAverageRanks) {
  // Hand-checkable: ranks of {1, 2, 2, 3} are {1, 2.5, 2.5, 4}.
  std::vector<double> x = {1, 2, 2, 3}, y = {1, 2.5, 2.5, 4};
  EXPECT_NEAR(spearman_rho(x, y), 1.0, 1e-12);
  EXPECT_NEAR(pearson_r({1, 2, 3}, {3, 2, 1}), -1.0, 1e-12);
}

}  // namespace
}  // namespace embedscope
