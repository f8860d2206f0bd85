// EmbeddingTable: an (n_rows x dim) row-major matrix of F32, F16 or BF16 values.
//
// Invariants:
//  - data() is aligned to dtype_size(dtype()) so kernels may do typed loads; readers copy into
//    owned memory when a file's layout would put rows at an unaligned address (zero_copy() is
//    then false).
//  - The table is immutable after construction and cheap to copy (storage is shared).
//  - It keeps its backing storage alive: a read-only mmap of the file (zero copy) or an owned
//    buffer.
//  - norms() are computed once, on first use, thread-safely.
//
// Thread-safety: all const methods may be called concurrently.
//
//   EmbeddingTable t = EmbeddingTable::from_f32(3, 2, {1,0, 0,1, 1,1});
//   float v[2]; t.row_f32(2, v);            // {1, 1}
//   float n = t.norms()[2];                 // sqrt(2)
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "embedscope/core/dtype.h"

namespace embedscope {

using TokenId = int32_t;

// Shape limits. A file's byte size bounds rows x dim, but not a side when the other is 0: a
// declared 0 x 2^40 or 2^56 x 0 matrix has no bytes at all, yet per-row buffers (a query, a
// dequantised row) are sized by dim and per-table ones (norms) by the row count.
//  - dim: at most 1,048,576 values per row (the widest real embedding tables have 16-32k);
//  - rows: at most 2^31 - 1 (row ids are TokenId), and a zero-width matrix at most kMaxTableDim.
// Loaders call check_table_shape naming the file and tensor; the factories below throw too, as
// a backstop.
inline constexpr size_t kMaxTableDim = size_t(1) << 20;
inline constexpr size_t kMaxTableRows = size_t(INT32_MAX);
// Throws Error(kCorrupt) "WHERE: rows of DIM values exceed the limit of ..." (or the row count).
void check_table_shape(const std::string& where, uint64_t rows, uint64_t dim);

// Sum of squares of x[0..n): 16 float lanes (four 4-wide vectors) over blocks of 64 elements,
// each block's lanes folded by halving (i + i+8, i + i+4, i + i+2, i + i+1) into a double, so it
// is as accurate as a double accumulation for any realistic row width while reading at memory
// speed. A fixed order: the same x gives the same bits on every run, thread and CPU. The one
// row-norm definition: norms(), row_norms() and the CLI's norm statistics call it, and the
// searcher's first scan computes it bit for bit beside its dot products
// (simd::dot_rows_sumsq).
double sum_of_squares(const float* x, size_t n);

class EmbeddingTable {
 public:
  EmbeddingTable();  // an empty 0 x 0 F32 table

  // Owned float32 table; data.size() must equal n_rows * dim (ES_CHECK: caller's invariant).
  static EmbeddingTable from_f32(size_t n_rows, size_t dim, std::vector<float> data);
  // Owned table of 16-bit elements (F16 or BF16 bit patterns).
  static EmbeddingTable from_u16(size_t n_rows, size_t dim, DType dtype,
                                 std::vector<uint16_t> data);
  // A view of `data` kept alive by `owner` (for example a MappedFile). `data` must be aligned
  // to dtype_size(dtype) and hold n_rows * dim elements (ES_CHECK).
  static EmbeddingTable view(std::shared_ptr<const void> owner, const std::byte* data,
                             size_t n_rows, size_t dim, DType dtype, bool zero_copy);
  // Copies `bytes` (possibly unaligned) into owned, aligned memory.
  static EmbeddingTable copy_of(const std::byte* bytes, size_t n_rows, size_t dim, DType dtype);

  size_t n_rows() const { return n_rows_; }
  size_t dim() const { return dim_; }
  DType dtype() const { return dtype_; }
  bool zero_copy() const { return zero_copy_; }
  size_t row_bytes() const { return dim_ * dtype_size(dtype_); }
  size_t byte_size() const { return n_rows_ * row_bytes(); }
  const std::byte* data() const { return data_; }
  const std::byte* row_data(size_t i) const { return data_ + i * row_bytes(); }

  // Typed access; ES_CHECK that the dtype matches.
  const float* f32() const;
  const uint16_t* u16() const;

  // Row i converted to float32 into out[0..dim). i < n_rows (ES_CHECK).
  void row_f32(size_t i, float* out) const;
  std::vector<float> row(size_t i) const;

  // L2 norms of all rows, computed once (thread-safe) in one parallel pass (sum_of_squares).
  const std::vector<float>& norms() const;

  // L2 norms of rows [begin, end) into out[0..end - begin), computed now (no cache), with
  // norms()'s arithmetic: the same values, bit for bit. end <= n_rows (ES_CHECK). A scan that
  // reads the rows anyway computes the norms of each block beside it (Searcher's first query).
  void row_norms(size_t begin, size_t end, float* out) const;

  // Number of NaN / Inf elements (scanned once, on demand, together with norms).
  uint64_t n_nonfinite() const;

  // For a zero-copy table: drops rows [begin, end) from this process's resident memory (whole
  // pages only; the page cache keeps them and a later read maps them back). A streaming pass
  // calls it behind itself so RSS stays flat however large the file. No effect on owned tables.
  void drop_resident(size_t begin, size_t end) const;

  // For a zero-copy table: maps rows [begin, end) into this process ahead of a scan, in one
  // system call (madvise MADV_POPULATE_READ) instead of one page fault per few pages as the scan
  // touches them; pages not in the page cache are read. Best effort (an older kernel ignores
  // it); no effect on owned tables.
  void populate(size_t begin, size_t end) const;

  // An F32 copy of the whole table (owned).
  EmbeddingTable to_f32() const;

 private:
  struct Cache;
  std::shared_ptr<const void> owner_;
  const std::byte* data_ = nullptr;
  size_t n_rows_ = 0;
  size_t dim_ = 0;
  DType dtype_ = DType::kF32;
  bool zero_copy_ = false;
  std::shared_ptr<Cache> cache_;
};

}  // namespace embedscope
