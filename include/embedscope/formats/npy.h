// NumPy .npy: reader (validated, zero copy when possible) and writer for embedding matrices.
//
// Byte layout (numpy/lib/format.py, "Format Version 1.0" to "3.0"):
//   [0, 6)   magic "\x93NUMPY"
//   6, 7     major, minor version: (1, 0), (2, 0) or (3, 0)
//   then     header length HLEN: uint16 LE (v1) or uint32 LE (v2, v3)
//   then     HLEN bytes: a Python literal dict, latin-1 (v1, v2) or UTF-8 (v3), padded with
//            spaces and ending in '\n' so the data starts on a 64-byte boundary (numpy's writer;
//            readers must not rely on it):
//              {'descr': '<f4', 'fortran_order': False, 'shape': (50257, 768), }
//   then     the array data, numel x itemsize bytes, nothing after it.
//
// What we accept and why (docs/formats.md, docs/reliability.md 6.4 N1-N10):
//   - descr '<f4' and '<f2' (kept as F32 / F16), '<f8' (converted to F32); '>' big-endian is
//     byte-swapped, '=' is native (little-endian). Any other dtype, object arrays ('|O', which
//     need pickle) and structured dtypes throw Error(kUnsupported).
//   - shape (rows, dim) is the matrix; a 1-D shape (n,) is ONE row of n values (a single
//     vector, as `embedscope lookup --npy` writes for one word); 0-D and >2-D throw
//     Error(kUnsupported).
//   - fortran_order True is transposed into row-major (copied).
//   - HLEN above 10000 (numpy's _MAX_HEADER_SIZE) is rejected before the header is read.
//   - the header is parsed by a small strict parser of Python literals (strings, True/False,
//     tuples of non-negative integers, numpy's legacy "3L"), never evaluated; exactly the keys
//     descr, fortran_order and shape, each once.
//   - numel x itemsize is computed with overflow checks and must equal the bytes after the
//     header exactly (short and long files are both Error(kCorrupt)).
// Zero copy: little-endian C-order f4/f2 data at an aligned offset is a view of the mmap.
//
//   LoadedEmbeddings e = load_npy("wte.npy", {});
//   save_npy("out.npy", e.table);   // np.load("out.npy") gives the same values
#pragma once

#include <memory>
#include <span>
#include <string>

#include "embedscope/formats/embeddings_file.h"

namespace embedscope {

inline constexpr size_t kNpyMaxHeaderSize = 10000;  // numpy.lib.format._MAX_HEADER_SIZE

// Throws Error(kNotFound / kIo) when unreadable, Error(kCorrupt) for a malformed file,
// Error(kUnsupported) for a valid file with a dtype or rank we don't load. The message names
// the path, the field and the offending value.
LoadedEmbeddings load_npy(const std::string& path, const LoadOptions& options = {});
// The same for an in-memory file kept alive by `owner`; `name` is used in messages.
LoadedEmbeddings load_npy_bytes(std::shared_ptr<const void> owner, std::span<const std::byte> bytes,
                                const std::string& name);

// Writes a version 1.0 file, C order: F32 tables as '<f4', F16 as '<f2', BF16 converted to
// '<f4' (numpy has no bfloat16). The vocabulary is not stored. Atomic (temp + rename).
void save_npy(const std::string& path, const EmbeddingTable& table);

}  // namespace embedscope
