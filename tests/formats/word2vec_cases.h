// Seed inputs for the word2vec fuzz targets (fuzz/corpus_w2v_{text,bin}.cpp): the inputs of
// the bad-input suite (word2vec_bad_input_test.cpp, docs/reliability.md W1-W17) and of the
// accepted cases, small enough for the replay's byte flips and truncations to explore.
#pragma once

#include <string>
#include <vector>

namespace embedscope::test {

struct W2vCase {
  std::string id;
  std::string bytes;
};

inline std::string w2v_f32(std::initializer_list<float> v) {
  std::string s;
  for (float f : v) s.append(reinterpret_cast<const char*>(&f), 4);
  return s;
}

inline std::vector<W2vCase> w2v_text_cases() {
  return {
      {"good-basic", "2 3\ncat 1 -2.5 3e2\ndog 0.125 0 -0\n"},
      {"good-glove", "the 0.1 0.2\nof -1 2\n"},
      {"good-glove-840b", ". . . 0.1 0.2\nat name@domain.com 1 2\nplain -3 4\n"},
      {"good-w9", "4 2\nx\ty 1 2\nnb\xc2\xa0sp 3 4\n  5 6\n 7 8\n"},
      {"good-w15",
       "\xEF\xBB\xBF"
       "2 2\r\na 1 2 \r\nb 3 4"},
      {"good-dup", "4 1\na 1\nb 2\na 3\nb 4\n"},
      {"good-latin1", "3 1\ncaf\xe9 1\nok 2\nab\xe6\x97 3\n"},
      {"good-numbers", "1 7\nw 1e-50 -1e-400 +1.5 2.5E+1 .5 1.401298464324817e-45 0.1\n"},
      {"w1-empty", ""},
      {"w1-zero", "0 300\n"},
      {"w2-negative", "-5 3\na 1 2 3\n"},
      {"w2-dim0", "10 0\na\n"},
      {"w2-float", "2.5 3\na 1 2 3\n"},
      {"w2-prose", "hello world\nthis is not a vector file\n"},
      {"w3-huge", "1000000000 1000000000\n" + std::string(100, 'x')},
      {"w3-wrap", "18446744073709551615 18446744073709551615\na 1\n"},
      {"w4-short", "3 2\na 1 2\nb 3 4\n"},
      {"w5-long", "2 2\na 1 2\nb 3 4\nc 5 6\n"},
      {"w8-few", "3 3\na 1 2 3\nb 4 5 6\nc 7 8\n"},
      {"w8-many", "2 3\na 1 2 3\nb 4 5 6 7\n"},
      {"w11-x", "2 3\na 1 2 3\nb 4 0.1x 6\n"},
      {"w11-nan", "1 3\na 1 nan 3\n"},
      {"w11-1e999", "1 2\na 1e999 2\n"},
      {"w14-gap", "2 1\na 1\n\nb 2\n"},
  };
}

inline std::vector<W2vCase> w2v_binary_cases() {
  return {
      {"good-basic", "2 2\nab " + w2v_f32({1, 2}) + "\ncd " + w2v_f32({3, 4}) + "\n"},
      {"good-no-newline",
       "3 2\nab " + w2v_f32({1, 2}) + "\ncd " + w2v_f32({3, 4}) + "ef " + w2v_f32({5, -6})},
      {"good-dup", "3 1\na " + w2v_f32({1}) + "\nb " + w2v_f32({2}) + "\na " + w2v_f32({3}) + "\n"},
      {"good-utf8", "1 1\nx\xff " + w2v_f32({1})},
      {"w1-empty", ""},
      {"w1-zero", "0 3\n"},
      {"w2-words", "the 0.1 0.2\n"},
      {"w2-negative", "2 -3\n"},
      {"w3-huge", "1000000000 1000000000\n" + std::string(100, 'x')},
      {"w4-short", "3 2\na " + w2v_f32({1, 2}) + "\nb " + w2v_f32({3, 4}) + "\n\n\n\n\n\n\n\n\n\n"},
      {"w5-trailing", "1 2\na " + w2v_f32({1, 2}) + "\nextra"},
      {"w6-cut", "2 3\nab " + w2v_f32({1, 2, 3}) + "\ncd " + w2v_f32({4, 5})},
      {"w6-cutword", "2 1\na " + w2v_f32({1}) + "\nbcd"},
      {"w11-nan", "1 2\nab " + w2v_f32({1, __builtin_nanf("")}) + "\n"},
  };
}

}  // namespace embedscope::test
