// Embedding / EmbeddingBag / optimizers: gradient checks by finite differences, and parity with
// PyTorch (Debian python3-torch, run at test time on the same initial weights and inputs).
#include "embedscope/train/embedding.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "embedscope/core/error.h"
#include "embedscope/train/optim.h"
#include "test_util.h"
#include "train/rng.h"

using namespace embedscope;
using json = nlohmann::json;

namespace {

std::vector<float> random_vec(size_t n, uint64_t seed, float scale = 1.0f) {
  SplitMix64 r(seed);
  std::vector<float> v(n);
  for (auto& x : v) x = float(r.normal()) * scale;
  return v;
}

// loss(W) = sum(forward(W) * R): its gradient w.r.t. the output is R.
double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += double(a[i]) * b[i];
  return s;
}

// Central differences of `loss` at every weight element against `analytic`.
void expect_gradient_matches(std::vector<float> w,
                             const std::function<double(const std::vector<float>&)>& loss,
                             const std::vector<float>& analytic, double h = 1e-2,
                             double tol = 2e-3) {
  ASSERT_EQ(w.size(), analytic.size());
  for (size_t i = 0; i < w.size(); ++i) {
    float saved = w[i];
    w[i] = saved + float(h);
    double up = loss(w);
    w[i] = saved - float(h);
    double down = loss(w);
    w[i] = saved;
    double fd = (up - down) / (2 * h);
    EXPECT_NEAR(fd, analytic[i], tol * (1 + std::fabs(fd))) << "element " << i;
  }
}

const size_t kRows = 7, kDim = 4;
const std::vector<TokenId> kIds = {1, 3, 3, 0, 6, 3, 2, 0};

void grad_check_embedding(const EmbeddingOptions& opt) {
  auto w0 = random_vec(kRows * kDim, 11);
  Embedding e = Embedding::from_pretrained(kRows, kDim, w0, false, opt);
  std::vector<float> out(kIds.size() * kDim), grad(kRows * kDim, 0.0f);
  e.forward(kIds, out.data());
  auto r = random_vec(out.size(), 12);
  e.backward_dense(kIds, r.data(), grad.data());
  // Gradient w.r.t. the weight as forward left it (renormalised rows are constants, as in torch).
  std::vector<float> w1(e.weight().begin(), e.weight().end());
  EmbeddingOptions plain = opt;
  plain.max_norm.reset();
  auto loss = [&](const std::vector<float>& w) {
    Embedding f = Embedding::from_pretrained(kRows, kDim, w, false, plain);
    std::vector<float> o(kIds.size() * kDim);
    f.forward(kIds, o.data());
    // Padding and frequency scaling act on the gradient only; mirror them in the loss.
    double s = 0;
    std::map<TokenId, int> count;
    for (TokenId id : kIds) ++count[id];
    for (size_t i = 0; i < kIds.size(); ++i) {
      if (opt.padding_idx && kIds[i] == *opt.padding_idx) continue;
      double scale = opt.scale_grad_by_freq ? 1.0 / count[kIds[i]] : 1.0;
      for (size_t d = 0; d < kDim; ++d) s += scale * o[i * kDim + d] * r[i * kDim + d];
    }
    return s;
  };
  expect_gradient_matches(w1, loss, grad);
  // The sparse gradient is the same numbers on the touched rows.
  SparseGrad sg = e.backward_sparse(kIds, r.data());
  std::vector<float> dense(kRows * kDim, 0.0f);
  for (size_t k = 0; k < sg.rows.size(); ++k)
    for (size_t d = 0; d < kDim; ++d) dense[sg.rows[k] * kDim + d] = sg.values[k * kDim + d];
  for (size_t i = 0; i < dense.size(); ++i) EXPECT_FLOAT_EQ(dense[i], grad[i]) << i;
}

}  // namespace

TEST(EmbeddingGradCheck, Plain) { grad_check_embedding({}); }
TEST(EmbeddingGradCheck, PaddingIdx) { grad_check_embedding({.padding_idx = 3}); }
TEST(EmbeddingGradCheck, ScaleGradByFreq) { grad_check_embedding({.scale_grad_by_freq = true}); }
TEST(EmbeddingGradCheck, MaxNorm) { grad_check_embedding({.max_norm = 0.9f}); }
TEST(EmbeddingGradCheck, MaxNormL1) { grad_check_embedding({.max_norm = 1.5f, .norm_type = 1.0f}); }

