// safetensors against independent Python code (Debian has no python3-safetensors): a writer
// built from struct + json with torch tensors (F32/F16/BF16/F64), a validating parser that
// follows the reference reader's rules, and a differential run of both readers over the whole
// handcrafted S-corpus (S28).
#include <gtest/gtest.h>

#include <sstream>

#include "embedscope/core/error.h"
#include "embedscope/formats/safetensors.h"
#include "formats/safetensors_cases.h"
#include "test_util.h"

namespace embedscope {
namespace {

using test::TempDir;

// The reference reader's rules, written independently in Python (safetensors/src/tensor.rs).
const char* kPyParser = R"PY(
import json, struct
BITS = {'BOOL': 8, 'U8': 8, 'I8': 8, 'F8_E5M2': 8, 'F8_E4M3': 8, 'F8_E8M0': 8,
        'F8_E4M3FNUZ': 8, 'F8_E5M2FNUZ': 8, 'F4': 4, 'F6_E2M3': 6, 'F6_E3M2': 6,
        'I16': 16, 'U16': 16, 'F16': 16, 'BF16': 16, 'I32': 32, 'U32': 32, 'F32': 32,
        'I64': 64, 'U64': 64, 'F64': 64, 'C64': 64}
def _no_dups(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError('duplicate key')
    return dict(pairs)
def _reject(x):
    raise ValueError('not an integer: %r' % x)
def _uint(v):
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**64
def parse(b):
    """Returns (metadata, [(name, dtype, shape, begin, end)] in offset order, data) or raises."""
    if len(b) < 8: raise ValueError('too small')
    n, = struct.unpack('<Q', b[:8])
    if n > 100_000_000: raise ValueError('header too large')
    if 8 + n > len(b): raise ValueError('header length')
    h = json.loads(b[8:8 + n].decode('utf-8'), object_pairs_hook=_no_dups,
                   parse_float=_reject, parse_constant=_reject)
    if not isinstance(h, dict): raise ValueError('not an object')
    meta = h.pop('__metadata__', None) or {}
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise ValueError('metadata')
    ts = []
    for name, info in h.items():
        name.encode('utf-8')  # lone surrogates raise
        if '\0' in name: raise ValueError('NUL in name')
        if not isinstance(info, dict): raise ValueError('entry')
        dt, shape, offs = info['dtype'], info['shape'], info['data_offsets']
        if dt not in BITS: raise ValueError('dtype')
        if not isinstance(shape, list) or not all(_uint(x) for x in shape): raise ValueError('shape')
        if not isinstance(offs, list) or len(offs) != 2 or not all(_uint(x) for x in offs):
            raise ValueError('offsets')
        ts.append((name, dt, shape, offs[0], offs[1]))
    ts.sort(key=lambda t: (t[3], t[4], t[0]))
    end = 0
    for name, dt, shape, b0, b1 in ts:
        if b0 != end or b1 < b0: raise ValueError('offset')
        numel = 1
        for x in shape:
            numel *= x
            if numel >= 2**64: raise ValueError('overflow')
        bits = numel * BITS[dt]
        if bits >= 2**64: raise ValueError('overflow')
        if bits % 8: raise ValueError('misaligned')
        if b1 - b0 != bits // 8: raise ValueError('size')
        end = b1
    if 8 + n + end != len(b): raise ValueError('incomplete buffer')
    return meta, ts, b[8 + n:]
)PY";

std::string canon(const SafetensorsFile& f) {
  std::string s;
  for (const auto& t : f.tensors()) {
    s += t.name + "|" + t.dtype + "|";
    for (size_t i = 0; i < t.shape.size(); ++i) s += (i ? "," : "") + std::to_string(t.shape[i]);
    s += "|" + std::to_string(t.begin) + "|" + std::to_string(t.end) + ";";
  }
  return s;
}

TEST(SafetensorsPython, ReaderAgreesWithPythonOnTheWholeCorpus) {  // S28
  TempDir d;
  std::vector<std::string> names;
  for (const auto& c : test::safetensors_bad_files()) {
    test::write_file(d.file(c.id), c.bytes);
    names.push_back(c.id);
  }
  for (const auto& c : test::safetensors_good_files()) {
    test::write_file(d.file(c.id), c.bytes);
    names.push_back(c.id);
  }
  auto r = test::run_python(std::string(kPyParser) + R"PY(
import sys, os
d = sys.argv[1]
for f in sorted(os.listdir(d)):
    try:
        meta, ts, _ = parse(open(os.path.join(d, f), 'rb').read())
        c = ''.join('%s|%s|%s|%d|%d;' % (n, dt, ','.join(map(str, sh)), b0, b1) for n, dt, sh, b0, b1 in ts)
        print(f + '\tOK\t' + c)
    except Exception as e:
        print(f + '\tREJECT\t' + type(e).__name__)
)PY",
                            {d.path()});
  std::istringstream lines(r.out);
  std::string line;
  size_t n_lines = 0, n_ok = 0;
  while (std::getline(lines, line)) {
    ++n_lines;
    std::string file = line.substr(0, line.find('\t'));
    std::string rest = line.substr(file.size() + 1);
    bool py_ok = rest.rfind("OK\t", 0) == 0;
    try {
      auto f = SafetensorsFile::open(d.file(file));
      EXPECT_TRUE(py_ok) << file << ": we accept, Python rejects (" << rest << ")";
      if (py_ok) EXPECT_EQ(canon(f), rest.substr(3)) << file;
      ++n_ok;
    } catch (const Error& e) {
      EXPECT_FALSE(py_ok) << file << ": we reject (" << e.what() << "), Python accepts";
    }
  }
  EXPECT_EQ(n_lines, names.size());
  EXPECT_EQ(n_ok, test::safetensors_good_files().size());
}

TEST(SafetensorsPython, ReadsTorchTensorsWrittenByPython) {
  TempDir d;
  auto r = test::run_python(R"PY(
import sys, json, struct, torch
out = sys.argv[1]
torch.manual_seed(1)
W = torch.randn(11, 6)
DT = {torch.float32: 'F32', torch.float16: 'F16', torch.bfloat16: 'BF16', torch.float64: 'F64',
      torch.int64: 'I64'}
def raw(t):
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    return t.numpy().tobytes()
def write(path, items, misalign):
    header = {'__metadata__': {'format': 'pt'}}
    data = b''
    for name, t in items:
        b = raw(t)
        header[name] = {'dtype': DT[t.dtype], 'shape': list(t.shape),
                        'data_offsets': [len(data), len(data) + len(b)]}
        data += b
    h = json.dumps(header).encode()
    h += b' ' * ((8 - len(h) % 8) % 8 + (1 if misalign else 0))
    open(path, 'wb').write(struct.pack('<Q', len(h)) + h + data)
variants = {'f32': W, 'f16': W.half(), 'bf16': W.bfloat16(), 'f64': W.double() * 1.1}
for key, t in variants.items():
    ids = torch.arange(5, dtype=torch.int64)
    for mis in (False, True):
        # the matrix comes after a 1-D tensor so its offset is not 0
        write('%s/%s%s.safetensors' % (out, key, '_unaligned' if mis else ''),
              [('ids', ids), ('wte', t)], mis)
    open('%s/%s.f32' % (out, key), 'wb').write(t.float().numpy().astype('<f4').tobytes())
    open('%s/%s.raw' % (out, key), 'wb').write(raw(t))
# No bytes, but one side beyond the table limits.
write(out + '/wide_empty.safetensors', [('wte', torch.empty(0, 1048577))], False)
write(out + '/tall_empty.safetensors', [('wte', torch.empty(1048577, 0))], False)
)PY",
                            {d.path()});
  ASSERT_EQ(r.rc, 0);
  for (const char* key : {"f32", "f16", "bf16", "f64"}) {
    for (bool unaligned : {false, true}) {
      std::string path =
          d.file(std::string(key) + (unaligned ? "_unaligned" : "") + ".safetensors");
      auto e = load_safetensors_embeddings(path, {});
      SCOPED_TRACE(path);
      EXPECT_EQ(e.tensor, "wte");
      EXPECT_EQ(e.table.n_rows(), 11u);
      EXPECT_EQ(e.table.dim(), 6u);
      EXPECT_EQ(e.metadata.at("format"), "pt");
      auto f32 = e.table.to_f32();
      EXPECT_EQ(std::string(reinterpret_cast<const char*>(f32.data()), f32.byte_size()),
                test::read_file(d.file(std::string(key) + ".f32")));
      if (std::string(key) != "f64") {
        EXPECT_EQ(e.table.zero_copy(), !unaligned);
        EXPECT_EQ(std::string(reinterpret_cast<const char*>(e.table.data()), e.table.byte_size()),
                  test::read_file(d.file(std::string(key) + ".raw")));
      }
    }
  }
  // The same writer's two tensors with no bytes but a side beyond the table limits (nothing to
  // check against the data size): refused, naming file, tensor, value and limit.
  const std::pair<const char*, const char*> limits[] = {
      {"wide_empty", "rows of 1048577 values exceed the limit of 1048576 per row"},
      {"tall_empty", "1048577 rows exceed the limit of 1048576 for a matrix with no columns"}};
  for (const auto& [name, message] : limits) {
    const std::string path = d.file(std::string(name) + ".safetensors");
    try {
      load_safetensors_embeddings(path, {});
      ADD_FAILURE() << path << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
      const std::string m = e.what();
      EXPECT_NE(m.find(path), std::string::npos) << m;
      EXPECT_NE(m.find("'wte'"), std::string::npos) << m;
      EXPECT_NE(m.find(message), std::string::npos) << m;
    }
  }
}

