// libFuzzer target for the GGUF reader (GgufFile::from_bytes + load_matrix of every 2-D tensor
// + every metadata array). Invariants (docs/reliability.md 6.0): only embedscope::Error escapes;
// an accepted tensor's bytes lie inside the input; a loaded table is fully readable.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "embedscope/core/error.h"
#include "embedscope/formats/gguf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace embedscope;
  auto buf = std::make_shared<std::vector<std::byte>>(size);
  if (size) std::memcpy(buf->data(), data, size);
  try {
    GgufFile g = GgufFile::from_bytes(buf, *buf, "fuzz.gguf");
    for (const GgufKv& kv : g.kvs()) {
      if (kv.type != GgufValueType::kArray) continue;
      try {
        if (kv.array_type == GgufValueType::kString)
          g.string_array(kv.key);
        else if (kv.array_type == GgufValueType::kFloat32 ||
                 kv.array_type == GgufValueType::kFloat64)
          g.float_array(kv.key);
        else if (kv.array_type != GgufValueType::kBool)
          g.int_array(kv.key);
      } catch (const Error&) {
      }
    }
    for (const GgufTensorInfo& t : g.tensors()) {
      auto b = g.tensor_bytes(t);
      if (b.data() < buf->data() || b.size() > size || b.data() + b.size() > buf->data() + size)
        std::abort();
      if (t.shape.size() != 2 || t.n_elements > (size_t(1) << 24)) continue;
      try {
        LoadedEmbeddings e = g.load_matrix(t.name);
        volatile float sink = 0;
        for (float n : e.table.norms()) sink = sink + n;
      } catch (const Error&) {
      }
    }
  } catch (const Error&) {
  }
  return 0;
}
