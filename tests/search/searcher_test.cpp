// Searcher against torch on the same matrices (every metric x dtype x mode), batch vs single,
// thread-count independence, filters vs a brute-force filter, centering and CSLS vs numpy.
#include "embedscope/search/searcher.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <thread>

#include "embedscope/core/error.h"
#include "embedscope/formats/npy.h"
#include "simd/u8i8_kernels.h"
#include "test_util.h"

namespace embedscope {
namespace {

using test::TempDir;

template <class T>
std::vector<T> read_raw(const std::string& path) {
  std::string b = test::read_file(path);
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

// torch writes W (in each dtype's raw bits), the queries and its topk answers.
const char* kTorchOracle = R"PY(
import json, sys, torch, numpy as np
import torch.nn.functional as F
out = sys.argv[1]
torch.manual_seed(7)
n, dim, k = 700, 48, 10
W = torch.randn(n, dim)
W[5] = 0.0                    # a zero row: never returned under cosine
qids = [0, 17, 123, 699]
res = {"n": n, "dim": dim, "k": k, "qids": qids}
for name, dt in [("F32", torch.float32), ("F16", torch.float16), ("BF16", torch.bfloat16)]:
    Wd = W.to(dt)
    raw = Wd.numpy() if dt == torch.float32 else Wd.view(torch.int16).numpy()
    raw.tofile(f"{out}/W_{name}.bin")
    Wf = Wd.float()
    per = {}
    for metric in ["cosine", "dot", "l2"]:
        lists = []
        for qi in qids:
            q = Wf[qi]
            if metric == "cosine":
                s = F.cosine_similarity(Wf, q.unsqueeze(0))
                s[(Wf.norm(dim=1) == 0)] = -float("inf")
            elif metric == "dot":
                s = Wf @ q
            else:
                s = -torch.norm(Wf - q, dim=1)
            s[qi] = -float("inf")
            v, i = s.topk(k)
            lists.append({"ids": i.tolist(), "scores": v.tolist()})
        per[metric] = lists
    res[name] = per
json.dump(res, open(f"{out}/expected.json", "w"))
)PY";

class SearcherVsTorch : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    test::run_python(kTorchOracle, {dir_->path()});
    expected_ =
        new nlohmann::json(nlohmann::json::parse(test::read_file(dir_->file("expected.json"))));
  }
  static void TearDownTestSuite() {
    delete expected_;
    delete dir_;
  }
  static EmbeddingTable table(const std::string& dt) {
    size_t n = (*expected_)["n"], dim = (*expected_)["dim"];
    if (dt == "F32")
      return EmbeddingTable::from_f32(n, dim, read_raw<float>(dir_->file("W_F32.bin")));
    return EmbeddingTable::from_u16(n, dim, dt == "F16" ? DType::kF16 : DType::kBF16,
                                    read_raw<uint16_t>(dir_->file("W_" + dt + ".bin")));
  }
  static TempDir* dir_;
  static nlohmann::json* expected_;
};
TempDir* SearcherVsTorch::dir_ = nullptr;
nlohmann::json* SearcherVsTorch::expected_ = nullptr;

TEST_F(SearcherVsTorch, EveryMetricDtypeModeAndThreadCountEqualsTorchTopk) {
  const auto& e = *expected_;
  ASSERT_TRUE(e.contains("F32"));
  for (std::string dt : {"F32", "F16", "BF16"}) {
    for (size_t threads : {1u, 2u, 3u}) {
      // kExact runs twice: the float scan and the bounded int8 scan (ExactScan), same answer.
      Searcher s(table(dt), {.n_threads = threads});
      Searcher sb(table(dt), {.n_threads = threads, .exact_scan = ExactScan::kBounded});
      for (std::string metric : {"cosine", "dot", "l2"}) {
        for (int mode_i : {0, 1, 2}) {
          const SearchMode mode = mode_i == 1 ? SearchMode::kFast : SearchMode::kExact;
          for (size_t qn = 0; qn < e["qids"].size(); ++qn) {
            TokenId qid = e["qids"][qn];
            SearchOptions o{
                .k = 10, .metric = parse_metric(metric), .mode = mode, .exclude = {qid}};
            auto got = (mode_i == 2 ? sb : s).search(s.row(qid), o);
            const auto& want = e[dt][metric][qn];
            ASSERT_EQ(got.size(), 10u);
            for (size_t r = 0; r < 10; ++r) {
              SCOPED_TRACE(dt + " " + metric + " mode " + std::to_string(mode_i) + " threads " +
                           std::to_string(threads) + " q " + std::to_string(qid) + " rank " +
                           std::to_string(r));
              EXPECT_EQ(got[r].id, want["ids"][r].get<int>());
              double ws = want["scores"][r];
              EXPECT_NEAR(got[r].score, ws, 1e-5 * std::max(1.0, std::fabs(ws)));
            }
          }
        }
      }
    }
  }
}

