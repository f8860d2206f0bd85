#include "embedscope/core/embedding_table.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <thread>

#include "embedscope/core/error.h"
#include "embedscope/core/mapped_file.h"
#include "embedscope/core/thread_pool.h"

namespace embedscope {

struct EmbeddingTable::Cache {
  std::once_flag once;
  std::vector<float> norms;
  uint64_t n_nonfinite = 0;
};

EmbeddingTable::EmbeddingTable() : cache_(std::make_shared<Cache>()) {}

void check_table_shape(const std::string& where, uint64_t rows, uint64_t dim) {
  if (dim > kMaxTableDim)
    throw Error(ErrorCode::kCorrupt, where + ": rows of " + std::to_string(dim) +
                                         " values exceed the limit of " +
                                         std::to_string(kMaxTableDim) + " per row");
  const uint64_t max_rows = dim == 0 ? kMaxTableDim : kMaxTableRows;
  if (rows > max_rows)
    throw Error(ErrorCode::kCorrupt,
                where + ": " + std::to_string(rows) + " rows exceed the limit of " +
                    std::to_string(max_rows) +
                    (dim == 0 ? " for a matrix with no columns" : " (row ids are 32-bit)"));
}

EmbeddingTable EmbeddingTable::from_f32(size_t n_rows, size_t dim, std::vector<float> data) {
  ES_CHECK(data.size() == n_rows * dim);
  auto owned = std::make_shared<std::vector<float>>(std::move(data));
  return view(owned, reinterpret_cast<const std::byte*>(owned->data()), n_rows, dim, DType::kF32,
              false);
}

EmbeddingTable EmbeddingTable::from_u16(size_t n_rows, size_t dim, DType dtype,
                                        std::vector<uint16_t> data) {
  ES_CHECK(dtype != DType::kF32);
  ES_CHECK(data.size() == n_rows * dim);
  auto owned = std::make_shared<std::vector<uint16_t>>(std::move(data));
  return view(owned, reinterpret_cast<const std::byte*>(owned->data()), n_rows, dim, dtype, false);
}

EmbeddingTable EmbeddingTable::view(std::shared_ptr<const void> owner, const std::byte* data,
                                    size_t n_rows, size_t dim, DType dtype, bool zero_copy) {
  check_table_shape("embedding table", n_rows, dim);
  ES_CHECK(reinterpret_cast<uintptr_t>(data) % dtype_size(dtype) == 0);
  ES_CHECK(data != nullptr || n_rows * dim == 0);
  EmbeddingTable t;
  t.owner_ = std::move(owner);
  t.data_ = data;
  t.n_rows_ = n_rows;
  t.dim_ = dim;
  t.dtype_ = dtype;
  t.zero_copy_ = zero_copy;
  return t;
}

EmbeddingTable EmbeddingTable::copy_of(const std::byte* bytes, size_t n_rows, size_t dim,
                                       DType dtype) {
  check_table_shape("embedding table", n_rows, dim);
  size_t n = n_rows * dim;
  if (dtype == DType::kF32) {
    std::vector<float> v(n);
    if (n) std::memcpy(v.data(), bytes, n * 4);
    return from_f32(n_rows, dim, std::move(v));
  }
  std::vector<uint16_t> v(n);
  if (n) std::memcpy(v.data(), bytes, n * 2);
  return from_u16(n_rows, dim, dtype, std::move(v));
}

const float* EmbeddingTable::f32() const {
  ES_CHECK(dtype_ == DType::kF32);
  return reinterpret_cast<const float*>(data_);
}

const uint16_t* EmbeddingTable::u16() const {
  ES_CHECK(dtype_ != DType::kF32);
  return reinterpret_cast<const uint16_t*>(data_);
}

void EmbeddingTable::row_f32(size_t i, float* out) const {
  ES_CHECK(i < n_rows_);
  if (dim_ == 0) return;  // empty rows: data_ may be null, and memcpy(null, ..., 0) is UB
  if (dtype_ == DType::kF32) {
    std::memcpy(out, data_ + i * row_bytes(), dim_ * 4);
    return;
  }
  const uint16_t* p = u16() + i * dim_;
  if (dtype_ == DType::kF16) {
    for (size_t j = 0; j < dim_; ++j) out[j] = f16_to_f32(p[j]);
  } else {
    for (size_t j = 0; j < dim_; ++j) out[j] = bf16_to_f32(p[j]);
  }
}

std::vector<float> EmbeddingTable::row(size_t i) const {
  std::vector<float> v(dim_);
  row_f32(i, v.data());
  return v;
}

// GCC / Clang vector types rather than Highway: core has no SIMD dispatch (simd/ depends on
// core), and four independent 4-lane accumulators are what keeps this at memory speed on any
// target; the scalar-array form left dim 300's 44-value tail to a serial double loop, ~1.7x
// slower per row in cache.
double sum_of_squares(const float* x, size_t n) {
  typedef float V4 __attribute__((vector_size(16)));
  constexpr size_t kBlock = 64;
  double s = 0;
  for (size_t j = 0; j < n; j += kBlock) {
    const size_t m = std::min(kBlock, n - j);
    const float* p = x + j;
    V4 a[4] = {}, u[4];
    size_t b = 0;
    for (; b + 16 <= m; b += 16) {
      std::memcpy(u, p + b, sizeof u);  // unaligned load
      for (int k = 0; k < 4; ++k) a[k] += u[k] * u[k];
    }
    if (b < m) {  // the block's last < 16 values, zero-padded
      float tail[16] = {};
      std::memcpy(tail, p + b, (m - b) * sizeof(float));
      std::memcpy(u, tail, sizeof u);
      for (int k = 0; k < 4; ++k) a[k] += u[k] * u[k];
    }
    const V4 r = (a[0] + a[2]) + (a[1] + a[3]);
    s += double((r[0] + r[2]) + (r[1] + r[3]));
  }
  return s;
}

namespace {
// Row i as float32: a pointer into the table when it is float32, else converted into buf.
const float* row_as_f32(const EmbeddingTable& t, size_t i, std::vector<float>& buf) {
  if (t.dtype() == DType::kF32) return t.f32() + i * t.dim();
  buf.resize(t.dim());
  t.row_f32(i, buf.data());
  return buf.data();
}
}  // namespace

const std::vector<float>& EmbeddingTable::norms() const {
  std::call_once(cache_->once, [this] {
    cache_->norms.resize(n_rows_);
    // One pass over the whole table, which for GPT-2's wte is 154 MB: worth the cores.
    const size_t threads =
        n_rows_ * dim_ >= (size_t(1) << 20) ? std::min<size_t>(4, process_pool().size()) : 1;
    std::vector<uint64_t> bad(threads, 0);
    auto pass = [&](size_t begin, size_t end, size_t t) {
      std::vector<float> buf;
      for (size_t i = begin; i < end; ++i) {
        const float* x = row_as_f32(*this, i, buf);
        double sq = sum_of_squares(x, dim_);
        // Only a row whose sum is not finite can hold NaN / Inf (overflow alone is not one).
        if (!std::isfinite(sq))
          for (size_t j = 0; j < dim_; ++j) bad[t] += !std::isfinite(x[j]);
        cache_->norms[i] = float(std::sqrt(sq));
      }
    };
    if (threads == 1 || dim_ == 0) {
      if (dim_ != 0) pass(0, n_rows_, 0);
    } else {
      process_pool().parallel_for(n_rows_, pass, threads);
    }
    uint64_t total = 0;
    for (uint64_t b : bad) total += b;
    cache_->n_nonfinite = total;
  });
  return cache_->norms;
}

void EmbeddingTable::row_norms(size_t begin, size_t end, float* out) const {
  ES_CHECK(begin <= end && end <= n_rows_);
  if (dim_ == 0) {
    std::fill(out, out + (end - begin), 0.0f);
    return;
  }
  std::vector<float> buf;
  for (size_t i = begin; i < end; ++i) {
    const float* x = row_as_f32(*this, i, buf);
    out[i - begin] = float(std::sqrt(sum_of_squares(x, dim_)));  // as norms() does
  }
}

void EmbeddingTable::populate(size_t begin, size_t end) const {
  if (!zero_copy_ || begin >= end || end > n_rows_) return;
  MappedFile::populate(row_data(begin), (end - begin) * row_bytes());
}

uint64_t EmbeddingTable::n_nonfinite() const {
  norms();
  return cache_->n_nonfinite;
}

EmbeddingTable EmbeddingTable::to_f32() const {
  std::vector<float> v(n_rows_ * dim_);
  for (size_t i = 0; i < n_rows_; ++i) row_f32(i, v.data() + i * dim_);
  return from_f32(n_rows_, dim_, std::move(v));
}

void EmbeddingTable::drop_resident(size_t begin, size_t end) const {
  if (!zero_copy_ || begin >= end || end > n_rows_) return;
  MappedFile::drop_resident(row_data(begin), (end - begin) * row_bytes());
}

}  // namespace embedscope