TEST(EmbeddingGradCheck, BagModes) {
  const std::vector<int64_t> offsets = {0, 3, 3, 5};  // bag 1 empty
  for (BagMode mode : {BagMode::kSum, BagMode::kMean, BagMode::kMax})
    for (bool weighted : {false, true}) {
      if (weighted && mode != BagMode::kSum) continue;
      auto w0 = random_vec(kRows * kDim, 21);
      auto psw = random_vec(kIds.size(), 22);
      std::span<const float> ps = weighted ? std::span<const float>(psw) : std::span<const float>();
      EmbeddingBag bag(Embedding::from_pretrained(kRows, kDim, w0, false, {.padding_idx = 2}),
                       mode);
      std::vector<float> out(offsets.size() * kDim), grad(kRows * kDim, 0.0f),
          gpsw(kIds.size(), 0.0f);
      bag.forward(kIds, offsets, out.data(), ps);
      auto r = random_vec(out.size(), 23);
      bag.backward_dense(kIds, offsets, r.data(), grad.data(), ps, gpsw.data());
      auto loss = [&](const std::vector<float>& w) {
        EmbeddingBag b2(Embedding::from_pretrained(kRows, kDim, w, false, {.padding_idx = 2}),
                        mode);
        std::vector<float> o(offsets.size() * kDim);
        b2.forward(kIds, offsets, o.data(), ps);
        return dot(o, r);
      };
      // The padding row has no gradient by definition; the loss does not depend on it either.
      expect_gradient_matches(w0, loss, grad, 1e-3);
      if (weighted) {
        auto loss_psw = [&](const std::vector<float>& p) {
          EmbeddingBag b2(Embedding::from_pretrained(kRows, kDim, w0, false, {.padding_idx = 2}),
                          mode);
          std::vector<float> o(offsets.size() * kDim);
          b2.forward(kIds, offsets, o.data(), p);
          return dot(o, r);
        };
        expect_gradient_matches(psw, loss_psw, gpsw, 1e-3);
      }
    }
}

TEST(Embedding, RejectsOutOfRangeId) {
  Embedding e = Embedding::standard(5, 2, 1);
  std::vector<TokenId> ids = {0, 5};
  std::vector<float> out(4);
  try {
    e.forward(ids, out.data());
    FAIL();
  } catch (const Error& err) {
    EXPECT_EQ(err.code(), ErrorCode::kOutOfRange);
    EXPECT_NE(std::string(err.what()).find("position 1: id 5"), std::string::npos) << err.what();
  }
}

TEST(Embedding, RejectsBadPaddingIdxAndZeroDim) {
  EXPECT_THROW(Embedding::standard(5, 2, 1, {.padding_idx = 5}), Error);
  EXPECT_THROW(Embedding::standard(5, 0, 1), Error);
  EXPECT_THROW(Embedding::standard(5, 2, 1, {.max_norm = -1.0f}), Error);
}

TEST(EmbeddingBag, RejectsBadOffsetsAndWeights) {
  EmbeddingBag bag(Embedding::standard(5, 2, 1), BagMode::kMean);
  std::vector<TokenId> ids = {0, 1, 2};
  std::vector<float> out(4), psw = {1, 1, 1};
  std::vector<int64_t> bad = {0, 4};
  EXPECT_THROW(bag.forward(ids, bad, out.data()), Error);
  std::vector<int64_t> start1 = {1, 2};
  EXPECT_THROW(bag.forward(ids, start1, out.data()), Error);
  std::vector<int64_t> ok = {0, 2};
  EXPECT_THROW(bag.forward(ids, ok, out.data(), psw), Error);  // weights need mode sum
}

