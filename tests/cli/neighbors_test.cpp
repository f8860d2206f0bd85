// CLI neighbors end to end on files the real tools wrote at test time: neighbour lists equal
// torch's topk for every metric and dtype (F32 via gensim's word2vec text, F16 via numpy .npy,
// BF16 via torch's bytes in a safetensors file), restricted searches equal a brute-force
// filter in torch, --batch equals single queries.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "test_util.h"

namespace embedscope {
namespace {

using nlohmann::json;
using test::TempDir;

const char* kMake = R"PY(
import json, struct, sys, torch, numpy as np
import torch.nn.functional as F
from gensim.models import KeyedVectors
out = sys.argv[1]
torch.manual_seed(5)
n, dim, k = 300, 16, 6
W = torch.randn(n, dim)
words = [f"w{i}" for i in range(n)]
kv = KeyedVectors(dim)
kv.add_vectors(words, W.numpy())
kv.save_word2vec_format(f"{out}/f32.txt", binary=False)
np.save(f"{out}/f16.npy", W.half().numpy())
# safetensors by its spec: u64 header length, JSON header, raw little-endian data.
raw = W.bfloat16().view(torch.int16).numpy().tobytes()
hdr = json.dumps({"emb": {"dtype": "BF16", "shape": [n, dim], "data_offsets": [0, len(raw)]}}).encode()
hdr += b" " * (-len(hdr) % 8)
open(f"{out}/bf16.safetensors", "wb").write(struct.pack("<Q", len(hdr)) + hdr + raw)
# f32.txt round-trips through text: torch reads back what the file holds.
Wt = {"F32": torch.tensor(KeyedVectors.load_word2vec_format(f"{out}/f32.txt").vectors),
      "F16": W.half().float(), "BF16": W.bfloat16().float()}
def topk(Wd, q, metric, mask=None):
    if metric == "cosine": s = F.cosine_similarity(Wd, Wd[q].unsqueeze(0))
    elif metric == "dot": s = Wd @ Wd[q]
    else: s = -torch.norm(Wd - Wd[q], dim=1)
    s[q] = -float("inf")
    if mask is not None: s[~mask] = -float("inf")
    v, i = s.topk(k)
    return {"ids": i.tolist(), "scores": v.tolist()}
res = {"k": k, "queries": [3, 150, 299]}
for dt, Wd in Wt.items():
    res[dt] = {m: [topk(Wd, q, m) for q in res["queries"]] for m in ["cosine", "dot", "l2"]}
# Filters, computed by brute force in torch on the F32 matrix.
ids = list(range(0, n, 3))
m_ids = torch.zeros(n, dtype=torch.bool); m_ids[ids] = True
m_re = torch.tensor([w.endswith("7") for w in words])
m_top = torch.zeros(n, dtype=torch.bool); m_top[:100] = True
res["filters"] = {
  "ids": {"arg": ["--ids", ",".join(map(str, ids))], "want": topk(Wt["F32"], 150, "cosine", m_ids)},
  "regex": {"arg": ["--regex", "7$"], "want": topk(Wt["F32"], 150, "cosine", m_re)},
  "topn": {"arg": ["--top-n", "100"], "want": topk(Wt["F32"], 150, "cosine", m_top)},
  "both": {"arg": ["--top-n", "100", "--regex", "7$"], "want": topk(Wt["F32"], 150, "cosine", m_top & m_re)},
}
json.dump(res, open(f"{out}/expected.json", "w"))
)PY";

class NeighborsCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    test::run_python(kMake, {dir_->path()});
    e_ = new json(json::parse(test::read_file(dir_->file("expected.json"))));
  }
  static void TearDownTestSuite() {
    delete e_;
    delete dir_;
  }
  static json neighbors(const std::string& args) {
    auto r = test::run(test::shell_quote(test::cli_path()) + " neighbors " + args +
                       " --json --threads 2");
    EXPECT_EQ(r.rc, 0) << args << "\n" << r.err;
    return r.rc == 0 ? json::parse(r.out) : json::object();
  }
  static void expect_list(const json& got, const json& want, const std::string& what, double tol) {
    ASSERT_TRUE(got.contains("neighbors")) << what;
    ASSERT_EQ(got["neighbors"].size(), want["ids"].size()) << what;
    for (size_t r = 0; r < want["ids"].size(); ++r) {
      EXPECT_EQ(got["neighbors"][r]["id"], want["ids"][r]) << what << " rank " << r;
      double ws = want["scores"][r];
      EXPECT_NEAR(got["neighbors"][r]["score"].get<double>(), ws,
                  tol * std::max(1.0, std::fabs(ws)))
          << what << " rank " << r;
    }
  }
  static TempDir* dir_;
  static json* e_;
};
TempDir* NeighborsCli::dir_;
json* NeighborsCli::e_;

TEST_F(NeighborsCli, EveryMetricDtypeAndModeEqualsTorchTopk) {
  const json& e = *e_;
  ASSERT_TRUE(e.contains("BF16"));
  std::map<std::string, std::string> files{
      {"F32", "f32.txt"}, {"F16", "f16.npy"}, {"BF16", "bf16.safetensors"}};
  for (auto& [dt, file] : files) {
    for (std::string metric : {"cosine", "dot", "l2"}) {
      for (std::string mode : {"exact", "fast"}) {
        for (size_t qn = 0; qn < e["queries"].size(); ++qn) {
          int q = e["queries"][qn];
          json got = neighbors(test::shell_quote(dir_->file(file)) + " --id " + std::to_string(q) +
                               " -k 6 --metric " + metric + " --mode " + mode);
          EXPECT_EQ(got["mode"], mode);
          EXPECT_EQ(got["metric"], metric);
          EXPECT_TRUE(got["elapsed_ms"].is_number());
          expect_list(got, e[dt][metric][qn],
                      dt + " " + metric + " " + mode + " q" + std::to_string(q), 1e-5);
        }
      }
    }
  }
}

