// `embedscope info` end to end: files written at test time by torch.save and a spec-following
// safetensors writer; the JSON facts are compared with what Python computed from the same data.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace embedscope {
namespace {

using json = nlohmann::json;
using test::TempDir;

constexpr const char* kGenerator = R"PY(
import collections, json, os, struct, sys
import numpy as np
import torch

root = sys.argv[1]
rng = np.random.default_rng(3)
V, D = 30, 4
wte = rng.standard_normal((V, D)).astype(np.float32)
wte[2] = 0.0
g = os.path.join(root, 'gpt2')
os.makedirs(g)
json.dump({'model_type': 'gpt2', 'initializer_range': 0.02}, open(os.path.join(g, 'config.json'), 'w'))
json.dump({'tok%d' % i: i for i in range(V - 2)}, open(os.path.join(g, 'vocab.json'), 'w'))  # padded by 2
open(os.path.join(g, 'merges.txt'), 'w').write('#version: 0.2\n')
h = json.dumps({'transformer.wte.weight': {'dtype': 'F32', 'shape': [V, D], 'data_offsets': [0, wte.nbytes]}}).encode()
h += b' ' * ((8 - len(h) % 8) % 8)
open(os.path.join(g, 'model.safetensors'), 'wb').write(struct.pack('<Q', len(h)) + h + wte.tobytes())
n = np.linalg.norm(wte.astype(np.float64), axis=1)
json.dump({'min': float(n.min()), 'max': float(n.max()), 'mean': float(n.mean())}, open(os.path.join(root, 'norms.json'), 'w'))
# Over info's 32 MiB sampling threshold: 11000 x 800 float32 = 35.2 MB.
BV, BD = 11000, 800
big = rng.standard_normal((BV, BD)).astype(np.float32) * np.linspace(0.5, 2.0, BV, dtype=np.float32)[:, None]
h = json.dumps({'weight': {'dtype': 'F32', 'shape': [BV, BD], 'data_offsets': [0, big.nbytes]}}).encode()
h += b' ' * ((8 - len(h) % 8) % 8)
open(os.path.join(root, 'big.safetensors'), 'wb').write(struct.pack('<Q', len(h)) + h + big.tobytes())
bn = np.linalg.norm(big.astype(np.float64), axis=1)
rows = [b * (BV - 64) // 63 + j for b in range(64) for j in range(64)]  # 64 runs of 64
json.dump({'full': {'min': float(bn.min()), 'max': float(bn.max()), 'mean': float(bn.mean())},
           'sample': {'min': float(bn[rows].min()), 'max': float(bn[rows].max()), 'mean': float(bn[rows].mean())}},
          open(os.path.join(root, 'big_norms.json'), 'w'))
emb = torch.randn(V, D).half()
torch.save(collections.OrderedDict([('model.embed_tokens.weight', emb), ('lm_head.weight', torch.randn(V, D).half())]),
           os.path.join(root, 'llama.bin'))
)PY";

class InfoCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    test::run_python(kGenerator, {dir_->path()});
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string file(const std::string& n) { return dir_->file(n); }
  static test::CommandResult info(const std::string& args) {
    return test::run(test::shell_quote(test::cli_path()) + " info " + args);
  }
  static TempDir* dir_;
};
TempDir* InfoCli::dir_ = nullptr;

TEST_F(InfoCli, LargeMatrixNormsAreSampledUnlessFullStats) {
  json want = json::parse(test::read_file(file("big_norms.json")));
  for (const char* mode : {"sample", "full"}) {
    const bool full = std::string(mode) == "full";
    auto r = info(test::shell_quote(file("big.safetensors")) + " --json" +
                  (full ? " --full-stats" : ""));
    ASSERT_EQ(r.rc, 0) << r.err;
    json j = json::parse(r.out);
    EXPECT_EQ(j["norms"]["sampled"], !full) << mode;
    EXPECT_EQ(j["norms"]["rows"], full ? 11000 : 4096) << mode;
    for (const char* k : {"min", "mean", "max"})
      EXPECT_NEAR(j["norms"][k].get<double>(), want[mode][k].get<double>(),
                  1e-4 * want[mode][k].get<double>())
          << mode << " " << k;
  }
  auto text = info(test::shell_quote(file("big.safetensors")));
  EXPECT_NE(text.out.find(
                "over 4096 of 11000 rows (64 evenly spaced runs); --full-stats reads every row"),
            std::string::npos)
      << text.out;
}

