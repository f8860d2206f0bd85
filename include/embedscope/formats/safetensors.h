// safetensors: reader (fully validated, zero copy) and atomic writer.
//
// Byte layout (https://github.com/huggingface/safetensors, README "Format"):
//   [0, 8)        N: little-endian uint64, the length of the JSON header
//   [8, 8 + N)    UTF-8 JSON object:
//                   {"__metadata__": {"key": "value", ...},          (optional, string -> string)
//                    "<tensor name>": {"dtype": "F32", "shape": [rows, dim],
//                                      "data_offsets": [begin, end]}, ...}
//                 may be padded with ASCII whitespace (writers pad with spaces to align the data)
//   [8 + N, EOF)  data section: tensors packed back to back, no gaps, no overlap, no alignment
//                 requirement; offsets are relative to the start of the data section.
//
// What open() enforces (docs/reliability.md 6.1, S1-S28, in the reference reader's order):
//   file >= 8 bytes; N <= 100,000,000 (kMaxHeaderSize); 8 + N <= file size; header valid UTF-8;
//   valid JSON object; no duplicate keys at any level; __metadata__ an object of strings;
//   every tensor entry an object with a known, case-sensitive dtype, a shape of unsigned 64-bit
//   integers (no floats, negatives or exponents) and exactly two unsigned data_offsets;
//   tensor names without NUL; after sorting by offset, each tensor begins where the previous one
//   ended (the first at 0); numel x bits computed with overflow checks, a whole number of bytes,
//   equal to end - begin; the last end is exactly the data section size (no trailing bytes).
// Policies where the reference and the spec differ (docs/formats.md):
//   - unknown keys inside a tensor entry (S26): accepted and ignored like the reference reader,
//     with one warning per file in warnings();
//   - NUL padding after the JSON (S8): rejected like the reference, with a hint;
//   - duplicate keys (S9): rejected with the name, even when both entries are identical.
// Every failure throws Error(kCorrupt) (kUnsupported for nothing: every spec dtype is known)
// whose message starts with the path and names the field, value and limit.
//
// Thread-safety: a SafetensorsFile is immutable after open(); all const methods may be called
// concurrently. It keeps the mmap alive, as do the tables load_matrix() returns.
//
//   SafetensorsFile f = SafetensorsFile::open("model.safetensors");
//   for (const auto& t : f.tensors()) std::cout << t.name << " " << t.dtype << "\n";
//   LoadedEmbeddings e = f.load_matrix("transformer.wte.weight");
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "embedscope/core/mapped_file.h"
#include "embedscope/formats/embeddings_file.h"

namespace embedscope {

inline constexpr uint64_t kSafetensorsMaxHeaderSize = 100'000'000;  // reference MAX_HEADER_SIZE

// Bits per element of a spec dtype name ("F32" -> 32, "F4" -> 4, "F6_E2M3" -> 6), 0 when the
// name is not a dtype of the spec (names are case-sensitive: "f32" is unknown).
int safetensors_dtype_bits(std::string_view dtype);

struct SafetensorsTensorInfo {
  std::string name;
  std::string dtype;
  std::vector<uint64_t> shape;
  uint64_t begin = 0, end = 0;  // offsets relative to the data section start
};

class SafetensorsFile {
 public:
  // Maps and validates the whole file. Throws Error(kNotFound / kIo) when it can't be read,
  // Error(kCorrupt) when it violates the format.
  static SafetensorsFile open(const std::string& path);
  // Validates an in-memory file (fuzzing, embedded data). `owner` keeps `bytes` alive; `name`
  // is used in messages.
  static SafetensorsFile parse(std::shared_ptr<const void> owner, std::span<const std::byte> bytes,
                               const std::string& name);

  const std::string& path() const { return path_; }
  const std::vector<SafetensorsTensorInfo>& tensors() const { return tensors_; }  // offset order
  const SafetensorsTensorInfo* find(std::string_view name) const;  // nullptr when absent
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const std::vector<std::string>& warnings() const { return warnings_; }
  uint64_t header_size() const { return header_size_; }     // N
  uint64_t data_start() const { return 8 + header_size_; }  // file offset of the data section

  // The bytes of one tensor (possibly unaligned: never reinterpret them as a typed pointer).
  std::span<const std::byte> tensor_bytes(const SafetensorsTensorInfo& t) const;

  // A 2-D F32/F16/BF16/F64 tensor as a table: zero copy when the data is aligned to the element
  // size, copied otherwise; F64 converted to F32. Also reads our vocabulary tensors
  // (embeddings_file.h) when present. Throws Error(kNotFound) for an unknown name (listing the
  // tensors), Error(kUnsupported) for other dtypes, Error(kInvalidArgument) for a tensor that is
  // not 2-D, Error(kCorrupt) for vocabulary tensors that disagree with the matrix.
  LoadedEmbeddings load_matrix(const std::string& tensor_name) const;

  // Names of the 2-D tensors, in offset order: the candidates for an embedding matrix.
  std::vector<std::string> matrix_candidates() const;

 private:
  SafetensorsFile() = default;
  std::shared_ptr<const void> owner_;
  std::span<const std::byte> bytes_;
  std::string path_;
  uint64_t header_size_ = 0;
  std::vector<SafetensorsTensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> index_;
  std::map<std::string, std::string> metadata_;
  std::vector<std::string> warnings_;
};

struct SafetensorsWriteTensor {
  std::string name;
  std::string dtype;
  std::vector<uint64_t> shape;
  std::span<const std::byte> data;  // exactly numel x bits / 8 bytes
};

// Writes tensors in the given order, packed, after a header padded with spaces to a multiple
// of 8 bytes; atomically (temp file + fsync + rename), so a reader that has the old file mapped
// keeps a valid view. Refuses (Error(kInvalidArgument), nothing written) what would make an
// unreadable file (S27): the name "__metadata__", names with NUL or invalid UTF-8, duplicate
// names, unknown dtypes, data sizes that disagree with shape x dtype, a header over 100 MB.
void save_safetensors(const std::string& path, std::span<const SafetensorsWriteTensor> tensors,
                      const std::map<std::string, std::string>& metadata);

// load_embeddings() for safetensors: options.tensor, or the only 2-D tensor. Error(kNotFound)
// listing the tensors when there is no 2-D one, Error(kInvalidArgument) listing the candidates
// when there are several.
LoadedEmbeddings load_safetensors_embeddings(const std::string& path, const LoadOptions& options);

// save_embeddings() for safetensors: the matrix as options.tensor plus our vocabulary tensors
// (layout in embeddings_file.h) and __metadata__ {"embedscope.version": "1", options.metadata}.
void save_safetensors_embeddings(const std::string& path, const EmbeddingTable& table,
                                 const Vocabulary* vocab, const SaveOptions& options);

// Tensor names of our vocabulary layout.
inline constexpr std::string_view kVocabBytesTensor = "embedscope.vocab.bytes";
inline constexpr std::string_view kVocabOffsetsTensor = "embedscope.vocab.offsets";
inline constexpr std::string_view kVocabCountsTensor = "embedscope.vocab.counts";

}  // namespace embedscope
