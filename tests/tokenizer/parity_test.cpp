// Parity with the reference tokenizers, run at test time under node (docs/reliability.md T15):
// gpt-3-encoder (OpenAI's encoder.py ported to JS) and @dqbd/tiktoken (tiktoken's Rust core as
// WASM, "gpt2"), on every line of the Brown corpus and on 100,000 random strings; and the
// hand-written pre-tokenizers against PCRE2 running the same patterns.
//
// Known difference of the JS port, not of GPT-2: gpt-3-encoder's regex is a JavaScript regex,
// whose \s includes U+FEFF and excludes U+0085, while encoder.py (Python `regex`) and tiktoken
// use the Unicode White_Space property (U+0085 yes, U+FEFF no). Random strings containing
// either character are compared with tiktoken only.
#include <gtest/gtest.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "embedscope/tokenizer/bpe.h"
#include "tokenizer_fixtures.h"

namespace embedscope {
namespace {

using nlohmann::json;

const BpeTokenizer& gpt2() {
  static const BpeTokenizer tok = BpeTokenizer::gpt2_default();
  return tok;
}

std::string reference_script() {
  return std::string(ES_SOURCE_DIR) + "/tests/tokenizer/reference_tokenizers.js";
}

std::vector<std::string> split_lines(const std::string& text) {  // like JS split('\n')
  std::vector<std::string> lines;
  size_t p = 0;
  for (;;) {
    size_t e = text.find('\n', p);
    if (e == std::string::npos) {
      lines.push_back(text.substr(p));
      return lines;
    }
    lines.push_back(text.substr(p, e - p));
    p = e + 1;
  }
}

// Code points assigned in Unicode <= 14.0 (the oldest Unicode among the engines compared:
// PCRE2 10.42), without surrogates and private use, from Debian unicode-data's DerivedAge.txt.
std::string assigned_ranges() {
  std::ifstream in("/usr/share/unicode/DerivedAge.txt");
  EXPECT_TRUE(in.good()) << "unicode-data not installed (run scripts/setup.sh)";
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    unsigned lo = 0, hi = 0;
    double age = 0;
    char buf[64] = {0};
    if (std::sscanf(line.c_str(), "%x..%x ; %lf", &lo, &hi, &age) == 3) {
    } else if (std::sscanf(line.c_str(), "%x ; %lf", &lo, &age) == 2) {
      hi = lo;
    } else {
      continue;
    }
    (void)buf;
    if (age > 14.0) continue;
    if (lo >= 0xD800 && hi <= 0xDFFF) continue;                     // surrogates
    if ((lo >= 0xE000 && hi <= 0xF8FF) || lo >= 0xF0000) continue;  // private use
    char r[32];
    std::snprintf(r, sizeof r, "%X %X\n", lo, hi);
    out += r;
  }
  return out;
}

struct RandomCase {
  std::string s;
  std::vector<TokenId> t, g;
};

// 100,000 seeded random strings with both references' ids (generated once per process).
const std::vector<RandomCase>& random_cases() {
  static const std::vector<RandomCase> cases = [] {
    test::TempDir d;
    test::write_file(d.file("ranges.txt"), assigned_ranges());
    test::CommandResult r =
        test::run("/usr/bin/node " + test::shell_quote(reference_script()) +
                  " random 20261130 100000 " + d.file("ranges.txt") + " " + d.file("out.jsonl"));
    EXPECT_EQ(r.rc, 0) << "node reference failed (run scripts/setup.sh):\n" << r.err;
    std::vector<RandomCase> out;
    std::istringstream in(test::read_file(d.file("out.jsonl")));
    std::string line;
    while (std::getline(in, line)) {
      json j = json::parse(line);
      out.push_back({j["s"].get<std::string>(), j["t"].get<std::vector<TokenId>>(),
                     j.value("g", j["t"]).get<std::vector<TokenId>>()});
    }
    return out;
  }();
  return cases;
}

TEST(Gpt2Parity, EveryBrownLineMatchesTiktokenAndGpt3Encoder) {
  std::string text = test::brown_plain_text();
  test::TempDir d;
  test::write_file(d.file("brown.txt"), text);
  test::CommandResult r = test::run("/usr/bin/node " + test::shell_quote(reference_script()) +
                                    " lines " + d.file("brown.txt") + " " + d.file("ids.jsonl"));
  ASSERT_EQ(r.rc, 0) << "node reference failed (run scripts/setup.sh):\n" << r.err;
  std::vector<std::string> lines = split_lines(text);
  std::vector<std::string> ref = split_lines(test::read_file(d.file("ids.jsonl")));
  ASSERT_EQ(ref.size(), lines.size() + 1);  // trailing newline
  size_t mismatches = 0, n_tokens = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    json j = json::parse(ref[i]);
    std::vector<TokenId> t = j["t"].get<std::vector<TokenId>>();
    std::vector<TokenId> g = j.value("g", j["t"]).get<std::vector<TokenId>>();
    std::vector<TokenId> ours = gpt2().encode(lines[i]);
    n_tokens += ours.size();
    if (ours != t || ours != g) {
      if (++mismatches <= 5) ADD_FAILURE() << "line " << i << ": " << lines[i];
    }
    if (gpt2().decode(ours) != lines[i]) ADD_FAILURE() << "round trip, line " << i;
  }
  EXPECT_EQ(mismatches, 0u) << "of " << lines.size() << " lines";
  EXPECT_GT(n_tokens, 1000000u);
}

