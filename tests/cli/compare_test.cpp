// End-to-end: `embedscope compare` on files gensim wrote.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

using namespace embedscope::test;
using nlohmann::json;

TEST(CliCompare, SameFileHasFullOverlapAndNoDrift) {
  TempDir d;
  auto p = run_python(R"(
import sys, numpy as np
from gensim.models import KeyedVectors
kv = KeyedVectors(8); kv.add_vectors(["w%d" % i for i in range(60)], np.random.default_rng(2).normal(size=(60, 8)).astype(np.float32))
kv.save_word2vec_format(sys.argv[1])
)",
                      {d.file("a.txt")});
  ASSERT_EQ(p.rc, 0) << p.err;
  auto r = run(shell_quote(cli_path()) + " compare " + d.file("a.txt") + " " + d.file("a.txt") +
               " -k 5 --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = json::parse(r.out);
  EXPECT_EQ(j["shared_rows"], 60);
  EXPECT_DOUBLE_EQ(j["mean_overlap"].get<double>(), 1.0);
  EXPECT_LT(j["mean_drift"].get<double>(), 1e-5);
}
