// GGUF (llama.cpp / ggml model files), versions 2 and 3: metadata, tensor infos and the
// dequantised token embedding.
//
// Byte layout (little-endian; spec: ggml docs/gguf.md, reader: ggml/src/gguf.cpp):
//   u32 magic "GGUF" | u32 version (2 or 3) | u64 n_tensors | u64 n_kv
//   n_kv x  { string key | u32 value_type | value }
//           string = u64 length + bytes (no NUL); value types:
//           0 U8 1 I8 2 U16 3 I16 4 U32 5 I32 6 F32 7 BOOL 8 STRING 9 ARRAY 10 U64 11 I64 12 F64
//           ARRAY = u32 element_type | u64 count | elements   (arrays of arrays are rejected)
//   n_tensors x { string name | u32 n_dims | n_dims x u64 ne | u32 ggml_type | u64 offset }
//           ne[0] is the fastest-varying (row length); offset is relative to the data section
//   padding to `general.alignment` (u32, default 32) | data section
//
// Invariants established by open() (docs/reliability.md 6.2, U1-U20): every length was checked
// against the bytes that remain before anything was allocated; keys are non-empty printable
// ASCII and unique; tensor names are < 64 bytes and unique; n_dims <= 4; every ne < 2^63 and
// the element count and byte size do not overflow; ne[0] is a multiple of the type's block size;
// tensors are contiguous in order (each offset equals the running aligned sum) and lie inside the
// file; tokenizer.ggml.{tokens,scores,token_type} have the spec's types and equal lengths.
// Nothing is executed or recursed into; a bad file throws Error(kCorrupt / kUnsupported) naming
// the file, the key / tensor, the byte offset, the value and the limit.
//
// Thread-safety: a GgufFile is immutable after open(); all const methods may run concurrently.
//
//   GgufFile g = GgufFile::open("model.gguf");
//   std::optional<std::string> arch = g.get_string("general.architecture");   // "llama"
//   std::vector<std::string> toks = g.string_array("tokenizer.ggml.tokens");
//   LoadedEmbeddings e = g.load_matrix("token_embd.weight");   // (n_vocab x n_embd)
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "embedscope/formats/embeddings_file.h"

namespace embedscope {

class MappedFile;

enum class GgufValueType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};
std::string_view gguf_value_type_name(GgufValueType t);  // "UINT32", "STRING", "ARRAY", ...

// ggml tensor types (ggml.h enum ggml_type); only the ones this reader names explicitly.
enum class GgmlType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kI8 = 24,
  kI16 = 25,
  kI32 = 26,
  kI64 = 27,
  kF64 = 28,
  kBF16 = 30,
};
// "F32", "Q4_K", "IQ2_XXS", ... ("type 31 (removed)" for retired ids, "" for unknown ids).
std::string ggml_type_name(uint32_t type);
// True when load_matrix() can dequantise this type: F32 F16 BF16 Q8_0 Q4_0 Q4_1 Q5_0 Q5_1
// Q4_K Q6_K.
bool ggml_type_dequantizable(uint32_t type);

// One metadata entry. Scalars are decoded; arrays are kept as (element type, count, byte
// offset of the first element) and decoded on request.
struct GgufKv {
  std::string key;
  GgufValueType type = GgufValueType::kUint8;
  // scalars (the member matching `type`; integers are also mirrored into the other when the
  // value fits, so get_uint/get_int accept any integer type)
  uint64_t u = 0;
  int64_t i = 0;
  double f = 0.0;
  bool b = false;
  std::string str;
  // arrays
  GgufValueType array_type = GgufValueType::kUint8;
  uint64_t array_count = 0;
  uint64_t array_offset = 0;  // file offset of the first element
  uint64_t offset = 0;        // file offset of the entry (for messages)
};

struct GgufTensorInfo {
  std::string name;
  std::vector<uint64_t> shape;  // ne[0] (row length) first, as in the file
  uint32_t type = 0;            // ggml type id
  std::string type_name;        // ggml_type_name(type)
  uint64_t offset = 0;          // relative to the data section
  uint64_t n_elements = 0;
  uint64_t n_bytes = 0;
};

class GgufFile {
 public:
  // Maps and validates the whole file. Throws Error(kNotFound / kIo) if unreadable,
  // Error(kCorrupt) for a malformed file, Error(kUnsupported) for version 1 or > 3.
  static GgufFile open(const std::string& path);
  // Parses bytes kept alive by `owner` (used by the fuzz target). `name` is used in messages.
  static GgufFile from_bytes(std::shared_ptr<const void> owner, std::span<const std::byte> bytes,
                             std::string name);

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // file offset of the data section

  const std::vector<GgufKv>& kvs() const { return kvs_; }
  const GgufKv* find_kv(std::string_view key) const;  // nullptr when absent

  // Typed lookups: std::nullopt when the key is absent; Error(kCorrupt) naming the key, its
  // type and the expected type when present with another type.
  std::optional<std::string> get_string(std::string_view key) const;
  std::optional<uint64_t> get_uint(std::string_view key) const;  // any non-negative integer
  std::optional<int64_t> get_int(std::string_view key) const;    // any integer that fits
  std::optional<double> get_float(std::string_view key) const;   // F32 / F64
  std::optional<bool> get_bool(std::string_view key) const;

  // Array lookups: Error(kNotFound) naming the key when absent, Error(kCorrupt) naming the key
  // and both types when it is not an array of the requested kind.
  std::vector<std::string> string_array(std::string_view key) const;
  std::vector<int64_t> int_array(std::string_view key) const;   // any integer element type
  std::vector<double> float_array(std::string_view key) const;  // F32 / F64 elements
  uint64_t array_size(std::string_view key) const;              // any array

  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* find_tensor(std::string_view name) const;  // nullptr when absent
  std::span<const std::byte> tensor_bytes(const GgufTensorInfo& t) const;

  // A 2-D tensor (ne[0] = dim, ne[1] = rows) as an embedding table. F32/F16/BF16 are zero-copy
  // views when aligned; quantised types are dequantised row by row into owned F32.
  // emb.vocab is filled from tokenizer.ggml.tokens when its length equals the row count.
  // Throws Error(kNotFound) for a missing tensor, Error(kUnsupported) naming the type for
  // types ggml_type_dequantizable() rejects, Error(kCorrupt) for a tensor that is not 2-D.
  LoadedEmbeddings load_matrix(std::string_view name) const;

 private:
  std::shared_ptr<const void> owner_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<GgufKv> kvs_;
  std::vector<GgufTensorInfo> tensors_;
  friend class GgufParser;
};

// Dequantises `n_values` elements (a multiple of the block size, ES_CHECK) of a dequantizable
// ggml type from `src` (n_values / block size * type size bytes) into out[0..n_values).
void ggml_dequantize(uint32_t type, const std::byte* src, size_t n_values, float* out);
// Block size (elements) and bytes per block of a ggml type; {0, 0} for unknown ids.
struct GgmlTypeTraits {
  uint32_t block_size = 0;
  uint32_t type_size = 0;
};
GgmlTypeTraits ggml_type_traits(uint32_t type);

}  // namespace embedscope
