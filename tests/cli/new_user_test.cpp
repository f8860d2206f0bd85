// What a new user ran into (issue "One library API under every front end", item 7): each case
// here failed or misled before; the expected behaviour comes from the reference tools (gensim,
// the gpt-3-encoder reference) or from the error contract (message names file, value, limit).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"

using namespace embedscope::test;
using nlohmann::json;

namespace {

std::string cli() { return shell_quote(cli_path()); }

// gensim writes 40 random vectors (dim 6) with keys war, peace, w0..w37.
void make_w2v(const TempDir& d) {
  auto p = run_python(R"(
import sys, numpy as np
from gensim.models import KeyedVectors
rng = np.random.default_rng(11)
keys = ["war", "peace"] + [f"w{i}" for i in range(38)]
kv = KeyedVectors(vector_size=6)
kv.add_vectors(keys, rng.standard_normal((40, 6)).astype(np.float32))
kv.save_word2vec_format(sys.argv[1] + "/v.txt")
)",
                      {d.path()});
  ASSERT_EQ(p.rc, 0) << p.err;
}

}  // namespace

TEST(NewUser, LookupTakesTheWordAfterModelFlag) {
  TempDir d;
  make_w2v(d);
  auto a = run(cli() + " lookup --model " + d.file("v.txt") + " war --json");
  ASSERT_EQ(a.rc, 0) << a.err;
  auto b = run(cli() + " lookup " + d.file("v.txt") + " war --json");
  ASSERT_EQ(b.rc, 0) << b.err;
  EXPECT_EQ(json::parse(a.out)["rows"][0]["token"], "war");
  EXPECT_EQ(a.out, b.out);
}

TEST(NewUser, DecodeInvertsTheReferenceEncoder) {
  // Ids from the reference encoder (gpt-3-encoder under node), decoded by us.
  const std::string text = "The café's 10 computers — naïve ünïcödé!";
  auto ref = run(
      "/usr/bin/node -e " +
      shell_quote("const h=process.env.EMBEDSCOPE_HOME||(process.env.HOME+'/.cache/embedscope');"
                  "const g=require(h+'/npm/node_modules/gpt-3-encoder');"
                  "process.stdout.write(g.encode(process.argv[1]).join(','))") +
      " " + shell_quote(text));
  ASSERT_EQ(ref.rc, 0) << "node reference failed (run scripts/setup.sh): " << ref.err;
  auto r = run(cli() + " decode " + ref.out);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, text + "\n");
  auto j = run(cli() + " decode " + ref.out + " --json");
  ASSERT_EQ(j.rc, 0) << j.err;
  auto doc = json::parse(j.out);
  EXPECT_EQ(doc["text"], text);
  EXPECT_EQ(doc["bytes"].size(), text.size());
  // A token that ends inside a character: text shows U+FFFD, --bytes gives the bytes themselves.
  const std::string rare = "\xE9\xBE\x98";  // U+9F98, no GPT-2 token holds all three bytes
  auto t = run(cli() + " tokenize " + shell_quote(rare) + " --json");
  ASSERT_EQ(t.rc, 0) << t.err;
  auto ids = json::parse(t.out)["ids"];
  ASSERT_GE(ids.size(), 2u);
  auto half = run(cli() + " decode " + std::to_string(ids[0].get<int>()));
  EXPECT_EQ(half.out, "\xEF\xBF\xBD\n");
  auto raw = run(cli() + " decode " + std::to_string(ids[0].get<int>()) + " --bytes");
  ASSERT_FALSE(raw.out.empty());
  EXPECT_LT(raw.out.size(), rare.size());
  EXPECT_EQ(rare.substr(0, raw.out.size()), raw.out);
  auto bad = run(cli() + " decode 3644,99999999");
  EXPECT_EQ(bad.rc, 7);
  EXPECT_NE(bad.err.find("99999999 is out of range [0, 50257)"), std::string::npos) << bad.err;
  auto nan = run(cli() + " decode 12,abc");
  EXPECT_EQ(nan.rc, 2);
  EXPECT_NE(nan.err.find("'abc' is not a token id"), std::string::npos) << nan.err;
}

