// libFuzzer target for PyTorch zip checkpoints (zip directory + restricted unpickler + tensor
// bounds). Invariants (docs/reliability.md 6.0): only embedscope::Error escapes; nothing is
// executed; every accepted tensor's matrix loads and is readable.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "embedscope/core/error.h"
#include "embedscope/formats/pickle.h"
#include "embedscope/formats/pytorch.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace embedscope;
  auto buf = std::make_shared<std::vector<std::byte>>(size);
  if (size) std::memcpy(buf->data(), data, size);
  // The unpickler alone, on the raw bytes (finds stack-machine bugs without a zip around it).
  try {
    unpickle_torch(*buf, "fuzz.pkl");
  } catch (const Error&) {
  }
  try {
    TorchCheckpoint c = TorchCheckpoint::from_bytes(buf, *buf, "fuzz.bin");
    for (const std::string& name : c.matrix_candidates()) {
      try {
        LoadedEmbeddings e = c.load_matrix(name);
        if (e.table.n_rows() * e.table.dim() > (size_t(1) << 24)) continue;
        volatile float sink = 0;
        for (float n : e.table.norms()) sink = sink + n;
      } catch (const Error&) {
      }
    }
  } catch (const Error&) {
  }
  return 0;
}
