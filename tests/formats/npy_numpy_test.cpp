// .npy against the real tool: numpy writes (np.save, np.lib.format.write_array versions 1-3,
// Fortran order, big-endian, f2/f4/f8, torch.randn tensors) and we read bit-exactly; we write
// and np.load reads bit-exactly.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <sstream>

#include "embedscope/core/error.h"
#include "embedscope/formats/npy.h"
#include "formats/npy_cases.h"
#include "test_util.h"

namespace embedscope {
namespace {

using test::TempDir;

const char* kWriteScript = R"PY(
import sys, numpy as np, torch
out = sys.argv[1]
torch.manual_seed(0)
W = torch.randn(7, 5)
a = W.numpy()
np.save(out + '/f4.npy', a)
np.save(out + '/f2.npy', a.astype(np.float16))
np.save(out + '/f8.npy', W.double().mul(1.1).numpy())
np.save(out + '/fortran.npy', np.asfortranarray(a))
np.save(out + '/fortran_f2.npy', np.asfortranarray(a.astype(np.float16)))
np.save(out + '/be.npy', a.astype('>f4'))
np.save(out + '/be_f2.npy', a.astype('>f2'))
np.save(out + '/be_f8.npy', W.double().mul(1.1).numpy().astype('>f8'))
np.save(out + '/vector.npy', a[3])
np.save(out + '/wide_empty.npy', np.zeros((0, 2**20 + 1), np.float32))  # no bytes, absurd width
for v in (1, 2, 3):
    with open(out + '/v%d.npy' % v, 'wb') as f:
        np.lib.format.write_array(f, a, version=(v, 0))
assert np.load(out + '/fortran.npy', mmap_mode='r').flags.f_contiguous
open(out + '/exp_f4.bin', 'wb').write(np.ascontiguousarray(a, '<f4').tobytes())
open(out + '/exp_f2.bin', 'wb').write(np.ascontiguousarray(a.astype(np.float16), '<f2').tobytes())
open(out + '/exp_f8.bin', 'wb').write(W.double().mul(1.1).float().numpy().astype('<f4').tobytes())
)PY";

std::string table_bytes(const EmbeddingTable& t) {
  return std::string(reinterpret_cast<const char*>(t.data()), t.byte_size());
}

class NpyFromNumpy : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    auto r = test::run_python(kWriteScript, {dir_->path()});
    ASSERT_EQ(r.rc, 0);
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string file(const std::string& n) { return dir_->file(n); }
  static std::string expected(const std::string& n) { return test::read_file(dir_->file(n)); }
  static TempDir* dir_;
};
TempDir* NpyFromNumpy::dir_ = nullptr;

TEST_F(NpyFromNumpy, ReadsF4ZeroCopyAndExact) {
  auto e = load_npy(file("f4.npy"));
  EXPECT_EQ(e.table.n_rows(), 7u);
  EXPECT_EQ(e.table.dim(), 5u);
  EXPECT_TRUE(e.table.zero_copy());
  EXPECT_EQ(e.source_dtype, "<f4");
  EXPECT_EQ(table_bytes(e.table), expected("exp_f4.bin"));
}

TEST_F(NpyFromNumpy, ReadsF2KeepingBits) {
  auto e = load_npy(file("f2.npy"));
  EXPECT_EQ(e.table.dtype(), DType::kF16);
  EXPECT_TRUE(e.table.zero_copy());
  EXPECT_EQ(table_bytes(e.table), expected("exp_f2.bin"));
}

TEST_F(NpyFromNumpy, ConvertsF8ToF32LikeTorch) {
  auto e = load_npy(file("f8.npy"));
  EXPECT_EQ(e.table.dtype(), DType::kF32);
  EXPECT_EQ(e.source_dtype, "<f8");
  EXPECT_EQ(table_bytes(e.table), expected("exp_f8.bin"));
}

TEST_F(NpyFromNumpy, TransposesFortranOrder) {
  EXPECT_EQ(table_bytes(load_npy(file("fortran.npy")).table), expected("exp_f4.bin"));
  EXPECT_EQ(table_bytes(load_npy(file("fortran_f2.npy")).table), expected("exp_f2.bin"));
}

TEST_F(NpyFromNumpy, SwapsBigEndian) {
  EXPECT_EQ(table_bytes(load_npy(file("be.npy")).table), expected("exp_f4.bin"));
  EXPECT_EQ(table_bytes(load_npy(file("be_f2.npy")).table), expected("exp_f2.bin"));
  EXPECT_EQ(table_bytes(load_npy(file("be_f8.npy")).table), expected("exp_f8.bin"));
}

TEST_F(NpyFromNumpy, ReadsVersions1To3) {
  for (int v = 1; v <= 3; ++v) {
    auto e = load_npy(file("v" + std::to_string(v) + ".npy"));
    EXPECT_EQ(table_bytes(e.table), expected("exp_f4.bin")) << "version " << v;
  }
}

TEST_F(NpyFromNumpy, ReadsVectorAsOneRow) {
  auto e = load_npy(file("vector.npy"));
  EXPECT_EQ(e.table.n_rows(), 1u);
  EXPECT_EQ(e.table.dim(), 5u);
  EXPECT_EQ(table_bytes(e.table), expected("exp_f4.bin").substr(3 * 20, 20));
}