TEST_F(SearcherVsTorch, BatchedSgemmEqualsSingleQueries) {
  const auto& e = *expected_;
  for (std::string dt : {"F32", "F16", "BF16"}) {
    Searcher s(table(dt), {.n_threads = 2});
    std::vector<float> qs;
    std::vector<std::vector<TokenId>> excl;
    for (const auto& q : e["qids"]) {
      auto r = s.row(q.get<int>());
      qs.insert(qs.end(), r.begin(), r.end());
      excl.push_back({q.get<int>()});
    }
    for (std::string metric : {"cosine", "dot", "l2"}) {
      SearchOptions o{.k = 10, .metric = parse_metric(metric)};
      auto batch = s.search_batch(qs, excl.size(), o, &excl);
      for (size_t qn = 0; qn < excl.size(); ++qn) {
        const auto& want = e[dt][metric][qn];
        ASSERT_EQ(batch[qn].size(), 10u);
        for (size_t r = 0; r < 10; ++r) {
          EXPECT_EQ(batch[qn][r].id, want["ids"][r].get<int>()) << dt << " " << metric;
          double ws = want["scores"][r];
          EXPECT_NEAR(batch[qn][r].score, ws, 1e-4 * std::max(1.0, std::fabs(ws)));
        }
      }
    }
  }
}

TEST_F(SearcherVsTorch, ZeroRowNeverReturnedUnderCosine) {
  Searcher s(table("F32"));
  std::vector<float> q = s.row(3);
  auto all = s.search(q, {.k = 700});
  EXPECT_EQ(all.size(), 699u);  // 700 rows minus the zero row 5
  for (const auto& nb : all) EXPECT_NE(nb.id, 5);
}

// Adversarial tables for the bounded int8 scan (ExactScan::kBounded): its answer must be the
// float scan's, bit for bit (ids, scores, order), where int8 rounding alone could reorder rows:
// near-ties closer than the quantisation step, exact duplicates (ties broken by id), zero and
// non-finite rows, a few huge "outlier" dimensions (as GPT-2's) that make the int8 step coarse.
std::vector<float> adversarial_table(const std::string& kind, size_t n, size_t dim) {
  std::mt19937 rng(11);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> w(n * dim);
  for (float& x : w) x = g(rng);
  if (kind == "near_ties") {
    // 40 base rows, each repeated ~75 times with noise of 0.1% .. 5%: cosines within ~1e-3 of
    // each other, ~1e-5 apart (far below the int8 error, above float32's).
    std::uniform_real_distribution<float> eps(0.001f, 0.05f);
    for (size_t i = 40; i < n; ++i) {
      const float e = eps(rng);
      for (size_t j = 0; j < dim; ++j) w[i * dim + j] = w[(i % 40) * dim + j] + e * g(rng);
    }
  } else if (kind == "duplicates") {
    for (size_t i = 0; i < n; ++i)
      if (i % 3 != 0) std::copy_n(w.begin() + (i % 97) * dim, dim, w.begin() + i * dim);
  } else if (kind == "zeros_nonfinite") {
    for (size_t i = 0; i < n; i += 7) std::fill_n(w.begin() + i * dim, dim, 0.0f);
    w[3 * dim + 1] = NAN;
    w[10 * dim + 2] = INFINITY;
  } else if (kind == "outliers") {
    for (size_t i = 0; i < n; ++i) {
      w[i * dim + 5] = 40.0f + g(rng);
      w[i * dim + 9] = -25.0f * float(i % 2) + g(rng);
    }
  }
  return w;
}