TEST(Embedding, InitialisersHaveTheRequestedMoments) {
  Embedding e = Embedding::normal(2000, 50, 0.5f, 7, {.padding_idx = 0});
  double s = 0, s2 = 0;
  auto w = e.weight();
  for (size_t i = 50; i < w.size(); ++i) s += w[i], s2 += double(w[i]) * w[i];
  double n = double(w.size() - 50), mean = s / n, var = s2 / n - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.01);
  EXPECT_NEAR(std::sqrt(var), 0.5, 0.01);
  for (size_t d = 0; d < 50; ++d) EXPECT_EQ(w[d], 0.0f);  // padding row zeroed
  Embedding u = Embedding::uniform(1000, 10, -2.0f, 3.0f, 7);
  for (float x : u.weight()) EXPECT_TRUE(x >= -2.0f && x < 3.0f);
  // Same seed, same table.
  Embedding e2 = Embedding::normal(2000, 50, 0.5f, 7, {.padding_idx = 0});
  EXPECT_TRUE(std::equal(w.begin(), w.end(), e2.weight().begin()));
}

TEST(Embedding, FrozenPretrainedGetsNoGradient) {
  Embedding e = Embedding::from_pretrained(3, 2, {1, 2, 3, 4, 5, 6}, true);
  std::vector<TokenId> ids = {2, 0};
  std::vector<float> out(4), g(6, 0.0f), go = {1, 1, 1, 1};
  e.forward(ids, out.data());
  EXPECT_EQ(out, (std::vector<float>{5, 6, 1, 2}));
  e.backward_dense(ids, go.data(), g.data());
  EXPECT_EQ(g, std::vector<float>(6, 0.0f));
  EXPECT_TRUE(e.backward_sparse(ids, go.data()).rows.empty());
}

// ---------------------------------------------------------------------------------------------
// Parity with torch. All cases go to one Python process (importing torch takes seconds).

