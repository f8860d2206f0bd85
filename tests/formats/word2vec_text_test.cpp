// word2vec / GloVe / fastText readers: the accepted cases of docs/reliability.md 6.3 (W2 fallback,
// W7, W9, W10, W11 policy, W12 default, W13, W15, W16, W17), our own round trips and the
// content sniffers. Files written by the real tools are compared in word2vec_tools_test.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "formats/word2vec_common.h"
#include "test_util.h"
#include "word2vec_test_helpers.h"

namespace embedscope::test {
namespace {

std::string f32_bytes(std::initializer_list<float> v) {
  std::string s;
  for (float f : v) s.append(reinterpret_cast<const char*>(&f), 4);
  return s;
}

std::span<const std::byte> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

TEST(Word2VecTextReader, ReadsHeaderAndRows) {
  TempDir d;
  std::string p = put(d, "v.txt", "2 3\ncat 1 -2.5 3e2\ndog 0.125 0 -0\n");
  LoadedEmbeddings e = load_text(p);
  EXPECT_EQ(e.format, FileFormat::kWord2VecText);
  ASSERT_EQ(e.table.n_rows(), 2u);
  ASSERT_EQ(e.table.dim(), 3u);
  EXPECT_EQ(e.vocab.token(0), "cat");
  EXPECT_EQ(e.vocab.find("dog"), 1);
  EXPECT_EQ(row_of(e, 0), (std::vector<float>{1, -2.5f, 300}));
  EXPECT_EQ(row_of(e, 1), (std::vector<float>{0.125f, 0, 0}));
  EXPECT_TRUE(std::signbit(row_of(e, 1)[2]));
  EXPECT_TRUE(e.warnings.empty());
}

// W2: a first line that is not "N DIM" starts a header-less GloVe file.
TEST(Word2VecTextReader, FirstLineWithWordMeansGlove) {
  TempDir d;
  std::string p = put(d, "g.txt", "the 0.1 0.2\nof -1 2\n");
  LoadedEmbeddings e = load_text(p);
  EXPECT_EQ(e.format, FileFormat::kGlove);
  ASSERT_EQ(e.table.n_rows(), 2u);
  EXPECT_EQ(e.table.dim(), 2u);
  EXPECT_EQ(row_of(e, 0), (std::vector<float>{0.1f, 0.2f}));
  EXPECT_EQ(e.vocab.token(1), "of");
}

// GloVe DIM is voted over the first lines, so a numeric first word does not change it.
TEST(Word2VecGloveReader, NumericWordOnFirstLineKeepsDimension) {
  TempDir d;
  std::string p = put(d, "g.txt", "1999 0.5 0.25\nyear 1 2\n2000 3 4\n");
  LoadedEmbeddings e = load_text(p);
  ASSERT_EQ(e.table.dim(), 2u);
  ASSERT_EQ(e.table.n_rows(), 3u);
  EXPECT_EQ(e.vocab.token(0), "1999");
  EXPECT_EQ(row_of(e, 2), (std::vector<float>{3, 4}));
}

TEST(Word2VecGloveReader, ForcedGloveReadsHeaderLikeFirstRow) {
  TempDir d;
  std::string p = put(d, "g.txt", "7 0.5\n8 1.5\n");
  LoadOptions o;
  o.format = FileFormat::kGlove;
  LoadedEmbeddings e = load_word2vec_text(p, o);
  EXPECT_EQ(e.format, FileFormat::kGlove);
  ASSERT_EQ(e.table.n_rows(), 2u);
  EXPECT_EQ(e.vocab.token(0), "7");
  EXPECT_EQ(row_of(e, 1), (std::vector<float>{1.5f}));
}

// W7: records with and without the '\n' word2vec.c writes after each vector.
TEST(Word2VecBinaryReader, AcceptsRecordsWithAndWithoutNewline) {
  TempDir d;
  std::string p = put(
      d, "mixed.bin",
      "3 2\nab " + f32_bytes({1, 2}) + "\ncd " + f32_bytes({3, 4}) + "ef " + f32_bytes({5, -6}));
  LoadedEmbeddings e = load_bin(p);
  EXPECT_EQ(e.format, FileFormat::kWord2VecBinary);
  ASSERT_EQ(e.table.n_rows(), 3u);
  EXPECT_EQ(e.vocab.token(1), "cd");
  EXPECT_EQ(e.vocab.token(2), "ef");
  EXPECT_EQ(row_of(e, 2), (std::vector<float>{5, -6}));
  // ... and with a final newline plus CRLF header.
  std::string q = put(d, "crlf.bin", "1 1\r\nab " + f32_bytes({7}) + "\n");
  EXPECT_EQ(row_of(load_bin(q), 0), (std::vector<float>{7}));
}

// W9: only ASCII space separates fields; TAB and NBSP belong to words; a word may be " ".
TEST(Word2VecTextReader, SplitsOnlyOnAsciiSpace) {
  TempDir d;
  std::string p = put(d, "w9.txt", "4 2\nx\ty 1 2\nnb\xc2\xa0sp 3 4\n  5 6\n 7 8\n");
  LoadedEmbeddings e = load_text(p);
  ASSERT_EQ(e.table.n_rows(), 4u);
  EXPECT_EQ(e.vocab.token(0), "x\ty");
  EXPECT_EQ(e.vocab.token(1), "nb\xc2\xa0sp");
  EXPECT_EQ(e.vocab.token(2), " ");
  EXPECT_EQ(e.vocab.token(3), "");
  EXPECT_EQ(row_of(e, 2), (std::vector<float>{5, 6}));
  EXPECT_TRUE(e.warnings.empty()) << e.warnings[0];  // no spurious duplicates
}

// W10: GloVe 840B has tokens with internal spaces; the last DIM fields are the vector.
TEST(Word2VecGloveReader, AcceptsWordsWithInternalSpaces) {
  TempDir d;
  std::string p = put(d, "840b.txt", ". . . 0.1 0.2\nat name@domain.com 1 2\nplain -3 4\n");
  LoadedEmbeddings e = load_text(p);
  ASSERT_EQ(e.table.dim(), 2u);
  ASSERT_EQ(e.table.n_rows(), 3u);
  EXPECT_EQ(e.vocab.token(0), ". . .");
  EXPECT_EQ(e.vocab.token(1), "at name@domain.com");
  EXPECT_EQ(row_of(e, 1), (std::vector<float>{1, 2}));
}

// W11 policy: underflow becomes (signed) zero like numpy; '+', exponents and long mantissas
// parse; 1e-45 stays the smallest subnormal.
TEST(Word2VecTextReader, AcceptsUnderflowSignsAndExponents) {
  TempDir d;
  std::string p = put(d, "num.txt",
                      "1 7\nw 1e-50 -1e-400 +1.5 2.5E+1 .5 1.401298464324817e-45 "
                      "0.10000000000000000555111512312578270211815834045410156250\n");
  LoadedEmbeddings e = load_text(p);
  std::vector<float> r = row_of(e, 0);
  EXPECT_EQ(r[0], 0.0f);
  EXPECT_EQ(r[1], 0.0f);
  EXPECT_TRUE(std::signbit(r[1]));
  EXPECT_EQ(r[2], 1.5f);
  EXPECT_EQ(r[3], 25.0f);
  EXPECT_EQ(r[4], 0.5f);
  EXPECT_EQ(r[5], std::numeric_limits<float>::denorm_min());
  EXPECT_EQ(r[6], 0.1f);
}

// W12 default: invalid bytes become U+FFFD, counted in one warning.
TEST(Word2VecTextReader, ReplacesInvalidUtf8AndWarns) {
  TempDir d;
  std::string p = put(d, "latin1.txt", "3 1\ncaf\xe9 1\nok 2\nab\xe6\x97 3\n");
  LoadedEmbeddings e = load_text(p);
  ASSERT_EQ(e.table.n_rows(), 3u);
  EXPECT_EQ(e.vocab.token(0), "caf\xef\xbf\xbd");
  EXPECT_EQ(e.vocab.token(2), "ab\xef\xbf\xbd");
  ASSERT_EQ(e.warnings.size(), 1u);
  EXPECT_NE(e.warnings[0].find("2 words were not valid UTF-8"), std::string::npos) << e.warnings[0];
  EXPECT_NE(e.warnings[0].find("line 2"), std::string::npos) << e.warnings[0];
}

TEST(Word2VecBinaryReader, ReplacesInvalidUtf8AndWarns) {
  TempDir d;
  std::string p = put(d, "bad.bin", "1 1\nx\xff " + f32_bytes({1}));
  LoadedEmbeddings e = load_bin(p);
  EXPECT_EQ(e.vocab.token(0), "x\xef\xbf\xbd");
  ASSERT_EQ(e.warnings.size(), 1u);
  EXPECT_NE(e.warnings[0].find("byte offset 4"), std::string::npos) << e.warnings[0];
}

// W13: keep the first row of a duplicated word, drop later ones, warn with the count.
TEST(Word2VecTextReader, KeepsFirstDuplicateAndWarns) {
  TempDir d;
  std::string p = put(d, "dup.txt", "4 1\na 1\nb 2\na 3\nb 4\n");
  LoadedEmbeddings e = load_text(p);
  ASSERT_EQ(e.table.n_rows(), 2u);
  EXPECT_EQ(row_of(e, 0), (std::vector<float>{1}));
  EXPECT_EQ(row_of(e, 1), (std::vector<float>{2}));
  ASSERT_EQ(e.warnings.size(), 1u);
  EXPECT_NE(e.warnings[0].find("2 duplicate words"), std::string::npos) << e.warnings[0];
  EXPECT_NE(e.warnings[0].find("'a' on line 4"), std::string::npos) << e.warnings[0];
}

TEST(Word2VecBinaryReader, KeepsFirstDuplicateAndWarns) {
  TempDir d;
  std::string p =
      put(d, "dup.bin",
          "3 1\na " + f32_bytes({1}) + "\nb " + f32_bytes({2}) + "\na " + f32_bytes({3}) + "\n");
  LoadedEmbeddings e = load_bin(p);
  ASSERT_EQ(e.table.n_rows(), 2u);
  EXPECT_EQ(row_of(e, 1), (std::vector<float>{2}));
  ASSERT_EQ(e.warnings.size(), 1u);
  EXPECT_NE(e.warnings[0].find("1 duplicate words"), std::string::npos);
}

// W15: BOM, CRLF, trailing spaces (fastText), no final newline, trailing blank lines.
TEST(Word2VecTextReader, AcceptsBomCrlfTrailingSpaceAndNoFinalNewline) {
  TempDir d;
  std::string p = put(d, "w15.txt",
                      "\xEF\xBB\xBF"
                      "2 2\r\na 1 2 \r\nb 3 4");
  LoadedEmbeddings e = load_text(p);
  ASSERT_EQ(e.table.n_rows(), 2u);
  EXPECT_EQ(e.vocab.token(0), "a");
  EXPECT_EQ(row_of(e, 1), (std::vector<float>{3, 4}));
  std::string q = put(d, "tail.txt", "1 1\na 1\n\n \r\n");
  EXPECT_EQ(load_text(q).table.n_rows(), 1u);
  std::string g = put(d, "bom.glove",
                      "\xEF\xBB\xBF"
                      "a 1 2\r\nb 3 4\r\n");
  LoadedEmbeddings ge = load_text(g);
  EXPECT_EQ(ge.vocab.token(0), "a");
  EXPECT_EQ(ge.table.dim(), 2u);
}

// W16: an all-zero vector loads and has norm 0 (no division).
TEST(Word2VecTextReader, AcceptsAllZeroVector) {
  TempDir d;
  std::string p = put(d, "zero.txt", "2 3\nz 0 0 0\nu 3 4 0\n");
  LoadedEmbeddings e = load_text(p);
  EXPECT_EQ(e.table.norms()[0], 0.0f);
  EXPECT_EQ(e.table.norms()[1], 5.0f);
  EXPECT_EQ(e.table.n_nonfinite(), 0u);
}

// W17: the loaded table is owned memory, so truncating the file afterwards cannot fault.
TEST(Word2VecTextReader, TableOutlivesTruncationOfItsFile) {
  TempDir d;
  std::string p = put(d, "t.txt", "2 2\na 1 2\nb 3 4\n");
  std::string q = put(d, "t.bin", "1 2\na " + f32_bytes({5, 6}) + "\n");
  LoadedEmbeddings e = load_text(p);
  LoadedEmbeddings b = load_bin(q);
  ASSERT_EQ(::truncate(p.c_str(), 0), 0);
  ASSERT_EQ(::truncate(q.c_str(), 0), 0);
  EXPECT_EQ(row_of(e, 1), (std::vector<float>{3, 4}));
  EXPECT_EQ(row_of(b, 0), (std::vector<float>{5, 6}));
}

// Our writers and readers: every float32 bit pattern that is finite survives both formats.
TEST(Word2VecRoundTrip, TextAndBinaryAreExact) {
  TempDir d;
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0, 1);
  const size_t n = 64, dim = 9;
  std::vector<float> v(n * dim);
  for (float& x : v) x = nd(rng) * std::pow(10.0f, float(int(rng() % 60) - 30));
  float specials[] = {0.0f,         -0.0f,         FLT_MAX,  -FLT_MAX,    FLT_MIN,
                      FLT_TRUE_MIN, -FLT_TRUE_MIN, 1.0f / 3, 16777217.0f, 0.1f};
  std::memcpy(v.data(), specials, sizeof specials);
  Vocabulary vocab;
  const char* odd[] = {"caf\xc3\xa9", "\xe6\x97\xa5\xe6\x9c\xac", " ", "", "a b", "tab\there",
                       "x "};
  for (size_t i = 0; i < n; ++i) vocab.add(i < 7 ? odd[i] : "w" + std::to_string(i));
  auto table = EmbeddingTable::from_f32(n, dim, v);