TEST(Searcher, BoundedInt8ScanEqualsFloatScanOnAdversarialTables) {
  const size_t n = 3000, dim = 48;
  for (std::string kind : {"random", "near_ties", "duplicates", "zeros_nonfinite", "outliers"}) {
    std::vector<float> w = adversarial_table(kind, n, dim);
    std::vector<uint8_t> allow(n);
    for (size_t i = 0; i < n; ++i) allow[i] = i % 4 != 1;
    for (size_t threads : {1u, 3u}) {
      Searcher f(EmbeddingTable::from_f32(n, dim, w),
                 {.n_threads = threads, .exact_scan = ExactScan::kFloat});
      Searcher b(EmbeddingTable::from_f32(n, dim, w),
                 {.n_threads = threads, .exact_scan = ExactScan::kBounded});
      std::mt19937 rng(5);
      std::normal_distribution<float> g(0.0f, 1.0f);
      for (size_t qn = 0; qn < 12; ++qn) {
        std::vector<float> q(dim);
        const TokenId qid = TokenId((qn * 389 + 1) % n);
        if (qn % 3 == 0) {
          for (float& x : q) x = g(rng) * (qn == 3 ? 1e-20f : 1.0f);  // 1e-20: a tiny query
        } else {
          std::copy_n(w.begin() + size_t(qid) * dim, dim, q.begin());
          if (qn % 3 == 2)
            for (float& x : q) x += 1e-3f * g(rng);
        }
        for (float& x : q)
          if (!std::isfinite(x)) x = 1.0f;
        for (std::string metric : {"cosine", "dot", "l2"}) {
          for (size_t k : {1u, 10u, 150u}) {
            SearchOptions o{.k = k, .metric = parse_metric(metric), .exclude = {qid}};
            if (qn % 4 == 1) o.allow = &allow;
            if (qn % 5 == 2) o.n_rows_limit = 2000;
            SCOPED_TRACE(kind + " threads " + std::to_string(threads) + " q " + std::to_string(qn) +
                         " " + metric + " k " + std::to_string(k));
            auto want = f.search(q, o);
            auto got = b.search(q, o);
            ASSERT_EQ(got.size(), want.size());
            for (size_t r = 0; r < want.size(); ++r) {
              ASSERT_EQ(got[r].id, want[r].id) << "rank " << r;
              ASSERT_EQ(got[r].score, want[r].score) << "rank " << r;
            }
          }
        }
      }
      EXPECT_GT(b.prefilter_stats().queries, 0u);  // the int8 path answered, not the fallback
    }
  }
}

