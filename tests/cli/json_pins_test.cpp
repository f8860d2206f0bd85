// The --json documents of train, index build, neighbors --batch, stats, compare, tokenize and
// decode, pinned on fixed inputs: every key, and the values numpy computes from the same
// files. They hold the documents still while the commands' code moves into the library.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "test_util.h"

using namespace embedscope::test;
using json = nlohmann::json;

namespace {

// Dotted paths of every object key ("a", "a.b", ...).
std::set<std::string> keys(const json& j, const std::string& prefix = "") {
  std::set<std::string> out;
  for (auto& [k, v] : j.items()) {
    out.insert(prefix + k);
    if (v.is_object())
      for (const std::string& s : keys(v, prefix + k + ".")) out.insert(s);
  }
  return out;
}

// 50 random rows of dim 8 (word2vec text), a small corpus, and what numpy says about them.
const char* kMake = R"PY(
import json, sys, numpy as np
from collections import Counter
d = sys.argv[1]
X = np.random.default_rng(3).normal(size=(50, 8)).astype(np.float32)
with open(d + '/v.txt', 'w') as f:  # word2vec text, as gensim writes it
    f.write('50 8\n')
    for i, row in enumerate(X): f.write('w%d ' % i + ' '.join(repr(float(x)) for x in row) + '\n')
lines = [' '.join('w%d' % ((i * 7 + j) % 13) for j in range(6)) for i in range(200)]
open(d + '/c.txt', 'w').write('\n'.join(lines) + '\n')
open(d + '/q.txt', 'w').write('w1\nw2\nnope\n')
X = X.astype(np.float64)
n = np.linalg.norm(X, axis=1); U = X / n[:, None]; S = U @ U.T
np.fill_diagonal(S, -9)
top = {w: [int(i) for i in np.argsort(-S[int(w[1:])], kind='stable')[:2]] for w in ['w1', 'w2']}
cos = {w: [float(S[int(w[1:]), i]) for i in top[w]] for w in top}
nn3 = np.argsort(-S, axis=1, kind='stable')[:, :3]; occ = np.bincount(nn3.ravel(), minlength=50)
m = X.mean(0); ev = np.linalg.svd(X - m, compute_uv=False) ** 2
words = Counter(w for l in lines for w in l.split())
print(json.dumps({'top': top, 'cos': cos, 'norm_mean': n.mean(), 'norm_min': n.min(),
  'norm_max': n.max(), 'cos_to_mean': float(((X @ m) / n / np.linalg.norm(m)).mean()),
  'hub_max': int(occ.max()), 'antihub': float((occ == 0).mean()),
  'pca': (ev[:2] / ev.sum()).tolist(), 'vocab': len(words), 'corpus_words': sum(words.values())}))
)PY";

struct Fixture {
  TempDir d;
  json want;
  Fixture() {
    auto p = run_python(kMake, {d.path()});
    want = json::parse(p.out);
  }
  CommandResult cli(const std::string& args) const {
    return run(shell_quote(cli_path()) + " " + args);
  }
};

}  // namespace

