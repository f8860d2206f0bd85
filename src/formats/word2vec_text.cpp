// word2vec text / fastText .vec / GloVe reader. Rules and policies: formats/word2vec.h.
#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "embedscope/core/checked.h"
#include "embedscope/core/error.h"
#include "embedscope/core/log.h"
#include "embedscope/core/mapped_file.h"
#include "embedscope/core/thread_pool.h"
#include "embedscope/formats/word2vec.h"
#include "formats/word2vec_common.h"

namespace embedscope {

namespace {

using w2v::excerpt;
using w2v::NumStatus;

[[noreturn]] void fail(const std::string& msg) { throw Error(ErrorCode::kCorrupt, msg); }

// Walks the mapped bytes line by line, never looking further than kMaxLineBytes ahead, so a
// 100 MB line is rejected without scanning (or buffering) all of it.
class LineCursor {
 public:
  LineCursor(const std::string& path, const char* data, size_t size, size_t start,
             size_t lines_before = 0)
      : path_(&path), data_(data), size_(size), pos_(start), line_no_(lines_before) {}

  // Next line without its '\n', trailing ' ', '\t', '\r'. False at end of file.
  bool next(std::string_view* line) {
    if (pos_ >= size_) return false;
    ++line_no_;
    line_start_ = pos_;
    size_t avail = size_ - pos_;
    size_t window = std::min(avail, kMaxLineBytes + 1);
    const void* nl = std::memchr(data_ + pos_, '\n', window);
    size_t len;
    if (nl) {
      len = size_t(static_cast<const char*>(nl) - (data_ + pos_));
    } else if (avail > kMaxLineBytes) {
      fail(*path_ + ": line " + std::to_string(line_no_) + " (byte offset " + std::to_string(pos_) +
           ") is longer than the limit of " + std::to_string(kMaxLineBytes) + " bytes");
    } else {
      len = avail;  // last line without a final newline
    }
    if (len > kMaxLineBytes)
      fail(*path_ + ": line " + std::to_string(line_no_) + " (byte offset " + std::to_string(pos_) +
           ") is " + std::to_string(len) + " bytes long, more than the limit of " +
           std::to_string(kMaxLineBytes) + " bytes");
    *line = w2v::rstrip_line(std::string_view(data_ + pos_, len));
    pos_ += len + (nl ? 1 : 0);
    return true;
  }

  // True when only whitespace remains.
  bool rest_is_blank() const {
    for (size_t i = pos_; i < size_; ++i) {
      char c = data_[i];
      if (c != ' ' && c != '\t' && c != '\r' && c != '\n') return false;
    }
    return true;
  }
  // Non-blank lines from the current position on (for messages).
  size_t count_nonblank_lines() const {
    size_t n = 0;
    bool blank = true;
    for (size_t i = pos_; i < size_; ++i) {
      char c = data_[i];
      if (c == '\n') {
        n += blank ? 0 : 1;
        blank = true;
      } else if (c != ' ' && c != '\t' && c != '\r') {
        blank = false;
      }
    }
    return n + (blank ? 0 : 1);
  }

  size_t line_no() const { return line_no_; }
  size_t line_start() const { return line_start_; }
  size_t pos() const { return pos_; }

