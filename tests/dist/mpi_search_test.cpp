// `mpirun -np N embedscope neighbors --batch`: each process searches its share of the rows and
// rank 0 merges; the answers must equal one process's, and numpy's.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

using namespace embedscope::test;
using json = nlohmann::json;

namespace {

std::vector<json> lines_of(const std::string& out) {
  std::vector<json> v;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) v.push_back(json::parse(line));
  return v;
}

}  // namespace

// A GPT-2-sized table (50,257 x 768 float32, numpy's random normal), 40 "#id" queries, k = 10:
// -np 3 (each rank maps its third of the rows) gives one process's answers to the bit, and
// numpy's float64 cosine ranking agrees on the ids.
TEST(DistSearch, ShardedBatchEqualsOneProcessOnGpt2SizedTable) {
  TempDir d;
  const std::string table = d.file("t.npy"), queries = d.file("q.txt");
  auto py = run_python(R"PY(
import sys, numpy as np
rng = np.random.default_rng(25)
X = rng.standard_normal((50257, 768), dtype=np.float32)
np.save(sys.argv[1], X)
ids = rng.choice(50257, 40, replace=False)
open(sys.argv[2], "w").write("".join(f"#{i}\n" for i in ids))
Y = X.astype(np.float64); Y /= np.linalg.norm(Y, axis=1, keepdims=True)
for i in ids[:5]:
    s = Y @ Y[i]; s[i] = -np.inf
    print(" ".join(str(j) for j in np.argsort(-s, kind="stable")[:10]))
)PY",
                       {table, queries});
  ASSERT_EQ(py.rc, 0) << py.err;
  const std::string exe = ES_MPIEXEC;
  ASSERT_TRUE(std::filesystem::exists(exe))
      << "mpirun not found: scripts/setup.sh installs openmpi-bin";
  const std::string args = " neighbors " + shell_quote(table) + " --batch " + shell_quote(queries) +
                           " -k 10 --json --threads 1";
  auto one = run(shell_quote(cli_path()) + args);
  ASSERT_EQ(one.rc, 0) << one.err;
  auto three = run(shell_quote(exe) + " --allow-run-as-root --oversubscribe -np 3 " +
                   shell_quote(cli_path()) + args);
  ASSERT_EQ(three.rc, 0) << three.err;
  auto a = lines_of(one.out), b = lines_of(three.out);
  ASSERT_EQ(a.size(), 40u);
  ASSERT_EQ(b.size(), 40u) << three.out;  // rank 0 alone prints
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << i;
  std::istringstream want(py.out);
  for (size_t i = 0; i < 5; ++i) {
    std::string line, got;
    std::getline(want, line);
    for (const auto& n : b[i]["neighbors"])
      got += (got.empty() ? "" : " ") + std::to_string(n["id"].get<long long>());
    EXPECT_EQ(got, line) << i;
  }
}