namespace {

const char* kTorchScript = R"PY(
import json, sys, torch
torch.set_default_dtype(torch.float32)
spec = json.load(open(sys.argv[1]))
res = {}
def t(x): return torch.tensor(x, dtype=torch.float32)
def build(c, sparse=False):
    w = t(c["weight"]).view(c["n_rows"], c["dim"])
    kw = dict(freeze=False, sparse=sparse)
    if c.get("padding_idx") is not None: kw["padding_idx"] = c["padding_idx"]
    if c.get("max_norm") is not None: kw["max_norm"] = c["max_norm"]; kw["norm_type"] = c["norm_type"]
    if c.get("scale_grad_by_freq"): kw["scale_grad_by_freq"] = True
    if c.get("mode"):
        kw.pop("scale_grad_by_freq", None) if c["mode"] == "max" and False else None
        return torch.nn.EmbeddingBag.from_pretrained(w, mode=c["mode"], **kw)
    return torch.nn.Embedding.from_pretrained(w, **kw)
def run(m, c, ids, go):
    ids = torch.tensor(ids, dtype=torch.long)
    if c.get("mode"):
        psw = t(c["psw"]) if c.get("psw") else None
        if psw is not None: psw.requires_grad_(True)
        out = m(ids, torch.tensor(c["offsets"], dtype=torch.long), per_sample_weights=psw)
    else:
        psw = None
        out = m(ids)
    (out * t(go).view(out.shape)).sum().backward()
    return out, psw
for name, c in spec["layers"].items():
    m = build(c)
    out, psw = run(m, c, c["ids"], c["grad_out"])
    r = {"out": out.detach().flatten().tolist(), "grad": m.weight.grad.flatten().tolist(),
         "weight": m.weight.detach().flatten().tolist()}
    if psw is not None: r["psw_grad"] = psw.grad.tolist()
    res[name] = r
for name, c in spec["optim"].items():
    sparse = c["opt"] in ("sparse_adam", "adagrad_sparse")
    m = build(c, sparse)
    o = c["hp"]
    p = [m.weight]
    if c["opt"] == "sgd": opt = torch.optim.SGD(p, lr=o["lr"], momentum=o["momentum"], dampening=o["dampening"], weight_decay=o["weight_decay"], nesterov=o["nesterov"])
    elif c["opt"] == "adam": opt = torch.optim.Adam(p, lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"], weight_decay=o["weight_decay"])
    elif c["opt"] == "adamw": opt = torch.optim.AdamW(p, lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"], weight_decay=o["weight_decay"])
    elif c["opt"] == "sparse_adam": opt = torch.optim.SparseAdam(p, lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"])
    else: opt = torch.optim.Adagrad(p, lr=o["lr"], lr_decay=o["lr_decay"], weight_decay=o["weight_decay"], initial_accumulator_value=o["init"], eps=o["eps"])
    for ids, go in zip(c["batches"], c["grads"]):
        opt.zero_grad()
        run(m, c, ids, go)
        opt.step()
    res[name] = {"weight": m.weight.detach().flatten().tolist()}
json.dump(res, open(sys.argv[2], "w"))
)PY";

struct LayerCase {
  EmbeddingOptions opt;
  std::optional<BagMode> mode;
  std::vector<int64_t> offsets;
  bool weighted = false;
};

std::map<std::string, LayerCase> layer_cases() {
  return {
      {"plain", {}},
      {"padding", {.opt = {.padding_idx = 3}}},
      {"max_norm", {.opt = {.max_norm = 1.1f}}},
      {"max_norm_p3", {.opt = {.max_norm = 1.3f, .norm_type = 3.0f}}},
      {"freq", {.opt = {.scale_grad_by_freq = true}}},
      {"freq_padding", {.opt = {.padding_idx = 0, .scale_grad_by_freq = true}}},
      {"bag_sum", {.mode = BagMode::kSum, .offsets = {0, 3, 3, 5}}},
      {"bag_sum_weighted", {.mode = BagMode::kSum, .offsets = {0, 2, 6}, .weighted = true}},
      {"bag_mean", {.mode = BagMode::kMean, .offsets = {0, 3, 3, 5}}},
      {"bag_mean_padding",
       {.opt = {.padding_idx = 3}, .mode = BagMode::kMean, .offsets = {0, 3, 5}}},
      {"bag_max", {.mode = BagMode::kMax, .offsets = {0, 3, 3, 5}}},
      {"bag_max_norm", {.opt = {.max_norm = 1.0f}, .mode = BagMode::kMax, .offsets = {0, 4}}},
  };
}

const char* mode_name(BagMode m) {
  return m == BagMode::kSum ? "sum" : m == BagMode::kMean ? "mean" : "max";
}

json case_json(const LayerCase& c, const std::vector<float>& w) {
  json j = {{"n_rows", kRows}, {"dim", kDim}, {"weight", w}};
  if (c.opt.padding_idx) j["padding_idx"] = *c.opt.padding_idx;
  if (c.opt.max_norm) j["max_norm"] = *c.opt.max_norm, j["norm_type"] = c.opt.norm_type;
  j["scale_grad_by_freq"] = c.opt.scale_grad_by_freq;
  if (c.mode) j["mode"] = mode_name(*c.mode), j["offsets"] = c.offsets;
  return j;
}

struct OptimCase {
  std::string opt;
  json hp;
  std::function<void(Embedding&, const std::vector<std::vector<TokenId>>&,
                     const std::vector<std::vector<float>>&)>
      run;
};

const int kSteps = 10;

std::vector<std::vector<TokenId>> batches() {
  std::vector<std::vector<TokenId>> b;
  SplitMix64 r(99);
  for (int s = 0; s < kSteps; ++s) {
    std::vector<TokenId> ids;
    for (int i = 0; i < 5; ++i) ids.push_back(TokenId(r.next() % 5));  // rows 5, 6 never touched
    b.push_back(ids);
  }
  return b;
}

std::vector<std::vector<float>> batch_grads() {
  std::vector<std::vector<float>> g;
  for (int s = 0; s < kSteps; ++s) g.push_back(random_vec(5 * kDim, 500 + s));
  return g;
}

template <class Step>
void train_steps(Embedding& e, const std::vector<std::vector<TokenId>>& ids,
                 const std::vector<std::vector<float>>& grads, Step step) {
  for (size_t s = 0; s < ids.size(); ++s) {
    std::vector<float> out(ids[s].size() * kDim);
    e.forward(ids[s], out.data());
    step(ids[s], grads[s]);
  }
}

std::map<std::string, OptimCase> optim_cases() {
  std::map<std::string, OptimCase> m;
  auto dense = [](auto make) {
    return [make](Embedding& e, const std::vector<std::vector<TokenId>>& ids,
                  const std::vector<std::vector<float>>& grads) {
      auto opt = make();
      train_steps(e, ids, grads, [&](const std::vector<TokenId>& b, const std::vector<float>& go) {
        std::vector<float> g(kRows * kDim, 0.0f);
        e.backward_dense(b, go.data(), g.data());
        opt.step(e.weight(), g);
      });
    };
  };
  SgdOptions sgd{.lr = 0.1f, .momentum = 0.9f, .dampening = 0.1f, .weight_decay = 0.01f};
  m["sgd_momentum"] = {"sgd",
                       {{"lr", 0.1},
                        {"momentum", 0.9},
                        {"dampening", 0.1},
                        {"weight_decay", 0.01},
                        {"nesterov", false}},
                       dense([=] { return Sgd(kRows, kDim, sgd); })};
  SgdOptions nest{.lr = 0.05f, .momentum = 0.8f, .nesterov = true};
  m["sgd_nesterov"] = {"sgd",
                       {{"lr", 0.05},
                        {"momentum", 0.8},
                        {"dampening", 0.0},
                        {"weight_decay", 0.0},
                        {"nesterov", true}},
                       dense([=] { return Sgd(kRows, kDim, nest); })};
  AdamOptions adam{.lr = 0.05f, .beta1 = 0.8f, .beta2 = 0.99f, .eps = 1e-8f, .weight_decay = 0.01f};
  json adam_hp = {
      {"lr", 0.05}, {"beta1", 0.8}, {"beta2", 0.99}, {"eps", 1e-8}, {"weight_decay", 0.01}};
  m["adam"] = {"adam", adam_hp, dense([=] { return Adam(kRows, kDim, adam); })};
  m["adamw"] = {"adamw", adam_hp, dense([=] { return AdamW(kRows, kDim, adam); })};
  AdagradOptions ada{
      .lr = 0.1f, .lr_decay = 0.01f, .weight_decay = 0.01f, .initial_accumulator_value = 0.1f};
  m["adagrad_dense"] = {
      "adagrad",
      {{"lr", 0.1}, {"lr_decay", 0.01}, {"weight_decay", 0.01}, {"init", 0.1}, {"eps", 1e-10}},
      dense([=] { return Adagrad(kRows, kDim, ada); })};
  AdamOptions sadam{.lr = 0.05f, .beta1 = 0.8f, .beta2 = 0.99f, .eps = 1e-8f};
  m["sparse_adam"] = {"sparse_adam",
                      {{"lr", 0.05}, {"beta1", 0.8}, {"beta2", 0.99}, {"eps", 1e-8}},
                      [=](Embedding& e, const auto& ids, const auto& grads) {
                        SparseAdam opt(kRows, kDim, sadam);
                        train_steps(e, ids, grads, [&](const auto& b, const auto& go) {
                          opt.step(e.weight(), e.backward_sparse(b, go.data()));
                        });
                      }};
  AdagradOptions sada{.lr = 0.1f, .lr_decay = 0.01f, .initial_accumulator_value = 0.1f};
  m["adagrad_sparse"] = {
      "adagrad_sparse",
      {{"lr", 0.1}, {"lr_decay", 0.01}, {"weight_decay", 0.0}, {"init", 0.1}, {"eps", 1e-10}},
      [=](Embedding& e, const auto& ids, const auto& grads) {
        Adagrad opt(kRows, kDim, sada);
        train_steps(e, ids, grads, [&](const auto& b, const auto& go) {
          opt.step_sparse(e.weight(), e.backward_sparse(b, go.data()));
        });
      }};
  return m;
}

const json& torch_results() {
  static json res = [] {
    json spec = {{"layers", json::object()}, {"optim", json::object()}};
    auto w = random_vec(kRows * kDim, 5);
    auto go = random_vec(kIds.size() * kDim, 6);  // enough for any bag count too
    for (auto& [name, c] : layer_cases()) {
      json j = case_json(c, w);
      j["ids"] = kIds;
      size_t n_out = c.mode ? c.offsets.size() : kIds.size();
      j["grad_out"] = std::vector<float>(go.begin(), go.begin() + long(n_out * kDim));
      if (c.weighted) j["psw"] = random_vec(kIds.size(), 7);
      spec["layers"][name] = j;
    }
    for (auto& [name, c] : optim_cases()) {
      json j = case_json({}, w);
      j["opt"] = c.opt;
      j["hp"] = c.hp;
      j["batches"] = batches();
      j["grads"] = batch_grads();
      spec["optim"][name] = j;
    }
    test::TempDir d;
    test::write_file(d.file("spec.json"), spec.dump());
    auto r = test::run_python(kTorchScript, {d.file("spec.json"), d.file("out.json")});
    if (r.rc != 0) return json();
    return json::parse(test::read_file(d.file("out.json")));
  }();
  return res;
}

void expect_near_all(const std::vector<float>& ours, const json& theirs, double tol,
                     const std::string& what) {
  ASSERT_EQ(ours.size(), theirs.size()) << what;
  for (size_t i = 0; i < ours.size(); ++i)
    EXPECT_NEAR(ours[i], theirs[i].get<double>(), tol) << what << " element " << i;
}

}  // namespace

TEST(EmbeddingTorchParity, ForwardAndGradientsMatchEveryMode) {
  const json& res = torch_results();
  ASSERT_FALSE(res.is_null())
      << "torch did not run (is python3-torch installed? run scripts/setup.sh)";
  auto w = random_vec(kRows * kDim, 5);
  auto go = random_vec(kIds.size() * kDim, 6);
  for (auto& [name, c] : layer_cases()) {
    SCOPED_TRACE(name);
    const json& r = res.at(name);
    Embedding e = Embedding::from_pretrained(kRows, kDim, w, false, c.opt);
    std::vector<float> grad(kRows * kDim, 0.0f);
    if (c.mode) {
      EmbeddingBag bag(std::move(e), *c.mode);
      std::vector<float> psw = c.weighted ? random_vec(kIds.size(), 7) : std::vector<float>();
      std::vector<float> out(c.offsets.size() * kDim), gpsw(kIds.size());
      bag.forward(kIds, c.offsets, out.data(), psw);
      bag.backward_dense(kIds, c.offsets, go.data(), grad.data(), psw, gpsw.data());
      expect_near_all(out, r["out"], 1e-6, "out");
      if (c.weighted) expect_near_all(gpsw, r["psw_grad"], 1e-6, "per_sample_weights grad");
      std::vector<float> wafter(bag.embedding().weight().begin(), bag.embedding().weight().end());
      expect_near_all(wafter, r["weight"], 1e-6, "weight after forward");
      // The sparse form carries the same gradient.
      SparseGrad sg = bag.backward_sparse(kIds, c.offsets, go.data(), psw);
      std::vector<float> dense(kRows * kDim, 0.0f);
      for (size_t k = 0; k < sg.rows.size(); ++k)
        for (size_t d = 0; d < kDim; ++d) dense[sg.rows[k] * kDim + d] = sg.values[k * kDim + d];
      expect_near_all(dense, r["grad"], 1e-6, "sparse grad");
    } else {
      std::vector<float> out(kIds.size() * kDim);
      e.forward(kIds, out.data());
      e.backward_dense(kIds, go.data(), grad.data());
      expect_near_all(out, r["out"], 1e-6, "out");
      std::vector<float> wafter(e.weight().begin(), e.weight().end());
      expect_near_all(wafter, r["weight"], 1e-6, "weight after forward (renorm in place)");
    }
    expect_near_all(grad, r["grad"], 1e-6, "grad");
  }
}

TEST(OptimizerTorchParity, TenStepsMatchEveryOptimizer) {
  const json& res = torch_results();
  ASSERT_FALSE(res.is_null()) << "torch did not run";
  auto w = random_vec(kRows * kDim, 5);
  for (auto& [name, c] : optim_cases()) {
    SCOPED_TRACE(name);
    Embedding e = Embedding::from_pretrained(kRows, kDim, w, false);
    c.run(e, batches(), batch_grads());
    std::vector<float> ours(e.weight().begin(), e.weight().end());
    expect_near_all(ours, res.at(name)["weight"], 1e-5, "weights after 10 steps");
    if (c.opt == "sparse_adam" || c.opt == "adagrad_sparse")
      for (size_t row = 5; row < kRows; ++row)  // never in a batch: must not move
        for (size_t d = 0; d < kDim; ++d) EXPECT_EQ(ours[row * kDim + d], w[row * kDim + d]);
  }
}