TEST(Gpt2Parity, LongSinglePiecesMatchTiktokenAndGpt3Encoder) {
  // Pieces longer than 64 bytes take the bucketed merge (bpe_heap); check it against the
  // references directly, not only against our own slow loop. Lengths stay in the low thousands
  // because both references are quadratic (or worse) on one long piece.
  std::mt19937 rng(20261130);
  auto random_of = [&](const std::string& alphabet, size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) s += alphabet[rng() % alphabet.size()];
    return s;
  };
  std::string cjk;
  while (cjk.size() < 1500) cjk += "日本語中文";
  std::vector<std::string> lines = {std::string(2000, 'a'),
                                    std::string(2000, '7'),
                                    std::string(1999, 'e'),
                                    std::string(300, '_'),
                                    random_of("abcdeeeeeetttthhhhhsssnnr", 1500),
                                    random_of("0123456789", 1500),
                                    random_of("aabbab", 1200),
                                    cjk,
                                    " " + random_of("thequickbrownfoxjumpsoverthelazydog", 1000)};
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  text.pop_back();
  test::TempDir d;
  test::write_file(d.file("long.txt"), text);
  test::CommandResult r = test::run("/usr/bin/node " + test::shell_quote(reference_script()) +
                                    " lines " + d.file("long.txt") + " " + d.file("ids.jsonl"));
  ASSERT_EQ(r.rc, 0) << "node reference failed (run scripts/setup.sh):\n" << r.err;
  std::vector<std::string> ref = split_lines(test::read_file(d.file("ids.jsonl")));
  ASSERT_GE(ref.size(), lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    ASSERT_EQ(pre_tokenize(PreTokenizerKind::kGpt2, lines[i]).size(), 1u) << i;
    ASSERT_GT(lines[i].size(), 64u);
    json j = json::parse(ref[i]);
    std::vector<TokenId> ours = gpt2().encode(lines[i]);
    EXPECT_EQ(ours, j["t"].get<std::vector<TokenId>>()) << "tiktoken, line " << i;
    EXPECT_EQ(ours, j.value("g", j["t"]).get<std::vector<TokenId>>())
        << "gpt-3-encoder, line " << i;
  }
}

TEST(Gpt2Parity, HundredThousandRandomStringsMatchReferences) {
  const auto& cases = random_cases();
  ASSERT_EQ(cases.size(), 100000u);
  size_t vs_t = 0, vs_g = 0, js_only = 0, round = 0;
  for (const RandomCase& c : cases) {
    std::vector<TokenId> ours = gpt2().encode(c.s);
    if (ours != c.t && ++vs_t <= 5) ADD_FAILURE() << "tiktoken differs on " << json(c.s).dump();
    bool js_space_diff =
        c.s.find("\u0085") != std::string::npos || c.s.find("\uFEFF") != std::string::npos;
    if (js_space_diff)
      ++js_only;
    else if (ours != c.g && ++vs_g <= 5)
      ADD_FAILURE() << "gpt-3-encoder differs on " << json(c.s).dump();
    if (gpt2().decode(ours) != c.s) ++round;
  }
  EXPECT_EQ(vs_t, 0u);
  EXPECT_EQ(vs_g, 0u);
  EXPECT_EQ(round, 0u);
  EXPECT_LT(js_only, cases.size() / 100);
}

// ---- pre-tokenizers vs PCRE2 -----------------------------------------------------------------