// A 0 x (2^20 + 1) matrix has no bytes to check against the file size, but every per-row
// buffer would be sized by its width: refused by the row-width limit, naming the file.
TEST_F(NpyFromNumpy, RejectsRowsWiderThanTheLimit) {
  try {
    load_npy(file("wide_empty.npy"));
    FAIL() << "a 0 x 1048577 matrix was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    const std::string m = e.what();
    EXPECT_NE(m.find("wide_empty.npy"), std::string::npos) << m;
    EXPECT_NE(m.find("rows of 1048577 values exceed the limit of 1048576"), std::string::npos) << m;
  }
}

TEST(NpyToNumpy, NumpyReadsWhatWeWriteExactly) {
  TempDir d;
  std::vector<float> f(6 * 3);
  for (size_t i = 0; i < f.size(); ++i) f[i] = float(i) * 0.37f - 2.0f;
  f[1] = -0.0f;
  f[2] = 1e-40f;  // subnormal
  std::vector<uint16_t> h = {0x3c00, 0x8001, 0x7bff, 0xc000, 0x0000, 0x3555};
  save_npy(d.file("f4.npy"), EmbeddingTable::from_f32(6, 3, f));
  save_npy(d.file("f2.npy"), EmbeddingTable::from_u16(2, 3, DType::kF16, h));
  save_npy(d.file("bf.npy"), EmbeddingTable::from_u16(3, 2, DType::kBF16, h));
  test::write_file(d.file("f4.bin"),
                   std::string(reinterpret_cast<const char*>(f.data()), f.size() * 4));
  test::write_file(d.file("f2.bin"),
                   std::string(reinterpret_cast<const char*>(h.data()), h.size() * 2));
  auto r = test::run_python(R"PY(
import sys, numpy as np
d = sys.argv[1]
a = np.load(d + '/f4.npy')
assert a.dtype == np.dtype('<f4') and a.shape == (6, 3), (a.dtype, a.shape)
assert a.tobytes() == open(d + '/f4.bin', 'rb').read()
b = np.load(d + '/f2.npy')
assert b.dtype == np.dtype('<f2') and b.shape == (2, 3), (b.dtype, b.shape)
assert b.tobytes() == open(d + '/f2.bin', 'rb').read()
c = np.load(d + '/bf.npy')
assert c.dtype == np.dtype('<f4') and c.shape == (3, 2), (c.dtype, c.shape)
bits = np.frombuffer(open(d + '/f2.bin', 'rb').read(), '<u2').astype(np.uint32) << 16
assert c.tobytes() == bits.astype('<u4').tobytes()
print('ok')
)PY",
                            {d.path()});
  EXPECT_EQ(r.out, "ok\n");
}

}  // namespace
}  // namespace embedscope

namespace embedscope {
namespace {

// numpy and our reader on every handcrafted file of npy_cases.h: accepted files load to the
// same values; rejected files are rejected by numpy too, except where our policy is stricter
// than numpy's (docs/formats.md), listed here with the reason.
TEST(NpyVsNumpy, AgreesOnTheHandcraftedCorpus) {
  const std::map<std::string, std::string> stricter = {
      {"N5-duplicate-key", "ast.literal_eval keeps the last duplicate"},
      {"N6-int32", "integer matrices are not embeddings"},
      {"N9-negative-dim", "numpy 1.24 reads (-2, 3) from 24 bytes as (2, 3): a wrong header"},
      {"N10-long", "numpy ignores bytes after the data"},
      {"N-rank-3", "only 1-D and 2-D arrays are tables"},
      {"N-scalar", "a 0-D array is not a table"},
  };
  TempDir d;
  for (const auto& c : test::npy_bad_files()) test::write_file(d.file(c.id), c.bytes);
  for (const auto& c : test::npy_good_files()) test::write_file(d.file(c.id), c.bytes);
  auto r = test::run_python(R"PY(
import sys, os, numpy as np
d = sys.argv[1]
for f in sorted(os.listdir(d)):
    if f.endswith('.out'):
        continue
    try:
        a = np.load(os.path.join(d, f), allow_pickle=False)
        a = np.ascontiguousarray(a.astype('<f2' if a.dtype.kind == 'f' and a.itemsize == 2 else '<f4'))
        open(os.path.join(d, f + '.out'), 'wb').write(a.tobytes())
        print(f, 'OK')
    except Exception as e:
        print(f, 'REJECT')
)PY",
                            {d.path()});
  std::istringstream lines(r.out);
  std::string file, verdict;
  size_t n = 0;
  while (lines >> file >> verdict) {
    ++n;
    bool np_ok = verdict == "OK";
    try {
      auto e = load_npy(d.file(file));
      EXPECT_TRUE(np_ok) << file << ": we accept, numpy rejects";
      if (np_ok) EXPECT_EQ(table_bytes(e.table), test::read_file(d.file(file + ".out"))) << file;
    } catch (const Error& e) {
      if (np_ok)
        EXPECT_TRUE(stricter.count(file))
            << file << ": we reject (" << e.what() << "), numpy accepts";
      else
        EXPECT_FALSE(stricter.count(file))
            << file << ": listed as stricter but numpy rejects it too";
    }
  }
  EXPECT_EQ(n, test::npy_bad_files().size() + test::npy_good_files().size());
}

}  // namespace
}  // namespace embedscope
