// PyTorch checkpoints as torch.save writes them since 1.6: a zip archive (formats/zip.h) of
//   <archive>/data.pkl      the pickled state dict (formats/pickle.h: restricted, executes nothing)
//   <archive>/data/<key>    one stored entry per storage, raw little-endian elements
//   <archive>/version, <archive>/byteorder ("little"; "big" is rejected)
// (torch/serialization.py _save; torch/csrc/jit/serialization pickler / PyTorchStreamWriter,
// which aligns every data entry to 64 bytes so it can be mapped).
//
// Invariants after open(): the root object is a dict of name -> tensor (non-tensor values such
// as integers are skipped); every tensor's storage entry exists and is stored uncompressed; its
// numel x element size fits the entry; storage_offset + the furthest element reachable through
// shape and stride lies inside the storage (all checked with overflow-safe arithmetic).
// The legacy (pre-1.6, non-zip) format is rejected with Error(kUnsupported) and a how-to-convert
// message.
//
// Thread-safety: immutable after open().
//
//   TorchCheckpoint c = TorchCheckpoint::open("pytorch_model.bin");
//   const TorchTensorInfo* t = c.find("transformer.wte.weight");   // shape {50257, 768}
//   LoadedEmbeddings e = c.load_matrix(t->name);   // zero copy when contiguous and aligned
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "embedscope/formats/embeddings_file.h"
#include "embedscope/formats/zip.h"

namespace embedscope {

struct TorchTensorInfo {
  std::string name;
  std::string dtype;             // "F32", "F16", "BF16", "F64", "I64", "I32", "I16", "I8",
                                 // "U8", "BOOL"
  std::vector<uint64_t> shape;   // in elements
  std::vector<uint64_t> stride;  // in elements
  uint64_t storage_offset = 0;   // in elements
  std::string storage_key;       // entry <archive>/data/<key>
  uint64_t storage_numel = 0;
  bool contiguous = true;  // row-major strides
};

class TorchCheckpoint {
 public:
  // Maps and validates the checkpoint. Throws Error(kNotFound / kIo) if unreadable,
  // Error(kUnsupported) for the legacy format, compressed entries, foreign globals / opcodes,
  // big-endian data; Error(kCorrupt) for a malformed archive or pickle, a missing storage entry,
  // or a tensor that reaches beyond its storage.
  static TorchCheckpoint open(const std::string& path);
  // The same on bytes kept alive by `owner` (fuzzing); `name` is used in messages.
  static TorchCheckpoint from_bytes(std::shared_ptr<const void> owner,
                                    std::span<const std::byte> bytes, const std::string& name);

  const std::string& path() const { return path_; }
  const std::vector<TorchTensorInfo>& tensors() const { return tensors_; }  // pickle order
  const TorchTensorInfo* find(std::string_view name) const;                 // nullptr when absent
  // True when both tensors view the same storage with the same offset, shape and stride
  // (how torch.save records tied weights).
  bool same_storage(const TorchTensorInfo& a, const TorchTensorInfo& b) const;
  // Names of the 2-D float tensors, in pickle order.
  std::vector<std::string> matrix_candidates() const;

  // A 2-D F32/F16/BF16/F64 tensor as a table: a zero-copy view of the stored entry when it is
  // contiguous and aligned; otherwise (strided, unaligned, F64) an owned copy.
  // Throws Error(kNotFound) for an unknown name (listing candidates), Error(kUnsupported) for
  // integer dtypes, Error(kInvalidArgument) for a tensor that is not 2-D.
  LoadedEmbeddings load_matrix(const std::string& name) const;

 private:
  std::shared_ptr<const void> owner_;
  std::span<const std::byte> bytes_;
  std::string path_;
  std::string prefix_;  // "<archive>/"
  ZipArchive zip_;
  std::vector<TorchTensorInfo> tensors_;
};

// True when `bytes` start with the legacy torch.save magic (a pickled LONG1
// 0x1950a86a20f9469cfc6c).
bool is_legacy_torch_file(std::span<const std::byte> bytes);

}  // namespace embedscope
