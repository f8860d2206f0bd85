// load_model on Hugging Face folder layouts generated at test time: config.json +
// model.safetensors (written by a Python writer following the safetensors spec, since Debian has
// no python3-safetensors), pytorch_model.bin (torch.save), sharded indexes, tokenizer files, and a
// hub-cache folder with blobs/ + snapshots/<rev>/ symlinks + refs/main like huggingface_hub's.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>

#include "embedscope/core/error.h"
#include "embedscope/formats/hf_hub.h"
#include "embedscope/formats/model.h"
#include "test_util.h"

namespace embedscope {
namespace {

using test::TempDir;

constexpr const char* kGenerator = R"PY(
import collections, hashlib, json, os, shutil, struct, sys
import numpy as np
import torch

root = sys.argv[1]
rng = np.random.default_rng(7)

def write_st(path, tensors):
    header, off, blobs = {}, 0, []
    for name, (dt, a) in tensors.items():
        a = np.ascontiguousarray(a)
        header[name] = {'dtype': dt, 'shape': list(a.shape), 'data_offsets': [off, off + a.nbytes]}
        off += a.nbytes
        blobs.append(a.tobytes())
    h = json.dumps(header).encode()
    h += b' ' * ((8 - len(h) % 8) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(h)) + h + b''.join(blobs))

def bytes_to_unicode():  # openai/gpt-2 encoder.py
    bs = list(range(ord('!'), ord('~') + 1)) + list(range(ord('\xa1'), ord('\xac') + 1)) + list(range(ord('\xae'), ord('\xff') + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b); cs.append(256 + n); n += 1
    return dict(zip(bs, [chr(c) for c in cs]))
B2U = bytes_to_unicode()
def bl(s):
    return ''.join(B2U[b] for b in s.encode('utf-8'))

def mkdir(p):
    os.makedirs(p, exist_ok=True)
    return p

# --- GPT-2 folder: 40 rows, vocab.json of 40 byte-level tokens -------------------------------
V, D = 40, 6
words = ['!', ' the', ' cat', '\n', 'caf\u00e9', ' \u00e9t\u00e9'] + ['tok%d' % i for i in range(V - 7)] + ['<|endoftext|>']
wte = rng.standard_normal((V, D)).astype(np.float32)
wpe = rng.standard_normal((8, D)).astype(np.float32)
g = mkdir(os.path.join(root, 'gpt2'))
json.dump({'model_type': 'gpt2', 'architectures': ['GPT2LMHeadModel'], 'n_embd': D, 'vocab_size': V,
           'initializer_range': 0.03}, open(os.path.join(g, 'config.json'), 'w'))
json.dump({bl(w): i for i, w in enumerate(words)}, open(os.path.join(g, 'vocab.json'), 'w'))
open(os.path.join(g, 'merges.txt'), 'w').write('#version: 0.2\n' + bl(' t') + ' h\n')
write_st(os.path.join(g, 'model.safetensors'), {'transformer.wpe.weight': ('F32', wpe), 'transformer.wte.weight': ('F32', wte),
                                                'transformer.h.0.ln_1.weight': ('F32', np.ones(D, np.float32))})
wte.tofile(os.path.join(root, 'gpt2.wte.f32'))

# same model as pytorch_model.bin with the tied lm_head (shared storage), as older transformers saved it
gb = mkdir(os.path.join(root, 'gpt2_bin'))
for f in ['config.json', 'vocab.json', 'merges.txt']:
    shutil.copy(os.path.join(g, f), gb)
t = torch.from_numpy(wte.copy())
torch.save(collections.OrderedDict([('transformer.wte.weight', t), ('transformer.wpe.weight', torch.from_numpy(wpe)),
                                    ('lm_head.weight', t)]), os.path.join(gb, 'pytorch_model.bin'))

# --- Llama folder: untied, padded (48 rows, 45 tokens), tokenizer.json only, bf16 ------------
LV, LR = 45, 48
emb = rng.standard_normal((LR, D)).astype(np.float32)
head = rng.standard_normal((LR, D)).astype(np.float32)
bf = lambda a: (a.view(np.uint32) >> 16).astype(np.uint16)
l = mkdir(os.path.join(root, 'llama'))
json.dump({'model_type': 'llama', 'architectures': ['LlamaForCausalLM'], 'tie_word_embeddings': False,
           'initializer_range': 0.02, 'vocab_size': LR}, open(os.path.join(l, 'config.json'), 'w'))
vocab = {'<unk>': 0, '<s>': 1, '</s>': 2}
for i in range(3, LV):
    vocab['\u2581w%d' % i] = i
json.dump({'version': '1.0', 'model': {'type': 'BPE', 'vocab': vocab, 'merges': []},
           'added_tokens': [{'id': 1, 'content': '<s>', 'special': True}],
           'decoder': {'type': 'Sequence', 'decoders': [{'type': 'ByteFallback'}]}},
          open(os.path.join(l, 'tokenizer.json'), 'w'))
# sharded: embed_tokens in shard 1, lm_head in shard 2
write_st(os.path.join(l, 'model-00001-of-00002.safetensors'), {'model.embed_tokens.weight': ('BF16', bf(emb)),
                                                                'model.norm.weight': ('BF16', bf(np.ones(D, np.float32)))})
write_st(os.path.join(l, 'model-00002-of-00002.safetensors'), {'lm_head.weight': ('BF16', bf(head))})
json.dump({'metadata': {'total_size': 0}, 'weight_map': {'model.embed_tokens.weight': 'model-00001-of-00002.safetensors',
           'model.norm.weight': 'model-00001-of-00002.safetensors', 'lm_head.weight': 'model-00002-of-00002.safetensors'}},
          open(os.path.join(l, 'model.safetensors.index.json'), 'w'))
((bf(emb).astype(np.uint32) << 16).view(np.float32)).tofile(os.path.join(root, 'llama.emb.f32'))
((bf(head).astype(np.uint32) << 16).view(np.float32)).tofile(os.path.join(root, 'llama.head.f32'))

# sharded pytorch_model.bin index
ps = mkdir(os.path.join(root, 'gpt2_bin_sharded'))
shutil.copy(os.path.join(g, 'config.json'), ps)
torch.save({'transformer.wpe.weight': torch.from_numpy(wpe)}, os.path.join(ps, 'pytorch_model-00001-of-00002.bin'))
torch.save({'transformer.wte.weight': torch.from_numpy(wte)}, os.path.join(ps, 'pytorch_model-00002-of-00002.bin'))
json.dump({'weight_map': {'transformer.wpe.weight': 'pytorch_model-00001-of-00002.bin',
                          'transformer.wte.weight': 'pytorch_model-00002-of-00002.bin'}},
          open(os.path.join(ps, 'pytorch_model.bin.index.json'), 'w'))

# --- BERT / T5 / OPT naming, and a bad index ---------------------------------------------------
b = mkdir(os.path.join(root, 'bert'))
json.dump({'model_type': 'bert'}, open(os.path.join(b, 'config.json'), 'w'))
open(os.path.join(b, 'vocab.txt'), 'w').write('\n'.join(['[PAD]', '[UNK]', 'the', '##s']) + '\n')
write_st(os.path.join(b, 'model.safetensors'), {'bert.embeddings.position_embeddings.weight': ('F32', np.zeros((3, D), np.float32)),
                                                'bert.embeddings.word_embeddings.weight': ('F32', np.ones((4, D), np.float32))})
for name, tensors in [('t5.safetensors', {'shared.weight': np.ones((5, D), np.float32), 'encoder.final_layer_norm.weight': np.ones(D, np.float32)}),
                      ('opt.safetensors', {'model.decoder.embed_positions.weight': np.ones((9, D), np.float32), 'model.decoder.embed_tokens.weight': np.ones((7, D), np.float32)}),
                      ('ambiguous.safetensors', {'a': np.ones((2, D), np.float32), 'b': np.ones((3, D), np.float32)})]:
    write_st(os.path.join(root, name), {k: ('F32', v) for k, v in tensors.items()})
bad = mkdir(os.path.join(root, 'bad_index'))
json.dump({'weight_map': {'transformer.wte.weight': '../../etc/passwd'}}, open(os.path.join(bad, 'model.safetensors.index.json'), 'w'))

# --- hub cache: models--openai-community--gpt2 with blobs, symlinked snapshots, refs/main -----
hub = mkdir(os.path.join(root, 'hub'))
repo = mkdir(os.path.join(hub, 'models--openai-community--gpt2'))
blobs = mkdir(os.path.join(repo, 'blobs'))
mkdir(os.path.join(repo, 'refs'))
rev_old, rev_new = 'a' * 40, 'b' * 40
for rev, src in [(rev_old, os.path.join(root, 'gpt2_bin')), (rev_new, g)]:
    snap = mkdir(os.path.join(repo, 'snapshots', rev))
    for f in sorted(os.listdir(src)):
        data = open(os.path.join(src, f), 'rb').read()
        sha = hashlib.sha256(data).hexdigest()
        open(os.path.join(blobs, sha), 'wb').write(data)
        os.symlink(os.path.join('..', '..', 'blobs', sha), os.path.join(snap, f))
# the older snapshot is touched last so that "newest" alone would pick it: refs/main must win
os.utime(os.path.join(repo, 'snapshots', rev_old))
open(os.path.join(repo, 'refs', 'main'), 'w').write(rev_new)
)PY";

std::vector<float> read_f32(const std::string& path) {
  std::string b = test::read_file(path);
  std::vector<float> v(b.size() / 4);
  std::memcpy(v.data(), b.data(), v.size() * 4);
  return v;
}

void expect_rows(const EmbeddingTable& t, const std::vector<float>& want) {
  ASSERT_EQ(t.n_rows() * t.dim(), want.size());
  for (size_t r = 0; r < t.n_rows(); ++r)
    ASSERT_EQ(t.row(r), std::vector<float>(want.begin() + long(r * t.dim()),
                                           want.begin() + long((r + 1) * t.dim())))
        << "row " << r;
}

class HfFolders : public ::testing::Test {
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
TempDir* HfFolders::dir_ = nullptr;

TEST_F(HfFolders, LoadsGpt2SafetensorsFolder) {
  Model m = load_model(file("gpt2"));
  EXPECT_EQ(m.model_type, "gpt2");
  EXPECT_EQ(m.tensor, "transformer.wte.weight");
  EXPECT_NE(m.tensor_reason.find("config model_type 'gpt2'"), std::string::npos) << m.tensor_reason;
  EXPECT_EQ(m.dir, file("gpt2"));
  EXPECT_EQ(m.path, file("gpt2") + "/model.safetensors");
  EXPECT_EQ(m.emb.format, FileFormat::kSafetensors);
  expect_rows(m.emb.table, read_f32(file("gpt2.wte.f32")));
  EXPECT_EQ(m.tied, std::optional<bool>(true));  // GPT-2's config default
  EXPECT_EQ(m.init_hint, "normal:0.03");         // from config initializer_range
  EXPECT_EQ(m.n_search_rows, 40u);
  EXPECT_EQ(m.tokenizer_files, (std::vector<std::string>{"vocab.json", "merges.txt"}));
  // vocab.json's byte-level spelling decoded to raw bytes
  ASSERT_EQ(m.emb.vocab.size(), 40u);
  EXPECT_EQ(m.emb.vocab.token(1), " the");
  EXPECT_EQ(m.emb.vocab.token(3), "\n");
  EXPECT_EQ(m.emb.vocab.token(5), " \xc3\xa9t\xc3\xa9");
  EXPECT_EQ(m.emb.vocab.find("<|endoftext|>"), std::optional<TokenId>(39));
}

TEST_F(HfFolders, LoadsSameMatrixFromPytorchBinFolder) {
  Model m = load_model(file("gpt2_bin"));
  EXPECT_EQ(m.tensor, "transformer.wte.weight");
  EXPECT_EQ(m.emb.format, FileFormat::kPytorch);
  expect_rows(m.emb.table, read_f32(file("gpt2.wte.f32")));
  EXPECT_EQ(m.tied, std::optional<bool>(true));
  EXPECT_NE(m.tensor_reason.find("gpt2"), std::string::npos);
  ModelOptions o;
  o.matrix = MatrixKind::kOutput;
  Model out = load_model(file("gpt2_bin"), o);
  EXPECT_EQ(out.tensor, "transformer.wte.weight");  // tied: the output is the input
  EXPECT_NE(out.tensor_reason.find("lm_head.weight shares storage"), std::string::npos)
      << out.tensor_reason;
}

TEST_F(HfFolders, LoadsShardedPytorchIndex) {
  Model m = load_model(file("gpt2_bin_sharded"));
  EXPECT_EQ(m.path, file("gpt2_bin_sharded") + "/pytorch_model-00002-of-00002.bin");
  expect_rows(m.emb.table, read_f32(file("gpt2.wte.f32")));
}

TEST_F(HfFolders, LoadsShardedLlamaUntiedAndPadded) {
  Model m = load_model(file("llama"));
  EXPECT_EQ(m.tensor, "model.embed_tokens.weight");
  EXPECT_EQ(m.path, file("llama") + "/model-00001-of-00002.safetensors");
  EXPECT_EQ(m.emb.table.dtype(), DType::kBF16);
  expect_rows(m.emb.table, read_f32(file("llama.emb.f32")));
  EXPECT_EQ(m.tied, std::optional<bool>(false));
  EXPECT_EQ(m.emb.table.n_rows(), 48u);
  EXPECT_EQ(m.n_search_rows, 45u);  // rows beyond the tokenizer are padding
  ASSERT_EQ(m.emb.vocab.size(), 48u);
  EXPECT_EQ(m.emb.vocab.token(1), "<s>");
  EXPECT_EQ(m.emb.vocab.token(7), "\xe2\x96\x81w7");  // sentencepiece spelling kept
  EXPECT_EQ(m.tokenizer_files, (std::vector<std::string>{"tokenizer.json"}));

  ModelOptions o;
  o.matrix = MatrixKind::kOutput;
  Model out = load_model(file("llama"), o);
  EXPECT_EQ(out.tensor, "lm_head.weight");
  EXPECT_EQ(out.path, file("llama") + "/model-00002-of-00002.safetensors");
  expect_rows(out.emb.table, read_f32(file("llama.head.f32")));
}

TEST_F(HfFolders, TensorOverrideWinsAndUnknownTensorIsNotFound) {
  ModelOptions o;
  o.tensor = "transformer.wpe.weight";
  Model m = load_model(file("gpt2"), o);
  EXPECT_EQ(m.tensor, "transformer.wpe.weight");
  EXPECT_EQ(m.emb.table.n_rows(), 8u);
  o.tensor = "nope";
  try {
    load_model(file("gpt2"), o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("transformer.wte.weight"), std::string::npos) << e.what();
  }
}

TEST_F(HfFolders, DiscoversBertT5AndOptNames) {
  Model b = load_model(file("bert"));
  EXPECT_EQ(b.tensor, "bert.embeddings.word_embeddings.weight");
  EXPECT_EQ(b.emb.vocab.token(3), "##s");
  EXPECT_EQ(load_model(file("t5.safetensors")).tensor, "shared.weight");
  EXPECT_EQ(load_model(file("opt.safetensors")).tensor, "model.decoder.embed_tokens.weight");
}

TEST_F(HfFolders, AmbiguousFileAsksForTensor) {
  try {
    load_model(file("ambiguous.safetensors"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("pass --tensor NAME. Candidates: a, b"), std::string::npos)
        << e.what();
  }
}

TEST_F(HfFolders, RejectsIndexPointingOutsideTheFolder) {
  try {
    load_model(file("bad_index"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("'../../etc/passwd'"), std::string::npos) << e.what();
  }
}

TEST_F(HfFolders, ResolvesHubIdInCacheWithRefsMain) {
  ::setenv("HF_HUB_CACHE", file("hub").c_str(), 1);
  Model m = load_model("gpt2");  // legacy id -> openai-community/gpt2
  EXPECT_EQ(m.ref, "gpt2");
  EXPECT_EQ(m.dir,
            file("hub") + "/models--openai-community--gpt2/snapshots/" + std::string(40, 'b'));
  EXPECT_EQ(m.emb.format,
            FileFormat::kSafetensors);  // the refs/main snapshot, not the newer-touched one
  expect_rows(m.emb.table, read_f32(file("gpt2.wte.f32")));
  EXPECT_EQ(m.emb.vocab.token(1), " the");
  EXPECT_EQ(load_model("openai-community/gpt2").dir, m.dir);
  ::unsetenv("HF_HUB_CACHE");
}

TEST_F(HfFolders, MissingHubIdSaysWhereItLookedAndWhatToDownload) {
  ::setenv("HF_HUB_CACHE", file("hub").c_str(), 1);
  try {
    load_model("someorg/absent-model");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    std::string m = e.what();
    EXPECT_NE(m.find(file("hub") + "/models--someorg--absent-model"), std::string::npos) << m;
    EXPECT_NE(m.find("$HF_HUB_CACHE"), std::string::npos) << m;
    EXPECT_NE(m.find("huggingface-cli download someorg/absent-model"), std::string::npos) << m;
    EXPECT_NE(m.find("model.safetensors"), std::string::npos) << m;
  }
  ::unsetenv("HF_HUB_CACHE");
}

TEST(HfHub, CacheDirFollowsEnvironmentOrder) {
  ::setenv("HF_HUB_CACHE", "/x/cache", 1);
  ::setenv("HF_HOME", "/y/home", 1);
  EXPECT_EQ(hf_hub_cache_dir().path, "/x/cache");
  ::unsetenv("HF_HUB_CACHE");
  EXPECT_EQ(hf_hub_cache_dir().path, "/y/home/hub");
  ::unsetenv("HF_HOME");
  EXPECT_EQ(hf_hub_cache_dir().source, "~/.cache/huggingface/hub");
}

TEST(HfHub, RecognisesHubIds) {
  EXPECT_TRUE(looks_like_hub_id("gpt2"));
  EXPECT_TRUE(looks_like_hub_id("openai-community/gpt2"));
  EXPECT_FALSE(looks_like_hub_id("a/b/c"));
  EXPECT_FALSE(looks_like_hub_id("../x"));
  EXPECT_FALSE(looks_like_hub_id(""));
  EXPECT_EQ(hub_repo_candidates("gpt2"),
            (std::vector<std::string>{"gpt2", "openai-community/gpt2"}));
}

}  // namespace
}  // namespace embedscope
