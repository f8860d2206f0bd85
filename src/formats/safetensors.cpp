// safetensors reader and writer. The checks follow the reference reader's order
// (safetensors/src/tensor.rs: read_metadata, Metadata::validate) so that a file it rejects, we
// reject, with messages that name the field; see include/embedscope/formats/safetensors.h.
#include "embedscope/formats/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <set>

#include "embedscope/core/atomic_file.h"
#include "embedscope/core/bytes.h"
#include "embedscope/core/checked.h"
#include "embedscope/core/error.h"
#include "formats/json_scan.h"

namespace embedscope {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; a big-endian port must swap on load");

namespace {

using detail::quote_for_message;
using nlohmann::json;

[[noreturn]] void corrupt(const std::string& msg) { throw Error(ErrorCode::kCorrupt, msg); }
[[noreturn]] void bad_arg(const std::string& msg) { throw Error(ErrorCode::kInvalidArgument, msg); }

std::string shape_str(const std::vector<uint64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// A JSON value as a short string for messages ("-1", "2.0", "\"x\"").
std::string json_str(const json& v) {
  // Never dump containers: a header of 100 MB of '[' would recurse that deep.
  if (v.is_array()) return "an array of " + std::to_string(v.size()) + " elements";
  if (v.is_object()) return "an object of " + std::to_string(v.size()) + " keys";
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() > 60 ? s.substr(0, 60) + "..." : s;
}

// Reads an array of unsigned 64-bit integers. nlohmann keeps non-negative integer literals as
// uint64 (exact beyond 2^53); negatives, fractions, exponents and literals above 2^64-1 come
// out as other number types and are rejected here.
std::vector<uint64_t> read_u64_array(const json& v, const std::string& where) {
  if (!v.is_array())
    corrupt(where + " is " + json_str(v) + ", expected an array of unsigned integers");
  std::vector<uint64_t> out;
  out.reserve(v.size());  // bounded by the header text, already in memory
  for (size_t i = 0; i < v.size(); ++i) {
    const json& x = v[i];
    if (!x.is_number_unsigned()) {
      std::string why = x.is_number_integer() ? "negative"
                        : x.is_number_float() ? "not an integer literal (floats, exponents and "
                                                "values above 2^64-1 are not allowed)"
                                              : "not a number";
      corrupt(where + "[" + std::to_string(i) + "] = " + json_str(x) + " is " + why +
              "; expected an unsigned 64-bit integer");
    }
    out.push_back(x.get<uint64_t>());
  }
  return out;
}

struct DtypeBits {
  std::string_view name;
  int bits;
};
constexpr DtypeBits kDtypes[] = {
    {"BOOL", 8},    {"U8", 8},          {"I8", 8},          {"F8_E5M2", 8}, {"F8_E4M3", 8},
    {"F8_E8M0", 8}, {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8}, {"F4", 4},      {"F6_E2M3", 6},
    {"F6_E3M2", 6}, {"I16", 16},        {"U16", 16},        {"F16", 16},    {"BF16", 16},
    {"I32", 32},    {"U32", 32},        {"F32", 32},        {"I64", 64},    {"U64", 64},
    {"F64", 64},    {"C64", 64},
};

std::string list_names(const std::vector<std::string>& names, size_t max_n = 20) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < max_n; ++i)
    s += (i ? ", " : "") + quote_for_message(names[i]);
  if (names.size() > max_n) s += ", ... (" + std::to_string(names.size()) + " in all)";
  return s.empty() ? "(none)" : s;
}

}  // namespace

int safetensors_dtype_bits(std::string_view dtype) {
  for (const auto& d : kDtypes)
    if (d.name == dtype) return d.bits;
  return 0;
}

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  auto file = MappedFile::open(path);
  return parse(file, file->bytes(), path);
}