TEST(JsonPins, TrainSummary) {
  Fixture f;
  auto r = f.cli("train " + f.d.file("c.txt") + " -o " + f.d.file("t.safetensors") +
                 " --dim 8 --epochs 1 --min-count 1 --threads 1 --json -q");
  ASSERT_EQ(r.rc, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(keys(j), (std::set<std::string>{
                         "corpus_words", "dim", "final_loss", "format", "negative_sets", "output",
                         "processes", "resumed_words", "rows", "rows_trained", "scan_seconds",
                         "seconds", "simd", "threads", "trained_words", "words_per_second"}));
  EXPECT_EQ(j["corpus_words"], f.want["corpus_words"]);
  EXPECT_EQ(j["trained_words"], f.want["corpus_words"]);
  EXPECT_EQ(j["rows"], f.want["vocab"]);
  EXPECT_EQ(j["rows_trained"], f.want["vocab"]);
  EXPECT_EQ(j["dim"], 8);
  EXPECT_EQ(j["format"], "safetensors");
  EXPECT_EQ(j["output"], f.d.file("t.safetensors"));
  EXPECT_EQ(j["processes"], 1);
  EXPECT_EQ(j["threads"], 1);
  EXPECT_EQ(j["resumed_words"], 0);
  EXPECT_TRUE(j["final_loss"].is_number());
  // --row-stats adds the file's path; word2vec output names its format.
  r = f.cli("train " + f.d.file("c.txt") + " -o " + f.d.file("t.txt") +
            " --dim 8 --epochs 1 --min-count 1 --threads 1 --row-stats --json -q");
  ASSERT_EQ(r.rc, 0) << r.err;
  j = json::parse(r.out);
  EXPECT_EQ(j["format"], "word2vec");
  EXPECT_EQ(j["row_stats"], f.d.file("t.txt") + ".row_stats.tsv");
}

TEST(JsonPins, IndexBuild) {
  Fixture f;
  auto r = f.cli("index build " + f.d.file("v.txt") + " -o " + f.d.file("v.hnsw") +
                 " --M 8 --ef-construction 50 --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(keys(j), (std::set<std::string>{"M", "build_ms", "dim", "ef_construction", "index",
                                            "indexed_rows", "model", "model_hash", "rows",
                                            "rows_selected", "total_ms"}));
  EXPECT_EQ(j["M"], 8);
  EXPECT_EQ(j["ef_construction"], 50);
  EXPECT_EQ(j["rows"], 50);
  EXPECT_EQ(j["indexed_rows"], 50);  // word2vec text has no counts: every row
  EXPECT_EQ(j["rows_selected"], "all");
  EXPECT_EQ(j["dim"], 8);
  EXPECT_EQ(j["index"], f.d.file("v.hnsw"));
  EXPECT_EQ(j["model"], f.d.file("v.txt"));
  EXPECT_EQ(j["model_hash"].get<std::string>().size(), 16u);
}

