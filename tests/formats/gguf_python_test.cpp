// GGUF files written by a Python generator at test time, one per supported tensor type, with the
// expected values computed by an independent numpy implementation of the ggml block formats
// (random blocks -> numpy dequantisation), compared with GgufFile::load_matrix.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "embedscope/core/error.h"
#include "embedscope/formats/gguf.h"
#include "embedscope/formats/model.h"
#include "test_util.h"

namespace embedscope {
namespace {

using test::TempDir;

// Writes <out>/<TYPE>.gguf and <out>/<TYPE>.f32 (expected float32 values, row-major) for each
// type; plus kv.gguf carrying every metadata type with align 1 and an empty tensor list.
constexpr const char* kGenerator = R"PY(
import struct, sys, os
import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(1234)
ROWS, DIM = 5, 512

def s(x):
    b = x.encode('utf-8')
    return struct.pack('<Q', len(b)) + b

T = dict(U8=0, I8=1, U16=2, I16=3, U32=4, I32=5, F32=6, BOOL=7, STR=8, ARR=9, U64=10, I64=11, F64=12)
PACK = {0: '<B', 1: '<b', 2: '<H', 3: '<h', 4: '<I', 5: '<i', 6: '<f', 7: '<?', 10: '<Q', 11: '<q', 12: '<d'}

def kv(key, t, v, et=None):
    b = s(key) + struct.pack('<I', t)
    if t == T['STR']:
        return b + s(v)
    if t == T['ARR']:
        b += struct.pack('<IQ', et, len(v))
        for x in v:
            b += s(x) if et == T['STR'] else struct.pack(PACK[et], x)
        return b
    return b + struct.pack(PACK[t], v)

def gguf(path, kvs, tensors, align=32):
    # tensors: list of (name, ne list, ggml type, data bytes)
    if align != 32:
        kvs = kvs + [kv('general.alignment', T['U32'], align)]
    head = b'GGUF' + struct.pack('<IQQ', 3, len(tensors), len(kvs)) + b''.join(kvs)
    infos, data, off = b'', b'', 0
    for name, ne, t, raw in tensors:
        infos += s(name) + struct.pack('<I', len(ne)) + b''.join(struct.pack('<Q', n) for n in ne)
        infos += struct.pack('<IQ', t, off)
        pad = (-len(raw)) % align
        data += raw + b'\0' * pad
        off += len(raw) + pad
    body = head + infos
    body += b'\0' * ((-len(body)) % align)
    with open(path, 'wb') as f:
        f.write(body + data)

def f16(n):  # well-behaved random scales
    return rng.uniform(-1, 1, n).astype(np.float16)

def u8(n):
    return rng.integers(0, 256, n, dtype=np.uint8)

# Each maker returns (ggml type, raw bytes of ROWS*DIM values, expected float32 array).
def make_f32():
    x = rng.standard_normal((ROWS, DIM)).astype(np.float32)
    return 0, x.tobytes(), x
def make_f16():
    x = rng.standard_normal((ROWS, DIM)).astype(np.float16)
    return 1, x.tobytes(), x.astype(np.float32)
def make_bf16():
    bits = (rng.standard_normal((ROWS, DIM)).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return 30, bits.tobytes(), (bits.astype(np.uint32) << 16).view(np.float32)

def blocks(nb, parts):
    # parts: list of uint8 arrays of shape (nb, k) concatenated per block
    return np.concatenate(parts, axis=1).astype(np.uint8)

def make_q8_0():
    nb = ROWS * DIM // 32
    d = f16(nb); q = rng.integers(-128, 128, (nb, 32), dtype=np.int8)
    raw = blocks(nb, [d.view(np.uint8).reshape(nb, 2), q.view(np.uint8)])
    y = d.astype(np.float32)[:, None] * q.astype(np.float32)
    return 8, raw.tobytes(), y.reshape(ROWS, DIM)
def make_q4_0():
    nb = ROWS * DIM // 32
    d = f16(nb); qs = u8((nb, 16))
    raw = blocks(nb, [d.view(np.uint8).reshape(nb, 2), qs])
    q = np.concatenate([(qs & 15), (qs >> 4)], axis=1).astype(np.float32) - 8
    return 2, raw.tobytes(), (d.astype(np.float32)[:, None] * q).reshape(ROWS, DIM)
def make_q4_1():
    nb = ROWS * DIM // 32
    d = f16(nb); m = f16(nb); qs = u8((nb, 16))
    raw = blocks(nb, [d.view(np.uint8).reshape(nb, 2), m.view(np.uint8).reshape(nb, 2), qs])
    q = np.concatenate([(qs & 15), (qs >> 4)], axis=1).astype(np.float32)
    y = d.astype(np.float32)[:, None] * q + m.astype(np.float32)[:, None]
    return 3, raw.tobytes(), y.reshape(ROWS, DIM)
def five_bit(qs, qh):
    bits = ((qh.astype(np.uint64)[:, None] >> np.arange(32, dtype=np.uint64)) & 1).astype(np.uint8)
    return np.concatenate([(qs & 15) | (bits[:, :16] << 4), (qs >> 4) | (bits[:, 16:] << 4)], axis=1)
def make_q5_0():
    nb = ROWS * DIM // 32
    d = f16(nb); qh = rng.integers(0, 2**32, nb, dtype=np.uint32); qs = u8((nb, 16))
    raw = blocks(nb, [d.view(np.uint8).reshape(nb, 2), qh.view(np.uint8).reshape(nb, 4), qs])
    q = five_bit(qs, qh).astype(np.float32) - 16
    return 6, raw.tobytes(), (d.astype(np.float32)[:, None] * q).reshape(ROWS, DIM)
def make_q5_1():
    nb = ROWS * DIM // 32
    d = f16(nb); m = f16(nb); qh = rng.integers(0, 2**32, nb, dtype=np.uint32); qs = u8((nb, 16))
    raw = blocks(nb, [d.view(np.uint8).reshape(nb, 2), m.view(np.uint8).reshape(nb, 2),
                      qh.view(np.uint8).reshape(nb, 4), qs])
    q = five_bit(qs, qh).astype(np.float32)
    y = d.astype(np.float32)[:, None] * q + m.astype(np.float32)[:, None]
    return 7, raw.tobytes(), y.reshape(ROWS, DIM)
def make_q4_k():
    nb = ROWS * DIM // 256
    d = f16(nb); dmin = f16(nb); sc = u8((nb, 12)); qs = u8((nb, 128))
    raw = blocks(nb, [d.view(np.uint8).reshape(nb, 2), dmin.view(np.uint8).reshape(nb, 2), sc, qs])
    y = np.zeros((nb, 256), np.float32)
    for b in range(nb):
        for i in range(8):
            if i < 4:
                a, mm = sc[b, i] & 63, sc[b, i + 4] & 63
            else:
                a = (sc[b, i + 4] & 15) | ((sc[b, i - 4] >> 6) << 4)
                mm = (sc[b, i + 4] >> 4) | ((sc[b, i] >> 6) << 4)
            chunk = qs[b, 32 * (i // 2): 32 * (i // 2) + 32]
            q = (chunk & 15) if i % 2 == 0 else (chunk >> 4)
            d1 = np.float32(d[b]) * np.float32(a)
            m1 = np.float32(dmin[b]) * np.float32(mm)
            y[b, 32 * i: 32 * i + 32] = d1 * q.astype(np.float32) - m1
    return 12, raw.tobytes(), y.reshape(ROWS, DIM)
def make_q6_k():
    nb = ROWS * DIM // 256
    ql = u8((nb, 128)); qh = u8((nb, 64)); sc = rng.integers(-128, 128, (nb, 16), dtype=np.int8); d = f16(nb)
    raw = blocks(nb, [ql, qh, sc.view(np.uint8), d.view(np.uint8).reshape(nb, 2)])
    y = np.zeros((nb, 256), np.float32)
    for b in range(nb):
        for h in range(2):
            L, H, S = ql[b, 64 * h: 64 * h + 64], qh[b, 32 * h: 32 * h + 32], sc[b, 8 * h: 8 * h + 8]
            for l in range(32):
                qv = [(L[l] & 15) | (((H[l] >> 0) & 3) << 4), (L[l + 32] & 15) | (((H[l] >> 2) & 3) << 4),
                      (L[l] >> 4) | (((H[l] >> 4) & 3) << 4), (L[l + 32] >> 4) | (((H[l] >> 6) & 3) << 4)]
                for k in range(4):
                    y[b, 128 * h + l + 32 * k] = (np.float32(d[b]) * np.float32(S[l // 16 + 2 * k])) * np.float32(int(qv[k]) - 32)
    return 14, raw.tobytes(), y.reshape(ROWS, DIM)

tokens = ['<s>', 'hello', ' world', '\u00e9t\u00e9', '!']
base_kvs = [kv('general.architecture', T['STR'], 'llama'), kv('general.name', T['STR'], 'gen test'),
            kv('llama.embedding_length', T['U32'], DIM),
            kv('tokenizer.ggml.model', T['STR'], 'llama'),
            kv('tokenizer.ggml.tokens', T['ARR'], tokens, T['STR']),
            kv('tokenizer.ggml.scores', T['ARR'], [0.0, -1.0, -2.0, -3.0, -4.0], T['F32']),
            kv('tokenizer.ggml.token_type', T['ARR'], [3, 1, 1, 1, 1], T['I32'])]
for name, mk in [('F32', make_f32), ('F16', make_f16), ('BF16', make_bf16), ('Q8_0', make_q8_0),
                 ('Q4_0', make_q4_0), ('Q4_1', make_q4_1), ('Q5_0', make_q5_0), ('Q5_1', make_q5_1),
                 ('Q4_K', make_q4_k), ('Q6_K', make_q6_k)]:
    t, raw, y = mk()
    assert len(raw) > 0 and np.all(np.isfinite(y))
    out_t, out_raw, out_y = make_f32()
    gguf(os.path.join(out, name + '.gguf'), base_kvs,
         [('token_embd.weight', [DIM, ROWS], t, raw), ('output.weight', [DIM, ROWS], out_t, out_raw)])
    np.ascontiguousarray(y, dtype=np.float32).tofile(os.path.join(out, name + '.f32'))
    np.ascontiguousarray(out_y, dtype=np.float32).tofile(os.path.join(out, name + '.out.f32'))

# every metadata type, custom alignment 1, no tensors
allkv = [kv('k.u8', T['U8'], 200), kv('k.i8', T['I8'], -100), kv('k.u16', T['U16'], 60000),
         kv('k.i16', T['I16'], -30000), kv('k.u32', T['U32'], 4000000000), kv('k.i32', T['I32'], -2000000000),
         kv('k.f32', T['F32'], 1.5), kv('k.bool', T['BOOL'], True), kv('k.str', T['STR'], 'caf\u00e9'),
         kv('k.u64', T['U64'], 2**63 + 5), kv('k.i64', T['I64'], -2**62), kv('k.f64', T['F64'], 0.1),
         kv('k.arr.i16', T['ARR'], [-1, 2, -3], T['I16']), kv('k.arr.f64', T['ARR'], [0.5, 0.25], T['F64']),
         kv('k.arr.str', T['ARR'], ['a', '', 'xyz'], T['STR']), kv('k.arr.empty', T['ARR'], [], T['U8'])]
gguf(os.path.join(out, 'kv.gguf'), allkv, [], align=1)
# a small F32 matrix with alignment 1 (data at an odd offset: loaded by copying)
x = (np.arange(6, dtype=np.float32) + 0.5).reshape(2, 3)
gguf(os.path.join(out, 'align1.gguf'), [kv('general.architecture', T['STR'], 'x')],
     [('token_embd.weight', [3, 2], 0, x.tobytes())], align=1)
)PY";

std::vector<float> read_f32(const std::string& path) {
  std::string b = test::read_file(path);
  std::vector<float> v(b.size() / 4);
  std::memcpy(v.data(), b.data(), v.size() * 4);
  return v;
}

class GgufGenerated : public ::testing::Test {
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
  static TempDir* dir_;
};
TempDir* GgufGenerated::dir_ = nullptr;

void expect_matrix_equals(const EmbeddingTable& t, const std::vector<float>& want) {
  ASSERT_EQ(t.n_rows() * t.dim(), want.size());
  size_t bad = 0;
  for (size_t r = 0; r < t.n_rows(); ++r) {
    std::vector<float> row = t.row(r);
    for (size_t c = 0; c < t.dim(); ++c) {
      float w = want[r * t.dim() + c];
      if (std::fabs(row[c] - w) > 1e-6f * std::fabs(w) + 1e-7f && bad++ < 5)
        ADD_FAILURE() << "row " << r << " col " << c << ": got " << row[c] << " want " << w;
    }
  }
  EXPECT_EQ(bad, 0u);
}

class GgufTypes : public GgufGenerated, public ::testing::WithParamInterface<const char*> {};

TEST_P(GgufTypes, DequantisesTokenEmbeddingLikeNumpy) {
  std::string type = GetParam();
  GgufFile g = GgufFile::open(file(type + ".gguf"));
  LoadedEmbeddings e = g.load_matrix("token_embd.weight");
  EXPECT_EQ(e.table.n_rows(), 5u);
  EXPECT_EQ(e.table.dim(), 512u);
  EXPECT_EQ(e.source_dtype, type);
  EXPECT_EQ(e.format, FileFormat::kGguf);
  expect_matrix_equals(e.table, read_f32(file(type + ".f32")));
  // F32/F16/BF16 are mapped, not copied (the generator aligns data to 32 bytes).
  bool raw = type == "F32" || type == "F16" || type == "BF16";
  EXPECT_EQ(e.table.zero_copy(), raw);
  ASSERT_EQ(e.vocab.size(), 5u);
  EXPECT_EQ(e.vocab.token(3), "\xc3\xa9t\xc3\xa9");
  EXPECT_EQ(e.metadata["general.architecture"], "llama");
  EXPECT_EQ(e.metadata["llama.embedding_length"], "512");
  EXPECT_EQ(e.metadata.count("tokenizer.ggml.model"), 0u);
}

INSTANTIATE_TEST_SUITE_P(AllSupported, GgufTypes,
                         ::testing::Values("F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0",
                                           "Q5_1", "Q4_K", "Q6_K"));

TEST_F(GgufGenerated, ModelLoadsInputAndOutputEmbedding) {
  Model in = load_model(file("Q4_K.gguf"));
  EXPECT_EQ(in.tensor, "token_embd.weight");
  EXPECT_EQ(in.model_type, "llama");
  EXPECT_EQ(in.tied, std::optional<bool>(false));
  EXPECT_EQ(in.emb.vocab.size(), 5u);
  ModelOptions o;
  o.matrix = MatrixKind::kOutput;
  Model out = load_model(file("Q4_K.gguf"), o);
  EXPECT_EQ(out.tensor, "output.weight");
  expect_matrix_equals(out.emb.table, read_f32(file("Q4_K.out.f32")));
}

TEST_F(GgufGenerated, ReadsEveryMetadataType) {
  GgufFile g = GgufFile::open(file("kv.gguf"));
  EXPECT_EQ(g.version(), 3u);
  EXPECT_EQ(g.alignment(), 1u);
  EXPECT_TRUE(g.tensors().empty());
  EXPECT_EQ(g.get_uint("k.u8"), 200u);
  EXPECT_EQ(g.get_int("k.i8"), -100);
  EXPECT_EQ(g.get_uint("k.u16"), 60000u);
  EXPECT_EQ(g.get_int("k.i16"), -30000);
  EXPECT_EQ(g.get_uint("k.u32"), 4000000000u);
  EXPECT_EQ(g.get_int("k.i32"), -2000000000);
  EXPECT_EQ(g.get_float("k.f32"), 1.5);
  EXPECT_EQ(g.get_bool("k.bool"), true);
  EXPECT_EQ(g.get_string("k.str"), "caf\xc3\xa9");
  EXPECT_EQ(g.get_uint("k.u64"), (uint64_t(1) << 63) + 5);
  EXPECT_EQ(g.get_int("k.i64"), -(int64_t(1) << 62));
  EXPECT_EQ(g.get_float("k.f64"), 0.1);
  EXPECT_EQ(g.int_array("k.arr.i16"), (std::vector<int64_t>{-1, 2, -3}));
  EXPECT_EQ(g.float_array("k.arr.f64"), (std::vector<double>{0.5, 0.25}));
  EXPECT_EQ(g.string_array("k.arr.str"), (std::vector<std::string>{"a", "", "xyz"}));
  EXPECT_EQ(g.array_size("k.arr.empty"), 0u);
  EXPECT_EQ(g.get_string("absent"), std::nullopt);
}

TEST_F(GgufGenerated, TypedLookupsNameTheKeyAndTypes) {
  GgufFile g = GgufFile::open(file("kv.gguf"));
  try {
    g.get_string("k.u32");
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("'k.u32' has type UINT32 (expected STRING)"),
              std::string::npos)
        << e.what();
  }
  try {
    g.string_array("tokenizer.ggml.tokens");
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("tokenizer.ggml.tokens"), std::string::npos);
  }
  EXPECT_THROW(g.string_array("k.arr.i16"), Error);
  EXPECT_THROW(g.get_uint("k.i8"), Error);  // negative
}

TEST_F(GgufGenerated, AcceptsAlignmentOneByCopying) {
  GgufFile g = GgufFile::open(file("align1.gguf"));
  LoadedEmbeddings e = g.load_matrix("token_embd.weight");
  ASSERT_EQ(e.table.n_rows(), 2u);
  EXPECT_EQ(e.table.row(1), (std::vector<float>{3.5f, 4.5f, 5.5f}));
}

TEST_F(GgufGenerated, MissingTensorIsNotFound) {
  GgufFile g = GgufFile::open(file("F32.gguf"));
  try {
    g.load_matrix("nope.weight");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("token_embd.weight"), std::string::npos);
  }
}

}  // namespace
}  // namespace embedscope
