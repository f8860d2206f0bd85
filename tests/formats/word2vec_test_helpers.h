// Helpers shared by the word2vec tests: write a file, load it, and capture the Error a load
// throws so tests can assert its code and message.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "embedscope/core/error.h"
#include "embedscope/formats/word2vec.h"
#include "test_util.h"

namespace embedscope::test {

inline std::string put(const TempDir& dir, const std::string& name, const std::string& bytes) {
  std::string p = dir.file(name);
  write_file(p, bytes);
  return p;
}

inline LoadedEmbeddings load_text(const std::string& path, bool strict = false) {
  LoadOptions o;
  o.strict_utf8 = strict;
  return load_word2vec_text(path, o);
}

inline LoadedEmbeddings load_bin(const std::string& path, bool strict = false) {
  LoadOptions o;
  o.strict_utf8 = strict;
  return load_word2vec_binary(path, o);
}

// Runs fn, expecting an embedscope::Error with `code` whose message contains every string of
// `parts`. Returns the message for further checks.
inline std::string expect_error(const std::function<void()>& fn, ErrorCode code,
                                std::initializer_list<std::string> parts) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(error_code_name(e.code()), error_code_name(code)) << e.what();
    for (const auto& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
          << "message lacks \"" << p << "\": " << e.what();
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected embedscope::Error, got std::exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected an error, but the call succeeded";
  return {};
}

// Row i of a F32 table.
inline std::vector<float> row_of(const LoadedEmbeddings& e, size_t i) { return e.table.row(i); }

// Bitwise equality of a table with `n x dim` float32 values in `raw` (as numpy's tobytes()).
inline void expect_table_bits(const EmbeddingTable& t, const std::string& raw) {
  ASSERT_EQ(t.dtype(), DType::kF32);
  ASSERT_EQ(raw.size(), t.n_rows() * t.dim() * 4) << "rows " << t.n_rows() << " dim " << t.dim();
  size_t mismatches = 0, first = 0;
  for (size_t i = 0; i < t.n_rows() * t.dim(); ++i) {
    if (std::memcmp(t.f32() + i, raw.data() + 4 * i, 4) != 0 && mismatches++ == 0) first = i;
  }
  EXPECT_EQ(mismatches, 0u) << "first mismatch at element " << first;
}

// Splits "a\nb\n" into {"a", "b"}.
inline std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < s.size()) {
    size_t nl = s.find('\n', at);
    if (nl == std::string::npos) nl = s.size();
    out.push_back(s.substr(at, nl - at));
    at = nl + 1;
  }
  return out;
}

}  // namespace embedscope::test
