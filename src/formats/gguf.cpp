// GGUF reader: validation follows ggml/src/gguf.cpp (gguf_init_from_file_impl), checking every
// length against the bytes that remain before allocating (docs/reliability.md 6.2).
#include "embedscope/formats/gguf.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "embedscope/core/bytes.h"
#include "embedscope/core/checked.h"
#include "embedscope/core/error.h"
#include "embedscope/core/mapped_file.h"

namespace embedscope {

namespace {

constexpr uint64_t kMaxAlignment = 1u << 20;  // 1 MiB: larger values only serve attacks
constexpr size_t kMaxTensorName = 64;         // GGML_MAX_NAME (including the NUL ggml adds)
constexpr uint32_t kMaxDims = 4;              // GGML_MAX_DIMS

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

size_t scalar_size(GgufValueType t) {
  switch (t) {
    case GgufValueType::kUint8:
    case GgufValueType::kInt8:
    case GgufValueType::kBool:
      return 1;
    case GgufValueType::kUint16:
    case GgufValueType::kInt16:
      return 2;
    case GgufValueType::kUint32:
    case GgufValueType::kInt32:
    case GgufValueType::kFloat32:
      return 4;
    case GgufValueType::kUint64:
    case GgufValueType::kInt64:
    case GgufValueType::kFloat64:
      return 8;
    default:
      return 0;
  }
}

bool is_integer(GgufValueType t) {
  switch (t) {
    case GgufValueType::kUint8:
    case GgufValueType::kInt8:
    case GgufValueType::kUint16:
    case GgufValueType::kInt16:
    case GgufValueType::kUint32:
    case GgufValueType::kInt32:
    case GgufValueType::kUint64:
    case GgufValueType::kInt64:
      return true;
    default:
      return false;
  }
}

// Reads an integer scalar of type t at p, as (unsigned, signed, is_negative).
void read_integer(GgufValueType t, const std::byte* p, uint64_t* u, int64_t* i) {
  switch (t) {
    case GgufValueType::kUint8: {
      const auto v = load_le<uint8_t>(p);
      *u = v;
      *i = v;
      return;
    }
    case GgufValueType::kInt8: {
      const auto v = load_le<int8_t>(p);
      *i = v;
      *u = uint64_t(v);
      return;
    }
    case GgufValueType::kUint16: {
      const auto v = load_le<uint16_t>(p);
      *u = v;
      *i = v;
      return;
    }
    case GgufValueType::kInt16: {
      const auto v = load_le<int16_t>(p);
      *i = v;
      *u = uint64_t(v);
      return;
    }
    case GgufValueType::kUint32: {
      const auto v = load_le<uint32_t>(p);
      *u = v;
      *i = v;
      return;
    }
    case GgufValueType::kInt32: {
      const auto v = load_le<int32_t>(p);
      *i = v;
      *u = uint64_t(v);
      return;
    }
    case GgufValueType::kUint64: {
      const auto v = load_le<uint64_t>(p);
      *u = v;
      *i = int64_t(v);
      return;
    }
    case GgufValueType::kInt64: {
      const auto v = load_le<int64_t>(p);
      *i = v;
      *u = uint64_t(v);
      return;
    }
    default:
      *u = 0;
      *i = 0;
  }
}

bool is_signed(GgufValueType t) {
  return t == GgufValueType::kInt8 || t == GgufValueType::kInt16 || t == GgufValueType::kInt32 ||
         t == GgufValueType::kInt64;
}

}  // namespace

std::string_view gguf_value_type_name(GgufValueType t) {
  static constexpr const char* kNames[] = {"UINT8",  "INT8",    "UINT16", "INT16",  "UINT32",
                                           "INT32",  "FLOAT32", "BOOL",   "STRING", "ARRAY",
                                           "UINT64", "INT64",   "FLOAT64"};
  uint32_t i = uint32_t(t);
  return i < 13 ? kNames[i] : "INVALID";
}

// Cursor over the untrusted bytes; every read checks the remaining length first.
class GgufParser {
 public:
  GgufParser(const std::byte* data, size_t size, const std::string& name)
      : p_(data), size_(size), name_(name) {}

  [[noreturn]] void fail(ErrorCode code, const std::string& what, uint64_t at) const {
    throw Error(code, name_ + ": GGUF " + what + " (at byte offset " + std::to_string(at) + ")");
  }
  uint64_t remain() const { return size_ - pos_; }
  uint64_t pos() const { return pos_; }

