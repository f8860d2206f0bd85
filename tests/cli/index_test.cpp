// CLI index build / query: recall against exact search on a word2vec file gensim wrote, the
// model-hash guard, and neighbors --index.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace embedscope {
namespace {

using nlohmann::json;
using test::TempDir;

const char* kMake = R"PY(
import sys, numpy as np
from gensim.models import KeyedVectors
out = sys.argv[1]
rng = np.random.default_rng(1)
centres = rng.standard_normal((30, 24))
W = (centres[np.arange(2000) % 30] + 0.5 * rng.standard_normal((2000, 24))).astype(np.float32)
kv = KeyedVectors(24)
kv.add_vectors([f"t{i}" for i in range(2000)], W)
kv.save_word2vec_format(f"{out}/m.txt", binary=False)
W[7, 3] += 1.0
kv2 = KeyedVectors(24)
kv2.add_vectors([f"t{i}" for i in range(2000)], W)
kv2.save_word2vec_format(f"{out}/changed.txt", binary=False)
)PY";

TEST(IndexCli, BuildQueryCheckRecallAndRefuseAChangedModel) {
  TempDir d;
  test::run_python(kMake, {d.path()});
  std::string cli = test::shell_quote(test::cli_path());
  auto r = test::run(cli + " index build --model " + test::shell_quote(d.file("m.txt")) + " -o " +
                     test::shell_quote(d.file("m.hnsw")) +
                     " --M 16 --ef-construction 100 --threads 2 --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  json b = json::parse(r.out);
  EXPECT_EQ(b["rows"], 2000);
  EXPECT_EQ(b["M"], 16);
  double recall = 0;
  for (int q : {0, 11, 500, 1999}) {
    r = test::run(cli + " index query --model " + test::shell_quote(d.file("m.txt")) + " --index " +
                  test::shell_quote(d.file("m.hnsw")) + " t" + std::to_string(q) +
                  " -k 10 --ef 100 --check-recall --json");
    ASSERT_EQ(r.rc, 0) << r.err;
    json j = json::parse(r.out);
    EXPECT_EQ(j["mode"], "hnsw");
    EXPECT_EQ(j["neighbors"].size(), 10u);
    EXPECT_EQ(j["missed"].size(), size_t(std::lround((1.0 - j["recall"].get<double>()) * 10)));
    recall += j["recall"].get<double>() / 4;
  }
  EXPECT_GE(recall, 0.95);
  // neighbors --index gives the same answer as index query.
  r = test::run(cli + " neighbors " + test::shell_quote(d.file("m.txt")) + " t11 --index " +
                test::shell_quote(d.file("m.hnsw")) + " --ef 100 --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["mode"], "hnsw");
  // The index remembers its model.
  r = test::run(cli + " index query --model " + test::shell_quote(d.file("changed.txt")) +
                " --index " + test::shell_quote(d.file("m.hnsw")) + " t3");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("index was built for a different model"), std::string::npos) << r.err;
}

TEST(IndexCli, BuildNeedsAnOutputAndQueryAnIndex) {
  std::string cli = test::shell_quote(test::cli_path());
  auto r = test::run(cli + " index build --model x.txt");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--output"), std::string::npos) << r.err;
  r = test::run(cli + " index query --model x.txt word");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--index"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace embedscope