// search_batch through the int8 copy (the u8 x i8 kernel, 8-bit queries): each query's answer
// is search()'s float scan answer, bit for bit, with per-query exclusions, filters and limits.
TEST(Searcher, BoundedInt8BatchEqualsFloatSingleQueriesOnAdversarialTables) {
  const size_t n = 3000, dim = 48, nq = 12;
  for (std::string kind : {"random", "near_ties", "duplicates", "zeros_nonfinite", "outliers"}) {
    std::vector<float> w = adversarial_table(kind, n, dim);
    std::vector<uint8_t> allow(n);
    for (size_t i = 0; i < n; ++i) allow[i] = i % 4 != 1;
    std::vector<float> qs;
    std::vector<std::vector<TokenId>> self;
    std::mt19937 rng(8);
    std::normal_distribution<float> g(0.0f, 1.0f);
    for (size_t qn = 0; qn < nq; ++qn) {
      const size_t qid = (qn * 131 + 1) % n;
      for (size_t j = 0; j < dim; ++j) {
        float x = w[qid * dim + j];
        qs.push_back(std::isfinite(x) ? x + (qn % 2 ? 0.0f : 0.01f * g(rng)) : 1.0f);
      }
      self.push_back({TokenId(qid)});
    }
    for (size_t threads : {1u, 3u}) {
      Searcher f(EmbeddingTable::from_f32(n, dim, w),
                 {.n_threads = threads, .exact_scan = ExactScan::kFloat});
      Searcher b(EmbeddingTable::from_f32(n, dim, w),
                 {.n_threads = threads, .exact_scan = ExactScan::kBounded});
      for (int metric_i : {0, 1, 2}) {
        const std::string metric = std::array{"cosine", "dot", "l2"}[metric_i];
        for (size_t k : {1u, 10u, 150u}) {
          {
            const int variant = (metric_i + int(k)) % 3;  // each metric meets each variant
            SearchOptions o{.k = k, .metric = parse_metric(metric)};
            if (variant == 1) o.allow = &allow;
            if (variant == 2) o.n_rows_limit = 2000;
            SCOPED_TRACE(kind + " threads " + std::to_string(threads) + " " + metric + " k " +
                         std::to_string(k) + " variant " + std::to_string(variant));
            auto got = b.search_batch(qs, nq, o, &self);
            ASSERT_EQ(got.size(), nq);
            for (size_t qn = 0; qn < nq; ++qn) {
              SearchOptions one = o;
              one.exclude = self[qn];
              auto want = f.search(std::span<const float>(qs).subspan(qn * dim, dim), one);
              ASSERT_EQ(got[qn].size(), want.size()) << "query " << qn;
              for (size_t r = 0; r < want.size(); ++r) {
                ASSERT_EQ(got[qn][r].id, want[r].id) << "query " << qn << " rank " << r;
                ASSERT_EQ(got[qn][r].score, want[r].score) << "query " << qn << " rank " << r;
              }
            }
          }
        }
      }
      if (simd::has_u8_i8_kernel()) EXPECT_GE(b.prefilter_stats().queries, 8 * nq);
    }
  }
}

TEST(Searcher, AutoScanSwitchesToTheBoundedScanAfterAFewQueries) {
  const size_t n = kPrefilterMinRows + 100, dim = 32;
  Searcher s(EmbeddingTable::from_f32(n, dim, adversarial_table("random", n, dim)));
  for (size_t i = 0; i < kPrefilterAfterQueries; ++i) s.search(s.row(TokenId(i)), {.k = 5});
  EXPECT_EQ(s.prefilter_stats().queries, 0u);
  s.search(s.row(1), {.k = 5});
  EXPECT_EQ(s.prefilter_stats().queries, 1u);
  EXPECT_GE(s.prefilter_stats().candidates, 5u);
}

// One searcher answers many threads at once (its queries share the process pool), and lanes
// (cheap copies with another task count) answer the same.
TEST(Searcher, LanesSearchConcurrentlyWithTheSameAnswers) {
  const size_t n = 3000, dim = 40;
  Searcher s(EmbeddingTable::from_f32(n, dim, adversarial_table("near_ties", n, dim)),
             {.n_threads = 2});
  std::vector<std::vector<Neighbor>> want(64);
  for (size_t i = 0; i < want.size(); ++i) want[i] = s.search(s.row(TokenId(i * 40)), {.k = 10});
  std::vector<std::vector<std::vector<Neighbor>>> got(4);
  std::vector<std::thread> th;
  for (size_t t = 0; t < 4; ++t)
    th.emplace_back([&, t] {
      Searcher lane = s.lane(t % 2 + 1);
      const Searcher& use = t < 2 ? s : lane;
      for (size_t i = 0; i < want.size(); ++i)
        got[t].push_back(use.search(use.row(TokenId(i * 40)), {.k = 10}));
    });
  for (auto& x : th) x.join();
  for (size_t t = 0; t < 4; ++t) EXPECT_EQ(got[t], want) << "thread " << t;
}

