// libFuzzer target for the SentencePiece .model reader (load_sentencepiece_model_bytes, our own
// protobuf wire-format reader). A model that loads must encode any bytes without escaping
// anything but embedscope::Error, give one offset per id within the text, and decode its ids.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "embedscope/core/error.h"
#include "embedscope/tokenizer/sentencepiece.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace embedscope;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  try {
    auto tok = load_sentencepiece_model_bytes(in, "fuzz.model");
    for (std::string_view text :
         {std::string_view("The quick brown fox's 123 na\xC3\xAFve \xF0\x9F\x98\x80  \xFF <unk>"),
          in.substr(0, 256)}) {
      Encoding e = tok->encode(text);
      if (e.offsets.size() != e.ids.size()) std::abort();
      for (size_t i = 0; i < e.ids.size(); ++i) {
        if (e.ids[i] < 0 || size_t(e.ids[i]) >= tok->vocab_size()) std::abort();
        if (e.offsets[i].begin > e.offsets[i].end || e.offsets[i].end > text.size()) std::abort();
      }
      (void)tok->decode(e.ids);
    }
  } catch (const Error&) {
  }
  return 0;
}
