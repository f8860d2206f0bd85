// Block dot products of unsigned 8-bit queries with signed 8-bit rows (int32 sums), for the
// bounded int8 batch search (search/searcher.cpp).
//
// out[qi * n_rows + r] = sum_j int32(q[qi * stride + j]) * int32(rows[r * stride + j]), for
// n_queries queries and n_rows rows of `stride` bytes each (stride % 64 == 0; padding must be
// zero in the rows or in the queries). The caller keeps stride * 255 * 128 < 2^31 (so no
// int32 sum can overflow: u8_i8_max_stride()).
//
// The fast version uses AVX-512 VNNI (vpdpbusd: 64 multiply-adds per instruction, four times
// float32 FMA's rate), written with intrinsics: Debian's Highway 1.0.3 has no u8 x i8 dot
// operation (SumOfMulQuadAccumulate arrived in 1.1). It exists only on CPUs with AVX-512 VNNI
// (has_u8_i8_kernel(), checked once); the scalar twin has the same contract and results
// (integer sums are exact in any order), tests/search/kernels_test.cpp compares them.
// No allocation, no exceptions, thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace embedscope::simd {

bool has_u8_i8_kernel();
size_t u8_i8_max_stride();

// The VNNI kernel where the CPU has one, else the scalar twin (slow: callers check
// has_u8_i8_kernel() first).
void dot_u8_i8_block(const uint8_t* q, size_t n_queries, const int8_t* rows, size_t n_rows,
                     size_t stride, int32_t* out);
void dot_u8_i8_block_scalar(const uint8_t* q, size_t n_queries, const int8_t* rows, size_t n_rows,
                            size_t stride, int32_t* out);

}  // namespace embedscope::simd