TEST(JsonPins, NeighborsBatchLines) {
  Fixture f;
  auto r = f.cli("neighbors " + f.d.file("v.txt") + " --batch " + f.d.file("q.txt") +
                 " -k 2 --json --threads 1");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::istringstream in(r.out);
  std::vector<json> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(json::parse(l));
  ASSERT_EQ(lines.size(), 3u);
  for (int q = 0; q < 2; ++q) {
    const json& j = lines[q];
    std::string w = q == 0 ? "w1" : "w2";
    EXPECT_EQ(keys(j), (std::set<std::string>{"metric", "mode", "neighbors", "query", "resolved",
                                              "resolved.how", "resolved.ids", "resolved.pieces"}));
    EXPECT_EQ(j["query"], w);
    EXPECT_EQ(j["metric"], "cosine");
    EXPECT_EQ(j["mode"], "exact");
    ASSERT_EQ(j["neighbors"].size(), 2u);
    for (int i = 0; i < 2; ++i) {
      const json& n = j["neighbors"][i];
      EXPECT_EQ(keys(n), (std::set<std::string>{"id", "score", "token"}));
      EXPECT_EQ(n["id"], f.want["top"][w][i]);
      EXPECT_EQ(n["token"], "w" + std::to_string(n["id"].get<int>()));
      EXPECT_NEAR(n["score"].get<double>(), f.want["cos"][w][i].get<double>(), 1e-5);
    }
  }
  EXPECT_EQ(keys(lines[2]), (std::set<std::string>{"error", "metric", "mode", "query"}));
  EXPECT_NE(lines[2]["error"].get<std::string>().find("'nope'"), std::string::npos);
  // Text: one line per query, "query: token(score) ...".
  r = f.cli("neighbors " + f.d.file("v.txt") + " --batch " + f.d.file("q.txt") + " -k 2");
  ASSERT_EQ(r.rc, 0) << r.err;
  int id0 = f.want["top"]["w1"][0].get<int>();
  EXPECT_EQ(r.out.rfind("w1: w" + std::to_string(id0) + "(", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("nope: error: "), std::string::npos) << r.out;
}

TEST(JsonPins, StatsDocument) {
  Fixture f;
  auto r = f.cli("stats " + f.d.file("v.txt") + " --json -k 3 --components 2 --queries 50");
  ASSERT_EQ(r.rc, 0) << r.err;
  json j = json::parse(r.out);
  std::set<std::string> want{"anisotropy",
                             "anisotropy.mean_cos_to_mean",
                             "dim",
                             "hubness",
                             "hubness.antihub_share",
                             "hubness.k",
                             "hubness.k_occurrence_skew",
                             "hubness.queries",
                             "hubness.top_hubs",
                             "model",
                             "nonfinite_rows",
                             "norms",
                             "pca_explained",
                             "rows",
                             "zero_rows",
                             "anisotropy.random_pair_cos"};
  for (const char* s : {"max", "mean", "min", "p01", "p50", "p99", "sd"}) {
    want.insert(std::string("norms.") + s);
    want.insert(std::string("anisotropy.random_pair_cos.") + s);
  }
  EXPECT_EQ(keys(j), want);
  EXPECT_EQ(j["rows"], 50);
  EXPECT_EQ(j["zero_rows"], 0);
  EXPECT_NEAR(j["norms"]["mean"].get<double>(), f.want["norm_mean"].get<double>(), 1e-5);
  EXPECT_NEAR(j["norms"]["min"].get<double>(), f.want["norm_min"].get<double>(), 1e-5);
  EXPECT_NEAR(j["norms"]["max"].get<double>(), f.want["norm_max"].get<double>(), 1e-5);
  EXPECT_NEAR(j["anisotropy"]["mean_cos_to_mean"].get<double>(),
              f.want["cos_to_mean"].get<double>(), 1e-6);
  EXPECT_EQ(j["hubness"]["top_hubs"][0]["k_occurrence"], f.want["hub_max"]);
  EXPECT_NEAR(j["hubness"]["antihub_share"].get<double>(), f.want["antihub"].get<double>(), 1e-9);
  for (int i = 0; i < 2; ++i)
    EXPECT_NEAR(j["pca_explained"][i].get<double>(), f.want["pca"][i].get<double>(), 1e-5);
}

TEST(JsonPins, CompareDocument) {
  Fixture f;
  auto r =
      f.cli("compare " + f.d.file("v.txt") + " " + f.d.file("v.txt") + " -k 3 --moved 2 --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(keys(j), (std::set<std::string>{"a", "aligned", "b", "k", "matched_by", "mean_drift",
                                            "mean_overlap", "median_drift", "moved", "overlaps",
                                            "shared_rows"}));
  EXPECT_EQ(j["shared_rows"], 50);
  EXPECT_EQ(j["a"], f.d.file("v.txt"));
  EXPECT_EQ(j["k"], 3);
  EXPECT_EQ(j["matched_by"], "vocabulary");
  EXPECT_EQ(j["aligned"], true);
  EXPECT_DOUBLE_EQ(j["mean_overlap"].get<double>(), 1.0);
  EXPECT_EQ(j["moved"].size(), 2u);
}

TEST(JsonPins, TokenizeAndDecodeKeys) {
  Fixture f;
  // GPT-2 encodes " hello" as 23748 and 31373 is "hello" (tiktoken's gpt2 table).
  auto r = f.cli("tokenize ' hello' --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(r.out),
            json::parse(R"({"ids":[23748],"offsets":[0],"pieces":["\u2423hello"]})"));
  r = f.cli("decode 31373 --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(r.out),
            json::parse(R"({"bytes":[104,101,108,108,111],"ids":[31373],"pieces":["hello"],)"
                        R"("text":"hello"})"));
}
