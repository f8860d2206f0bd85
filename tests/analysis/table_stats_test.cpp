// stats and compare against numpy / scipy computing the same quantities on the same files.
#include "embedscope/analysis/table_stats.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "embedscope/core/error.h"
#include "test_util.h"

namespace embedscope {
namespace {

const char* kStatsScript = R"(
import sys, json, numpy as np
rng = np.random.default_rng(3)
n, d, k = 400, 12, 5
X = (rng.normal(size=(n, d)) * np.linspace(3, 0.5, d) + 1.5).astype(np.float32)
X[7] = 0
np.save(sys.argv[1], X)
X64 = X.astype(np.float64)
norms = np.linalg.norm(X64, axis=1)
mu = X64[norms > -1].mean(axis=0)
nz = norms > 0
cos_mean = float(np.mean(X64[nz] @ mu / (norms[nz] * np.linalg.norm(mu))))
U = np.zeros_like(X64); U[nz] = X64[nz] / norms[nz, None]
S = U @ U.T
np.fill_diagonal(S, -np.inf)
S[:, ~nz] = -np.inf
occ = np.zeros(n)
for i in range(n):
    if not nz[i]: continue
    order = np.lexsort((np.arange(n), -S[i]))[:k]
    occ[order] += 1
m = occ.mean(); skew = float(((occ - m) ** 3).mean() / ((occ - m) ** 2).mean() ** 1.5)
C = np.cov(X64, rowvar=False)
w = np.sort(np.linalg.eigvalsh(C))[::-1]
print(json.dumps({"norm_mean": float(norms.mean()), "norm_max": float(norms.max()),
  "cos_mean": cos_mean, "skew": skew, "antihub": float((occ == 0).mean()),
  "pca": (w[:3] / w.sum()).tolist()}))
)";

TEST(TableStats, EqualsNumpy) {
  test::TempDir dir;
  auto r = test::run_python(kStatsScript, {dir.file("x.npy")});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto want = nlohmann::json::parse(r.out);
  LoadedEmbeddings e = load_embeddings(dir.file("x.npy"));
  StatsOptions o;
  o.hub_k = 5;
  o.n_queries = 10000;  // all rows: exact k-occurrence
  o.n_components = 3;
  TableStats s = table_stats(e.table, o);
  EXPECT_EQ(s.n_rows, 400u);
  EXPECT_EQ(s.n_zero, 1u);
  EXPECT_NEAR(s.norms.mean, want["norm_mean"].get<double>(), 1e-4);
  EXPECT_NEAR(s.norms.max, want["norm_max"].get<double>(), 1e-4);
  EXPECT_NEAR(s.mean_cos_to_mean, want["cos_mean"].get<double>(), 1e-5);
  EXPECT_GT(s.mean_cos_to_mean, 0.3);  // the planted offset makes the table anisotropic
  // The zero row is a query with no neighbours in numpy's loop; ours skips it the same way
  // because its cosines are undefined.
  EXPECT_NEAR(s.k_occurrence_skew, want["skew"].get<double>(), 1e-6);
  EXPECT_NEAR(s.antihub_share, want["antihub"].get<double>(), 1e-9);
  ASSERT_EQ(s.pca_explained.size(), 3u);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_NEAR(s.pca_explained[i], want["pca"][i].get<double>(), 1e-4) << i;
}

const char* kCompareScript = R"(
import sys, json, numpy as np
from scipy.linalg import orthogonal_procrustes
rng = np.random.default_rng(5)
n, d = 300, 16
A = rng.normal(size=(n, d))
R, _ = np.linalg.qr(rng.normal(size=(d, d)))
B = A @ R + rng.normal(size=(n, d)) * 0.01
moved = [11, 42, 99, 150, 201]
B[moved] = rng.normal(size=(len(moved), d))
words = ["w%d" % i for i in range(n)]
for path, M in ((sys.argv[1], A), (sys.argv[2], B)):
    with open(path, "w") as f:
        f.write("%d %d\n" % (n, d))
        order = range(n) if path == sys.argv[1] else reversed(range(n))  # B's rows in another order
        for i in order: f.write(words[i] + " " + " ".join("%.7f" % x for x in M[i]) + "\n")
ua = A / np.linalg.norm(A, axis=1, keepdims=True); ub = B / np.linalg.norm(B, axis=1, keepdims=True)
W, _ = orthogonal_procrustes(ua, ub)
al = ua @ W
drift = 1 - np.sum(al * ub, axis=1) / np.linalg.norm(al, axis=1)
print(json.dumps({"moved": [words[i] for i in moved], "mean_drift": float(drift.mean()),
                  "top": [words[i] for i in np.argsort(-drift)[:5]]}))
)";

TEST(CompareTables, ProcrustesDriftEqualsScipy) {
  test::TempDir dir;
  auto r = test::run_python(kCompareScript, {dir.file("a.txt"), dir.file("b.txt")});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto want = nlohmann::json::parse(r.out);
  LoadedEmbeddings a = load_embeddings(dir.file("a.txt")), b = load_embeddings(dir.file("b.txt"));
  CompareOptions o;
  o.k = 5;
  o.n_words = 0;
  o.n_moved = 5;
  CompareResult c = compare_tables(a, b, o);
  EXPECT_EQ(c.n_shared, 300u);
  EXPECT_EQ(c.matched_by, "vocabulary");
  ASSERT_TRUE(c.aligned);
  EXPECT_NEAR(c.mean_drift, want["mean_drift"].get<double>(), 1e-4);
  std::set<std::string> top, planted;
  for (auto& m : c.moved) top.insert(m.word);
  for (auto& w : want["moved"]) planted.insert(w.get<std::string>());
  EXPECT_EQ(top, planted);
  // A rotation keeps neighbourhoods: most words keep most neighbours.
  EXPECT_GT(c.mean_overlap, 0.8);
  EXPECT_LT(c.mean_overlap, 1.0);
  EXPECT_EQ(c.overlaps.size(), 300u);
}

TEST(CompareTables, TablesWithoutSharedRowsAreRejected) {
  LoadedEmbeddings a, b;
  a.table = EmbeddingTable::from_f32(2, 2, {1, 0, 0, 1});
  b.table = EmbeddingTable::from_f32(3, 2, {1, 0, 0, 1, 1, 1});
  a.vocab.add("x");
  a.vocab.add("y");
  b.vocab.add("p");
  b.vocab.add("q");
  b.vocab.add("r");
  a.path = "a.txt";
  b.path = "b.txt";
  try {
    compare_tables(a, b, {});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("share 0 rows"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace embedscope
