// Loading and saving embedding matrices, with the format detected from the file's content.
//
// Formats (docs/formats.md has our reading of each, with its edge cases):
//   safetensors   one 2-D tensor chosen by name (LoadOptions::tensor) or the only 2-D tensor;
//                 an optional vocabulary in __metadata__ (see formats/safetensors.h)
//   npy           2-D array, versions 1-3, <f4 <f2 <f8 (and big-endian / Fortran order)
//   word2vec-text "N DIM" header then "word v1 ... vDIM" lines (also fastText .vec)
//   word2vec-bin  "N DIM\n" then "word " + DIM little-endian float32 per row
//   glove         word2vec text without a header
// Model checkpoints (pytorch .bin, GGUF, Hugging Face folders) are loaded by formats/model.h,
// which uses these readers.
//
// Every reader validates the whole file before allocating or indexing; bad input throws
// Error(kCorrupt / kUnsupported) whose message names the file, the field / line / byte offset,
// the value and the limit. Loads are zero-copy (mmap) when the on-disk layout allows.
//
//   LoadedEmbeddings e = load_embeddings("vectors.bin");
//   e.table.n_rows(); e.vocab.find("king");
#pragma once

#include <map>
#include <string>
#include <vector>

#include "embedscope/core/embedding_table.h"
#include "embedscope/core/vocabulary.h"

namespace embedscope {

enum class FileFormat {
  kUnknown,
  kSafetensors,
  kNpy,
  kWord2VecText,
  kWord2VecBinary,
  kGlove,
  kPytorch,
  kGguf
};

std::string_view format_name(FileFormat f);  // "safetensors", "npy", "word2vec", "word2vec-bin",
                                             // "glove", "pytorch", "gguf"
// Parses a --to / --format value; throws Error(kInvalidArgument) listing the accepted names.
FileFormat parse_format_name(std::string_view name);

// Detects the format from the first bytes of the file (extension used only to break ties).
// Returns kUnknown when nothing matches. Throws Error(kNotFound / kIo) if unreadable.
FileFormat detect_format(const std::string& path);

struct LoadOptions {
  std::string tensor;        // safetensors / npz: tensor to take (default: the only 2-D one)
  bool strict_utf8 = false;  // word2vec/GloVe: reject invalid UTF-8 words instead of replacing
  FileFormat format = FileFormat::kUnknown;  // force a format instead of detecting
};

struct LoadedEmbeddings {
  EmbeddingTable table;
  Vocabulary vocab;  // empty when the file has no vocabulary
  FileFormat format = FileFormat::kUnknown;
  std::string path;
  std::string tensor;        // tensor name where the format has names
  std::string source_dtype;  // on-disk element type before conversion ("F64", "Q4_K")
  std::map<std::string, std::string> metadata;
  std::vector<std::string> warnings;  // also sent to the log sink
};

LoadedEmbeddings load_embeddings(const std::string& path, const LoadOptions& options = {});

struct SaveOptions {
  FileFormat format = FileFormat::kUnknown;     // kUnknown: output_format_for_path()
  std::string tensor = "embeddings";            // safetensors tensor name
  std::map<std::string, std::string> metadata;  // safetensors __metadata__ extras
};

// embedscope's safetensors layout for a table with a vocabulary (docs/formats.md):
//   tensor <options.tensor>             the (n_rows x dim) matrix, F32/F16/BF16
//   tensor "embedscope.vocab.bytes"     U8  [total bytes]  token bytes concatenated
//   tensor "embedscope.vocab.offsets"   I64 [n_rows + 1]   token i = bytes[off[i], off[i+1])
//   tensor "embedscope.vocab.counts"    I64 [n_rows]       optional per-row counts
//   __metadata__ "embedscope.version" = "1" plus SaveOptions::metadata
// Token bytes are stored exactly (they need not be UTF-8, which JSON metadata would require).

// The output format a file name asks for: .safetensors, .npy, .bin (word2vec binary), .txt or
// .vec (word2vec text); Error(kInvalidArgument) for any other name (never a silent default).
FileFormat output_format_for_path(const std::string& path);

// Writes atomically (temp file + fsync + rename). word2vec formats need a vocabulary of
// n_rows entries (Error(kInvalidArgument) otherwise); npy drops the vocabulary; safetensors
// stores it as tensors (layout below).
void save_embeddings(const std::string& path, const EmbeddingTable& table, const Vocabulary* vocab,
                     const SaveOptions& options = {});

}  // namespace embedscope
