// Shared by the word2vec trainer's test files: a corpus with known topic structure, the measure
// of how well a table learned it, small training options and an error catcher.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "embedscope/core/error.h"
#include "embedscope/train/word2vec.h"
#include "train/rng.h"

namespace embedscope::w2v_test {

// Two topics whose words never share a sentence: "aK" words and "bK" words. Training must put
// each word nearer to its own topic.
inline std::string topic_corpus(size_t n_sentences, uint64_t seed, uint64_t words_per_topic = 20) {
  SplitMix64 r(seed);
  std::string s;
  for (size_t i = 0; i < n_sentences; ++i) {
    char topic = (r.next() & 1) ? 'a' : 'b';
    for (int w = 0; w < 10; ++w) {
      s += topic;
      s += std::to_string(r.next() % words_per_topic);
      s += w == 9 ? '\n' : ' ';
    }
  }
  return s;
}

inline double cosine(const EmbeddingTable& t, size_t a, size_t b) {
  auto x = t.row(a), y = t.row(b);
  double d = 0, nx = 0, ny = 0;
  for (size_t i = 0; i < x.size(); ++i) d += x[i] * y[i], nx += x[i] * x[i], ny += y[i] * y[i];
  return d / std::sqrt(nx * ny);
}

// Mean cosine within topics minus mean cosine across topics.
inline double topic_separation(const Word2VecResult& r) {
  double in = 0, across = 0;
  size_t n_in = 0, n_across = 0;
  for (size_t i = 0; i < r.vocab.size(); ++i)
    for (size_t j = i + 1; j < r.vocab.size(); ++j) {
      bool same = r.vocab.token(TokenId(i))[0] == r.vocab.token(TokenId(j))[0];
      double c = cosine(r.table, i, j);
      (same ? in : across) += c;
      ++(same ? n_in : n_across);
    }
  return in / double(n_in) - across / double(n_across);
}

inline Word2VecOptions small_options() {
  Word2VecOptions o;
  o.dim = 16;
  o.window = 3;
  o.epochs = 3;
  o.min_count = 1;
  o.sample = 0;
  o.seed = 7;
  return o;
}

inline bool tables_equal(const EmbeddingTable& a, const EmbeddingTable& b) {
  return a.n_rows() == b.n_rows() && a.dim() == b.dim() &&
         std::memcmp(a.data(), b.data(), a.byte_size()) == 0;
}

template <class F>
Error expect_error(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no embedscope::Error thrown";
  return Error(ErrorCode::kIo, "");
}

}  // namespace embedscope::w2v_test