TEST_F(InfoCli, JsonDescribesHfFolder) {
  auto r = info("--model " + test::shell_quote(file("gpt2")) + " --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["format"], "safetensors");
  EXPECT_EQ(j["model_type"], "gpt2");
  EXPECT_EQ(j["tensor"], "transformer.wte.weight");
  EXPECT_NE(j["tensor_reason"].get<std::string>().find("model_type 'gpt2'"), std::string::npos);
  EXPECT_EQ(j["rows"], 30);
  EXPECT_EQ(j["dim"], 4);
  EXPECT_EQ(j["dtype"], "F32");
  EXPECT_EQ(j["vocab_size"], 30);
  EXPECT_EQ(j["n_search_rows"], 28);
  EXPECT_EQ(j["padded_rows"], 2);
  EXPECT_EQ(j["zero_copy"], true);
  EXPECT_EQ(j["tied"], true);
  EXPECT_EQ(j["tokenizer_files"], json::array({"vocab.json", "merges.txt"}));
  EXPECT_EQ(j["nonfinite"], 0);
  json want = json::parse(test::read_file(file("norms.json")));
  EXPECT_NEAR(j["norms"]["min"].get<double>(), 0.0, 1e-12);  // row 2 is zero
  EXPECT_NEAR(j["norms"]["max"].get<double>(), want["max"].get<double>(), 1e-5);
  EXPECT_NEAR(j["norms"]["mean"].get<double>(), want["mean"].get<double>(), 1e-5);
  EXPECT_TRUE(j["load_ms"].is_number());
}

TEST_F(InfoCli, OutputMatrixOfUntiedTorchCheckpoint) {
  auto r = info(test::shell_quote(file("llama.bin")) + " --json --matrix output");
  ASSERT_EQ(r.rc, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["format"], "pytorch");
  EXPECT_EQ(j["tensor"], "lm_head.weight");
  EXPECT_EQ(j["dtype"], "F16");
  EXPECT_EQ(j["tied"], false);
  EXPECT_EQ(j["rows"], 30);
}

TEST_F(InfoCli, HumanOutputNamesTensorAndReason) {
  auto r = info(test::shell_quote(file("gpt2")));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("transformer.wte.weight"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("30 x 4"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 padded rows excluded"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("load time"), std::string::npos) << r.out;
}

TEST_F(InfoCli, TensorOverride) {
  auto r =
      info(test::shell_quote(file("llama.bin")) + " --tensor model.embed_tokens.weight --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["tensor"], "model.embed_tokens.weight");
}

TEST_F(InfoCli, MissingHubModelExitsNotFound) {
  auto r = test::run("HF_HUB_CACHE=" + test::shell_quote(file("nohub")) + " " +
                     test::shell_quote(test::cli_path()) + " info --model someorg/absent");
  EXPECT_EQ(r.rc, 3);
  EXPECT_NE(r.err.find("error: model 'someorg/absent'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("huggingface-cli download someorg/absent"), std::string::npos) << r.err;
}

TEST_F(InfoCli, BadMatrixValueIsUsageError) {
  auto r = info(test::shell_quote(file("llama.bin")) + " --matrix middle");
  EXPECT_EQ(r.rc, 2) << r.err;
}

TEST_F(InfoCli, HelpHasExample) {
  auto r = info("--help");
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("embedscope info --model gpt2 --json"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace embedscope
