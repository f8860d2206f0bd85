// End-to-end: `embedscope project` writes the .npy numpy's PCA gives (SVD of the centred matrix,
// the sign rule of analysis/projection.h); --json is the same coordinates; bad flags exit 2.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

using namespace embedscope::test;
using nlohmann::json;

namespace {

const char* kCompare = R"(
import sys, numpy as np
X = np.load(sys.argv[1]).astype(np.float64)
Y = np.load(sys.argv[2])
assert Y.dtype == np.float32 and Y.shape == (X.shape[0], int(sys.argv[3])), (Y.dtype, Y.shape)
C = X - X.mean(axis=0)
_, _, Vt = np.linalg.svd(C, full_matrices=False)
V = Vt[:Y.shape[1]]
V *= np.sign(V[np.arange(len(V)), np.argmax(np.abs(V), axis=1)])[:, None]
print(float(np.abs(C @ V.T - Y).max()))
)";

std::string env(const TempDir& d) {
  return "EMBEDSCOPE_HOME=" + shell_quote(d.file("home")) + " " + shell_quote(cli_path());
}

}  // namespace

TEST(CliProject, PcaNpyEqualsNumpysSvd) {
  TempDir d;
  auto p = run_python(R"(
import sys, numpy as np
rng = np.random.default_rng(2)
X = (rng.normal(size=(700, 12)) * np.linspace(5, 0.5, 12) + 1).astype(np.float32)
np.save(sys.argv[1], X)
)",
                      {d.file("x.npy")});
  ASSERT_EQ(p.rc, 0) << p.err;
  for (const char* dims : {"2", "3"}) {
    std::string out = d.file(std::string("pca") + dims + ".npy");
    auto r = run(env(d) + " project " + d.file("x.npy") + " --method pca --dims " + dims +
                 " -q -o " + shell_quote(out));
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("pca of 700 rows to " + std::string(dims) + " dims"), std::string::npos)
        << r.out;
    auto c = run_python(kCompare, {d.file("x.npy"), out, dims});
    ASSERT_EQ(c.rc, 0) << c.err;
    EXPECT_LT(std::stod(c.out), 1e-4) << dims;
  }
  // --json: the same values (now read from the disk cache the first run wrote).
  auto r = run(env(d) + " project " + d.file("x.npy") + " --json -q");
  ASSERT_EQ(r.rc, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["method"], "pca");
  EXPECT_EQ(j["rows"], 700);
  EXPECT_EQ(j["dims"], 2);
  ASSERT_EQ(j["coords"].size(), 700u);
  std::string as_npy = d.file("from_json.npy");
  auto w = run_python(R"(
import sys, json, numpy as np
np.save(sys.argv[2], np.array(json.load(open(sys.argv[1]))["coords"], dtype=np.float32))
)",
                      {(write_file(d.file("doc.json"), r.out), d.file("doc.json")), as_npy});
  ASSERT_EQ(w.rc, 0) << w.err;
  auto c = run_python(kCompare, {d.file("x.npy"), as_npy, "2"});
  ASSERT_EQ(c.rc, 0) << c.err;
  EXPECT_LT(std::stod(c.out), 1e-4);
}

TEST(CliProject, RejectsMissingOutputAndBadFlags) {
  TempDir d;
  auto p = run_python("import sys, numpy as np; np.save(sys.argv[1], np.eye(8, dtype=np.float32))",
                      {d.file("x.npy")});
  ASSERT_EQ(p.rc, 0) << p.err;
  auto r = run(env(d) + " project " + d.file("x.npy"));
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("-o FILE.npy, --json"), std::string::npos) << r.err;
  EXPECT_EQ(run(env(d) + " project " + d.file("x.npy") + " --dims 4 --json").rc, 2);
  EXPECT_EQ(run(env(d) + " project " + d.file("x.npy") + " --method tsne --json").rc, 2);
  auto nan = run_python(
      "import sys, numpy as np; X = np.eye(8, dtype=np.float32); X[5, 1] = np.inf; "
      "np.save(sys.argv[1], X)",
      {d.file("inf.npy")});
  ASSERT_EQ(nan.rc, 0) << nan.err;
  r = run(env(d) + " project " + d.file("inf.npy") + " -q -o " + d.file("o.npy"));
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("row 5 column 1"), std::string::npos) << r.err;
  r = run(env(d) + " project " + d.file("x.npy") + " --method umap --n-neighbors 8 --json");
  EXPECT_EQ(r.rc, 2);  // 8 rows: n_neighbors must be below the row count
  EXPECT_NE(r.err.find("n_neighbors"), std::string::npos) << r.err;
}

TEST(CliProject, HelpHasAnExample) {
  auto r = run(shell_quote(cli_path()) + " project --help");
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("embedscope project"), std::string::npos);
  EXPECT_NE(r.out.find("--method"), std::string::npos);
}