  save_word2vec_text(d.file("rt.txt"), table, vocab);
  LoadedEmbeddings t = load_text(d.file("rt.txt"));
  ASSERT_EQ(t.table.n_rows(), n);
  EXPECT_EQ(std::memcmp(t.table.f32(), v.data(), v.size() * 4), 0);
  EXPECT_EQ(t.vocab.tokens(), vocab.tokens());
  EXPECT_TRUE(t.warnings.empty());

  Vocabulary bvocab;  // binary words cannot hold spaces
  for (size_t i = 0; i < n; ++i) bvocab.add("b" + std::to_string(i) + (i % 2 ? "\xc3\xa9" : ""));
  save_word2vec_binary(d.file("rt.bin"), table, bvocab);
  LoadedEmbeddings b = load_bin(d.file("rt.bin"));
  ASSERT_EQ(b.table.n_rows(), n);
  EXPECT_EQ(std::memcmp(b.table.f32(), v.data(), v.size() * 4), 0);
  EXPECT_EQ(b.vocab.tokens(), bvocab.tokens());
}

TEST(Word2VecRoundTrip, WritesF16TablesAsTheirFloatValues) {
  TempDir d;
  auto t = EmbeddingTable::from_u16(1, 2, DType::kF16, {f32_to_f16(0.5f), f32_to_f16(-2.0f)});
  Vocabulary v;
  v.add("h");
  save_word2vec_text(d.file("h.txt"), t, v);
  EXPECT_EQ(read_file(d.file("h.txt")), "1 2\nh 0.5 -2\n");
}

// The fast decimal path is std::from_chars' twin: on every input it accepts, the double is
// the same bit for bit (and it declines rather than guesses on the rest).
TEST(Word2VecNumbers, FastDecimalPathEqualsFromChars) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> mant(-10, 10);
  const char* formats[] = {"%.9g", "%.17g", "%.6g", "%e", "%.3f", "%.12f", "%.20f", "%.0f"};
  size_t fast = 0, declined = 0;
  char buf[128];
  for (int i = 0; i < 200000; ++i) {
    double v = mant(rng) * std::pow(10.0, int(rng() % 50) - 25);
    if (i % 3 == 0) v = double(float(v));
    int n = std::snprintf(buf, sizeof buf, formats[i % 8], v);
    if (i % 5 == 0) n = int(std::to_chars(buf, buf + sizeof buf, float(v)).ptr - buf);
    double a = 0, b = 0;
    const char* end = w2v::parse_double_fast(buf, buf + n, &a);
    auto [ptr, ec] = std::from_chars(buf, buf + n, b);
    ASSERT_EQ(ec, std::errc()) << buf;
    if (!end) {
      ++declined;
      continue;
    }
    ++fast;
    ASSERT_EQ(end, ptr) << std::string(buf, size_t(n));
    ASSERT_EQ(std::memcmp(&a, &b, sizeof a), 0)
        << std::string(buf, size_t(n)) << " " << a << " " << b;
  }
  EXPECT_GT(fast, 100000u);
  EXPECT_GT(declined, 1000u);
  for (const char* s : {"0", "-0", "0.", ".5", "-.5", "1e5", "1E-5", "1e+22", "9007199254740992",
                        "123456789012345678", "0.000000000000000000001"}) {
    double a = 0, b = 0;
    const char* e = s + std::strlen(s);
    const char* end = w2v::parse_double_fast(s, e, &a);
    std::from_chars(s, e, b);
    if (end) EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0) << s;
  }
}

