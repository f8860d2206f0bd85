// .npy reader and writer; see include/embedscope/formats/npy.h for the layout and policies.
#include "embedscope/formats/npy.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstring>
#include <optional>

#include "embedscope/core/atomic_file.h"
#include "embedscope/core/checked.h"
#include "embedscope/core/error.h"
#include "embedscope/core/mapped_file.h"
#include "formats/json_scan.h"

namespace embedscope {

static_assert(std::endian::native == std::endian::little, "the npy writer emits '<' data");

namespace {

using detail::quote_for_message;

[[noreturn]] void corrupt(const std::string& msg) { throw Error(ErrorCode::kCorrupt, msg); }
[[noreturn]] void unsupported(const std::string& msg) { throw Error(ErrorCode::kUnsupported, msg); }

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<uint64_t> shape;
};

// A strict parser for the header dict, a subset of Python literal syntax:
//   header  := ws '{' ws (entry ws (',' ws entry ws)* (',' ws)?)? '}' ws
//   entry   := string ws ':' ws value
//   value   := string | 'True' | 'False' | tuple
//   tuple   := '(' ws ')' | '(' ws int ws ',' ws ')' | '(' ws int (ws ',' ws int)+ ws (',' ws)? ')'
//   int     := [0-9]+ 'L'?        (numpy's _filter_header drops Python 2's 'L')
//   string  := "'" [^'\\]* "'" | '"' [^"\\]* '"'
// Nothing is evaluated; anything else is an error quoting the text where it stopped.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string where, size_t base)
      : s_(text), where_(std::move(where)), base_(base) {}

  NpyHeader parse() {
    NpyHeader h;
    bool have_descr = false, have_fortran = false, have_shape = false;
    ws();
    expect('{', "the header must be a dict starting with '{'");
    ws();
    while (!at('}')) {
      size_t key_pos = i_;
      std::string key = string_lit();
      ws();
      expect(':', "expected ':' after a key");
      ws();
      auto dup = [&](bool& seen) {
        if (seen) fail(key_pos, "duplicate key " + quote_for_message(key));
        seen = true;
      };
      if (key == "descr") {
        dup(have_descr);
        if (at('['))
          unsupported(where_ +
                      ": structured dtype (a list in 'descr') is not supported; "
                      "embeddings must be a plain float array");
        h.descr = string_lit();
      } else if (key == "fortran_order") {
        dup(have_fortran);
        h.fortran_order = bool_lit();
      } else if (key == "shape") {
        dup(have_shape);
        h.shape = tuple_lit();
      } else {
        fail(key_pos, "unexpected key " + quote_for_message(key) +
                          " (the header holds exactly 'descr', 'fortran_order', 'shape')");
      }
      ws();
      if (at(',')) {
        ++i_;
        ws();
      } else if (!at('}')) {
        fail(i_, "expected ',' or '}'");
      }
    }
    ++i_;
    ws();
    if (i_ != s_.size()) fail(i_, "unexpected text after the dict");
    if (!have_descr) fail(0, "the header has no 'descr'");
    if (!have_fortran) fail(0, "the header has no 'fortran_order'");
    if (!have_shape) fail(0, "the header has no 'shape'");
    return h;
  }