  template <typename T>
  T read(const char* field) {
    if (remain() < sizeof(T))
      fail(ErrorCode::kCorrupt,
           std::string("file truncated reading ") + field + ": need " + std::to_string(sizeof(T)) +
               " bytes, " + std::to_string(remain()) + " remain",
           pos_);
    const T v = load_le<T>(p_ + pos_);
    pos_ += sizeof(T);
    return v;
  }
  std::string read_string(const std::string& field) {
    uint64_t at = pos_;
    uint64_t n = read<uint64_t>(field.c_str());
    if (n > remain())
      fail(ErrorCode::kCorrupt,
           field + " length " + std::to_string(n) + " exceeds the " + std::to_string(remain()) +
               " bytes remaining in the file",
           at);
    std::string s(reinterpret_cast<const char*>(p_ + pos_), size_t(n));
    pos_ += n;
    return s;
  }
  // Skips a string without copying it; returns its length.
  uint64_t skip_string(const std::string& field) {
    uint64_t at = pos_;
    uint64_t n = read<uint64_t>(field.c_str());
    if (n > remain())
      fail(ErrorCode::kCorrupt,
           field + " length " + std::to_string(n) + " exceeds the " + std::to_string(remain()) +
               " bytes remaining in the file",
           at);
    pos_ += n;
    return n;
  }
  void skip(uint64_t n, const std::string& field) {
    if (n > remain())
      fail(
          ErrorCode::kCorrupt,
          field + " needs " + std::to_string(n) + " bytes, " + std::to_string(remain()) + " remain",
          pos_);
    pos_ += n;
  }

  void parse(GgufFile& g);

