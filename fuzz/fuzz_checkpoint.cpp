// libFuzzer target for the word2vec checkpoint reader (what `train --resume` loads: one file,
// embedscope/train/w2v_checkpoint.h). Invariants (docs/reliability.md 6.0): only embedscope::Error
// escapes; an accepted checkpoint describes arrays that lie inside the input and fill it.
//
// Each input is tried twice: as given, and with its checksum recomputed, so that mutations get
// past the checksum and reach the header and array checks behind it.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "embedscope/core/error.h"
#include "embedscope/train/w2v_checkpoint.h"

namespace {

void check(std::span<const std::byte> bytes) {
  using namespace embedscope;
  try {
    Word2VecCheckpointInfo info = inspect_word2vec_checkpoint(bytes, "fuzz.ckpt");
    const uint64_t row = uint64_t(info.dim) * sizeof(float);
    const uint64_t arrays =
        (info.syn0_rows + info.syn1neg_rows + info.syn1_rows) * row + info.update_rows * 8;
    if (info.dim == 0 || info.arrays_offset + arrays + 16 != bytes.size()) std::abort();
    volatile float sink = 0;  // read every float the header promises
    for (uint64_t off = info.arrays_offset; off + 4 <= info.arrays_offset + arrays; off += 4) {
      float f;
      std::memcpy(&f, bytes.data() + off, 4);
      sink = sink + f;
    }
  } catch (const Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  check(in);
  if (size >= 32) {
    std::vector<std::byte> fixed(in.begin(), in.end());
    const uint64_t sum = embedscope::word2vec_checkpoint_checksum(in.first(size - 16));
    std::memcpy(fixed.data() + size - 16, &sum, 8);
    check(fixed);
  }
  return 0;
}