 private:
  [[noreturn]] void fail(size_t pos, const std::string& what) {
    corrupt(where_ + " at byte " + std::to_string(base_ + pos) + ": " + what + ", found " +
            quote_for_message(s_.substr(std::min(pos, s_.size()), 24)) + " in header " +
            quote_for_message(s_, 120));
  }
  bool at(char c) const { return i_ < s_.size() && s_[i_] == c; }
  void expect(char c, const char* what) {
    if (!at(c)) fail(i_, what);
    ++i_;
  }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  bool word(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }
  std::string string_lit() {
    if (!at('\'') && !at('"')) fail(i_, "expected a quoted string");
    char q = s_[i_];
    size_t start = ++i_;
    while (i_ < s_.size() && s_[i_] != q) {
      if (s_[i_] == '\\' || s_[i_] == '\n')
        fail(i_, "escapes and newlines in strings are not allowed");
      ++i_;
    }
    if (i_ >= s_.size()) fail(start - 1, "unterminated string");
    return std::string(s_.substr(start, i_++ - start));
  }
  bool bool_lit() {
    if (word("True")) return true;
    if (word("False")) return false;
    fail(i_, "'fortran_order' must be True or False");
  }
  uint64_t int_lit(size_t index) {
    size_t start = i_;
    if (at('-')) fail(i_, "shape[" + std::to_string(index) + "] is negative");
    if (i_ >= s_.size() || s_[i_] < '0' || s_[i_] > '9')
      fail(i_, "shape[" + std::to_string(index) + "] is not an integer literal");
    uint64_t v = 0;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
      auto m = checked_mul(v, 10);
      auto a = m ? checked_add(*m, uint64_t(s_[i_] - '0')) : std::nullopt;
      if (!a) fail(start, "shape[" + std::to_string(index) + "] is 2**64 or more");
      v = *a;
      ++i_;
    }
    if (at('L')) ++i_;
    if (i_ < s_.size() &&
        (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.' || s_[i_] == '_'))
      fail(start, "shape[" + std::to_string(index) + "] is not an integer literal");
    return v;
  }
  std::vector<uint64_t> tuple_lit() {
    if (!at('(')) fail(i_, "'shape' must be a tuple of integers");
    ++i_;
    ws();
    std::vector<uint64_t> out;
    bool trailing_comma = false;
    while (!at(')')) {
      out.push_back(int_lit(out.size()));
      ws();
      trailing_comma = false;
      if (at(',')) {
        ++i_;
        trailing_comma = true;
        ws();
      } else if (!at(')')) {
        fail(i_, "expected ',' or ')' in 'shape'");
      }
    }
    ++i_;
    // "(3)" is the int 3 in Python, not a tuple; numpy rejects it as "shape is not valid".
    if (out.size() == 1 && !trailing_comma) fail(i_ - 1, "'shape' (n) is not a tuple; write (n,)");
    return out;
  }

  std::string_view s_;
  std::string where_;
  size_t base_;
  size_t i_ = 0;
};

uint16_t le16(const std::byte* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
uint32_t le32(const std::byte* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

std::string shape_str(const std::vector<uint64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace

LoadedEmbeddings load_npy(const std::string& path, const LoadOptions& /*options*/) {
  auto file = MappedFile::open(path);
  return load_npy_bytes(file, file->bytes(), path);
}

LoadedEmbeddings load_npy_bytes(std::shared_ptr<const void> owner, std::span<const std::byte> bytes,
                                const std::string& name) {
  const std::string& p = name;
  const uint64_t size = bytes.size();
  static const char kMagic[] = "\x93NUMPY";
  // N1
  if (size < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0)
    corrupt(p + ": not a .npy file: bytes 0-5 " +
            quote_for_message(std::string_view(reinterpret_cast<const char*>(bytes.data()),
                                               std::min<uint64_t>(size, 6))) +
            " are not the magic \"\\x93NUMPY\"" +
            (size < 10 ? " (file has " + std::to_string(size) + " bytes, need at least 10)" : ""));
  // N2
  const int major = int(bytes[6]), minor = int(bytes[7]);
  if ((major < 1 || major > 3) || minor != 0)
    unsupported(p + ": unsupported npy version " + std::to_string(major) + "." +
                std::to_string(minor) + " at byte 6 (supported: 1.0, 2.0, 3.0)");
  const uint64_t prefix = major == 1 ? 10 : 12;
  if (size < prefix)
    corrupt(p + ": file truncated in the npy header length: " + std::to_string(size) +
            " bytes, need " + std::to_string(prefix));
  const uint64_t hlen = major == 1 ? le16(bytes.data() + 8) : le32(bytes.data() + 8);
  // N3: checked before the header is touched.
  if (hlen > kNpyMaxHeaderSize)
    corrupt(p + ": npy header length " + std::to_string(hlen) + " (byte 8) exceeds the limit " +
            std::to_string(kNpyMaxHeaderSize));
  if (hlen > size - prefix)
    corrupt(p + ": npy header length " + std::to_string(hlen) +
            " (byte 8) exceeds the file: only " + std::to_string(size - prefix) + " bytes follow");
  std::string_view text(reinterpret_cast<const char*>(bytes.data()) + prefix, hlen);
  if (major == 3)
    if (size_t off = detail::find_invalid_utf8(text); off != detail::kValidUtf8)
      corrupt(p + ": npy 3.0 header is not valid UTF-8 at byte " + std::to_string(prefix + off));
  // N4, N5
  NpyHeader h = HeaderParser(text, p + ": npy header", prefix).parse();

  // N6, N7
  const std::string& d = h.descr;
  bool known = d.size() == 3 && (d[0] == '<' || d[0] == '>' || d[0] == '=') && d[1] == 'f' &&
               (d[2] == '2' || d[2] == '4' || d[2] == '8');
  if (!known) {
    std::string why = (d == "|O" || d == "O") ? " (object arrays need pickle, never loaded)" : "";
    unsupported(p + ": npy descr " + quote_for_message(d) + " is not supported" + why +
                "; embeddings must be '<f4', '<f2' or '<f8' (or big-endian '>f4', '>f2', '>f8')");
  }
  const bool swap = d[0] == '>';
  const size_t item = size_t(d[2] - '0');
  // Rank policy: (rows, dim), or (n,) as one row.
  uint64_t rows, dim;
  if (h.shape.size() == 2) {
    rows = h.shape[0];
    dim = h.shape[1];
  } else if (h.shape.size() == 1) {
    rows = 1;
    dim = h.shape[0];
  } else {
    unsupported(p + ": npy shape " + shape_str(h.shape) + " has " + std::to_string(h.shape.size()) +
                " dimensions; embeddings must be 2-D (rows, dim) or 1-D (one row)");
  }
  // N9, N10
  const uint64_t data_off = prefix + hlen;
  const uint64_t avail = size - data_off;
  auto numel = checked_mul(rows, dim);
  auto nbytes = numel ? checked_mul(*numel, item) : std::nullopt;
  if (!nbytes || !checked_mul(dim, 8) || !checked_mul(rows, 8))
    corrupt(p + ": npy shape " + shape_str(h.shape) + " x " + std::to_string(item) +
            " bytes overflows 64 bits");
  if (*nbytes > avail)
    corrupt(p + ": npy data truncated: shape " + shape_str(h.shape) + " x " + d + " needs " +
            std::to_string(*nbytes) + " bytes, the file has " + std::to_string(avail) +
            " after the header (byte " + std::to_string(data_off) + ")");
  if (*nbytes < avail)
    corrupt(p + ": " + std::to_string(avail - *nbytes) +
            " trailing bytes after the npy data: shape " + shape_str(h.shape) + " x " + d +
            " needs " + std::to_string(*nbytes) + " bytes, the file has " + std::to_string(avail));

  // After the size checks: a huge shape in a small file is reported as truncated.
  check_table_shape(p + ": npy shape " + shape_str(h.shape), rows, dim);
  LoadedEmbeddings e;
  e.format = FileFormat::kNpy;
  e.path = p;
  e.source_dtype = d;
  const std::byte* src = bytes.data() + data_off;
  const bool fortran = h.fortran_order && h.shape.size() == 2;
  const DType out = item == 2 ? DType::kF16 : DType::kF32;
  if (!swap && !fortran && item != 8 && reinterpret_cast<uintptr_t>(src) % item == 0) {
    e.table = EmbeddingTable::view(std::move(owner), src, rows, dim, out, /*zero_copy=*/true);
    return e;
  }
  // Copy path: element (i, j) of a Fortran-order array is at j * rows + i.
  auto load = [&](size_t k, std::byte* dst) {
    std::memcpy(dst, src + k * item, item);
    if (swap) std::reverse(dst, dst + item);
  };
  const size_t n = size_t(*numel);
  std::byte tmp[8];
  if (out == DType::kF16) {
    std::vector<uint16_t> v(n);
    for (size_t i = 0; i < rows; ++i)
      for (size_t j = 0; j < dim; ++j) {
        load(fortran ? j * rows + i : i * dim + j, tmp);
        std::memcpy(&v[i * dim + j], tmp, 2);
      }
    e.table = EmbeddingTable::from_u16(rows, dim, DType::kF16, std::move(v));
  } else {
    std::vector<float> v(n);
    for (size_t i = 0; i < rows; ++i)
      for (size_t j = 0; j < dim; ++j) {
        load(fortran ? j * rows + i : i * dim + j, tmp);
        if (item == 4) {
          std::memcpy(&v[i * dim + j], tmp, 4);
        } else {
          double x;
          std::memcpy(&x, tmp, 8);
          v[i * dim + j] = float(x);
        }
      }
    e.table = EmbeddingTable::from_f32(rows, dim, std::move(v));
  }
  return e;
}

void save_npy(const std::string& path, const EmbeddingTable& table) {
  const bool f16 = table.dtype() == DType::kF16;
  std::string dict = std::string("{'descr': '") + (f16 ? "<f2" : "<f4") +
                     "', 'fortran_order': False, 'shape': (" + std::to_string(table.n_rows()) +
                     ", " + std::to_string(table.dim()) + "), }";
  // Pad with spaces so magic + version + length + header is a multiple of 64, ending in '\n'.
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  ES_CHECK(dict.size() <= 65535);
  std::string head = "\x93NUMPY";
  head += char(1);
  head += char(0);
  uint16_t hl = uint16_t(dict.size());
  head.append(reinterpret_cast<const char*>(&hl), 2);
  head += dict;
  AtomicFile out(path);
  out.write(head);
  if (table.dtype() == DType::kBF16) {
    std::vector<float> row(table.dim());
    for (size_t i = 0; i < table.n_rows(); ++i) {
      table.row_f32(i, row.data());
      out.write(row.data(), row.size() * 4);
    }
  } else if (table.byte_size()) {
    out.write(table.data(), table.byte_size());
  }
  out.commit();
}

}  // namespace embedscope