TEST(SafetensorsPython, PythonReadsWhatWeWrite) {
  TempDir d;
  std::vector<float> w(5 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(i) * -0.731f + 1.0f;
  Vocabulary v;
  for (std::string s :
       std::vector<std::string>{"the", "caf\xc3\xa9", "", std::string("\x00\xff", 2), " spaced "})
    v.add(s);
  v.set_counts({100, 7, 0, 1, 9});
  SaveOptions o;
  o.tensor = "wte";
  o.metadata["source"] = "embedscope-test";
  save_safetensors_embeddings(d.file("f32.safetensors"), EmbeddingTable::from_f32(5, 3, w), &v, o);
  std::vector<uint16_t> h(5 * 3);
  for (size_t i = 0; i < h.size(); ++i) h[i] = f32_to_bf16(w[i]);
  save_safetensors_embeddings(d.file("bf16.safetensors"),
                              EmbeddingTable::from_u16(5, 3, DType::kBF16, h), nullptr, {});
  test::write_file(d.file("w.f32"),
                   std::string(reinterpret_cast<const char*>(w.data()), w.size() * 4));
  test::write_file(d.file("h.bf16"),
                   std::string(reinterpret_cast<const char*>(h.data()), h.size() * 2));
  auto r = test::run_python(std::string(kPyParser) + R"PY(
import sys, numpy as np
d = sys.argv[1]
meta, ts, data = parse(open(d + '/f32.safetensors', 'rb').read())
assert meta == {'embedscope.version': '1', 'source': 'embedscope-test'}, meta
t = {n: (dt, sh, data[b0:b1]) for n, dt, sh, b0, b1 in ts}
assert t['wte'][:2] == ('F32', [5, 3]), t['wte'][:2]
assert t['wte'][2] == open(d + '/w.f32', 'rb').read()
vb = t['embedscope.vocab.bytes'][2]
off = np.frombuffer(t['embedscope.vocab.offsets'][2], '<i8')
print(' '.join(vb[off[i]:off[i + 1]].hex() or '-' for i in range(len(off) - 1)))
print(' '.join(map(str, np.frombuffer(t['embedscope.vocab.counts'][2], '<i8'))))
meta, ts, data = parse(open(d + '/bf16.safetensors', 'rb').read())
(n, dt, sh, b0, b1), = ts
assert (n, dt, sh) == ('embeddings', 'BF16', [5, 3]), (n, dt, sh)
got = np.frombuffer(data[b0:b1], '<u2')
# Oracle for round-to-nearest-even, from its definition: of the two bfloat16 neighbours of
# each float32, the nearer one (exact float64 distances), the even one on a tie.
w = np.frombuffer(open(d + '/w.f32', 'rb').read(), '<f4')
lo = (w.view('<u4') >> 16).astype(np.uint32)
for x, l, g in zip(w.astype(np.float64), lo, got):
    cands = [int(l), int(l) + 1]
    val = lambda c: np.array([c << 16], '<u4').view('<f4')[0].astype(np.float64)
    dist = [abs(val(c) - x) for c in cands]
    best = cands[0] if dist[0] < dist[1] else cands[1] if dist[1] < dist[0] else [c for c in cands if c % 2 == 0][0]
    assert int(g) == best, (x, int(g), best)
print('ok')
)PY",
                            {d.path()});
  EXPECT_EQ(r.out, "746865 636166c3a9 - 00ff 2073706163656420\n100 7 0 1 9\nok\n");
}

}  // namespace
}  // namespace embedscope
