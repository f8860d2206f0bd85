// word2vec readers and writers against the real tools, with files generated at test time by
// /usr/bin/python3 (Debian gensim, torch, numpy) and the Debian `fasttext` CLI:
//  - gensim Word2Vec trained on a small corpus, saved with save_word2vec_format (text, binary);
//  - gensim KeyedVectors with non-ASCII keys and values across 40 decades;
//  - a fastText .vec trained by `fasttext skipgram`;
//  - torch tensors written as word2vec text by a script (repr and %.9g);
//  - a header-less GloVe file with 840B-style words, and words with invalid UTF-8.
// "Equal" means: same words in the same order and float32 values equal bit for bit to what
// gensim's load_word2vec_format (or torch / numpy) holds for the same file. Then gensim reads
// the files our writers produce and must hold exactly our values.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "test_util.h"
#include "word2vec_test_helpers.h"

namespace embedscope::test {
namespace {

// Writes every fixture into argv[1] and dumps what the reference reader holds for each as
// <name>.words (UTF-8, one per line) and <name>.f32 (little-endian float32, row-major).
constexpr const char* kMakeFixtures = R"PY(
import os, subprocess, sys
import numpy as np
import torch
from gensim.models import KeyedVectors, Word2Vec

out = sys.argv[1]
P = lambda n: os.path.join(out, n)
rng = np.random.default_rng(0)

def dump(name, words, vectors):
    with open(P(name + '.words'), 'wb') as f:
        f.write(b''.join(w.encode('utf8') + b'\n' for w in words))
    with open(P(name + '.f32'), 'wb') as f:
        f.write(np.ascontiguousarray(vectors, dtype='<f4').tobytes())

def dump_gensim(name, path, binary, **kw):
    kv = KeyedVectors.load_word2vec_format(path, binary=binary, **kw)
    dump(name, kv.index_to_key, kv.vectors)

# 1. gensim Word2Vec trained on a small corpus.
vocab = ['w%d' % i for i in range(150)] + ['caf\u00e9', '\u65e5\u672c', 'na\u00efve']
sentences = [[vocab[j] for j in rng.integers(0, len(vocab), 12)] for _ in range(300)]
model = Word2Vec(sentences, vector_size=16, min_count=1, workers=1, seed=1, epochs=2)
model.wv.save_word2vec_format(P('trained.txt'), binary=False)
model.wv.save_word2vec_format(P('trained.bin'), binary=True)
dump_gensim('trained_txt', P('trained.txt'), False)
dump_gensim('trained_bin', P('trained.bin'), True)

# 2. Random vectors over 40 decades with non-ASCII keys, a TAB and an NBSP inside words.
keys = ['caf\u00e9', '\u65e5\u672c\u8a9e', '\U0001F600', '\u03a9mega', 'x\ty', 'nb\u00a0sp']
keys += ['k%d' % i for i in range(60)]
scale = 10.0 ** rng.integers(-20, 20, (len(keys), 1))
kv = KeyedVectors(vector_size=7)
kv.add_vectors(keys, (rng.standard_normal((len(keys), 7)) * scale).astype(np.float32))
kv.save_word2vec_format(P('unicode.txt'), binary=False)
kv.save_word2vec_format(P('unicode.bin'), binary=True)
dump_gensim('unicode_txt', P('unicode.txt'), False)
dump_gensim('unicode_bin', P('unicode.bin'), True)

# 3. fastText skipgram on a few KB of text.
words = ['the', 'cat', 'sat', 'on', 'mat', 'dog', 'ran', 'caf\u00e9', '\u65e5\u672c', 'of']
with open(P('small.txt'), 'w', encoding='utf8') as f:
    for _ in range(300):
        f.write(' '.join(words[j] for j in rng.integers(0, len(words), 12)) + '\n')
subprocess.run(['fasttext', 'skipgram', '-input', P('small.txt'), '-output', P('m'), '-dim', '10',
                '-epoch', '1', '-minCount', '1', '-thread', '1', '-bucket', '1000'],
               check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
dump_gensim('fasttext', P('m.vec'), False)

# 4. torch tensors written as word2vec text by a script: Python float repr (17 digits) and %.9g.
torch.manual_seed(0)
W = torch.randn(40, 12) * torch.logspace(-30, 30, 40).unsqueeze(1)
names = ['t%d' % i for i in range(40)]
for fname, fmt in [('torch_repr.txt', repr), ('torch_9g.txt', lambda x: '%.9g' % x)]:
    with open(P(fname), 'w') as f:
        f.write('%d %d\n' % tuple(W.shape))
        for w, row in zip(names, W.tolist()):
            f.write(w + ' ' + ' '.join(fmt(x) for x in row) + '\n')
dump('torch', names, W.numpy())

# 5. Header-less GloVe with 840B-style words (internal spaces, numeric words).
glove_words = ['. . .', 'at name@domain.com', '1999', 'plain', '- -']
G = (rng.standard_normal((len(glove_words), 5)) * 3).astype(np.float32)
with open(P('glove.txt'), 'w') as f:
    for w, row in zip(glove_words, G):
        f.write(w + ' ' + ' '.join(repr(x) for x in row) + '\n')
dump('glove', glove_words, np.array([[np.float32(s) for s in
     line.rstrip('\n').split(' ')[-5:]] for line in open(P('glove.txt'))]))

# 6. Invalid UTF-8 words, decoded by gensim with unicode_errors='replace'.
bad = [b'caf\xe9', b'ab\xe6\x97', b'\xed\xa0\x80x', b'\xf0\x9f\x98', b'\xc0\xaf',
       b'\xf4\x90\x80\x80', b'ok\xe2\x82\xacok', b'\xe2\x82\xe2\x82\xac', b'\xffz']
with open(P('badutf8.txt'), 'wb') as f:
    f.write(b'%d 2\n' % len(bad))
    for i, w in enumerate(bad):
        f.write(w + b' %d.5 -%d\n' % (i, i))
dump_gensim('badutf8', P('badutf8.txt'), False, unicode_errors='replace')
)PY";

// Reads what gensim holds for our files (argv[1] = folder, names in argv[2:]).
constexpr const char* kGensimReadsOurs = R"PY(
import os, sys
import numpy as np
from gensim.models import KeyedVectors
out = sys.argv[1]
for name in sys.argv[2:]:
    kv = KeyedVectors.load_word2vec_format(os.path.join(out, name), binary=name.endswith('.bin'))
    with open(os.path.join(out, name + '.words'), 'wb') as f:
        f.write(b''.join(w.encode('utf8') + b'\n' for w in kv.index_to_key))
    with open(os.path.join(out, name + '.f32'), 'wb') as f:
        f.write(np.ascontiguousarray(kv.vectors, dtype='<f4').tobytes())
)PY";

struct Fixtures {
  TempDir dir;
  CommandResult made;
  Fixtures() {
    write_file(dir.file("make.py"), kMakeFixtures);
    made =
        run("/usr/bin/python3 " + shell_quote(dir.file("make.py")) + " " + shell_quote(dir.path()));
  }
};

// Generated once for the whole suite: the interpreter start-up with torch and gensim costs
// seconds.
const Fixtures& fixtures() {
  static Fixtures f;
  return f;
}

#define REQUIRE_FIXTURES()                                                            \
  const Fixtures& fx = fixtures();                                                    \
  ASSERT_EQ(fx.made.rc, 0) << "fixture script failed (python3-gensim, python3-torch " \
                              "and fasttext are installed by scripts/setup.sh):\n"    \
                           << fx.made.err

// Our load of `file` equals the reference dump `name` (.words + .f32).
void expect_same_as_reference(const LoadedEmbeddings& e, const TempDir& dir,
                              const std::string& name) {
  std::vector<std::string> words = split_lines(read_file(dir.file(name + ".words")));
  ASSERT_GT(words.size(), 0u);
  EXPECT_EQ(e.vocab.tokens(), words);
  expect_table_bits(e.table, read_file(dir.file(name + ".f32")));
}

TEST(Word2VecTools, ReadsGensimTrainedTextExactly) {
  REQUIRE_FIXTURES();
  LoadedEmbeddings e = load_text(fx.dir.file("trained.txt"));
  EXPECT_EQ(e.format, FileFormat::kWord2VecText);
  EXPECT_EQ(e.table.n_rows(), 153u);
  EXPECT_EQ(e.table.dim(), 16u);
  expect_same_as_reference(e, fx.dir, "trained_txt");
}

TEST(Word2VecTools, ReadsGensimTrainedBinaryExactly) {
  REQUIRE_FIXTURES();
  LoadedEmbeddings e = load_bin(fx.dir.file("trained.bin"));
  EXPECT_EQ(e.format, FileFormat::kWord2VecBinary);
  expect_same_as_reference(e, fx.dir, "trained_bin");
}

TEST(Word2VecTools, ReadsGensimUnicodeKeysAndWideRangeText) {
  REQUIRE_FIXTURES();
  expect_same_as_reference(load_text(fx.dir.file("unicode.txt"), true), fx.dir, "unicode_txt");
}

TEST(Word2VecTools, ReadsGensimUnicodeKeysAndWideRangeBinary) {
  REQUIRE_FIXTURES();
  expect_same_as_reference(load_bin(fx.dir.file("unicode.bin"), true), fx.dir, "unicode_bin");
}

TEST(Word2VecTools, ReadsFastTextVecLikeGensim) {
  REQUIRE_FIXTURES();
  LoadedEmbeddings e = load_text(fx.dir.file("m.vec"));
  EXPECT_EQ(e.table.dim(), 10u);
  EXPECT_TRUE(e.vocab.find("</s>").has_value());
  EXPECT_TRUE(e.vocab.find("caf\xc3\xa9").has_value());
  expect_same_as_reference(e, fx.dir, "fasttext");
}

TEST(Word2VecTools, ReadsTorchTensorWrittenAsReprText) {
  REQUIRE_FIXTURES();
  expect_same_as_reference(load_text(fx.dir.file("torch_repr.txt")), fx.dir, "torch");
}

TEST(Word2VecTools, ReadsTorchTensorWrittenWithNineDigits) {
  REQUIRE_FIXTURES();
  expect_same_as_reference(load_text(fx.dir.file("torch_9g.txt")), fx.dir, "torch");
}

TEST(Word2VecTools, ReadsHeaderlessGloveWithSpacedWords) {
  REQUIRE_FIXTURES();
  LoadedEmbeddings e = load_text(fx.dir.file("glove.txt"));
  EXPECT_EQ(e.format, FileFormat::kGlove);
  expect_same_as_reference(e, fx.dir, "glove");
}

// W12: our U+FFFD replacement equals Python's errors="replace" as gensim applies it.
TEST(Word2VecTools, ReplacesInvalidUtf8LikeGensim) {
  REQUIRE_FIXTURES();
  LoadedEmbeddings e = load_text(fx.dir.file("badutf8.txt"));
  expect_same_as_reference(e, fx.dir, "badutf8");
  ASSERT_EQ(e.warnings.size(), 1u);
  EXPECT_NE(e.warnings[0].find("8 words were not valid UTF-8"), std::string::npos) << e.warnings[0];
}

// gensim reads what our writers produce and holds exactly our values, for tables read from
// gensim's own files (text) and from torch (binary and text).
TEST(Word2VecTools, GensimReadsOurTextAndBinaryExactly) {
  REQUIRE_FIXTURES();
  TempDir d;
  LoadedEmbeddings u = load_text(fx.dir.file("unicode.txt"));
  LoadedEmbeddings t = load_text(fx.dir.file("torch_repr.txt"));
  save_word2vec_text(d.file("u.txt"), u.table, u.vocab);
  save_word2vec_binary(d.file("u.bin"), u.table, u.vocab);
  save_word2vec_text(d.file("t.txt"), t.table, t.vocab);
  save_word2vec_binary(d.file("t.bin"), t.table, t.vocab);
  write_file(d.file("read.py"), kGensimReadsOurs);
  CommandResult r = run("/usr/bin/python3 " + shell_quote(d.file("read.py")) + " " +
                        shell_quote(d.path()) + " u.txt u.bin t.txt t.bin");
  ASSERT_EQ(r.rc, 0) << r.err;
  for (const char* name : {"u.txt", "u.bin"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(split_lines(read_file(d.file(std::string(name) + ".words"))), u.vocab.tokens());
    expect_table_bits(u.table, read_file(d.file(std::string(name) + ".f32")));
  }
  for (const char* name : {"t.txt", "t.bin"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(split_lines(read_file(d.file(std::string(name) + ".words"))), t.vocab.tokens());
    expect_table_bits(t.table, read_file(d.file(std::string(name) + ".f32")));
  }
}

// The sniffers recognise every file the real tools wrote.
TEST(Word2VecTools, FastTextBinaryModelGetsASpecificError) {
  REQUIRE_FIXTURES();
  // m.bin is the binary model the same `fasttext skipgram` run wrote beside m.vec.
  try {
    load_embeddings(fx.dir.file("m.bin"));
    FAIL() << "a fastText .bin must be rejected";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    std::string m = e.what();
    EXPECT_NE(m.find(fx.dir.file("m.bin")), std::string::npos) << m;
    EXPECT_NE(m.find("fastText binary model (magic 0x2F4F16BA at byte 0, version 12)"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find(".vec"), std::string::npos) << m;
  }
}

TEST(Word2VecTools, SniffersRecogniseToolOutputs) {
  REQUIRE_FIXTURES();
  auto prefix = [&](const std::string& name) {
    std::string s = read_file(fx.dir.file(name));
    s.resize(std::min<size_t>(s.size(), 4096));
    return s;
  };
  for (const char* name :
       {"trained.txt", "unicode.txt", "m.vec", "torch_repr.txt", "torch_9g.txt", "glove.txt"}) {
    std::string s = prefix(name);
    std::span<const std::byte> b(reinterpret_cast<const std::byte*>(s.data()), s.size());
    EXPECT_TRUE(looks_like_word2vec_text(b)) << name;
    EXPECT_FALSE(looks_like_word2vec_binary(b)) << name;
  }
  for (const char* name : {"trained.bin", "unicode.bin"}) {
    std::string s = prefix(name);
    std::span<const std::byte> b(reinterpret_cast<const std::byte*>(s.data()), s.size());
    EXPECT_TRUE(looks_like_word2vec_binary(b)) << name;
    EXPECT_FALSE(looks_like_word2vec_text(b)) << name;
  }
}

}  // namespace
}  // namespace embedscope::test