 private:
  const std::string* path_;
  const char* data_;
  size_t size_;
  size_t pos_;
  size_t line_no_;
  size_t line_start_ = 0;
};

struct RowContext {
  const std::string& path;
  const char* file_data;
  size_t dim;
};

std::string where(const RowContext& c, size_t line_no, const char* p) {
  return c.path + ": line " + std::to_string(line_no) + " (byte offset " +
         std::to_string(size_t(p - c.file_data)) + ")";
}

[[noreturn]] void fail_count(const RowContext& c, size_t line_no, const char* line_begin,
                             size_t n_values) {
  fail(where(c, line_no, line_begin) + ": " + std::to_string(n_values) + " values, expected " +
       std::to_string(c.dim));
}

[[noreturn]] void fail_value(const RowContext& c, size_t line_no, size_t index, const char* b,
                             const char* e, NumStatus st) {
  std::string head = where(c, line_no, b) + ": value " + std::to_string(index + 1) + " of " +
                     std::to_string(c.dim) + " " + excerpt(std::string_view(b, size_t(e - b)));
  if (st == NumStatus::kNonFinite)
    fail(head + " is not finite (NaN and Inf are rejected: they would poison every cosine)");
  if (st == NumStatus::kOverflow)
    fail(head + " is outside the float32 range (largest finite 3.40282347e+38)");
  fail(head + " is not a number");
}

// Parses one row: the vector is the last c.dim fields, the word everything before the space
// that precedes them. Writes c.dim floats to out; returns the word's bytes.
std::string_view parse_row(const RowContext& c, std::string_view line, size_t line_no, float* out) {
  const char* b = line.data();
  const char* e = b + line.size();
  // Fast path: "word v1 v2 ... vDIM" with a space-free word (nearly every real line).
  if (const char* sp = static_cast<const char*>(std::memchr(b, ' ', line.size()));
      sp && sp + 1 < e && sp[1] != ' ') {
    const char* p = sp + 1;
    size_t k = 0;
    for (; k < c.dim; ++k) {
      double d;
      const char* q = w2v::parse_double_fast(p, e, &d);
      if (!q) {  // long mantissa (binary64 reprs) or anything unusual
        auto [end, ec] = std::from_chars(p, e, d);
        if (ec != std::errc()) break;
        q = end;
      }
      if (q != e && *q != ' ') break;
      float f = static_cast<float>(d);
      if (!std::isfinite(f)) break;
      out[k] = f;
      p = q;
      while (p < e && *p == ' ') ++p;
    }
    if (k == c.dim && p == e) return std::string_view(b, size_t(sp - b));
  }

  // Slow path: locate the last dim fields from the right, counting every field so errors can
  // say how many values the line holds.
  size_t n_fields = 0, n_trailing = 0;
  bool numeric_run = true;
  const char* vstart = nullptr;    // first byte of the dim-th field from the right
  const char* before_b = nullptr;  // the field just before the vector
  const char* before_e = nullptr;
  size_t i = line.size();
  while (i > 0) {
    while (i > 0 && b[i - 1] == ' ') --i;
    if (i == 0) break;
    size_t end = i;
    while (i > 0 && b[i - 1] != ' ') --i;
    ++n_fields;
    if (n_fields == c.dim) vstart = b + i;
    if (n_fields == c.dim + 1) before_b = b + i, before_e = b + end;
    if (numeric_run) {
      if (w2v::is_number(b + i, b + end))
        ++n_trailing;
      else
        numeric_run = false;
    }
  }
  if (n_fields < c.dim || vstart == b) fail_count(c, line_no, b, n_fields ? n_fields - 1 : 0);
  if (n_fields > c.dim + 1 && before_b && w2v::is_number(before_b, before_e))
    fail_count(c, line_no, b, n_trailing);
  // vstart > b here, and the byte before it is a space (fields are maximal non-space runs).
  const char* p = vstart;
  for (size_t k = 0; k < c.dim; ++k) {
    while (p < e && *p == ' ') ++p;
    const char* q = p;
    while (q < e && *q != ' ') ++q;
    NumStatus st = w2v::parse_float(p, q, &out[k]);
    if (st != NumStatus::kOk) fail_value(c, line_no, k, p, q, st);
    p = q;
  }
  return std::string_view(b, size_t(vstart - 1 - b));
}

}  // namespace

LoadedEmbeddings load_word2vec_text(const std::string& path, const LoadOptions& options,
                                    size_t n_threads) {
  auto file = MappedFile::open(path);
  const char* data = reinterpret_cast<const char*>(file->data());
  const size_t size = file->size();
  if (size == 0)
    fail(path + ": empty file: no vectors (expected \"N DIM\" or \"word v1 ... vDIM\" lines)");

  size_t start = 0;
  if (size >= 3 && std::memcmp(data, "\xEF\xBB\xBF", 3) == 0) start = 3;  // UTF-8 BOM

  LineCursor head(path, data, size, start);
  std::string_view first;
  if (!head.next(&first) || (first.empty() && head.rest_is_blank()))
    fail(path + ": no vectors: the file holds only blank lines");

  bool has_header = options.format != FileFormat::kGlove && w2v::is_header_like(first);
  if (options.format == FileFormat::kWord2VecText && !has_header)
    fail(path + ": line 1: expected a header \"N DIM\" (two positive integers), found " +
         excerpt(first));

  uint64_t n_declared = 0;
  size_t dim = 0;
  size_t body_start = start;
  if (has_header) {
    w2v::Header h = w2v::parse_header(path, first);
    body_start = head.pos();
    const uint64_t remain = size - body_start;
    // Each row needs at least 2 bytes per value (" 0"), so a header that promises more than
    // the file can hold is rejected before anything is allocated (W3).
    auto row_min = checked_mul(h.dim, 2);
    auto need = row_min ? checked_mul(*row_min, h.n) : std::nullopt;
    if (!need || *need > remain + 1) {
      LineCursor rest(path, data, size, body_start);
      fail(path + ": header declares " + std::to_string(h.n) + " vectors x " +
           std::to_string(h.dim) + " values, which needs at least " +
           (need ? std::to_string(*need) + " bytes" : std::string("more than 2^64 bytes")) +
           " and exceeds the file size: only " + std::to_string(remain) +
           " bytes follow the header (expected " + std::to_string(h.n) + " vectors, found " +
           std::to_string(rest.count_nonblank_lines()) + " lines; file truncated?)");
    }
    if (h.dim > kMaxDim)
      fail(path + ": line 1: dimension " + std::to_string(h.dim) + " exceeds the limit of " +
           std::to_string(kMaxDim));
    n_declared = h.n;
    dim = size_t(h.dim);
  } else {
    // Header-less GloVe: DIM is the most common candidate among the first 100 lines, so one
    // odd line (a numeric word, a word with spaces) does not decide it.
    std::map<size_t, size_t> votes;
    LineCursor probe(path, data, size, start);
    std::string_view l;
    for (int i = 0; i < 100 && probe.next(&l); ++i) {
      if (l.empty()) continue;
      size_t cand = w2v::glove_dim_candidate(w2v::line_shape(l));
      if (cand > 0) ++votes[cand];
    }
    size_t best = 0, best_votes = 0;
    for (auto [cand, n] : votes)
      if (n > best_votes) best = cand, best_votes = n;
    if (best == 0)
      fail(path + ": line 1: neither a header \"N DIM\" nor a \"word v1 ... vDIM\" row: " +
           excerpt(first));
    if (best > kMaxDim)
      fail(path + ": line 1: dimension " + std::to_string(best) + " exceeds the limit of " +
           std::to_string(kMaxDim));
    dim = best;
  }

  // Lines are split serially (memchr, cheap); the numbers, most of the cost, are parsed in
  // parallel. Line numbers stay contiguous because a blank line is either trailing (the end)
  // or an error that stops the split.
  struct Span {
    const char* p;
    size_t len;
  };
  std::vector<Span> spans;
  std::exception_ptr pending;  // an error found while splitting, at the line after the spans
  const size_t first_line = has_header ? 2 : 1;
  LineCursor cur(path, data, size, body_start, first_line - 1);
  const uint64_t limit = has_header ? n_declared : UINT64_MAX;
  try {
    std::string_view line;
    while (spans.size() < limit && cur.next(&line)) {
      if (line.empty()) {
        if (cur.rest_is_blank()) break;
        fail(path + ": line " + std::to_string(cur.line_no()) + " (byte offset " +
             std::to_string(cur.line_start()) +
             ") is empty; blank lines are allowed only at the end");
      }
      if (line.size() < 2 * dim) {
        // Too short for DIM values (" v" each): parse it now for its precise error, and stop,
        // so that every kept line holds >= 2*DIM bytes and the allocation below stays within
        // twice the file size even when a header-less file's DIM came from long first lines.
        std::vector<float> scratch(dim);
        RowContext c{path, data, dim};
        parse_row(c, line, cur.line_no(), scratch.data());
        fail(path + ": line " + std::to_string(cur.line_no()) + " is too short for " +
             std::to_string(dim) + " values");
      }
      spans.push_back({line.data(), line.size()});
    }
  } catch (const Error&) {
    pending = std::current_exception();
  }

  const size_t n = spans.size();
  // Uninitialised storage: every element is written by the parse (or the load fails).
  std::shared_ptr<float[]> values = w2v::alloc_floats(n * dim);
  std::vector<std::string_view> words(n);
  RowContext ctx{path, data, dim};
  struct Failure {
    size_t index = SIZE_MAX;
    std::exception_ptr error;
  };
  auto parse_range = [&](size_t begin, size_t end, Failure* failure) {
    for (size_t i = begin; i < end; ++i) {
      try {
        const size_t line_no = first_line + i;
        std::string_view w = parse_row(ctx, std::string_view(spans[i].p, spans[i].len), line_no,
                                       values.get() + i * dim);
        if (w.size() > kMaxWordBytes)
          fail(path + ": line " + std::to_string(line_no) + " (byte offset " +
               std::to_string(size_t(w.data() - data)) + "): word of " + std::to_string(w.size()) +
               " bytes exceeds the limit of " + std::to_string(kMaxWordBytes) + " bytes");
        if (options.strict_utf8) {
          size_t bad = w2v::utf8_invalid_offset(w);
          if (bad != std::string_view::npos)
            fail(path + ": line " + std::to_string(line_no) + " (byte offset " +
                 std::to_string(size_t(w.data() + bad - data)) + "): word " + excerpt(w) +
                 " is not valid UTF-8 (byte " + excerpt(w.substr(bad, 1)) +
                 "); strict UTF-8 mode rejects it");
        }
        words[i] = w;
      } catch (...) {
        *failure = {i, std::current_exception()};
        return;
      }
    }
  };
  size_t threads = n_threads ? n_threads : (size > (size_t(1) << 20) ? process_pool().size() : 1);
  threads = std::max<size_t>(1, std::min<size_t>(threads, (n + 255) / 256));
  std::vector<Failure> failures(threads);
  if (threads == 1) {
    parse_range(0, n, &failures[0]);
  } else {
    process_pool().parallel_for(
        n, [&](size_t b, size_t e, size_t t) { parse_range(b, e, &failures[t]); }, threads);
  }
  // Each range stops at its first bad line, so the smallest index is the file's first error,
  // whatever the thread count.
  const Failure* first_failure = nullptr;
  for (const Failure& f : failures)
    if (f.error && (!first_failure || f.index < first_failure->index)) first_failure = &f;
  if (first_failure) std::rethrow_exception(first_failure->error);
  if (pending) std::rethrow_exception(pending);

  if (has_header && n < n_declared)
    fail(path + ": expected " + std::to_string(n_declared) + " vectors, found " +
         std::to_string(n) + " (file truncated?)");
  if (has_header && !cur.rest_is_blank()) {
    std::string_view extra;
    size_t extra_lines = cur.count_nonblank_lines();
    while (cur.next(&extra) && extra.empty()) {
    }
    fail(path + ": line " + std::to_string(cur.line_no()) + " (byte offset " +
         std::to_string(cur.line_start()) + "): header declares " + std::to_string(n_declared) +
         " vectors but " + std::to_string(extra_lines) +
         " more non-blank lines follow them; fix the header or remove the extra lines");
  }

  // Serial: UTF-8 repair, keep-first duplicates (rows move down over dropped ones).
  LoadedEmbeddings out;
  out.path = path;
  out.format = has_header ? FileFormat::kWord2VecText : FileFormat::kGlove;
  out.source_dtype = "text";
  size_t n_rows = 0;
  size_t n_bad_utf8 = 0, first_bad_utf8_line = 0;
  size_t n_duplicates = 0, first_duplicate_line = 0;
  std::string first_duplicate;
  for (size_t i = 0; i < n; ++i) {
    std::string token;
    if (w2v::utf8_invalid_offset(words[i]) != std::string_view::npos) {
      if (n_bad_utf8++ == 0) first_bad_utf8_line = first_line + i;
      token = w2v::utf8_replace(words[i]);
    } else {
      token.assign(words[i]);
    }
    if (out.vocab.find(token)) {
      if (n_duplicates++ == 0) {
        first_duplicate = token;
        first_duplicate_line = first_line + i;
      }
      continue;
    }
    if (n_rows != i)
      std::memcpy(values.get() + n_rows * dim, values.get() + i * dim, dim * sizeof(float));
    out.vocab.add(std::move(token));
    ++n_rows;
  }

  if (n_bad_utf8) {
    std::string w =
        path + ": " + std::to_string(n_bad_utf8) +
        " words were not valid UTF-8; invalid bytes replaced by U+FFFD (first on line " +
        std::to_string(first_bad_utf8_line) + "; strict UTF-8 mode rejects such files)";
    out.warnings.push_back(w);
    log_warning(w);
  }
  if (n_duplicates) {
    std::string w =
        path + ": " + std::to_string(n_duplicates) +
        " duplicate words dropped, first occurrence kept (first: " + excerpt(first_duplicate) +
        " on line " + std::to_string(first_duplicate_line) + ")";
    out.warnings.push_back(w);
    log_warning(w);
  }
  const float* base = values.get();
  out.table = EmbeddingTable::view(std::shared_ptr<const void>(std::move(values)),
                                   reinterpret_cast<const std::byte*>(base), n_rows, dim,
                                   DType::kF32, false);
  if (has_header) out.metadata["declared_rows"] = std::to_string(n_declared);
  return out;
}

LoadedEmbeddings load_word2vec_text(const std::string& path, const LoadOptions& options) {
  return load_word2vec_text(path, options, 0);
}

}  // namespace embedscope