// The first query fills the row norms inside its own scan (searcher_impl.h), block by block, on
// a mapped table. Its answers, and those of queries racing it from other threads, must equal
// those of a searcher whose norms came from a pass of their own (score_all first), bit for bit,
// for the single-query scan and the sgemm batch, with zero and non-finite rows in the table.
TEST(Searcher, FirstQueryFillsTheNormsInItsScanWithTheSameAnswers) {
  const size_t n = 5000, dim = 40;
  TempDir d;
  save_npy(d.file("w.npy"),
           EmbeddingTable::from_f32(n, dim, adversarial_table("zeros_nonfinite", n, dim)));
  const EmbeddingTable mapped = load_npy(d.file("w.npy")).table;
  ASSERT_TRUE(mapped.zero_copy());
  std::vector<float> want_norms(n);
  mapped.row_norms(0, n, want_norms.data());
  ASSERT_EQ(mapped.norms().size(), n);  // row_norms is norms(), bit for bit (NaN included)
  EXPECT_EQ(std::memcmp(want_norms.data(), mapped.norms().data(), n * sizeof(float)), 0);
  EXPECT_TRUE(std::isnan(want_norms[3]));

  const std::vector<TokenId> qids = {1, 2, 8, 999, 4999};
  for (Metric metric : {Metric::kCosine, Metric::kL2}) {
    const SearchOptions o{.k = 10, .metric = metric};
    Searcher ref(mapped, {.n_threads = 2, .exact_scan = ExactScan::kFloat});
    ref.score_all(ref.row(1), metric);  // norms from a pass of their own
    std::vector<std::vector<Neighbor>> want;
    std::vector<float> qs;
    for (TokenId q : qids) {
      want.push_back(ref.search(ref.row(q), o));
      std::vector<float> r = ref.row(q);
      qs.insert(qs.end(), r.begin(), r.end());
    }
    const auto want_batch = ref.search_batch(qs, qids.size(), o);

    // Single queries: four threads race to be first on one fresh searcher.
    Searcher fresh(mapped, {.n_threads = 2, .exact_scan = ExactScan::kFloat});
    std::vector<std::vector<std::vector<Neighbor>>> got(4);
    std::vector<std::thread> th;
    for (size_t t = 0; t < 4; ++t)
      th.emplace_back([&, t] {
        for (TokenId q : qids) got[t].push_back(fresh.search(fresh.row(q), o));
      });
    for (auto& x : th) x.join();
    for (size_t t = 0; t < 4; ++t) EXPECT_EQ(got[t], want) << "thread " << t;

    // A batch first (sgemm fills them), then a single query.
    Searcher fresh_batch(mapped, {.n_threads = 2, .exact_scan = ExactScan::kFloat});
    EXPECT_EQ(fresh_batch.search_batch(qs, qids.size(), o), want_batch);
    EXPECT_EQ(fresh_batch.search(fresh_batch.row(8), o), want[2]);

    // A first query over a prefix cannot fill every norm: a separate pass does, and a later
    // full query still agrees.
    Searcher prefix(mapped, {.n_threads = 2, .exact_scan = ExactScan::kFloat});
    SearchOptions po = o;
    po.n_rows_limit = 100;
    auto first = prefix.search(prefix.row(8), po);
    ASSERT_FALSE(first.empty());
    for (const Neighbor& x : first) EXPECT_LT(x.id, 100);
    EXPECT_EQ(prefix.search(prefix.row(8), o), want[2]);
  }
}

TEST(Searcher, TiesBreakBySmallerIdWhateverTheThreadCount) {
  // 64 identical rows: every score ties, so the answer is the 10 smallest ids.
  std::vector<float> d;
  for (int i = 0; i < 64; ++i) d.insert(d.end(), {1, 2, 3, 4});
  for (size_t threads : {1u, 2u, 5u}) {
    Searcher s(EmbeddingTable::from_f32(64, 4, d), {.n_threads = threads});
    for (SearchMode mode : {SearchMode::kExact, SearchMode::kFast}) {
      auto nn = s.search(std::vector<float>{1, 2, 3, 4}, {.k = 10, .mode = mode, .exclude = {3}});
      std::vector<TokenId> ids;
      for (auto& x : nn) ids.push_back(x.id);
      EXPECT_EQ(ids, (std::vector<TokenId>{0, 1, 2, 4, 5, 6, 7, 8, 9, 10}));
      auto b = s.search_batch(std::vector<float>{1, 2, 3, 4}, 1, {.k = 3, .mode = mode});
      EXPECT_EQ(b[0][0].id, 0);
      EXPECT_EQ(b[0][2].id, 2);
    }
  }
}