// The parallel parse is the serial one's twin: same table, words, warnings and first error.
std::string many_rows(size_t n, size_t bad_line, const std::string& bad, size_t blank_line) {
  std::string s = std::to_string(n) + " 3\n";
  for (size_t i = 0; i < n; ++i) {
    size_t line = i + 2;
    if (line == blank_line) s += "\n";
    if (line == bad_line) {
      s += bad + "\n";
      continue;
    }
    std::string w = i % 97 == 5
                        ? "dup"
                        : (i % 89 == 3 ? "caf\xe9" + std::to_string(i) : "w" + std::to_string(i));
    s += w + " " + std::to_string(i) + ".25 -" + std::to_string(i % 7) + "e-3 " +
         std::to_string(i * 31 % 1000) + "\n";
  }
  return s;
}

TEST(Word2VecTextReader, ParallelParseEqualsSerial) {
  TempDir d;
  std::string p = put(d, "many.txt", many_rows(5000, 0, "", 0));
  LoadedEmbeddings a = load_word2vec_text(p, {}, 1);
  for (size_t threads : {2, 3, 8}) {
    LoadedEmbeddings b = load_word2vec_text(p, {}, threads);
    ASSERT_EQ(b.table.n_rows(), a.table.n_rows());
    EXPECT_EQ(std::memcmp(a.table.f32(), b.table.f32(), a.table.byte_size()), 0);
    EXPECT_EQ(a.vocab.tokens(), b.vocab.tokens());
    EXPECT_EQ(a.warnings, b.warnings);
  }
  EXPECT_LT(a.table.n_rows(), 5000u);  // the duplicates were dropped
  EXPECT_EQ(a.warnings.size(), 2u);    // UTF-8 and duplicates
}

