// libFuzzer target for GGUF vocabularies (load_gguf_tokenizer on GgufFile::from_bytes, then
// encode and decode a fixed text). Invariants (docs/reliability.md 6.0, T34-T43): only
// embedscope::Error escapes; every id encode returns is below vocab_size().
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "embedscope/core/error.h"
#include "embedscope/formats/gguf.h"
#include "embedscope/tokenizer/gguf_vocab.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace embedscope;
  auto buf = std::make_shared<std::vector<std::byte>>(size);
  if (size) std::memcpy(buf->data(), data, size);
  try {
    GgufFile g = GgufFile::from_bytes(buf, *buf, "fuzz.gguf");
    std::unique_ptr<Tokenizer> tok = load_gguf_tokenizer(g);
    Encoding e =
        tok->encode("Hello w\xC3\xB6rld 12  <s>\n\xE6\x97\xA5 \xFF!", {.add_special_tokens = true});
    for (TokenId id : e.ids)
      if (id < 0 || size_t(id) >= tok->vocab_size()) std::abort();
    volatile size_t sink = tok->decode(e.ids).size();
    (void)sink;
  } catch (const Error&) {
  }
  return 0;
}
