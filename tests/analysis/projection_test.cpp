// PCA against numpy's SVD of the same centred matrix (numpy writes the table and the expected
// coordinates; the sign rule of projection.h applied to numpy's right singular vectors).
#include "embedscope/analysis/projection.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "embedscope/core/error.h"
#include "embedscope/formats/npy.h"
#include "test_util.h"

namespace embedscope {
namespace {

// A 3000 x 40 table with a planted offset and distinct component scales, saved as float32 and
// float16; numpy's PCA of each (SVD of the centred float64 matrix) for 3 components.
const char* kPcaScript = R"(
import sys, json, numpy as np
out = sys.argv[1]
rng = np.random.default_rng(11)
n, d = 3000, 40
Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
scales = np.concatenate([[9.0, 5.0, 3.0], np.linspace(1.0, 0.2, d - 3)])
X = (rng.normal(size=(n, d)) * scales) @ Q.T + 4.0
for name, dt in (("f32", np.float32), ("f16", np.float16)):
    A = X.astype(dt)
    np.save(f"{out}/{name}.npy", A)
    C = A.astype(np.float64)
    C -= C.mean(axis=0)
    U, S, Vt = np.linalg.svd(C, full_matrices=False)
    V = Vt[:3]
    idx = np.argmax(np.abs(V), axis=1)
    V *= np.sign(V[np.arange(3), idx])[:, None]
    Y = C @ V.T
    np.save(f"{out}/{name}_want.npy", Y.astype(np.float32))
    var = (S ** 2 / (n - 1)).tolist()
    json.dump({"var": var[:3], "total": float(sum(var))}, open(f"{out}/{name}.json", "w"))
)";

class Pca : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    auto r = test::run_python(kPcaScript, {dir_->path()});
    ASSERT_EQ(r.rc, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string file(const std::string& n) { return dir_->file(n); }
  static test::TempDir* dir_;
};
test::TempDir* Pca::dir_ = nullptr;

void expect_matches_numpy(const std::string& name, size_t n_threads, double tol) {
  LoadedEmbeddings e = load_npy(Pca::dir_->file(name + ".npy"));
  LoadedEmbeddings want = load_npy(Pca::dir_->file(name + "_want.npy"));
  auto facts = nlohmann::json::parse(test::read_file(Pca::dir_->file(name + ".json")));
  PcaOptions o;
  o.dims = 3;
  o.n_threads = n_threads;
  Projection p = pca(e.table, o);
  ASSERT_EQ(p.n_rows, 3000u);
  ASSERT_EQ(p.dims, 3u);
  ASSERT_EQ(p.coords.size(), 9000u);
  for (size_t c = 0; c < 3; ++c)
    EXPECT_NEAR(p.variance[c], facts["var"][c].get<double>(), 1e-5 * facts["var"][c].get<double>());
  EXPECT_NEAR(p.total_variance, facts["total"].get<double>(), 1e-5 * facts["total"].get<double>());
  double max_err = 0;
  for (size_t i = 0; i < 3000; ++i)
    for (size_t c = 0; c < 3; ++c)
      max_err =
          std::max(max_err, std::fabs(double(p.coords[i * 3 + c]) - want.table.f32()[i * 3 + c]));
  // Coordinates span about +-30: the error is float32 rounding of the inputs' centring.
  EXPECT_LT(max_err, tol) << name << " with " << n_threads << " threads";
}

TEST_F(Pca, EqualsNumpySvdWithTheSameSigns) { expect_matches_numpy("f32", 1, 1e-3); }

TEST_F(Pca, EqualsNumpySvdOnTwoThreads) { expect_matches_numpy("f32", 2, 1e-3); }

TEST_F(Pca, EqualsNumpySvdOnAFloat16Table) { expect_matches_numpy("f16", 2, 1e-3); }

TEST_F(Pca, IsReproducibleForAFixedThreadCount) {
  LoadedEmbeddings e = load_npy(file("f32.npy"));
  PcaOptions o;
  o.n_threads = 2;
  Projection a = pca(e.table, o), b = pca(e.table, o);
  EXPECT_EQ(a.coords, b.coords);
}

TEST_F(Pca, ReportsProgressToTheEnd) {
  LoadedEmbeddings e = load_npy(file("f32.npy"));
  PcaOptions o;
  double last_done = -1, total = 0;
  o.progress = [&](const ProgressInfo& p) {
    EXPECT_EQ(p.what, "pca");
    EXPECT_GE(p.done, last_done);
    last_done = p.done;
    total = p.total;
  };
  pca(e.table, o);
  EXPECT_EQ(total, 9000.0);
  EXPECT_EQ(last_done, 9000.0);
}

TEST_F(Pca, AProgressCallbackThatThrowsCancels) {
  LoadedEmbeddings e = load_npy(file("f32.npy"));
  PcaOptions o;
  o.progress = [](const ProgressInfo&) { throw Error(ErrorCode::kIo, "cancelled"); };
  EXPECT_THROW(pca(e.table, o), Error);
}

void expect_invalid(const EmbeddingTable& t, size_t dims, const std::string& needle) {
  PcaOptions o;
  o.dims = dims;
  try {
    pca(t, o);
    ADD_FAILURE() << "no error for " << needle;
  } catch (const Error& err) {
    EXPECT_EQ(err.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(err.what()).find(needle), std::string::npos) << err.what();
  }
}

TEST(PcaRejects, ZeroDims) {
  expect_invalid(EmbeddingTable::from_f32(2, 4, std::vector<float>(8, 1.0f)), 0, "dims 0");
}

TEST(PcaRejects, MoreDimsThanColumns) {
  expect_invalid(EmbeddingTable::from_f32(5, 2, std::vector<float>(10, 1.0f)), 3,
                 "dims 3 must be from 1 to the table's width 2");
}

TEST(PcaRejects, AnEmptyTable) { expect_invalid(EmbeddingTable::from_f32(0, 4, {}), 2, "no rows"); }

TEST(PcaRejects, ANonFiniteValueNamingItsRowAndColumn) {
  std::vector<float> v(40, 0.5f);
  v[6 * 4 + 3] = std::numeric_limits<float>::quiet_NaN();
  expect_invalid(EmbeddingTable::from_f32(10, 4, v), 2, "row 6 column 3");
  v[6 * 4 + 3] = std::numeric_limits<float>::infinity();
  expect_invalid(EmbeddingTable::from_f32(10, 4, v), 2, "row 6 column 3");
}

TEST(PcaEdge, OneRowProjectsToTheOrigin) {
  Projection p = pca(EmbeddingTable::from_f32(1, 3, {1, 2, 3}), PcaOptions{});
  ASSERT_EQ(p.coords.size(), 2u);
  EXPECT_EQ(p.coords[0], 0.0f);
  EXPECT_EQ(p.coords[1], 0.0f);
}

}  // namespace
}  // namespace embedscope
