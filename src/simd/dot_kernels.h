// Scoring kernels: dot products of one query with many rows, for F32 / F16 / BF16 tables and an
// int8 copy with per-row scales.
//
// This is the one place where the CPU's instruction set is chosen: the SIMD versions are
// compiled for every x86 target Highway knows (SSSE3 ... AVX-512) through foreach_target and
// picked once at run time by HWY_DYNAMIC_DISPATCH; nothing is compiled with -march=native.
// Every SIMD kernel has a *_scalar twin with the same contract; with integer-valued inputs small
// enough to be exact in float32 both give bit-identical results (tests/search/kernels_test.cpp).
//
// Shapes: rows are compact row-major (n_rows x dim) starting at `rows`, aligned to the element
// size; q has dim floats; out has n_rows entries. No allocation, no exceptions, thread-safe.
//
//   std::vector<float> s(n);
//   simd::dot_rows(table.data(), table.dtype(), n, table.dim(), q.data(), s.data());
#pragma once

#include <cstddef>
#include <cstdint>

#include "embedscope/core/dtype.h"

namespace embedscope::simd {

// out[i] = sum_j q[j] * float(row_i[j]), float32 arithmetic.
void dot_rows(const std::byte* rows, DType dtype, size_t n_rows, size_t dim, const float* q,
              float* out);
void dot_rows_scalar(const std::byte* rows, DType dtype, size_t n_rows, size_t dim, const float* q,
                     float* out);

// dot_rows, and each row's sum of squares from the same loads: out[i] is dot_rows' value and
// sumsq[i] is core's sum_of_squares(row_i as float32, dim) (core/embedding_table.h), both bit
// for bit, on every target (tests/search/kernels_test.cpp). A first scan over a mapped table
// reads each row once for its score and its norm.
void dot_rows_sumsq(const std::byte* rows, DType dtype, size_t n_rows, size_t dim, const float* q,
                    float* out, double* sumsq);

// int8 rows padded to `stride` bytes (stride % 64 == 0, padding zero), int16 query of `stride`
// values (padding zero): out[i] = sum_j int32(q[j]) * int32(row_i[j]). The caller bounds
// |q| so the sum cannot overflow: stride * 127 * max|q| < 2^31 (see int8_query_limit).
void dot_rows_i8(const int8_t* rows, size_t n_rows, size_t stride, const int16_t* q, int32_t* out);
void dot_rows_i8_scalar(const int8_t* rows, size_t n_rows, size_t stride, const int16_t* q,
                        int32_t* out);

// out[i] = sum_j row_i[j]: the scan of dot_rows without the multiply, i.e. a plain streaming
// read of the rows. The benchmark measures read bandwidth with it (same threads, same blocks,
// same loads as a search), so "x bandwidth bound" compares like with like. Summation order
// differs between the two (exact only for integer-valued inputs).
void sum_rows_f32(const float* rows, size_t n_rows, size_t dim, float* out);
void sum_rows_f32_scalar(const float* rows, size_t n_rows, size_t dim, float* out);

// Largest |q| allowed by dot_rows_i8 for this stride (at most 32767).
int32_t int8_query_limit(size_t stride);

// Converts n elements of dtype to float32 (used to feed F16/BF16 blocks to sgemm).
void convert_to_f32(const std::byte* src, DType dtype, size_t n, float* dst);

// Name of the instruction set the dispatcher chose ("AVX3", "AVX2", ...).
const char* active_target();

}  // namespace embedscope::simd
