// Little-endian loads from byte buffers read from files.
//
// Every binary format embedscope reads (safetensors, zip, GGUF, word2vec binary, HNSW indexes,
// checkpoints) stores its fields little-endian at arbitrary offsets. load_le reads one such
// field: unaligned and without aliasing undefined behaviour (memcpy), byte-swapped on a
// big-endian host. Bounds are the caller's job (core/checked.h).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstring>
#include <type_traits>

namespace embedscope {

template <class T>
requires std::is_trivially_copyable_v<T> T load_le(const void* p) {
  if constexpr (std::endian::native == std::endian::big && sizeof(T) > 1) {
    std::array<std::byte, sizeof(T)> b;
    std::memcpy(b.data(), p, sizeof(T));
    std::reverse(b.begin(), b.end());
    return std::bit_cast<T>(b);
  } else {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  }
}

}  // namespace embedscope