TEST(Word2VecTextReader, ParallelParseReportsTheEarliestError) {
  TempDir d;
  struct Case {
    size_t bad_line, blank_line;
    std::string expect;
  } cases[] = {{4000, 0, "line 4000"}, {4500, 3000, "line 3000"}, {1200, 3000, "line 1200"}};
  for (const Case& c : cases) {
    std::string p = put(d, "bad.txt", many_rows(5000, c.bad_line, "oops 1 2 x", c.blank_line));
    std::string serial =
        expect_error([&] { load_word2vec_text(p, {}, 1); }, ErrorCode::kCorrupt, {c.expect});
    std::string parallel =
        expect_error([&] { load_word2vec_text(p, {}, 4); }, ErrorCode::kCorrupt, {c.expect});
    EXPECT_EQ(serial, parallel);
  }
}

TEST(Word2VecSniffer, TellsTextFromBinary) {
  TempDir d;
  auto t = EmbeddingTable::from_f32(2, 3, {0.25f, 1, 2, 3, 4, 5});
  Vocabulary v;
  v.add("a");
  v.add("b");
  save_word2vec_text(d.file("s.txt"), t, v);
  save_word2vec_binary(d.file("s.bin"), t, v);
  std::string text = read_file(d.file("s.txt")), bin = read_file(d.file("s.bin"));
  EXPECT_TRUE(looks_like_word2vec_text(bytes_of(text)));
  EXPECT_FALSE(looks_like_word2vec_binary(bytes_of(text)));
  EXPECT_TRUE(looks_like_word2vec_binary(bytes_of(bin)));
  EXPECT_FALSE(looks_like_word2vec_text(bytes_of(bin)));
  std::string glove = "the 0.418 0.24968 -0.41242\n, 0.013441 0.23682 -0.16899\n";
  EXPECT_TRUE(looks_like_word2vec_text(bytes_of(glove)));
  EXPECT_FALSE(looks_like_word2vec_binary(bytes_of(glove)));
}

TEST(Word2VecSniffer, RejectsOtherFormats) {
  std::string npy = std::string("\x93NUMPY\x01\x00v\x00{'descr': '<f4', ", 26);
  std::string safetensors = std::string("\x40\x00\x00\x00\x00\x00\x00\x00{\"w\":", 13);
  std::string merges = "#version: 0.2\n\xc4\xa0 t\n\xc4\xa0 a\n";
  std::string prose = "The quick brown fox\njumps over 2 dogs\n";
  std::string counts = "the 123\nof 99\n";
  for (const std::string& s : {npy, safetensors, merges, prose, counts}) {
    EXPECT_FALSE(looks_like_word2vec_text(bytes_of(s))) << s;
    EXPECT_FALSE(looks_like_word2vec_binary(bytes_of(s))) << s;
  }
}

}  // namespace
}  // namespace embedscope::test