TEST(NewUser, EvalSimilaritySaysWhenNoLineHasTheFormat) {
  TempDir d;
  make_w2v(d);
  write_file(d.file("spaces.txt"), "war peace 3.5\nw1 w2 1.0\n");
  write_file(d.file("empty.txt"), "");
  write_file(d.file("comments.txt"), "# only a comment\n");
  for (const char* f : {"spaces.txt", "empty.txt", "comments.txt"}) {
    auto r = run(cli() + " eval similarity " + d.file(f) + " --model " + d.file("v.txt"));
    EXPECT_EQ(r.rc, 2) << f;
    EXPECT_NE(r.err.find("no line in the expected format WORD<TAB>WORD<TAB>SCORE"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("hint:"), std::string::npos) << r.err;
  }
  write_file(d.file("oov.tsv"), "foo\tbar\t1\nbaz\tqux\t2\n");
  auto o = run(cli() + " eval similarity " + d.file("oov.tsv") + " --model " + d.file("v.txt"));
  EXPECT_EQ(o.rc, 2);
  EXPECT_NE(o.err.find("no word pair has both words in the vocabulary (2 pairs out of vocabulary)"),
            std::string::npos)
      << o.err;
}

TEST(NewUser, EvalAnalogyWithNothingToEvaluateIsAnError) {
  TempDir d;
  make_w2v(d);
  write_file(d.file("empty.txt"), "");
  write_file(d.file("three.txt"), ": s\nwar peace w1\n");
  write_file(d.file("oov.txt"), ": s\nfoo bar baz qux\n");
  for (const char* f : {"empty.txt", "three.txt"}) {
    auto r = run(cli() + " eval analogy " + d.file(f) + " --model " + d.file("v.txt") + " --json");
    EXPECT_EQ(r.rc, 2) << f << r.out;
    EXPECT_NE(r.err.find("no analogy question found"), std::string::npos) << r.err;
  }
  auto o = run(cli() + " eval analogy " + d.file("oov.txt") + " --model " + d.file("v.txt"));
  EXPECT_EQ(o.rc, 2);
  EXPECT_NE(o.err.find("every question (1) has a word out of the model's vocabulary"),
            std::string::npos)
      << o.err;
  // gensim refuses the files without questions too (it divides by zero); it scores the
  // all-OOV file 0.0, which says nothing, so that one is our error alone.
  auto g = run_python(R"(
import sys
from gensim.models import KeyedVectors
kv = KeyedVectors.load_word2vec_format(sys.argv[1])
for f in sys.argv[2:]:
    try:
        kv.evaluate_word_analogies(f)
        print("accepted", f)
    except Exception as e:
        print("refused")
)",
                      {d.file("v.txt"), d.file("empty.txt"), d.file("three.txt")});
  EXPECT_EQ(g.out, "refused\nrefused\n");
}

TEST(NewUser, CaseInsensitiveEvaluationFollowsUnicodeAsGensim) {
  TempDir d;
  auto p = run_python(R"(
import sys, json, numpy as np
from gensim.models import KeyedVectors
rng = np.random.default_rng(3)
keys = ["café", "Straße", "ÉCOLE", "naïve", "ǅemal", "w1", "w2", "w3", "ﬁle"]
kv = KeyedVectors(vector_size=5)
kv.add_vectors(keys, rng.standard_normal((len(keys), 5)).astype(np.float32))
kv.save_word2vec_format(sys.argv[1] + "/u.txt")
with open(sys.argv[1] + "/p.tsv", "w") as f:
    f.write("CAFÉ\tstrasse\t1\nécole\tNAÏVE\t2\nw1\tFILE\t3\nǆemal\tw2\t4\nw3\tcafé\t5\nw1\tw2\t0.5\n")
pr, sp, oov = kv.evaluate_word_pairs(sys.argv[1] + "/p.tsv")
print(json.dumps({"spearman": float(sp[0]), "oov": oov}))
)",
                      {d.path()});
  ASSERT_EQ(p.rc, 0) << p.err;
  auto want = json::parse(p.out);
  auto r = run(cli() + " eval similarity " + d.file("p.tsv") + " --model " + d.file("u.txt") +
               " --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = json::parse(r.out);
  EXPECT_NEAR(j["oov_ratio"].get<double>(), want["oov"].get<double>(), 1e-9);
  EXPECT_NEAR(j["spearman"].get<double>(), want["spearman"].get<double>(), 1e-9);
}