TEST_F(NeighborsCli, WordQueryShowsTokensAndExcludesTheQuery) {
  json got = neighbors(test::shell_quote(dir_->file("f32.txt")) + " w150 -k 6");
  EXPECT_EQ(got["query"], "w150");
  EXPECT_EQ(got["resolved"]["how"], "word");
  EXPECT_EQ(got["resolved"]["ids"], json::array({150}));
  expect_list(got, (*e_)["F32"]["cosine"][1], "word query", 1e-5);
  for (const auto& n : got["neighbors"])
    EXPECT_EQ(n["token"], "w" + std::to_string(n["id"].get<int>()));
  // --include-query keeps the query row: it is its own nearest neighbour.
  json inc = neighbors(test::shell_quote(dir_->file("f32.txt")) + " w150 -k 2 --include-query");
  EXPECT_EQ(inc["neighbors"][0]["id"], 150);
  EXPECT_NEAR(inc["neighbors"][0]["score"].get<double>(), 1.0, 1e-6);
}

TEST_F(NeighborsCli, RestrictedSearchesEqualABruteForceFilter) {
  for (auto& [name, f] : (*e_)["filters"].items()) {
    std::string args = test::shell_quote(dir_->file("f32.txt")) + " --id 150 -k 6";
    for (const auto& a : f["arg"]) args += " " + test::shell_quote(a.get<std::string>());
    for (std::string mode : {"exact", "fast"})
      expect_list(neighbors(args + " --mode " + mode), f["want"], name + " " + mode, 1e-5);
  }
}

TEST_F(NeighborsCli, BatchJsonLinesEqualSingleQueries) {
  test::write_file(dir_->file("batch.txt"), "w3\n#150\nnot-a-word\nw299\n");
  auto r = test::run(test::shell_quote(test::cli_path()) + " neighbors " +
                     test::shell_quote(dir_->file("f32.txt")) + " --batch " +
                     test::shell_quote(dir_->file("batch.txt")) + " -k 6 --json --threads 2");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::istringstream in(r.out);
  std::vector<json> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(json::parse(l));
  ASSERT_EQ(lines.size(), 4u);
  expect_list(lines[0], (*e_)["F32"]["cosine"][0], "batch w3", 1e-5);
  expect_list(lines[1], (*e_)["F32"]["cosine"][1], "batch #150", 1e-5);
  EXPECT_EQ(lines[2]["query"], "not-a-word");
  EXPECT_NE(lines[2]["error"].get<std::string>().find("not in the vocabulary"), std::string::npos);
  expect_list(lines[3], (*e_)["F32"]["cosine"][2], "batch w299", 1e-5);
  EXPECT_NE(r.err.find("batch: 3 queries"), std::string::npos) << r.err;
}

TEST_F(NeighborsCli, ExpressionAndVectorQueries) {
  // A vector file holding row 150 behaves like --id 150 --include-query.
  auto row = test::run(test::shell_quote(test::cli_path()) + " lookup " +
                       test::shell_quote(dir_->file("f32.txt")) + " --ids 150 --json");
  ASSERT_EQ(row.rc, 0) << row.err;
  json lj = json::parse(row.out);
  std::string vec;
  const json& v = lj.contains("vectors") ? lj["vectors"][0] : lj["rows"][0]["vector"];
  for (const auto& x : v) vec += x.dump() + " ";
  test::write_file(dir_->file("q.txt"), vec);
  json got = neighbors(test::shell_quote(dir_->file("f32.txt")) + " --vector " +
                       test::shell_quote(dir_->file("q.txt")) + " -k 1");
  EXPECT_EQ(got["neighbors"][0]["id"], 150);
  json ex = neighbors(test::shell_quote(dir_->file("f32.txt")) + " --expr " +
                      test::shell_quote("w1 - w2 + 0.5*w3") + " -k 5");
  ASSERT_EQ(ex["neighbors"].size(), 5u);
  for (const auto& n : ex["neighbors"]) EXPECT_TRUE(n["id"] != 1 && n["id"] != 2 && n["id"] != 3);
  EXPECT_EQ(ex["resolved"][2]["weight"], 0.5);
}

TEST_F(NeighborsCli, ErrorsNameTheProblemAndMapExitCodes) {
  std::string f = test::shell_quote(dir_->file("f32.txt"));
  auto r = test::run(test::shell_quote(test::cli_path()) + " neighbors " + f + " nosuchword");
  EXPECT_EQ(r.rc, 3);
  EXPECT_NE(r.err.find("'nosuchword' is not in the vocabulary"), std::string::npos) << r.err;
  r = test::run(test::shell_quote(test::cli_path()) + " neighbors " + f + " w1 --metric manhattan");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("unknown metric 'manhattan'"), std::string::npos) << r.err;
  r = test::run(test::shell_quote(test::cli_path()) + " neighbors " + f + " --id 300");
  EXPECT_EQ(r.rc, 7);
  EXPECT_NE(r.err.find("row id 300 is out of range (300 rows)"), std::string::npos) << r.err;
  r = test::run(test::shell_quote(test::cli_path()) + " neighbors " + f + " w1 --regex '('");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("bad --regex '('"), std::string::npos) << r.err;
  r = test::run(test::shell_quote(test::cli_path()) + " neighbors " + f + " w1 --min-count 5");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--min-count needs per-row counts"), std::string::npos) << r.err;
  r = test::run(test::shell_quote(test::cli_path()) + " neighbors --help");
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("Examples:"), std::string::npos);
}

}  // namespace
}  // namespace embedscope
