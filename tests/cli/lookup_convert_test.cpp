// End-to-end: `embedscope lookup` and `convert` against files numpy and gensim wrote.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

using namespace embedscope::test;
using nlohmann::json;

namespace {

// gensim writes a word2vec text file of 50 random float32 vectors (dim 8) with keys w0..w49,
// and the same vectors as a .npy; values come from numpy's generator, not from us.
void make_fixtures(const TempDir& d) {
  run_python(R"(
import sys, numpy as np
from gensim.models import KeyedVectors
d = sys.argv[1]
rng = np.random.default_rng(7)
W = rng.standard_normal((50, 8)).astype(np.float32)
kv = KeyedVectors(vector_size=8)
kv.add_vectors([f"w{i}" for i in range(50)], W)
kv.save_word2vec_format(d + "/v.txt", binary=False)
kv.save_word2vec_format(d + "/v.bin", binary=True)
np.save(d + "/v.npy", W)
)",
             {d.path()});
}

}  // namespace

TEST(CliLookup, WordRowEqualsGensimVector) {
  TempDir d;
  make_fixtures(d);
  auto r = run(shell_quote(cli_path()) + " lookup " + d.file("v.bin") + " w7 --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = json::parse(r.out);
  auto check = run_python(R"(
import sys, json, numpy as np
from gensim.models import KeyedVectors
kv = KeyedVectors.load_word2vec_format(sys.argv[1], binary=True)
got = np.array(json.loads(sys.argv[2])["rows"][0]["vector"], dtype=np.float32)
assert np.array_equal(got, kv["w7"]), (got, kv["w7"])
print("ok")
)",
                          {d.file("v.bin"), j.dump()});
  EXPECT_EQ(check.out, "ok\n");
}

TEST(CliLookup, IdsToNpyEqualNumpyRows) {
  TempDir d;
  make_fixtures(d);
  auto r = run(shell_quote(cli_path()) + " lookup " + d.file("v.npy") + " --ids 3,0,49 --npy " +
               d.file("rows.npy"));
  ASSERT_EQ(r.rc, 0) << r.err;
  auto check = run_python(R"(
import sys, numpy as np
W = np.load(sys.argv[1]); R = np.load(sys.argv[2])
assert R.dtype == np.float32 and np.array_equal(R, W[[3, 0, 49]])
print("ok")
)",
                          {d.file("v.npy"), d.file("rows.npy")});
  EXPECT_EQ(check.out, "ok\n");
}

TEST(CliLookup, OutOfRangeIdIsExitCode7WithMessage) {
  TempDir d;
  make_fixtures(d);
  auto r = run(shell_quote(cli_path()) + " lookup " + d.file("v.npy") + " --ids 50");
  EXPECT_EQ(r.rc, 7);
  EXPECT_NE(r.err.find("error: --ids: id 50 out of range [0, 50)"), std::string::npos) << r.err;
}

TEST(CliLookup, UnknownWordIsNotFound) {
  TempDir d;
  make_fixtures(d);
  auto r = run(shell_quote(cli_path()) + " lookup " + d.file("v.txt") + " nosuchword");
  EXPECT_EQ(r.rc, 3);
  EXPECT_NE(r.err.find("'nosuchword' is not in the vocabulary"), std::string::npos) << r.err;
}

TEST(CliConvert, Word2VecToSafetensorsToWord2VecBinReadsBackInGensim) {
  TempDir d;
  make_fixtures(d);
  auto r1 =
      run(shell_quote(cli_path()) + " convert " + d.file("v.txt") + " " + d.file("v.safetensors"));
  ASSERT_EQ(r1.rc, 0) << r1.err;
  auto r2 = run(shell_quote(cli_path()) + " convert " + d.file("v.safetensors") + " " +
                d.file("back.bin") + " --to word2vec-bin");
  ASSERT_EQ(r2.rc, 0) << r2.err;
  auto check = run_python(R"(
import sys, numpy as np
from gensim.models import KeyedVectors
a = KeyedVectors.load_word2vec_format(sys.argv[1], binary=False)
b = KeyedVectors.load_word2vec_format(sys.argv[2], binary=True)
assert a.index_to_key == b.index_to_key
assert np.array_equal(a.vectors, b.vectors)
print("ok")
)",
                          {d.file("v.txt"), d.file("back.bin")});
  EXPECT_EQ(check.out, "ok\n");
}

TEST(CliConvert, UnknownTargetFormatIsUsageError) {
  TempDir d;
  make_fixtures(d);
  auto r = run(shell_quote(cli_path()) + " convert " + d.file("v.npy") + " " + d.file("x") +
               " --to parquet");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("parquet"), std::string::npos) << r.err;
}