TEST(NewUser, FileAndArgumentErrorsSayWhatFits) {
  TempDir d;
  make_w2v(d);
  write_file(d.file("empty.vec"), "");
  auto e = run(cli() + " info " + d.file("empty.vec"));
  EXPECT_NE(e.rc, 0);
  EXPECT_NE(e.err.find("the file is empty"), std::string::npos) << e.err;
  write_file(d.file("junk.dat"), "this is not an embedding file at all\n\x01\x02");
  auto u = run(cli() + " info " + d.file("junk.dat"));
  EXPECT_NE(u.rc, 0);
  EXPECT_EQ(u.err.find("pass the format explicitly"), std::string::npos) << u.err;
  // A word out of vocabulary is not a path problem: no model-reference hint.
  auto w = run(cli() + " neighbors " + d.file("v.txt") + " nosuchword");
  EXPECT_EQ(w.rc, 3);
  EXPECT_EQ(w.err.find("accepted model references"), std::string::npos) << w.err;
  auto m = run(cli() + " neighbors --model " + d.file("missing.bin") + " war");
  EXPECT_EQ(m.rc, 3);
  EXPECT_NE(m.err.find("accepted model references"), std::string::npos) << m.err;
  auto id = run(cli() + " neighbors " + d.file("v.txt") + " --id -1");
  EXPECT_EQ(id.rc, 7) << id.err;
  EXPECT_NE(id.err.find("row id -1 is out of range (40 rows)"), std::string::npos) << id.err;
  auto c = run(cli() + " convert " + d.file("v.txt") + " " + d.file("out.weird"));
  EXPECT_EQ(c.rc, 2);
  EXPECT_NE(c.err.find("cannot tell the output format from the file name"), std::string::npos)
      << c.err;
  EXPECT_FALSE(std::ifstream(d.file("out.weird")).good());
}

// A table trained over GPT-2 token ids records its tokenizer; every command that opens it by
// path uses that tokenizer (issue "The main job's answer worth reading", item 5).
TEST(NewUser, ATokenTableIsReadBackWithItsRecordedTokenizer) {
  TempDir d;
  std::string text;
  for (int i = 0; i < 300; ++i)
    text +=
        "the computer network sends messages to another computer and the keyboard types letters\n"
        "unbelievability and incomprehensibility are long words that tokenizers split\n";
  write_file(d.file("c.txt"), text);
  auto t = run(cli() + " train " + d.file("c.txt") + " -o " + d.file("m.safetensors") +
               " --tokenizer gpt2 --dim 8 --epochs 1 --min-count 1 --threads 1 -q");
  ASSERT_EQ(t.rc, 0) << t.err;
  auto info = run(cli() + " info " + d.file("m.safetensors") + " --json");
  ASSERT_EQ(info.rc, 0) << info.err;
  auto ji = json::parse(info.out);
  EXPECT_EQ(ji["tokenizer"]["source"], "metadata");
  EXPECT_EQ(ji["tokenizer"]["name"], "gpt2");
  auto plain = run(cli() + " info " + d.file("m.safetensors"));
  EXPECT_NE(plain.out.find("gpt2 (named in the model's metadata)"), std::string::npos) << plain.out;
  write_file(
      d.file("p.tsv"),
      "unbelievability\tincomprehensibility\t7\ncomputer\tkeyboard\t5\nnetwork\tletters\t2\n");
  auto e = run(cli() + " eval similarity " + d.file("p.tsv") + " --model " +
               d.file("m.safetensors") + " --json");
  ASSERT_EQ(e.rc, 0) << e.err;
  auto je = json::parse(e.out);
  EXPECT_EQ(je["oov"], 0);
  EXPECT_EQ(je["pairs"], 3);
  EXPECT_GT(je["composed"].get<int>(), 0);
  EXPECT_EQ(e.err.find("warning"), std::string::npos) << e.err;
  // Without it, whole-token lookups miss and eval says so.
  auto n = run(cli() + " eval similarity " + d.file("p.tsv") + " --model " +
               d.file("m.safetensors") + " --tokenizer none --json");
  ASSERT_EQ(n.rc, 0) << n.err;
  EXPECT_GT(json::parse(n.out)["oov"].get<int>(), 0);
  EXPECT_NE(n.err.find("pass --tokenizer"), std::string::npos) << n.err;
  auto nb = run(cli() + " neighbors " + d.file("m.safetensors") + " unbelievability --json");
  ASSERT_EQ(nb.rc, 0) << nb.err;
  EXPECT_EQ(json::parse(nb.out)["resolved"]["how"], "pieces");
  // lookup resolves words the same way: the rows of the word's pieces, as GPT-2's reference
  // encoder splits " unbelievability".
  auto ref = run(
      "/usr/bin/node -e " +
      shell_quote("const h=process.env.EMBEDSCOPE_HOME||(process.env.HOME+'/.cache/embedscope');"
                  "const g=require(h+'/npm/node_modules/gpt-3-encoder');"
                  "process.stdout.write(JSON.stringify(g.encode(' unbelievability')))"));
  ASSERT_EQ(ref.rc, 0) << ref.err;
  auto lk = run(cli() + " lookup " + d.file("m.safetensors") + " unbelievability --json");
  ASSERT_EQ(lk.rc, 0) << lk.err;
  json want = json::parse(ref.out), doc = json::parse(lk.out), got = json::array();
  for (const auto& row : doc["rows"]) got.push_back(row["id"]);
  EXPECT_GT(want.size(), 1u);
  EXPECT_EQ(got, want);
}