// Batches over a table of several sgemm row blocks (threads take blocks from a shared counter,
// so which thread scores which rows varies from run to run): torch's topk with the same
// restrictions (allow list, first-N rows, per-query exclusion), for 1, 2 and 3 threads.
const char* kTorchBatchOracle = R"PY(
import json, sys, torch
import torch.nn.functional as F
out = sys.argv[1]
torch.manual_seed(3)
n, dim, k, nq, limit = 2600, 24, 10, 40, 2300
W = torch.randn(n, dim)
qids = list(range(0, n, n // nq))[:nq]
Q = W[qids] + 0.5 * torch.randn(nq, dim)
allow = torch.tensor([i % 3 != 0 for i in range(n)])
W.numpy().tofile(f"{out}/W.bin"); Q.numpy().tofile(f"{out}/Q.bin")
res = {"n": n, "dim": dim, "k": k, "limit": limit, "qids": qids}
for metric in ["cosine", "dot"]:
    for case in ["all", "allow", "limit"]:
        lists = []
        for j, qi in enumerate(qids):
            q = Q[j]
            s = F.cosine_similarity(W, q.unsqueeze(0)) if metric == "cosine" else W @ q
            s[qi] = -float("inf")
            if case == "allow": s[~allow] = -float("inf")
            if case == "limit": s[limit:] = -float("inf")
            v, i = s.topk(k)
            lists.append({"ids": i.tolist(), "scores": v.tolist()})
        res[metric + "_" + case] = lists
json.dump(res, open(f"{out}/expected.json", "w"))
)PY";

TEST(Searcher, BatchOverManyRowBlocksEqualsTorchForAnyThreadCount) {
  TempDir dir;
  test::run_python(kTorchBatchOracle, {dir.path()});
  const auto e = nlohmann::json::parse(test::read_file(dir.file("expected.json")));
  const size_t n = e["n"], dim = e["dim"], k = e["k"];
  const std::vector<float> w = read_raw<float>(dir.file("W.bin")),
                           q = read_raw<float>(dir.file("Q.bin"));
  const size_t nq = e["qids"].size();
  ASSERT_EQ(w.size(), n * dim);
  ASSERT_EQ(q.size(), nq * dim);
  std::vector<std::vector<TokenId>> excl;
  for (const auto& id : e["qids"]) excl.push_back({id.get<TokenId>()});
  std::vector<uint8_t> allow(n);
  for (size_t i = 0; i < n; ++i) allow[i] = i % 3 != 0;
  for (size_t threads : {1u, 2u, 3u}) {
    Searcher s(EmbeddingTable::from_f32(n, dim, w), {.n_threads = threads});
    for (std::string metric : {"cosine", "dot"}) {
      for (std::string c : {"all", "allow", "limit"}) {
        SearchOptions o{.k = k, .metric = parse_metric(metric)};
        if (c == "allow") o.allow = &allow;
        if (c == "limit") o.n_rows_limit = e["limit"];
        auto got = s.search_batch(q, nq, o, &excl);
        ASSERT_EQ(got.size(), nq);
        for (size_t j = 0; j < nq; ++j) {
          const auto& want = e[metric + "_" + c][j];
          ASSERT_EQ(got[j].size(), k);
          for (size_t r = 0; r < k; ++r) {
            SCOPED_TRACE(metric + " " + c + " threads " + std::to_string(threads) + " query " +
                         std::to_string(j) + " rank " + std::to_string(r));
            EXPECT_EQ(got[j][r].id, want["ids"][r].get<int>());
            double ws = want["scores"][r];
            EXPECT_NEAR(got[j][r].score, ws, 1e-4 * std::max(1.0, std::fabs(ws)));
          }
        }
      }
    }
  }
}

TEST(Searcher, BatchTiesAcrossRowBlocksBreakBySmallerId) {
  // 1500 identical integer rows (exact dot products, so every score ties) over several sgemm
  // blocks: each query's answer is the k smallest ids it does not exclude, whatever the
  // thread count and whichever thread took which block.
  std::vector<float> d;
  for (int i = 0; i < 1500; ++i) d.insert(d.end(), {1, 2, 3, 4});
  const std::vector<float> qs{1, 2, 3, 4, 2, 4, 6, 8};
  const std::vector<std::vector<TokenId>> excl{{1}, {0, 4}};
  for (size_t threads : {1u, 2u, 3u}) {
    Searcher s(EmbeddingTable::from_f32(1500, 4, d), {.n_threads = threads});
    auto b = s.search_batch(qs, 2, {.k = 5}, &excl);
    std::vector<TokenId> a0, a1;
    for (auto& x : b[0]) a0.push_back(x.id);
    for (auto& x : b[1]) a1.push_back(x.id);
    EXPECT_EQ(a0, (std::vector<TokenId>{0, 2, 3, 4, 5})) << threads;
    EXPECT_EQ(a1, (std::vector<TokenId>{1, 2, 3, 5, 6})) << threads;
  }
}

TEST(Searcher, RestrictedSearchEqualsBruteForceFilter) {
  std::mt19937 g(11);
  std::normal_distribution<float> nd;
  const size_t n = 900, dim = 24;
  std::vector<float> d(n * dim);
  for (float& x : d) x = nd(g);
  EmbeddingTable t = EmbeddingTable::from_f32(n, dim, d);
  std::vector<uint8_t> allow(n);
  for (size_t i = 0; i < n; ++i) allow[i] = (i % 7 == 0 || i % 5 == 1) ? 1 : 0;
  Searcher s(t, {.n_threads = 2});
  for (Metric m : {Metric::kCosine, Metric::kDot, Metric::kL2}) {
    for (SearchMode mode : {SearchMode::kExact, SearchMode::kFast}) {
      std::vector<float> q = s.row(14);
      auto got =
          s.search(q, {.k = 15, .metric = m, .mode = mode, .exclude = {14}, .allow = &allow});
      // Brute force: all eligible rows scored by the scalar reference, sorted.
      auto want = knn_reference(t, q, {.k = 15, .metric = m, .exclude = {14}, .allow = &allow});
      ASSERT_EQ(got.size(), want.size());
      for (size_t r = 0; r < got.size(); ++r) {
        EXPECT_EQ(got[r].id, want[r].id) << metric_name(m) << " rank " << r;
        EXPECT_TRUE(allow[size_t(got[r].id)]);
        EXPECT_NEAR(got[r].score, want[r].score, 1e-4);
      }
    }
  }
  // n_rows_limit restricts to a prefix.
  auto pre = s.search(s.row(0), {.k = 5, .exclude = {0}, .n_rows_limit = 50});
  for (auto& x : pre) EXPECT_LT(x.id, 50);
}

const char* kCenterCslsOracle = R"PY(
import json, sys, numpy as np
out = sys.argv[1]
rng = np.random.default_rng(3)
n, dim, k, ck = 400, 16, 8, 5
# Anisotropic data: a shared offset, which mean-centering removes.
W = (rng.standard_normal((n, dim)) + 3.0).astype(np.float32)
W.tofile(f"{out}/W.bin")
q = 9
C = W - W.mean(axis=0, dtype=np.float64).astype(np.float32)
Cn = C / np.linalg.norm(C, axis=1, keepdims=True)
cos = Cn @ Cn[q]; cos[q] = -np.inf
centered = np.argsort(-cos, kind="stable")[:k].tolist()
# CSLS on raw cosine: r(y) = mean cos of y to its ck nearest rows (itself excluded);
# r(q) likewise with q excluded; candidates: the best 100 by cosine.
Wn = W / np.linalg.norm(W, axis=1, keepdims=True)
S = Wn @ Wn.T
np.fill_diagonal(S, -np.inf)
r = np.sort(S, axis=1)[:, ::-1][:, :ck].mean(axis=1)
cq = S[q]
cand = np.argsort(-cq, kind="stable")[:100]
csls = 2 * cq[cand] - r[q] - r[cand]
order = cand[np.argsort(-csls, kind="stable")][:k]
json.dump({"centered": centered, "csls": order.tolist(),
           "csls_scores": np.sort(csls)[::-1][:k].tolist()}, open(f"{out}/e.json", "w"))
)PY";

