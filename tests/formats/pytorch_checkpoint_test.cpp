// PyTorch checkpoints written at test time by /usr/bin/python3 torch.save (Debian torch), read by
// TorchCheckpoint and compared with what torch.load returns; plus every bad-pickle / bad-zip case
// built with Python's zipfile and a hand-assembled pickle (one test each).
#include <gtest/gtest.h>

#include <cstring>

#include "embedscope/core/error.h"
#include "embedscope/formats/model.h"
#include "embedscope/formats/pickle.h"
#include "embedscope/formats/pytorch.h"
#include "test_util.h"

namespace embedscope {
namespace {

using test::TempDir;

constexpr const char* kGenerator = R"PY(
import collections, io, os, pickle, struct, sys, zipfile
import numpy as np
import torch

out = sys.argv[1]
torch.manual_seed(0)
V, D = 50, 8

def dump(name, sd):
    path = os.path.join(out, name)
    torch.save(sd, path)
    # expected values: what torch.load gives back, as float32 rows
    back = torch.load(path)
    for k, t in back.items():
        if t.dim() == 2 and t.is_floating_point():
            t.float().contiguous().numpy().tofile(os.path.join(out, name + '.' + k + '.f32'))

# GPT-2 LM-head shape, tied: lm_head.weight is the same Parameter as wte (shared storage).
wte = torch.randn(V, D)
sd = collections.OrderedDict()
sd['transformer.wte.weight'] = wte
sd['transformer.wpe.weight'] = torch.randn(16, D)
sd['transformer.h.0.ln_1.weight'] = torch.ones(D)
sd['transformer.h.0.attn.c_attn.weight'] = torch.randn(D, 3 * D)
sd['transformer.h.0.attn.bias'] = torch.tril(torch.ones(1, 1, 16, 16, dtype=torch.uint8))
sd['lm_head.weight'] = wte
dump('gpt2_tied.bin', sd)

# GPT-2 base naming in float16.
dump('gpt2_base_f16.bin', collections.OrderedDict([('wte.weight', torch.randn(V, D).half()),
                                                    ('wpe.weight', torch.randn(16, D).half())]))

# Llama shape in bfloat16, untied (separate lm_head), with an int64 buffer.
dump('llama_bf16.bin', collections.OrderedDict([
    ('model.embed_tokens.weight', torch.randn(V, D).bfloat16()),
    ('model.layers.0.self_attn.q_proj.weight', torch.randn(D, D).bfloat16()),
    ('model.norm.weight', torch.ones(D).bfloat16()),
    ('lm_head.weight', torch.randn(V, D).bfloat16()),
    ('position_ids', torch.arange(16)),
]))

# A transposed view (non-contiguous), a view with a storage offset, float64.
big = torch.randn(100, D)
dump('views.bin', collections.OrderedDict([
    ('transposed', torch.randn(D, V).t()),
    ('offset_view', big[10:60]),
    ('other_view', big[60:70]),
    ('f64', torch.randn(V, D, dtype=torch.float64)),
]))

# Shapes with no bytes but a side beyond the table limits (2^20 values per row; 2^20 rows when a
# row has no values): nothing to check against the storage size, so only the limits stop them.
torch.save(collections.OrderedDict([('wide', torch.empty(0, 1048577)), ('tall', torch.empty(1048577, 0))]),
           os.path.join(out, 'empty_shapes.bin'))

# Legacy (pre-1.6) serialization.
torch.save({'w': torch.randn(2, 2)}, os.path.join(out, 'legacy.bin'), _use_new_zipfile_serialization=False)

# Compressed copy and truncated copy of a real checkpoint; one with a storage entry removed.
src = os.path.join(out, 'gpt2_base_f16.bin')
with zipfile.ZipFile(src) as z:
    entries = [(i.filename, z.read(i.filename)) for i in z.infolist()]
with zipfile.ZipFile(os.path.join(out, 'deflated.bin'), 'w', zipfile.ZIP_DEFLATED) as z:
    for n, b in entries:
        z.writestr(n, b)
with zipfile.ZipFile(os.path.join(out, 'missing_storage.bin'), 'w', zipfile.ZIP_STORED) as z:
    for n, b in entries:
        if not n.endswith('/data/0'):
            z.writestr(n, b)
raw = open(src, 'rb').read()
open(os.path.join(out, 'truncated.bin'), 'wb').write(raw[: len(raw) // 2])

# Hand-assembled pickles (protocol 2 opcodes as torch writes them) in stored zips.
def U(s):
    b = s.encode()
    return b'X' + struct.pack('<I', len(b)) + b
def I(n):
    return b'J' + struct.pack('<i', n)
def tup(xs):
    return b'(' + b''.join(I(x) for x in xs) + b't'
def state_dict_pkl(numel, offset, size, stride, storage=b'FloatStorage', key='0'):
    return (b'\x80\x02ccollections\nOrderedDict\nq\x00)Rq\x01(' + U('w') +
            b'ctorch._utils\n_rebuild_tensor_v2\nq\x02((' + U('storage') + b'ctorch\n' + storage +
            b'\nq\x03' + U(key) + U('cpu') + I(numel) + b'tq\x04Q' + I(offset) + tup(size) +
            tup(stride) + b'\x89h\x00)Rq\x05tq\x06Rq\x07u.')
def archive(name, pkl, storages):
    with zipfile.ZipFile(os.path.join(out, name), 'w', zipfile.ZIP_STORED) as z:
        z.writestr('archive/data.pkl', pkl)
        for k, b in storages.items():
            z.writestr('archive/data/' + k, b)
        z.writestr('archive/version', '3\n')
data12 = np.arange(12, dtype=np.float32).tobytes()
archive('hand_ok.bin', state_dict_pkl(12, 2, [2, 5], [5, 1]), {'0': data12})
archive('offset_beyond.bin', state_dict_pkl(12, 12, [1, 1], [1, 1]), {'0': data12})
archive('shape_beyond.bin', state_dict_pkl(12, 0, [3, 5], [5, 1]), {'0': data12})
archive('numel_beyond_entry.bin', state_dict_pkl(13, 0, [2, 5], [5, 1]), {'0': data12})
archive('key_missing.bin', state_dict_pkl(12, 0, [2, 5], [5, 1], key='7'), {'0': data12})

class Evil:
    def __reduce__(self):
        return (os.system, ('echo pwned',))
archive('os_system.bin', pickle.dumps({'w': Evil()}, protocol=2), {})
archive('unknown_opcode.bin', b'\x80\x02}q\x00(' + U('w') + b'I1\nu.', {})
archive('foreign_reduce.bin', b'\x80\x02cbuiltins\neval\n(' + U('1') + b'tR.', {})
archive('bad_storage_type.bin', state_dict_pkl(12, 0, [2, 5], [5, 1], storage=b'ComplexFloatStorage'), {'0': data12})
archive('truncated_pickle.bin', state_dict_pkl(12, 0, [2, 5], [5, 1])[:-9], {'0': data12})
)PY";

std::vector<float> read_f32(const std::string& path) {
  std::string b = test::read_file(path);
  std::vector<float> v(b.size() / 4);
  std::memcpy(v.data(), b.data(), v.size() * 4);
  return v;
}

class TorchFiles : public ::testing::Test {
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
  // Loads `tensor` from `name` and compares it with torch.load's values.
  static void expect_like_torch(const std::string& name, const std::string& tensor) {
    TorchCheckpoint c = TorchCheckpoint::open(file(name));
    LoadedEmbeddings e = c.load_matrix(tensor);
    std::vector<float> want = read_f32(file(name + "." + tensor + ".f32"));
    ASSERT_EQ(e.table.n_rows() * e.table.dim(), want.size()) << tensor;
    for (size_t r = 0; r < e.table.n_rows(); ++r)
      ASSERT_EQ(e.table.row(r), std::vector<float>(want.begin() + long(r * e.table.dim()),
                                                   want.begin() + long((r + 1) * e.table.dim())))
          << tensor << " row " << r;
  }
  static TempDir* dir_;
};
TempDir* TorchFiles::dir_ = nullptr;

void expect_error(const std::string& path, ErrorCode code, std::vector<std::string> fragments) {
  try {
    TorchCheckpoint::open(path);
    ADD_FAILURE() << path << " accepted";
  } catch (const Error& e) {
    EXPECT_EQ(error_code_name(e.code()), error_code_name(code)) << e.what();
    std::string m = e.what();
    EXPECT_EQ(m.rfind(path, 0), 0u) << m;  // names the file
    for (const auto& f : fragments)
      EXPECT_NE(m.find(f), std::string::npos) << "'" << f << "' not in: " << m;
  }
}

TEST_F(TorchFiles, ReadsGpt2StateDictLikeTorch) {
  TorchCheckpoint c = TorchCheckpoint::open(file("gpt2_tied.bin"));
  ASSERT_EQ(c.tensors().size(), 6u);
  const TorchTensorInfo* wte = c.find("transformer.wte.weight");
  ASSERT_NE(wte, nullptr);
  EXPECT_EQ(wte->shape, (std::vector<uint64_t>{50, 8}));
  EXPECT_EQ(wte->dtype, "F32");
  EXPECT_EQ(c.find("transformer.h.0.attn.bias")->dtype, "U8");
  expect_like_torch("gpt2_tied.bin", "transformer.wte.weight");
  expect_like_torch("gpt2_tied.bin", "transformer.h.0.attn.c_attn.weight");
  // torch aligns entries to 64 bytes: the matrix is a view of the mapped file.
  EXPECT_TRUE(c.load_matrix("transformer.wte.weight").table.zero_copy());
}

TEST_F(TorchFiles, RecognisesSharedStorageAsTied) {
  TorchCheckpoint c = TorchCheckpoint::open(file("gpt2_tied.bin"));
  EXPECT_TRUE(c.same_storage(*c.find("transformer.wte.weight"), *c.find("lm_head.weight")));
  EXPECT_FALSE(
      c.same_storage(*c.find("transformer.wte.weight"), *c.find("transformer.wpe.weight")));
  Model m = load_model(file("gpt2_tied.bin"));
  EXPECT_EQ(m.tensor, "transformer.wte.weight");
  EXPECT_EQ(m.tied, std::optional<bool>(true));
  EXPECT_NE(m.tensor_reason.find("GPT-2"), std::string::npos) << m.tensor_reason;
}

TEST_F(TorchFiles, ReadsFloat16BaseModel) {
  expect_like_torch("gpt2_base_f16.bin", "wte.weight");
  Model m = load_model(file("gpt2_base_f16.bin"));
  EXPECT_EQ(m.tensor, "wte.weight");
  EXPECT_EQ(m.emb.table.dtype(), DType::kF16);
  EXPECT_EQ(m.tied, std::optional<bool>(true));  // no lm_head at all
}

TEST_F(TorchFiles, ReadsBfloat16LlamaUntied) {
  expect_like_torch("llama_bf16.bin", "model.embed_tokens.weight");
  expect_like_torch("llama_bf16.bin", "lm_head.weight");
  Model m = load_model(file("llama_bf16.bin"));
  EXPECT_EQ(m.tensor, "model.embed_tokens.weight");
  EXPECT_EQ(m.emb.table.dtype(), DType::kBF16);
  EXPECT_EQ(m.tied, std::optional<bool>(false));
  ModelOptions o;
  o.matrix = MatrixKind::kOutput;
  EXPECT_EQ(load_model(file("llama_bf16.bin"), o).tensor, "lm_head.weight");
}

TEST_F(TorchFiles, HonoursStridesAndStorageOffsets) {
  expect_like_torch("views.bin", "transposed");
  expect_like_torch("views.bin", "offset_view");
  expect_like_torch("views.bin", "other_view");
  expect_like_torch("views.bin", "f64");
  TorchCheckpoint c = TorchCheckpoint::open(file("views.bin"));
  EXPECT_FALSE(c.find("transposed")->contiguous);
  EXPECT_FALSE(c.load_matrix("transposed").table.zero_copy());
  EXPECT_EQ(c.find("offset_view")->storage_offset, 80u);
  // Two views of one storage at different offsets share a key but are not the same tensor.
  EXPECT_EQ(c.find("offset_view")->storage_key, c.find("other_view")->storage_key);
  EXPECT_FALSE(c.same_storage(*c.find("offset_view"), *c.find("other_view")));
}

TEST_F(TorchFiles, ReadsHandAssembledPickle) {
  TorchCheckpoint c = TorchCheckpoint::open(file("hand_ok.bin"));
  LoadedEmbeddings e = c.load_matrix("w");
  EXPECT_EQ(e.table.row(1), (std::vector<float>{7, 8, 9, 10, 11}));
}

TEST_F(TorchFiles, RejectsEmptyMatricesBeyondTheShapeLimits) {
  TorchCheckpoint c = TorchCheckpoint::open(file("empty_shapes.bin"));
  const std::pair<const char*, const char*> cases[] = {
      {"wide", "tensor 'wide': rows of 1048577 values exceed the limit of 1048576 per row"},
      {"tall",
       "tensor 'tall': 1048577 rows exceed the limit of 1048576 for a matrix with no columns"}};
  for (const auto& [tensor, message] : cases) {
    try {
      c.load_matrix(tensor);
      ADD_FAILURE() << tensor << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
      const std::string m = e.what();
      EXPECT_EQ(m.rfind(file("empty_shapes.bin"), 0), 0u) << m;
      EXPECT_NE(m.find(message), std::string::npos) << m;
    }
  }
}

TEST_F(TorchFiles, RejectsLegacyFormatWithHowToConvert) {
  expect_error(file("legacy.bin"), ErrorCode::kUnsupported, {"legacy", "torch.save(torch.load("});
}
TEST_F(TorchFiles, RejectsForeignGlobalOsSystem) {
  expect_error(file("os_system.bin"), ErrorCode::kUnsupported,
               {"global 'posix.system' is not allowed", "byte offset"});
}
TEST_F(TorchFiles, RejectsForeignReduce) {
  expect_error(file("foreign_reduce.bin"), ErrorCode::kUnsupported,
               {"global 'builtins.eval' is not allowed"});
}
TEST_F(TorchFiles, RejectsUnknownOpcode) {
  expect_error(file("unknown_opcode.bin"), ErrorCode::kUnsupported,
               {"opcode 0x49 ('I') is not allowed", "byte offset 12"});
}
TEST_F(TorchFiles, RejectsUnknownStorageType) {
  expect_error(file("bad_storage_type.bin"), ErrorCode::kUnsupported,
               {"global 'torch.ComplexFloatStorage'"});
}
TEST_F(TorchFiles, RejectsMissingStorageKey) {
  expect_error(file("key_missing.bin"), ErrorCode::kCorrupt,
               {"storage key '7'", "no entry 'archive/data/7'"});
  expect_error(file("missing_storage.bin"), ErrorCode::kCorrupt, {"storage key '0'"});
}
TEST_F(TorchFiles, RejectsOffsetBeyondStorage) {
  expect_error(file("offset_beyond.bin"), ErrorCode::kCorrupt,
               {"tensor 'w' (offset 12", "beyond its storage of 12 elements"});
}
TEST_F(TorchFiles, RejectsShapeBeyondStorage) {
  expect_error(file("shape_beyond.bin"), ErrorCode::kCorrupt,
               {"shape [3, 5]", "beyond its storage of 12 elements"});
}
TEST_F(TorchFiles, RejectsStorageLargerThanItsEntry) {
  expect_error(file("numel_beyond_entry.bin"), ErrorCode::kCorrupt,
               {"13 x 4-byte elements but its entry holds 48 bytes"});
}
TEST_F(TorchFiles, RejectsCompressedEntry) {
  expect_error(file("deflated.bin"), ErrorCode::kUnsupported, {"is compressed (method 8)"});
}
TEST_F(TorchFiles, RejectsTruncatedZip) {
  expect_error(file("truncated.bin"), ErrorCode::kCorrupt,
               {"end-of-central-directory record not found"});
}
TEST_F(TorchFiles, RejectsTruncatedPickle) {
  expect_error(file("truncated_pickle.bin"), ErrorCode::kCorrupt, {"pickle"});
}

// In-memory pickles: structure errors without a zip around them.
PickleRef unpickle(const std::string& s) {
  return unpickle_torch({reinterpret_cast<const std::byte*>(s.data()), s.size()}, "p");
}
void expect_pickle_error(const std::string& s, ErrorCode code, const std::string& fragment) {
  try {
    unpickle(s);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(error_code_name(e.code()), error_code_name(code)) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(RestrictedUnpickler, RejectsStackUnderflow) {
  expect_pickle_error("\x80\x02u.", ErrorCode::kCorrupt, "no MARK");
}
TEST(RestrictedUnpickler, RejectsUndefinedMemoKey) {
  expect_pickle_error("\x80\x02h\x05.", ErrorCode::kCorrupt, "memo key 5 not defined");
}
TEST(RestrictedUnpickler, RejectsDeepNesting) {
  std::string s = "\x80\x02";
  for (int k = 0; k < 200; ++k) s += ']';
  for (int k = 0; k < 199; ++k) s += 'a';
  expect_pickle_error(s + ".", ErrorCode::kCorrupt, "nesting deeper than 100");
}
TEST(RestrictedUnpickler, RejectsReferenceCycle) {
  using namespace std::string_literals;
  expect_pickle_error(
      "\x80\x02]q\x00h\x00"
      "a."s,
      ErrorCode::kCorrupt, "reference cycle");
}
TEST(RestrictedUnpickler, RejectsMissingStop) {
  expect_pickle_error("\x80\x02}", ErrorCode::kCorrupt, "truncated opcode");
}

}  // namespace
}  // namespace embedscope
