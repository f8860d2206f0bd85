// word2vec text and binary writers. Layout and the words they refuse: formats/word2vec.h.
#include <bit>
#include <charconv>
#include <cstring>
#include <vector>

#include "embedscope/core/atomic_file.h"
#include "embedscope/core/error.h"
#include "embedscope/formats/word2vec.h"
#include "formats/word2vec_common.h"

namespace embedscope {

namespace {

[[noreturn]] void refuse(const std::string& msg) { throw Error(ErrorCode::kInvalidArgument, msg); }

// Everything that would make the file unreadable is checked before the temp file exists, so a
// refused save writes nothing.
void check_table(const std::string& path, const EmbeddingTable& table, const Vocabulary& vocab) {
  if (vocab.size() != table.n_rows())
    refuse(path + ": word2vec files need one word per row: the vocabulary has " +
           std::to_string(vocab.size()) + " words for " + std::to_string(table.n_rows()) + " rows");
  if (table.n_rows() == 0 || table.dim() == 0)
    refuse(path + ": cannot write an empty table (" + std::to_string(table.n_rows()) + " x " +
           std::to_string(table.dim()) + ") as word2vec: readers reject files without vectors");
  if (uint64_t bad = table.n_nonfinite())
    refuse(path + ": the table holds " + std::to_string(bad) +
           " NaN/Inf values; word2vec files written by embedscope hold finite values only");
}

std::string row_name(size_t row, const std::string& word) {
  return "row " + std::to_string(row) + " (word " + w2v::excerpt(word) + ")";
}

void check_word_common(const std::string& path, size_t row, const std::string& word) {
  if (word.size() > kMaxWordBytes)
    refuse(path + ": " + row_name(row, word) + " is " + std::to_string(word.size()) +
           " bytes long, more than the limit of " + std::to_string(kMaxWordBytes));
  if (word.find('\n') != std::string::npos)
    refuse(path + ": " + row_name(row, word) +
           " contains a newline, which word2vec files cannot hold");
}

std::string header_line(const EmbeddingTable& table) {
  return std::to_string(table.n_rows()) + " " + std::to_string(table.dim()) + "\n";
}

}  // namespace

void save_word2vec_text(const std::string& path, const EmbeddingTable& table,
                        const Vocabulary& vocab) {
  check_table(path, table, vocab);
  for (size_t r = 0; r < vocab.size(); ++r) {
    const std::string& w = vocab.token(TokenId(r));
    check_word_common(path, r, w);
    if (w.find('\r') != std::string::npos)
      refuse(path + ": " + row_name(r, w) +
             " contains a carriage return, which text files cannot hold");
    // The reader takes the last DIM fields as the vector; a word ending in a number after a
    // space ("a 5") would read back as an extra value.
    std::string_view sv = w2v::rstrip_line(w);
    w2v::LineShape shape = w2v::line_shape(w);
    size_t last = sv.find_last_of(' ');
    if (shape.n_fields >= 2 && last != std::string_view::npos &&
        w2v::is_number(sv.data() + last + 1, sv.data() + sv.size()))
      refuse(path + ": " + row_name(r, w) +
             " ends in a space-separated number, which would read back as an extra value");
  }
  const size_t dim = table.dim();
  AtomicFile f(path);
  f.write(header_line(table));
  std::vector<float> row(dim);
  std::string line;
  char num[32];
  for (size_t r = 0; r < table.n_rows(); ++r) {
    table.row_f32(r, row.data());
    line = vocab.token(TokenId(r));
    for (size_t k = 0; k < dim; ++k) {
      // Shortest decimal that reads back to the same float32 (also through binary64 first,
      // as numpy does: a <= 9-digit decimal never lands on a float32 rounding midpoint).
      auto [end, ec] = std::to_chars(num, num + sizeof num, row[k]);
      line.push_back(' ');
      line.append(num, end);
    }
    line.push_back('\n');
    f.write(line);
  }
  f.commit();
}

void save_word2vec_binary(const std::string& path, const EmbeddingTable& table,
                          const Vocabulary& vocab) {
  check_table(path, table, vocab);
  for (size_t r = 0; r < vocab.size(); ++r) {
    const std::string& w = vocab.token(TokenId(r));
    if (w.find(' ') != std::string::npos)
      refuse(path + ": " + row_name(r, w) +
             " contains a space, which ends a word in binary word2vec");
    if (w.size() > kMaxWordBytes)
      refuse(path + ": " + row_name(r, w) + " is " + std::to_string(w.size()) +
             " bytes long, more than the limit of " + std::to_string(kMaxWordBytes));
    if (!w.empty() && w[0] == '\n')
      refuse(path + ": " + row_name(r, w) + " starts with a newline, which readers strip");
  }
  const size_t dim = table.dim();
  AtomicFile f(path);
  f.write(header_line(table));
  std::vector<float> row(dim);
  std::string rec;
  for (size_t r = 0; r < table.n_rows(); ++r) {
    table.row_f32(r, row.data());
    rec = vocab.token(TokenId(r));
    rec.push_back(' ');
    size_t at = rec.size();
    rec.resize(at + 4 * dim);
    for (size_t k = 0; k < dim; ++k) {
      uint32_t u = std::bit_cast<uint32_t>(row[k]);
      if constexpr (std::endian::native == std::endian::big) u = __builtin_bswap32(u);
      std::memcpy(rec.data() + at + 4 * k, &u, 4);
    }
    rec.push_back('\n');
    f.write(rec);
  }
  f.commit();
}

}  // namespace embedscope