 private:
  void parse_kv(GgufFile& g, uint64_t index);
  const std::byte* p_;
  uint64_t size_;
  uint64_t pos_ = 0;
  const std::string& name_;
};

void GgufParser::parse_kv(GgufFile& g, uint64_t index) {
  GgufKv kv;
  kv.offset = pos_;
  std::string field = "key of metadata entry " + std::to_string(index);
  kv.key = read_string(field);
  if (kv.key.empty()) fail(ErrorCode::kCorrupt, field + " is empty", kv.offset);
  for (unsigned char c : kv.key)
    if (c < 0x20 || c > 0x7e)
      fail(ErrorCode::kCorrupt,
           field + " contains byte " + hex(c) + " (keys must be printable ASCII)", kv.offset);
  uint64_t type_at = pos_;
  uint32_t type = read<uint32_t>("value type");
  if (type > uint32_t(GgufValueType::kFloat64))
    fail(ErrorCode::kCorrupt,
         "key '" + kv.key + "' has invalid value type " + std::to_string(type) + " (max 12)",
         type_at);
  kv.type = GgufValueType(type);
  if (kv.type == GgufValueType::kString) {
    kv.str = read_string("value of key '" + kv.key + "'");
  } else if (kv.type == GgufValueType::kArray) {
    uint64_t at = pos_;
    uint32_t et = read<uint32_t>("array element type");
    if (et == uint32_t(GgufValueType::kArray))
      fail(ErrorCode::kCorrupt, "key '" + kv.key + "' is an array of arrays (not supported)", at);
    if (et > uint32_t(GgufValueType::kFloat64))
      fail(
          ErrorCode::kCorrupt,
          "key '" + kv.key + "' has invalid array element type " + std::to_string(et) + " (max 12)",
          at);
    kv.array_type = GgufValueType(et);
    uint64_t count_at = pos_;
    kv.array_count = read<uint64_t>("array length");
    kv.array_offset = pos_;
    if (kv.array_type == GgufValueType::kString) {
      // Each element takes at least its 8-byte length: bound the count before walking.
      if (kv.array_count > remain() / 8)
        fail(ErrorCode::kCorrupt,
             "key '" + kv.key + "' array length " + std::to_string(kv.array_count) +
                 " exceeds what the " + std::to_string(remain()) + " remaining bytes can hold",
             count_at);
      for (uint64_t k = 0; k < kv.array_count; ++k)
        skip_string("element " + std::to_string(k) + " of '" + kv.key + "'");
    } else {
      uint64_t es = scalar_size(kv.array_type);
      auto bytes = checked_mul(kv.array_count, es);
      if (!bytes || *bytes > remain())
        fail(ErrorCode::kCorrupt,
             "key '" + kv.key + "' array length " + std::to_string(kv.array_count) + " x " +
                 std::to_string(es) + " bytes exceeds the " + std::to_string(remain()) +
                 " bytes remaining",
             count_at);
      pos_ += *bytes;
    }
  } else {
    size_t n = scalar_size(kv.type);
    if (remain() < n)
      fail(ErrorCode::kCorrupt, "file truncated in the value of key '" + kv.key + "'", pos_);
    const std::byte* v = p_ + pos_;
    if (is_integer(kv.type)) {
      read_integer(kv.type, v, &kv.u, &kv.i);
    } else if (kv.type == GgufValueType::kFloat32) {
      kv.f = load_le<float>(v);
    } else if (kv.type == GgufValueType::kFloat64) {
      kv.f = load_le<double>(v);
    } else if (kv.type == GgufValueType::kBool) {
      uint8_t b = std::to_integer<uint8_t>(*v);
      if (b > 1)
        fail(ErrorCode::kCorrupt,
             "key '" + kv.key + "' BOOL value " + std::to_string(b) + " (expected 0 or 1)", pos_);
      kv.b = b != 0;
    }
    pos_ += n;
  }
  g.kvs_.push_back(std::move(kv));
}

void GgufParser::parse(GgufFile& g) {
  if (size_ < 4 || std::memcmp(p_, "GGUF", 4) != 0) {
    std::string got;
    for (size_t k = 0; k < std::min<size_t>(size_, 4); ++k) got += hex(uint8_t(p_[k])) + " ";
    fail(ErrorCode::kCorrupt,
         "bad magic: expected \"GGUF\", found " + (got.empty() ? "nothing" : got), 0);
  }
  pos_ = 4;
  uint32_t version = read<uint32_t>("version");
  if (version == 0) fail(ErrorCode::kCorrupt, "version 0 is invalid", 4);
  if ((version & 0xFFFF) == 0)
    fail(ErrorCode::kUnsupported,
         "version " + hex(version) +
             " has its low 16 bits zero: endianness mismatch? (only "
             "little-endian files are supported)",
         4);
  if (version == 1)
    fail(ErrorCode::kUnsupported,
         "version 1 is not supported (supported: 2, 3); convert the file with a current llama.cpp",
         4);
  if (version > 3)
    fail(ErrorCode::kUnsupported,
         "version " + std::to_string(version) + " is newer than supported (2, 3)", 4);
  g.version_ = version;
  uint64_t n_tensors = read<uint64_t>("n_tensors");
  uint64_t n_kv = read<uint64_t>("n_kv");
  // Each KV takes >= 8 (key length) + 1 (key) + 4 (type) + 1 bytes; each tensor info >= 8 + 1 +
  // 4 (n_dims = 0) + 4 + 8. Bound the counts by the file so a huge count fails here, not after a
  // loop.
  if (n_kv > remain() / 14)
    fail(ErrorCode::kCorrupt,
         "n_kv " + std::to_string(n_kv) + " cannot fit in the " + std::to_string(remain()) +
             " remaining bytes",
         16);
  if (n_tensors > remain() / 25)
    fail(ErrorCode::kCorrupt,
         "n_tensors " + std::to_string(n_tensors) + " cannot fit in the " +
             std::to_string(remain()) + " remaining bytes",
         8);

  std::unordered_map<std::string, uint64_t> seen;
  for (uint64_t k = 0; k < n_kv; ++k) {
    parse_kv(g, k);
    auto [it, fresh] = seen.emplace(g.kvs_.back().key, k);
    if (!fresh)
      fail(ErrorCode::kCorrupt,
           "duplicate key '" + g.kvs_.back().key + "' in metadata entries " +
               std::to_string(it->second) + " and " + std::to_string(k),
           g.kvs_.back().offset);
  }

  if (const GgufKv* a = g.find_kv("general.alignment")) {
    if (a->type != GgufValueType::kUint32)
      fail(ErrorCode::kCorrupt,
           "general.alignment has type " + std::string(gguf_value_type_name(a->type)) +
               " (expected UINT32)",
           a->offset);
    if (a->u == 0 || (a->u & (a->u - 1)) != 0 || a->u > kMaxAlignment)
      fail(ErrorCode::kCorrupt,
           "general.alignment " + std::to_string(a->u) + " is not a power of two in [1, " +
               std::to_string(kMaxAlignment) + "]",
           a->offset);
    g.alignment_ = a->u;
  }

  // tokenizer arrays: the types the spec gives them and one entry per token (U19).
  if (const GgufKv* t = g.find_kv("tokenizer.ggml.tokens")) {
    if (t->type != GgufValueType::kArray || t->array_type != GgufValueType::kString)
      fail(ErrorCode::kCorrupt,
           "tokenizer.ggml.tokens has type " + std::string(gguf_value_type_name(t->type)) +
               (t->type == GgufValueType::kArray
                    ? " of " + std::string(gguf_value_type_name(t->array_type))
                    : std::string()) +
               " (expected ARRAY of STRING)",
           t->offset);
    auto check_parallel = [&](const char* key, GgufValueType want) {
      const GgufKv* s = g.find_kv(key);
      if (!s) return;
      if (s->type != GgufValueType::kArray || s->array_type != want)
        fail(ErrorCode::kCorrupt,
             std::string(key) + " has type " + std::string(gguf_value_type_name(s->type)) +
                 (s->type == GgufValueType::kArray
                      ? " of " + std::string(gguf_value_type_name(s->array_type))
                      : std::string()) +
                 " (expected ARRAY of " + std::string(gguf_value_type_name(want)) + ")",
             s->offset);
      if (s->array_count != t->array_count)
        fail(ErrorCode::kCorrupt,
             std::string(key) + " has " + std::to_string(s->array_count) +
                 " entries but tokenizer.ggml.tokens has " + std::to_string(t->array_count),
             s->offset);
    };
    check_parallel("tokenizer.ggml.scores", GgufValueType::kFloat32);
    check_parallel("tokenizer.ggml.token_type", GgufValueType::kInt32);
  }

  std::unordered_map<std::string, uint64_t> names;
  uint64_t running = 0;  // expected offset of the next tensor, relative to the data section
  for (uint64_t k = 0; k < n_tensors; ++k) {
    uint64_t at = pos_;
    GgufTensorInfo t;
    t.name = read_string("name of tensor " + std::to_string(k));
    if (t.name.size() >= kMaxTensorName)
      fail(ErrorCode::kCorrupt,
           "tensor " + std::to_string(k) + " name is " + std::to_string(t.name.size()) +
               " bytes (limit " + std::to_string(kMaxTensorName - 1) + ")",
           at);
    auto [it, fresh] = names.emplace(t.name, k);
    if (!fresh)
      fail(ErrorCode::kCorrupt,
           "duplicate tensor name '" + t.name + "' in tensor infos " + std::to_string(it->second) +
               " and " + std::to_string(k),
           at);
    uint64_t dims_at = pos_;
    uint32_t n_dims = read<uint32_t>("n_dims");
    if (n_dims > kMaxDims)
      fail(ErrorCode::kCorrupt,
           "tensor '" + t.name + "' has invalid number of dimensions: " + std::to_string(n_dims) +
               " > " + std::to_string(kMaxDims),
           dims_at);
    uint64_t n_el = 1;
    bool overflow = false;
    for (uint32_t d = 0; d < n_dims; ++d) {
      uint64_t ne_at = pos_;
      uint64_t ne = read<uint64_t>("tensor dimension");
      if (ne > uint64_t(INT64_MAX))
        fail(ErrorCode::kCorrupt,
             "tensor '" + t.name + "' dimension " + std::to_string(d) + " is negative (" +
                 std::to_string(int64_t(ne)) + ")",
             ne_at);
      t.shape.push_back(ne);
      auto m = checked_mul(n_el, ne);
      if (!m || *m > uint64_t(INT64_MAX))
        overflow = true;
      else
        n_el = *m;
    }
    if (overflow)
      fail(ErrorCode::kCorrupt, "tensor '" + t.name + "' element count overflows int64", dims_at);
    uint64_t type_at = pos_;
    t.type = read<uint32_t>("tensor type");
    GgmlTypeTraits tr = ggml_type_traits(t.type);
    if (tr.block_size == 0)
      fail(ErrorCode::kCorrupt,
           "tensor '" + t.name + "' has invalid ggml type " + std::to_string(t.type) +
               (ggml_type_name(t.type).empty() ? " (max 39)" : " (" + ggml_type_name(t.type) + ")"),
           type_at);
    t.type_name = ggml_type_name(t.type);
    uint64_t ne0 = t.shape.empty() ? 1 : t.shape[0];
    if (ne0 % tr.block_size != 0)
      fail(ErrorCode::kCorrupt,
           "tensor '" + t.name + "' of type " + t.type_name +
               " has ne[0] = " + std::to_string(ne0) + ", not a multiple of the block size " +
               std::to_string(tr.block_size),
           dims_at);
    t.n_elements = n_el;
    auto nb = checked_mul(n_el / tr.block_size, tr.type_size);
    if (!nb || *nb > uint64_t(INT64_MAX))
      fail(ErrorCode::kCorrupt, "tensor '" + t.name + "' byte size overflows", dims_at);
    t.n_bytes = *nb;
    uint64_t off_at = pos_;
    t.offset = read<uint64_t>("tensor offset");
    if (t.offset != running)
      fail(ErrorCode::kCorrupt,
           "tensor '" + t.name + "' has offset " + std::to_string(t.offset) + ", expected " +
               std::to_string(running) + " (tensors must be contiguous and aligned to " +
               std::to_string(g.alignment_) + ")",
           off_at);
    auto end = checked_add(running, t.n_bytes);
    auto padded =
        end ? checked_add(*end, (g.alignment_ - *end % g.alignment_) % g.alignment_) : std::nullopt;
    if (!padded) fail(ErrorCode::kCorrupt, "tensor '" + t.name + "' data end overflows", off_at);
    running = *padded;
    g.tensors_.push_back(std::move(t));
  }

  uint64_t pad = (g.alignment_ - pos_ % g.alignment_) % g.alignment_;
  if (g.tensors_.empty()) {
    g.data_offset_ = std::min<uint64_t>(pos_ + pad, size_);
    return;
  }
  if (pad > remain())
    fail(ErrorCode::kCorrupt,
         "data section start " + std::to_string(pos_ + pad) + " is past the end of the file (" +
             std::to_string(size_) + " bytes)",
         pos_);
  g.data_offset_ = pos_ + pad;
  uint64_t avail = size_ - g.data_offset_;
  for (const GgufTensorInfo& t : g.tensors_) {
    if (!in_bounds(t.offset, t.n_bytes, avail))
      fail(ErrorCode::kCorrupt,
           "tensor '" + t.name + "' data [" + std::to_string(g.data_offset_ + t.offset) + ", +" +
               std::to_string(t.n_bytes) + ") not within file bounds (file is " +
               std::to_string(size_) + " bytes)",
           g.data_offset_ + t.offset);
  }
}

GgufFile GgufFile::from_bytes(std::shared_ptr<const void> owner, std::span<const std::byte> bytes,
                              std::string name) {
  GgufFile g;
  g.owner_ = std::move(owner);
  g.data_ = bytes.data();
  g.size_ = bytes.size();
  g.path_ = std::move(name);
  GgufParser(g.data_, g.size_, g.path_).parse(g);
  return g;
}

GgufFile GgufFile::open(const std::string& path) {
  auto mf = MappedFile::open(path);
  auto bytes = mf->bytes();
  return from_bytes(mf, bytes, path);
}

const GgufKv* GgufFile::find_kv(std::string_view key) const {
  for (const GgufKv& kv : kvs_)
    if (kv.key == key) return &kv;
  return nullptr;
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
  for (const GgufTensorInfo& t : tensors_)
    if (t.name == name) return &t;
  return nullptr;
}

namespace {
[[noreturn]] void wrong_type(const std::string& path, const GgufKv& kv, const char* want) {
  std::string have(gguf_value_type_name(kv.type));
  if (kv.type == GgufValueType::kArray)
    have += " of " + std::string(gguf_value_type_name(kv.array_type));
  throw Error(ErrorCode::kCorrupt,
              path + ": GGUF key '" + kv.key + "' has type " + have + " (expected " + want + ")");
}
}  // namespace

std::optional<std::string> GgufFile::get_string(std::string_view key) const {
  const GgufKv* kv = find_kv(key);
  if (!kv) return std::nullopt;
  if (kv->type != GgufValueType::kString) wrong_type(path_, *kv, "STRING");
  return kv->str;
}

std::optional<uint64_t> GgufFile::get_uint(std::string_view key) const {
  const GgufKv* kv = find_kv(key);
  if (!kv) return std::nullopt;
  if (!is_integer(kv->type)) wrong_type(path_, *kv, "an integer");
  if (is_signed(kv->type) && kv->i < 0)
    throw Error(ErrorCode::kCorrupt, path_ + ": GGUF key '" + kv->key + "' is negative (" +
                                         std::to_string(kv->i) + "), expected >= 0");
  return kv->u;
}

std::optional<int64_t> GgufFile::get_int(std::string_view key) const {
  const GgufKv* kv = find_kv(key);
  if (!kv) return std::nullopt;
  if (!is_integer(kv->type)) wrong_type(path_, *kv, "an integer");
  if (kv->type == GgufValueType::kUint64 && kv->u > uint64_t(INT64_MAX))
    throw Error(ErrorCode::kCorrupt, path_ + ": GGUF key '" + kv->key + "' value " +
                                         std::to_string(kv->u) + " exceeds INT64_MAX");
  return kv->i;
}

std::optional<double> GgufFile::get_float(std::string_view key) const {
  const GgufKv* kv = find_kv(key);
  if (!kv) return std::nullopt;
  if (kv->type != GgufValueType::kFloat32 && kv->type != GgufValueType::kFloat64)
    wrong_type(path_, *kv, "FLOAT32 or FLOAT64");
  return kv->f;
}

std::optional<bool> GgufFile::get_bool(std::string_view key) const {
  const GgufKv* kv = find_kv(key);
  if (!kv) return std::nullopt;
  if (kv->type != GgufValueType::kBool) wrong_type(path_, *kv, "BOOL");
  return kv->b;
}

namespace {
const GgufKv& array_kv(const GgufFile& g, std::string_view key) {
  const GgufKv* kv = g.find_kv(key);
  if (!kv)
    throw Error(ErrorCode::kNotFound, g.path() + ": GGUF key '" + std::string(key) + "' not found");
  if (kv->type != GgufValueType::kArray) wrong_type(g.path(), *kv, "ARRAY");
  return *kv;
}
}  // namespace

uint64_t GgufFile::array_size(std::string_view key) const {
  return array_kv(*this, key).array_count;
}

std::vector<std::string> GgufFile::string_array(std::string_view key) const {
  const GgufKv& kv = array_kv(*this, key);
  if (kv.array_type != GgufValueType::kString) wrong_type(path_, kv, "ARRAY of STRING");
  std::vector<std::string> out;
  out.reserve(kv.array_count);  // validated against the file size at open()
  uint64_t pos = kv.array_offset;
  for (uint64_t k = 0; k < kv.array_count; ++k) {
    const auto n = load_le<uint64_t>(data_ + pos);  // bounds established by open()
    out.emplace_back(reinterpret_cast<const char*>(data_ + pos + 8), size_t(n));
    pos += 8 + n;
  }
  return out;
}

std::vector<int64_t> GgufFile::int_array(std::string_view key) const {
  const GgufKv& kv = array_kv(*this, key);
  if (!is_integer(kv.array_type)) wrong_type(path_, kv, "ARRAY of integers");
  size_t es = scalar_size(kv.array_type);
  std::vector<int64_t> out(kv.array_count);
  for (uint64_t k = 0; k < kv.array_count; ++k) {
    uint64_t u;
    read_integer(kv.array_type, data_ + kv.array_offset + k * es, &u, &out[k]);
  }
  return out;
}

std::vector<double> GgufFile::float_array(std::string_view key) const {
  const GgufKv& kv = array_kv(*this, key);
  if (kv.array_type != GgufValueType::kFloat32 && kv.array_type != GgufValueType::kFloat64)
    wrong_type(path_, kv, "ARRAY of FLOAT32 or FLOAT64");
  std::vector<double> out(kv.array_count);
  for (uint64_t k = 0; k < kv.array_count; ++k) {
    if (kv.array_type == GgufValueType::kFloat32)
      out[k] = load_le<float>(data_ + kv.array_offset + 4 * k);
    else
      out[k] = load_le<double>(data_ + kv.array_offset + 8 * k);
  }
  return out;
}

std::span<const std::byte> GgufFile::tensor_bytes(const GgufTensorInfo& t) const {
  return {data_ + data_offset_ + t.offset, size_t(t.n_bytes)};
}

LoadedEmbeddings GgufFile::load_matrix(std::string_view name) const {
  const GgufTensorInfo* t = find_tensor(name);
  if (!t) {
    std::string have;
    for (size_t k = 0; k < tensors_.size() && k < 8; ++k)
      have += (k ? ", " : "") + tensors_[k].name;
    throw Error(ErrorCode::kNotFound, path_ + ": GGUF has no tensor '" + std::string(name) +
                                          "' (tensors: " + (have.empty() ? "none" : have) +
                                          (tensors_.size() > 8 ? ", ..." : "") + ")");
  }
  if (t->shape.size() != 2)
    throw Error(ErrorCode::kCorrupt, path_ + ": GGUF tensor '" + t->name + "' has " +
                                         std::to_string(t->shape.size()) +
                                         " dimensions (expected 2: n_embd, n_vocab)");
  if (!ggml_type_dequantizable(t->type))
    throw Error(ErrorCode::kUnsupported,
                path_ + ": GGUF tensor '" + t->name + "' has type " + t->type_name +
                    ", which embedscope cannot dequantise (supported: F32 F16 BF16 Q8_0 Q4_0 "
                    "Q4_1 Q5_0 Q5_1 Q4_K Q6_K)");
  check_table_shape(path_ + ": GGUF tensor '" + t->name + "'", t->shape[1], t->shape[0]);
  size_t dim = size_t(t->shape[0]), rows = size_t(t->shape[1]);
  const std::byte* src = data_ + data_offset_ + t->offset;
  LoadedEmbeddings e;
  e.format = FileFormat::kGguf;
  e.path = path_;
  e.tensor = t->name;
  e.source_dtype = t->type_name;
  auto as_dtype = [&](GgmlType gt) -> std::optional<DType> {
    if (gt == GgmlType::kF32) return DType::kF32;
    if (gt == GgmlType::kF16) return DType::kF16;
    if (gt == GgmlType::kBF16) return DType::kBF16;
    return std::nullopt;
  };
  if (auto dt = as_dtype(GgmlType(t->type))) {
    if (reinterpret_cast<uintptr_t>(src) % dtype_size(*dt) == 0 && owner_)
      e.table = EmbeddingTable::view(owner_, src, rows, dim, *dt, true);
    else
      e.table = EmbeddingTable::copy_of(src, rows, dim, *dt);
  } else {
    GgmlTypeTraits tr = ggml_type_traits(t->type);
    std::vector<float> out(t->n_elements);  // n_bytes of this tensor were checked against the file
    size_t row_bytes = dim / tr.block_size * tr.type_size;
    for (size_t r = 0; r < rows; ++r)
      ggml_dequantize(t->type, src + r * row_bytes, dim, out.data() + r * dim);
    e.table = EmbeddingTable::from_f32(rows, dim, std::move(out));
  }
  const GgufKv* tok = find_kv("tokenizer.ggml.tokens");
  if (tok && tok->array_count != rows &&
      (t->name == "token_embd.weight" || t->name == "output.weight"))
    throw Error(ErrorCode::kCorrupt,
                path_ + ": GGUF tensor '" + t->name + "' has " + std::to_string(rows) +
                    " rows but tokenizer.ggml.tokens has " + std::to_string(tok->array_count) +
                    " entries (expected equal)");
  if (tok && tok->array_count == rows) {
    for (std::string& s : string_array("tokenizer.ggml.tokens")) e.vocab.add(std::move(s));
  }
  // Model facts: general.* and <architecture>.* scalars (llama.embedding_length, ...).
  std::string arch;
  if (const GgufKv* a = find_kv("general.architecture"); a && a->type == GgufValueType::kString)
    arch = a->str + ".";
  for (const GgufKv& kv : kvs_) {
    if (kv.key.rfind("general.", 0) != 0 && (arch.empty() || kv.key.rfind(arch, 0) != 0)) continue;
    if (kv.type == GgufValueType::kString)
      e.metadata[kv.key] = kv.str;
    else if (is_integer(kv.type))
      e.metadata[kv.key] = is_signed(kv.type) ? std::to_string(kv.i) : std::to_string(kv.u);
    else if (kv.type == GgufValueType::kFloat32 || kv.type == GgufValueType::kFloat64)
      e.metadata[kv.key] = std::to_string(kv.f);
    else if (kv.type == GgufValueType::kBool)
      e.metadata[kv.key] = kv.b ? "true" : "false";
  }
  return e;
}

}  // namespace embedscope