TEST(Searcher, CenteringAndCslsEqualNumpy) {
  TempDir dir;
  test::run_python(kCenterCslsOracle, {dir.path()});
  auto e = nlohmann::json::parse(test::read_file(dir.file("e.json")));
  EmbeddingTable t = EmbeddingTable::from_f32(400, 16, read_raw<float>(dir.file("W.bin")));
  Searcher c(t, {.n_threads = 2, .center = true});
  auto nn = c.search(c.row(9), {.k = 8, .exclude = {9}});
  std::vector<int> ids;
  for (auto& x : nn) ids.push_back(x.id);
  EXPECT_EQ(ids, e["centered"].get<std::vector<int>>());
  // to_search_space of a raw row equals the centered row.
  std::vector<float> raw = t.row(9), cs = c.to_search_space(raw), cr = c.row(9);
  for (size_t j = 0; j < 16; ++j) EXPECT_NEAR(cs[j], cr[j], 1e-6);

  Searcher s(t, {.n_threads = 2});
  auto cl = s.search(s.row(9), {.k = 8, .exclude = {9}, .csls_k = 5});
  ids.clear();
  for (auto& x : cl) ids.push_back(x.id);
  EXPECT_EQ(ids, e["csls"].get<std::vector<int>>());
  for (size_t r = 0; r < cl.size(); ++r)
    EXPECT_NEAR(cl[r].score, e["csls_scores"][r].get<double>(), 1e-4);
}

