// word2vec binary reader and the content sniffers. Layout and policies: formats/word2vec.h.
#include <bit>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "embedscope/core/bytes.h"
#include "embedscope/core/checked.h"
#include "embedscope/core/error.h"
#include "embedscope/core/log.h"
#include "embedscope/core/mapped_file.h"
#include "embedscope/formats/word2vec.h"
#include "formats/word2vec_common.h"

namespace embedscope {

namespace {

using w2v::excerpt;

[[noreturn]] void fail(const std::string& msg) { throw Error(ErrorCode::kCorrupt, msg); }

// word2vec.c writes "%lld %lld\n"; anything longer than this is not a header.
constexpr size_t kMaxHeaderLine = 256;

// The header line of a binary file: [0, newline) stripped, or npos when there is no newline
// within kMaxHeaderLine bytes.
size_t header_end(std::string_view bytes) {
  size_t nl = bytes.substr(0, kMaxHeaderLine).find('\n');
  return nl;
}

}  // namespace

LoadedEmbeddings load_word2vec_binary(const std::string& path, const LoadOptions& options) {
  auto file = MappedFile::open(path);
  const char* data = reinterpret_cast<const char*>(file->data());
  const size_t size = file->size();
  if (size == 0) fail(path + ": empty file: no vectors (expected a header \"N DIM\\n\")");

  std::string_view all(data, size);
  size_t nl = header_end(all);
  if (nl == std::string_view::npos)
    fail(path + ": no header line \"N DIM\" ending in a newline within the first " +
         std::to_string(kMaxHeaderLine) + " bytes");
  std::string_view header = w2v::rstrip_line(all.substr(0, nl));
  if (!w2v::is_header_like(header))
    fail(path + ": line 1: header " + excerpt(header) +
         " is not \"N DIM\" (two positive integers)");
  w2v::Header h = w2v::parse_header(path, header);
  size_t pos = nl + 1;
  const uint64_t remain = size - pos;
  // Each record is at least " " + 4*DIM bytes (an empty word): checked before allocating (W3).
  auto vec_bytes = checked_mul(h.dim, 4);
  auto rec_min = vec_bytes ? checked_add(*vec_bytes, 1) : std::nullopt;
  auto need = rec_min ? checked_mul(*rec_min, h.n) : std::nullopt;
  if (!need || *need > remain)
    fail(path + ": header declares " + std::to_string(h.n) + " vectors x " + std::to_string(h.dim) +
         " float32 values, which needs at least " +
         (need ? std::to_string(*need) + " bytes" : std::string("more than 2^64 bytes")) +
         " and exceeds the file size: only " + std::to_string(remain) +
         " bytes follow the header (file truncated?)");
  if (h.dim > kMaxDim)
    fail(path + ": line 1: dimension " + std::to_string(h.dim) + " exceeds the limit of " +
         std::to_string(kMaxDim));
  const size_t n = size_t(h.n), dim = size_t(h.dim), row_bytes = size_t(*vec_bytes);

  LoadedEmbeddings out;
  out.path = path;
  out.format = FileFormat::kWord2VecBinary;
  out.source_dtype = "F32";
  std::shared_ptr<float[]> values = w2v::alloc_floats(n * dim);  // rows written below
  size_t n_rows = 0;
  size_t n_bad_utf8 = 0, first_bad_utf8_offset = 0;
  size_t n_duplicates = 0, first_duplicate_offset = 0;
  std::string first_duplicate;

  for (size_t r = 0; r < n; ++r) {
    // word2vec.c ends each vector with '\n', gensim does not; strip it like gensim's lstrip (W7).
    while (pos < size && data[pos] == '\n') ++pos;
    if (pos == size)
      fail(path + ": expected " + std::to_string(n) + " vectors, found " + std::to_string(r) +
           " (file truncated?)");
    size_t window = std::min(size - pos, kMaxWordBytes + 1);
    const void* sp = std::memchr(data + pos, ' ', window);
    if (!sp) {
      if (size - pos > kMaxWordBytes)
        fail(path + ": vector " + std::to_string(r + 1) + ": word at byte offset " +
             std::to_string(pos) + " is longer than the limit of " + std::to_string(kMaxWordBytes) +
             " bytes (no space found)");
      fail(path + ": vector " + std::to_string(r + 1) + ": word at byte offset " +
           std::to_string(pos) + " has no terminating space before the end of the file" +
           " (expected " + std::to_string(n) + " vectors, found " + std::to_string(r) +
           "; file truncated?)");
    }
    size_t word_end = size_t(static_cast<const char*>(sp) - data);
    std::string_view word(data + pos, word_end - pos);
    size_t vec_at = word_end + 1;
    if (!in_bounds(vec_at, row_bytes, size))
      fail(path + ": vector " + std::to_string(r + 1) + " (" + excerpt(word) + ") at byte offset " +
           std::to_string(vec_at) + " needs " + std::to_string(row_bytes) +
           " bytes of float32 data but only " + std::to_string(size - vec_at) +
           " remain (file truncated mid-vector?)");
    float* row = values.get() + n_rows * dim;
    for (size_t k = 0; k < dim; ++k) {
      float f = load_le<float>(data + vec_at + 4 * k);
      if (!std::isfinite(f))
        fail(path + ": vector " + std::to_string(r + 1) + " (" + excerpt(word) + "), value " +
             std::to_string(k + 1) + " of " + std::to_string(dim) + " at byte offset " +
             std::to_string(vec_at + 4 * k) + " is " + (std::isnan(f) ? "NaN" : "Inf") +
             " (NaN and Inf are rejected: they would poison every cosine)");
      row[k] = f;
    }
    size_t word_at = pos;
    pos = vec_at + row_bytes;

    std::string token;
    size_t bad = w2v::utf8_invalid_offset(word);
    if (bad != std::string_view::npos) {
      if (options.strict_utf8)
        fail(path + ": vector " + std::to_string(r + 1) + ": word " + excerpt(word) +
             " at byte offset " + std::to_string(word_at) + " is not valid UTF-8 (byte " +
             excerpt(word.substr(bad, 1)) + " at byte offset " + std::to_string(word_at + bad) +
             "); strict UTF-8 mode rejects it");
      if (n_bad_utf8++ == 0) first_bad_utf8_offset = word_at;
      token = w2v::utf8_replace(word);
    } else {
      token.assign(word);
    }
    if (out.vocab.find(token)) {
      if (n_duplicates++ == 0) {
        first_duplicate = token;
        first_duplicate_offset = word_at;
      }
      continue;
    }
    out.vocab.add(std::move(token));
    ++n_rows;
  }
  // Trailing newlines / CRLF / spaces are fine; anything else means the header undercounts (W5).
  size_t tail = pos;
  while (tail < size && (data[tail] == '\n' || data[tail] == '\r' || data[tail] == ' ')) ++tail;
  if (tail < size)
    fail(path + ": header declares " + std::to_string(n) + " vectors but " +
         std::to_string(size - pos) + " more bytes follow the last one at byte offset " +
         std::to_string(pos) + "; fix the header or remove the extra data");

  if (n_bad_utf8) {
    std::string w = path + ": " + std::to_string(n_bad_utf8) +
                    " words were not valid UTF-8; invalid bytes replaced by U+FFFD (first at byte "
                    "offset " +
                    std::to_string(first_bad_utf8_offset) +
                    "; strict UTF-8 mode rejects such files)";
    out.warnings.push_back(w);
    log_warning(w);
  }
  if (n_duplicates) {
    std::string w =
        path + ": " + std::to_string(n_duplicates) +
        " duplicate words dropped, first occurrence kept (first: " + excerpt(first_duplicate) +
        " at byte offset " + std::to_string(first_duplicate_offset) + ")";
    out.warnings.push_back(w);
    log_warning(w);
  }
  const float* base = values.get();
  out.table = EmbeddingTable::view(std::shared_ptr<const void>(std::move(values)),
                                   reinterpret_cast<const std::byte*>(base), n_rows, dim,
                                   DType::kF32, false);
  out.metadata["declared_rows"] = std::to_string(n);
  return out;
}

namespace {

// Bytes that decimal text rows are made of.
bool is_decimal_text_byte(unsigned char c) {
  return (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E' ||
         c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// Header + position after it, when the prefix starts with a "N DIM" line of positive integers.
bool sniff_header(std::string_view s, w2v::Header* h, size_t* after) {
  size_t nl = header_end(s);
  if (nl == std::string_view::npos) return false;
  std::string_view line = w2v::rstrip_line(s.substr(0, nl));
  if (!w2v::is_header_like(line)) return false;
  try {
    *h = w2v::parse_header("", line);
  } catch (const Error&) {
    return false;
  }
  *after = nl + 1;
  return true;
}

}  // namespace

bool looks_like_word2vec_binary(std::span<const std::byte> prefix) {
  std::string_view s(reinterpret_cast<const char*>(prefix.data()), prefix.size());
  w2v::Header h;
  size_t pos;
  if (!sniff_header(s, &h, &pos)) return false;
  size_t sp = s.find(' ', pos);
  if (sp == std::string_view::npos) return false;
  std::string_view vec = s.substr(sp + 1, size_t(std::min<uint64_t>(h.dim * 4, 4096)));
  if (vec.empty()) return false;
  // A text row continues with decimal bytes up to its newline (short rows are followed by the
  // next word, which is not decimal, so only the part before the first '\n' is examined); a
  // text row never has a newline right after the word's space.
  std::string_view row = vec.substr(0, vec.find('\n'));
  if (row.empty()) return true;
  for (char c : row)
    if (!is_decimal_text_byte(static_cast<unsigned char>(c))) return true;
  return false;
}

bool looks_like_word2vec_text(std::span<const std::byte> prefix) {
  std::string_view s(reinterpret_cast<const char*>(prefix.data()), prefix.size());
  if (s.substr(0, 3) == "\xEF\xBB\xBF") s.remove_prefix(3);
  if (s.find('\0') != std::string_view::npos) return false;
  // A line of the prefix; a line cut by the end of the prefix loses its last (partial) field.
  auto line_at = [&](size_t from, bool* complete) {
    size_t nl = s.find('\n', from);
    *complete = nl != std::string_view::npos;
    std::string_view l = s.substr(from, *complete ? nl - from : std::string_view::npos);
    if (!*complete) {
      size_t cut = l.rfind(' ');
      l = cut == std::string_view::npos ? std::string_view() : l.substr(0, cut);
    }
    return w2v::rstrip_line(l);
  };
  w2v::Header h;
  size_t pos;
  if (sniff_header(s, &h, &pos)) {
    if (looks_like_word2vec_binary(prefix)) return false;
    if (pos >= s.size()) return true;  // only the header fits in the prefix
    bool complete;
    w2v::LineShape shape = w2v::line_shape(line_at(pos, &complete));
    return shape.n_trailing_numbers >= 1;
  }
  bool complete;
  std::string_view first = line_at(0, &complete);
  size_t dim = w2v::glove_dim_candidate(w2v::line_shape(first));
  if (!complete) return dim >= 8;  // a long first line: several numbers in view
  if (dim < 2) return false;
  size_t next = s.find('\n') + 1;
  if (next >= s.size()) return true;
  bool next_complete;
  std::string_view second = line_at(next, &next_complete);
  if (!next_complete) return true;
  return w2v::glove_dim_candidate(w2v::line_shape(second)) == dim;
}

}  // namespace embedscope