SafetensorsFile SafetensorsFile::parse(std::shared_ptr<const void> owner,
                                       std::span<const std::byte> bytes, const std::string& name) {
  const std::string& p = name;
  const uint64_t size = bytes.size();
  // S1
  if (size < 8)
    corrupt(p + ": safetensors header too small: the file has " + std::to_string(size) +
            " bytes, need at least 8 for the header length");
  const uint64_t n = load_le<uint64_t>(bytes.data());
  // S3: checked before anything is sized from n.
  if (n > kSafetensorsMaxHeaderSize)
    corrupt(p + ": safetensors header too large: header length " + std::to_string(n) +
            " (bytes 0-7) exceeds the limit " + std::to_string(kSafetensorsMaxHeaderSize));
  // S4
  if (n > size - 8)
    corrupt(p + ": safetensors header length " + std::to_string(n) +
            " exceeds the file size: only " + std::to_string(size - 8) +
            " bytes follow the 8-byte length");
  // S2
  if (n < 2)
    corrupt(p + ": safetensors header length " + std::to_string(n) +
            " is too small for a JSON object (at least 2 bytes, \"{}\")");
  std::string_view header(reinterpret_cast<const char*>(bytes.data()) + 8, n);
  // S5
  if (size_t off = detail::find_invalid_utf8(header); off != detail::kValidUtf8)
    corrupt(p + ": safetensors header is not valid UTF-8 at byte " + std::to_string(8 + off) +
            " (value " + quote_for_message(header.substr(off, 1)) + ")");
  // S8: a raw NUL can't be part of JSON text; say why, since NUL padding is a common mistake.
  if (size_t off = header.find('\0'); off != std::string_view::npos)
    corrupt(p + ": safetensors header has a NUL byte at byte " + std::to_string(8 + off) +
            ": padding after the JSON must be spaces (0x20), not NUL");
  // S6, S7 (whitespace around the object is JSON whitespace), S9.
  json doc = detail::parse_json_no_duplicates(header, p + ": safetensors header");
  if (!doc.is_object())
    corrupt(p + ": safetensors header is a JSON " + std::string(doc.type_name()) +
            ", expected an object");

  SafetensorsFile f;
  f.owner_ = std::move(owner);
  f.bytes_ = bytes;
  f.path_ = p;
  f.header_size_ = n;
  std::set<std::string> unknown_keys;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::string& key = it.key();
    const json& val = it.value();
    if (key == "__metadata__") {  // S10
      if (val.is_null()) continue;
      if (!val.is_object())
        corrupt(p + ": __metadata__ is " + json_str(val) + ", expected an object of strings");
      for (auto m = val.begin(); m != val.end(); ++m) {
        if (!m.value().is_string())
          corrupt(p + ": __metadata__ value for key " + quote_for_message(m.key()) + " is " +
                  json_str(m.value()) + " (a JSON " + std::string(m.value().type_name()) +
                  "), expected a string");
        f.metadata_[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    const std::string where = p + ": tensor " + quote_for_message(key);
    // S11: a NUL inside a name makes C-string consumers see another name.
    if (size_t z = key.find('\0'); z != std::string::npos)
      corrupt(where + " has a NUL character at position " + std::to_string(z) + " of its name");
    if (!val.is_object()) corrupt(where + " is " + json_str(val) + ", expected an object");
    SafetensorsTensorInfo t;
    t.name = key;
    // S12
    auto d = val.find("dtype");
    if (d == val.end()) corrupt(where + " has no \"dtype\"");
    if (!d->is_string()) corrupt(where + " dtype is " + json_str(*d) + ", expected a string");
    t.dtype = d->get<std::string>();
    if (safetensors_dtype_bits(t.dtype) == 0)
      corrupt(where + " has unknown dtype " + quote_for_message(t.dtype) +
              " (dtype names are upper-case: F32, F16, BF16, I64, ...)");
    // S13
    auto s = val.find("shape");
    if (s == val.end()) corrupt(where + " has no \"shape\"");
    t.shape = read_u64_array(*s, where + " shape");
    // S15
    auto o = val.find("data_offsets");
    if (o == val.end()) corrupt(where + " has no \"data_offsets\"");
    std::vector<uint64_t> offs = read_u64_array(*o, where + " data_offsets");
    if (offs.size() != 2)
      corrupt(where + " data_offsets has " + std::to_string(offs.size()) +
              " elements, expected 2 ([begin, end])");
    t.begin = offs[0];
    t.end = offs[1];
    // S26: the reference ignores extra keys; so do we, but say so.
    for (auto k = val.begin(); k != val.end(); ++k)
      if (k.key() != "dtype" && k.key() != "shape" && k.key() != "data_offsets")
        unknown_keys.insert(k.key());
    f.tensors_.push_back(std::move(t));
  }
  if (!unknown_keys.empty()) {
    std::vector<std::string> ks(unknown_keys.begin(), unknown_keys.end());
    f.warnings_.push_back(p + ": ignored unknown keys in tensor entries: " + list_names(ks));
  }

  // S23: order by offsets like the reference; name breaks ties so messages are deterministic.
  std::sort(f.tensors_.begin(), f.tensors_.end(), [](const auto& a, const auto& b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  uint64_t running = 0;
  const SafetensorsTensorInfo* prev = nullptr;
  for (const auto& t : f.tensors_) {
    const std::string where = p + ": tensor " + quote_for_message(t.name);
    const std::string offs = "[" + std::to_string(t.begin) + ", " + std::to_string(t.end) + "]";
    // S16, S17
    if (t.begin != running) {
      if (!prev) corrupt(where + " data_offsets " + offs + ": the first tensor must begin at 0");
      if (t.begin < running)
        corrupt(where + " data_offsets " + offs + " overlap tensor " +
                quote_for_message(prev->name) + " which ends at " + std::to_string(running) +
                " (tensors must not share bytes)");
      corrupt(where + " data_offsets " + offs + ": begin expected " + std::to_string(running) +
              " (end of " + quote_for_message(prev->name) + "), a gap of " +
              std::to_string(t.begin - running) + " bytes");
    }
    // S15
    if (t.end < t.begin) corrupt(where + " data_offsets " + offs + ": begin > end");
    // S14: products that overflow (or wrap to 0) are errors even for [x, x] offsets.
    std::optional<uint64_t> numel = 1;
    for (uint64_t dim : t.shape)
      if (numel) numel = checked_mul(*numel, dim);
    int bits_per = safetensors_dtype_bits(t.dtype);
    std::optional<uint64_t> bits = numel ? checked_mul(*numel, uint64_t(bits_per)) : std::nullopt;
    if (!bits)
      corrupt(where + ": overflow computing the size of shape " + shape_str(t.shape) + " x " +
              std::to_string(bits_per) + " bits (" + t.dtype + "): exceeds 2^64");
    // S21
    if (*bits % 8 != 0)
      corrupt(where + " (" + t.dtype + ", shape " + shape_str(t.shape) + ") holds " +
              std::to_string(*bits) + " bits, not a whole number of bytes");
    // S18
    if (t.end - t.begin != *bits / 8)
      corrupt(where + " size mismatch: shape " + shape_str(t.shape) + " x " + t.dtype + " needs " +
              std::to_string(*bits / 8) + " bytes, data_offsets " + offs + " hold " +
              std::to_string(t.end - t.begin));
    running = t.end;
    prev = &t;
  }
  // S19, S20
  const uint64_t data_size = size - 8 - n;
  if (running < data_size)
    corrupt(p + ": " + std::to_string(data_size - running) +
            " unindexed trailing bytes after the last tensor (the data section has " +
            std::to_string(data_size) + " bytes, tensors cover " + std::to_string(running) + ")");
  if (running > data_size)
    corrupt(p + ": file truncated: the tensors need " + std::to_string(running) +
            " bytes of data but only " + std::to_string(data_size) + " follow the header (" +
            std::to_string(running - data_size) + " missing)");

  for (size_t i = 0; i < f.tensors_.size(); ++i) f.index_.emplace(f.tensors_[i].name, i);
  return f;
}

const SafetensorsTensorInfo* SafetensorsFile::find(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

std::span<const std::byte> SafetensorsFile::tensor_bytes(const SafetensorsTensorInfo& t) const {
  // Offsets were validated against the file at parse time.
  return bytes_.subspan(data_start() + t.begin, t.end - t.begin);
}

std::vector<std::string> SafetensorsFile::matrix_candidates() const {
  std::vector<std::string> out;
  for (const auto& t : tensors_)
    if (t.shape.size() == 2) out.push_back(t.name);
  return out;
}

namespace {

// Reads our vocabulary tensors (embeddings_file.h) for a matrix of `n_rows` rows.
void read_vocab(const SafetensorsFile& f, size_t n_rows, LoadedEmbeddings& e) {
  const auto* tb = f.find(kVocabBytesTensor);
  const auto* to = f.find(kVocabOffsetsTensor);
  const auto* tc = f.find(kVocabCountsTensor);
  if (!tb && !to && !tc) return;
  const std::string& p = f.path();
  if (!tb || !to)
    corrupt(p + ": vocabulary needs both " + std::string(kVocabBytesTensor) + " and " +
            std::string(kVocabOffsetsTensor));
  auto need = [&](const SafetensorsTensorInfo* t, const char* dtype) {
    if (t->dtype != dtype || t->shape.size() != 1)
      corrupt(p + ": tensor " + quote_for_message(t->name) + " is " + t->dtype + " " +
              shape_str(t->shape) + ", expected a 1-D " + dtype + " tensor");
  };
  need(tb, "U8");
  need(to, "I64");
  if (to->shape[0] != uint64_t(n_rows) + 1) {
    e.warnings.push_back(p + ": vocabulary has " +
                         std::to_string(to->shape[0] - (to->shape[0] > 0)) +
                         " entries but tensor " + quote_for_message(e.tensor) + " has " +
                         std::to_string(n_rows) + " rows; vocabulary ignored");
    return;
  }
  auto bytes = f.tensor_bytes(*tb);
  auto offs = f.tensor_bytes(*to);
  auto off_at = [&](size_t i) {
    int64_t v;
    std::memcpy(&v, offs.data() + 8 * i, 8);
    return v;
  };
  int64_t prev = off_at(0);
  if (prev != 0)
    corrupt(p + ": " + std::string(kVocabOffsetsTensor) + "[0] = " + std::to_string(prev) +
            ", expected 0");
  Vocabulary v;
  for (size_t i = 0; i < n_rows; ++i) {
    int64_t next = off_at(i + 1);
    if (next < prev || uint64_t(next) > bytes.size())
      corrupt(p + ": " + std::string(kVocabOffsetsTensor) + "[" + std::to_string(i + 1) +
              "] = " + std::to_string(next) + " is out of order or beyond the " +
              std::to_string(bytes.size()) + " token bytes (previous " + std::to_string(prev) +
              ")");
    v.add(std::string(reinterpret_cast<const char*>(bytes.data()) + prev, size_t(next - prev)));
    prev = next;
  }
  if (uint64_t(prev) != bytes.size())
    corrupt(p + ": " + std::string(kVocabOffsetsTensor) + " ends at " + std::to_string(prev) +
            " but " + std::string(kVocabBytesTensor) + " has " + std::to_string(bytes.size()) +
            " bytes");
  if (tc) {
    need(tc, "I64");
    if (tc->shape[0] != n_rows)
      corrupt(p + ": " + std::string(kVocabCountsTensor) + " has " + std::to_string(tc->shape[0]) +
              " entries, expected " + std::to_string(n_rows));
    auto cb = f.tensor_bytes(*tc);
    std::vector<uint64_t> counts(n_rows);
    for (size_t i = 0; i < n_rows; ++i) {
      int64_t c;
      std::memcpy(&c, cb.data() + 8 * i, 8);
      if (c < 0)
        corrupt(p + ": " + std::string(kVocabCountsTensor) + "[" + std::to_string(i) +
                "] = " + std::to_string(c) + " is negative");
      counts[i] = uint64_t(c);
    }
    v.set_counts(std::move(counts));
  }
  e.vocab = std::move(v);
}

}  // namespace

LoadedEmbeddings SafetensorsFile::load_matrix(const std::string& tensor_name) const {
  const SafetensorsTensorInfo* t = find(tensor_name);
  if (!t) {
    std::vector<std::string> names;
    for (const auto& x : tensors_) names.push_back(x.name);
    throw Error(ErrorCode::kNotFound, path_ + ": no tensor " + quote_for_message(tensor_name) +
                                          "; tensors: " + list_names(names));
  }
  const std::string where = path_ + ": tensor " + quote_for_message(t->name);
  if (t->shape.size() != 2)
    throw Error(ErrorCode::kInvalidArgument, where + " has shape " + shape_str(t->shape) + " (" +
                                                 std::to_string(t->shape.size()) +
                                                 "-D); an embedding matrix must be 2-D");
  const uint64_t rows = t->shape[0], dim = t->shape[1];
  check_table_shape(where, rows, dim);
  // A [0, huge] tensor has no bytes, but rows x dim would still overflow in row arithmetic.
  if (!checked_mul(dim, 8) || !checked_mul(rows, 8))
    corrupt(where + " shape " + shape_str(t->shape) + " is too large for a table");
  auto data = tensor_bytes(*t);
  LoadedEmbeddings e;
  e.format = FileFormat::kSafetensors;
  e.path = path_;
  e.tensor = t->name;
  e.source_dtype = t->dtype;
  e.metadata = metadata_;
  e.warnings = warnings_;
  auto take = [&](DType dt) {
    if (reinterpret_cast<uintptr_t>(data.data()) % dtype_size(dt) == 0)  // S24
      e.table = EmbeddingTable::view(owner_, data.data(), rows, dim, dt, /*zero_copy=*/true);
    else
      e.table = EmbeddingTable::copy_of(data.data(), rows, dim, dt);
  };
  if (t->dtype == "F32") {
    take(DType::kF32);
  } else if (t->dtype == "F16") {
    take(DType::kF16);
  } else if (t->dtype == "BF16") {
    take(DType::kBF16);
  } else if (t->dtype == "F64") {
    std::vector<float> v(rows * dim);  // rows x dim x 8 == data.size(), checked at parse
    for (size_t i = 0; i < v.size(); ++i) {
      double d;
      std::memcpy(&d, data.data() + 8 * i, 8);
      v[i] = float(d);
    }
    e.table = EmbeddingTable::from_f32(rows, dim, std::move(v));
  } else {
    throw Error(ErrorCode::kUnsupported, where + " has dtype " + t->dtype +
                                             "; an embedding matrix must be F32, F16, BF16 or F64");
  }
  read_vocab(*this, rows, e);
  return e;
}

void save_safetensors(const std::string& path, std::span<const SafetensorsWriteTensor> tensors,
                      const std::map<std::string, std::string>& metadata) {
  const std::string& p = path;
  // Refuse an oversized header before building it (the metadata alone may be hundreds of MB).
  uint64_t meta_bytes = 0;
  for (const auto& [k, v] : metadata) meta_bytes += k.size() + v.size();
  if (meta_bytes > kSafetensorsMaxHeaderSize)
    bad_arg(p + ": safetensors __metadata__ holds " + std::to_string(meta_bytes) +
            " bytes, over the header limit " + std::to_string(kSafetensorsMaxHeaderSize));
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    auto& m = header["__metadata__"] = nlohmann::ordered_json::object();
    for (const auto& [k, v] : metadata) {
      if (detail::find_invalid_utf8(k) != detail::kValidUtf8 ||
          detail::find_invalid_utf8(v) != detail::kValidUtf8)
        bad_arg(p + ": __metadata__ entry " + quote_for_message(k) +
                " is not valid UTF-8 (JSON strings must be)");
      m[k] = v;
    }
  }
  std::set<std::string_view> seen;
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    const std::string where = p + ": tensor " + quote_for_message(t.name);
    // S27
    if (t.name == "__metadata__") bad_arg(where + ": the name is reserved for the metadata block");
    if (size_t z = t.name.find('\0'); z != std::string::npos)
      bad_arg(where + " has a NUL character at position " + std::to_string(z) + " of its name");
    if (detail::find_invalid_utf8(t.name) != detail::kValidUtf8)
      bad_arg(where + ": the name is not valid UTF-8");
    if (!seen.insert(t.name).second) bad_arg(where + " appears twice");
    int bits_per = safetensors_dtype_bits(t.dtype);
    if (bits_per == 0) bad_arg(where + " has unknown dtype " + quote_for_message(t.dtype));
    std::optional<uint64_t> bits = 1;
    for (uint64_t d : t.shape)
      if (bits) bits = checked_mul(*bits, d);
    if (bits) bits = checked_mul(*bits, uint64_t(bits_per));
    if (!bits) bad_arg(where + ": size of shape " + shape_str(t.shape) + " overflows");
    if (*bits % 8 != 0 || *bits / 8 != t.data.size())
      bad_arg(where + ": shape " + shape_str(t.shape) + " x " + t.dtype + " needs " +
              std::to_string(*bits / 8) + " bytes (" + std::to_string(*bits) + " bits), data has " +
              std::to_string(t.data.size()));
    auto& e = header[t.name];
    e["dtype"] = t.dtype;
    e["shape"] = t.shape;
    e["data_offsets"] = {offset, offset + t.data.size()};
    offset += t.data.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  if (text.size() > kSafetensorsMaxHeaderSize)
    bad_arg(p + ": safetensors header would be " + std::to_string(text.size()) +
            " bytes, over the limit " + std::to_string(kSafetensorsMaxHeaderSize));
  AtomicFile out(path);
  uint64_t n = text.size();
  out.write(&n, 8);
  out.write(text);
  for (const auto& t : tensors)
    if (!t.data.empty()) out.write(t.data.data(), t.data.size());
  out.commit();
}

LoadedEmbeddings load_safetensors_embeddings(const std::string& path, const LoadOptions& options) {
  SafetensorsFile f = SafetensorsFile::open(path);
  std::string name = options.tensor;
  if (name.empty()) {
    auto c = f.matrix_candidates();
    if (c.empty()) {
      std::vector<std::string> all;
      for (const auto& t : f.tensors()) all.push_back(t.name + " " + shape_str(t.shape));
      throw Error(
          ErrorCode::kNotFound,
          path + ": no 2-D tensor to use as an embedding matrix; tensors: " + list_names(all));
    }
    if (c.size() > 1)
      throw Error(ErrorCode::kInvalidArgument,
                  path + ": " + std::to_string(c.size()) +
                      " 2-D tensors, choose one with --tensor: " + list_names(c));
    name = c[0];
  }
  return f.load_matrix(name);
}

void save_safetensors_embeddings(const std::string& path, const EmbeddingTable& table,
                                 const Vocabulary* vocab, const SaveOptions& options) {
  const std::string name = options.tensor.empty() ? "embeddings" : options.tensor;
  if (name.rfind("embedscope.vocab.", 0) == 0)
    bad_arg(path + ": tensor name " + quote_for_message(name) + " is reserved for the vocabulary");
  std::vector<SafetensorsWriteTensor> ts;
  ts.push_back({name,
                std::string(dtype_name(table.dtype())),
                {table.n_rows(), table.dim()},
                {table.data(), table.byte_size()}});
  std::string bytes;
  std::vector<int64_t> offs, counts;
  if (vocab && !vocab->empty()) {
    if (vocab->size() != table.n_rows())
      bad_arg(path + ": vocabulary has " + std::to_string(vocab->size()) + " tokens, table has " +
              std::to_string(table.n_rows()) + " rows");
    offs.push_back(0);
    for (const auto& tok : vocab->tokens()) {
      bytes += tok;
      offs.push_back(int64_t(bytes.size()));
    }
    auto as_bytes = [](const auto& v) {
      return std::span<const std::byte>(reinterpret_cast<const std::byte*>(v.data()),
                                        v.size() * sizeof(v[0]));
    };
    ts.push_back({std::string(kVocabBytesTensor), "U8", {bytes.size()}, as_bytes(bytes)});
    ts.push_back({std::string(kVocabOffsetsTensor), "I64", {offs.size()}, as_bytes(offs)});
    if (vocab->has_counts()) {
      for (uint64_t c : vocab->counts()) {
        if (c > uint64_t(INT64_MAX))
          bad_arg(path + ": count " + std::to_string(c) + " exceeds I64");
        counts.push_back(int64_t(c));
      }
      ts.push_back({std::string(kVocabCountsTensor), "I64", {counts.size()}, as_bytes(counts)});
    }
  }
  std::map<std::string, std::string> meta = options.metadata;
  meta["embedscope.version"] = "1";
  save_safetensors(path, ts, meta);
}

}  // namespace embedscope
