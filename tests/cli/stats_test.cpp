// End-to-end: `embedscope stats` on files numpy wrote.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

using namespace embedscope::test;
using nlohmann::json;

TEST(CliStats, JsonReportsNormsAnisotropyHubnessPca) {
  TempDir d;
  auto p = run_python(R"(
import sys, numpy as np
X = np.random.default_rng(1).normal(size=(300, 16)).astype(np.float32) + 2
np.save(sys.argv[1], X)
print(float(np.linalg.norm(X.astype(np.float64), axis=1).mean()))
)",
                      {d.file("x.npy")});
  ASSERT_EQ(p.rc, 0) << p.err;
  auto r =
      run(shell_quote(cli_path()) + " stats " + d.file("x.npy") + " --json -k 5 --components 4");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = json::parse(r.out);
  EXPECT_EQ(j["rows"], 300);
  EXPECT_EQ(j["dim"], 16);
  EXPECT_NEAR(j["norms"]["mean"].get<double>(), std::stod(p.out), 1e-4);
  EXPECT_GT(j["anisotropy"]["mean_cos_to_mean"].get<double>(), 0.5);  // the +2 offset
  EXPECT_EQ(j["pca_explained"].size(), 4u);
  EXPECT_EQ(j["hubness"]["k"], 5);
}