TEST(Searcher, RejectsBadQueries) {
  Searcher s(EmbeddingTable::from_f32(3, 2, {1, 0, 0, 1, 1, 1}));
  auto code = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::make_pair(e.code(), std::string(e.what()));
    }
    return std::make_pair(ErrorCode::kIo, std::string("no error"));
  };
  auto [c1, m1] = code([&] { s.search(std::vector<float>{1, 0}, {.k = 0}); });
  EXPECT_EQ(c1, ErrorCode::kInvalidArgument);
  EXPECT_NE(m1.find("k must be"), std::string::npos);
  auto [c2, m2] = code([&] { s.search(std::vector<float>{1, 0, 0}, {}); });
  EXPECT_EQ(c2, ErrorCode::kInvalidArgument);
  EXPECT_NE(m2.find("query has 3 values, table dim is 2"), std::string::npos);
  auto [c3, m3] = code([&] { s.row(3); });
  EXPECT_EQ(c3, ErrorCode::kOutOfRange);
  EXPECT_NE(m3.find("row id 3"), std::string::npos);
  auto [c4, m4] = code([&] {
    s.search(std::vector<float>{1, 0}, {.metric = Metric::kDot, .csls_k = 3});
  });
  EXPECT_EQ(c4, ErrorCode::kInvalidArgument);
  EXPECT_NE(m4.find("CSLS"), std::string::npos);
  auto [c5, m5] = code([&] { s.search_batch(std::vector<float>{1, 0, 1}, 2, {}); });
  EXPECT_EQ(c5, ErrorCode::kInvalidArgument);
  auto [c6, m6] = code([&] { parse_search_mode("quick"); });
  EXPECT_EQ(c6, ErrorCode::kInvalidArgument);
  EXPECT_NE(m6.find("quick"), std::string::npos);
  auto [c7, m7] = code([&] { Searcher empty(EmbeddingTable{}); });
  EXPECT_EQ(c7, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace embedscope