// The patterns as the reference tokenizers declare them, with \s and \S spelled out as the
// Unicode White_Space property (what Python `regex` and Rust `regex` mean by \s): PCRE2's UCP \s
// is \p{Z} plus \t-\r, which lacks U+0085.
std::string with_white_space(std::string p) {
  const std::string ws = "\\t-\\r\\x{85}\\p{Z}";
  std::string out;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '\\' && i + 1 < p.size() && (p[i + 1] == 's' || p[i + 1] == 'S')) {
      // inside a class ([^\s...]) insert the ranges, outside wrap them
      size_t open = p.rfind('[', i), close = p.rfind(']', i);
      bool in_class = open != std::string::npos && (close == std::string::npos || close < open);
      if (in_class)
        out += ws;
      else
        out += (p[i + 1] == 's' ? "[" : "[^") + ws + "]";
      ++i;
    } else {
      out += p[i];
    }
  }
  return out;
}

struct Pcre2Splitter {
  pcre2_code* code = nullptr;
  pcre2_match_data* md = nullptr;
  explicit Pcre2Splitter(const std::string& pattern) {
    int err = 0;
    PCRE2_SIZE off = 0;
    code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.c_str()), pattern.size(),
                         PCRE2_UTF | PCRE2_UCP, &err, &off, nullptr);
    EXPECT_NE(code, nullptr) << "pcre2_compile error " << err << " at " << off << " in " << pattern;
    if (code) pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
    md = code ? pcre2_match_data_create_from_pattern(code, nullptr) : nullptr;
  }
  ~Pcre2Splitter() {
    if (md) pcre2_match_data_free(md);
    if (code) pcre2_code_free(code);
  }
  // Ends of consecutive matches (findall); a gap (an unmatched character) ends the list early.
  std::vector<size_t> split(std::string_view text) {
    std::vector<size_t> ends;
    size_t pos = 0;
    while (code && pos < text.size()) {
      int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), pos,
                           PCRE2_NO_UTF_CHECK, md, nullptr);
      if (rc < 0) break;
      PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
      if (ov[0] != pos || ov[1] == pos) break;
      pos = ov[1];
      ends.push_back(pos);
    }
    return ends;
  }
};

struct PatternCase {
  PreTokenizerKind kind;
  const char* pattern;
};

const PatternCase kPatterns[] = {
    {PreTokenizerKind::kGpt2,
     R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)"},
    {PreTokenizerKind::kCl100k,
     R"('(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+)"},
    {PreTokenizerKind::kLlama3,
     R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
    {PreTokenizerKind::kQwen2,
     R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
};

TEST(PreTokenizerOracle, KnownPatternsAreRecognised) {
  for (const PatternCase& c : kPatterns) EXPECT_EQ(pre_tokenizer_for_pattern(c.pattern), c.kind);
  EXPECT_EQ(pre_tokenizer_for_pattern("(a+)+"), std::nullopt);
}

TEST(PreTokenizerOracle, MatchesPcre2OnBrownCorpus) {
  std::string text = test::brown_plain_text();
  for (const PatternCase& c : kPatterns) {
    Pcre2Splitter re(with_white_space(c.pattern));
    EXPECT_EQ(pre_tokenize(c.kind, text), re.split(text)) << pre_tokenizer_name(c.kind);
  }
}

TEST(PreTokenizerOracle, MatchesPcre2OnRandomStrings) {
  const auto& cases = random_cases();
  ASSERT_FALSE(cases.empty());
  for (const PatternCase& c : kPatterns) {
    Pcre2Splitter re(with_white_space(c.pattern));
    size_t bad = 0;
    for (const RandomCase& rc : cases) {
      if (pre_tokenize(c.kind, rc.s) != re.split(rc.s) && ++bad <= 5)
        ADD_FAILURE() << pre_tokenizer_name(c.kind) << " differs on " << json(rc.s).dump();
    }
    EXPECT_EQ(bad, 0u) << pre_tokenizer_name(c.kind);
  }
}

TEST(PreTokenizerOracle, MatchesPcre2OnLongRuns) {  // T10/T11 inputs through the oracle
  std::vector<std::string> texts = {
      std::string(100000, 'a'), std::string(100000, ' ') + "x", std::string(100000, '\n'),
      " \n \n\n  \t x" + std::string(5000, '7'), std::string(50000, '!') + "  \r\n\r\n  y"};
  for (const PatternCase& c : kPatterns) {
    Pcre2Splitter re(with_white_space(c.pattern));
    for (const std::string& t : texts)
      EXPECT_EQ(pre_tokenize(c.kind, t), re.split(t)) << pre_tokenizer_name(c.kind);
  }
}

}  // namespace
}  // namespace embedscope
