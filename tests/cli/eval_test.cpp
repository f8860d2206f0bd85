// End-to-end: `embedscope eval` equals gensim on the same word2vec file.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

using namespace embedscope::test;
using nlohmann::json;

TEST(CliEval, AnalogyAndSimilarityEqualGensim) {
  TempDir d;
  auto p = run_python(R"(
import sys, json, numpy as np
from gensim.models import KeyedVectors
out = sys.argv[1]
rng = np.random.default_rng(4)
dim = 16; off = rng.normal(size=dim)
base = ["a%d" % i for i in range(10)]
keys, vecs = [], []
for b in base:
    v = rng.normal(size=dim); keys += [b, b + "x"]; vecs += [v, v + off + rng.normal(size=dim) * 0.8]
kv = KeyedVectors(dim); kv.add_vectors(keys, np.array(vecs, dtype=np.float32))
kv.save_word2vec_format(out + "/v.txt")
with open(out + "/q.txt", "w") as f:
    f.write(": only\n")
    for i in range(10):
        for j in range(10):
            if i != j: f.write("%s %sx %s %sx\n" % (base[i], base[i], base[j], base[j]))
with open(out + "/p.tsv", "w") as f:
    for i in range(10): f.write("%s\t%sx\t%.3f\n" % (base[i], base[i], rng.uniform()))
    f.write("a1\tnope\t0.5\n")
s, secs = kv.evaluate_word_analogies(out + "/q.txt")
pr, sp, oov = kv.evaluate_word_pairs(out + "/p.tsv")
print(json.dumps({"score": s, "correct": len(secs[-1]["correct"]), "pearson": float(pr[0]), "spearman": float(sp[0]), "oov": oov}))
)",
                      {d.path()});
  ASSERT_EQ(p.rc, 0) << p.err;
  auto want = json::parse(p.out);
  auto a = run(shell_quote(cli_path()) + " eval analogy " + d.file("q.txt") + " --model " +
               d.file("v.txt") + " --json");
  ASSERT_EQ(a.rc, 0) << a.err;
  auto ja = json::parse(a.out);
  EXPECT_DOUBLE_EQ(ja["score"].get<double>(), want["score"].get<double>());
  EXPECT_EQ(ja["sections"].back()["correct"], want["correct"]);
  auto s = run(shell_quote(cli_path()) + " eval similarity " + d.file("p.tsv") + " --model " +
               d.file("v.txt") + " --json");
  ASSERT_EQ(s.rc, 0) << s.err;
  auto js = json::parse(s.out);
  EXPECT_NEAR(js["spearman"].get<double>(), want["spearman"].get<double>(), 1e-9);
  EXPECT_NEAR(js["pearson"].get<double>(), want["pearson"].get<double>(), 1e-6);
  EXPECT_NEAR(js["oov_ratio"].get<double>(), want["oov"].get<double>(), 1e-9);
}
