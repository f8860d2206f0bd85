#include "embedscope/core/embedding_table.h"

#include <cmath>
#include <cstring>
#include <mutex>

#include "embedscope/core/error.h"
#include "embedscope/core/mapped_file.h"

namespace embedscope {

struct EmbeddingTable::Cache {
  std::once_flag once;
  std::vector<float> norms;
  uint64_t n_nonfinite = 0;
};

EmbeddingTable::EmbeddingTable() : cache_(std::make_shared<Cache>()) {}

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

const std::vector<float>& EmbeddingTable::norms() const {
  std::call_once(cache_->once, [this] {
    cache_->norms.resize(n_rows_);
    std::vector<float> buf(dim_);
    uint64_t bad = 0;
    for (size_t i = 0; i < n_rows_; ++i) {
      row_f32(i, buf.data());
      double s = 0;
      for (size_t j = 0; j < dim_; ++j) {
        if (!std::isfinite(buf[j])) ++bad;
        s += double(buf[j]) * buf[j];
      }
      cache_->norms[i] = float(std::sqrt(s));
    }
    cache_->n_nonfinite = bad;
  });
  return cache_->norms;
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
