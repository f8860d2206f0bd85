// libFuzzer target for the Hugging Face tokenizer.json loader
// (BpeTokenizer::from_tokenizer_json_text, the same code as from_tokenizer_json). A tokenizer
// that loads must keep fuzz_bpe_common.h's invariants (the slow-twin check is skipped: a
// tokenizer.json may set model.ignore_merges, which takes whole tokens by design).
#include <cstdint>
#include <string_view>

#include "embedscope/core/error.h"
#include "fuzz_bpe_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace embedscope;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  try {
    BpeTokenizer tok = BpeTokenizer::from_tokenizer_json_text(in, "fuzz-tokenizer.json");
    fuzz::check_tokenizer(tok, "The quick brown fox's 123 naïve 日本語 \xF0\x9F\x98\x80  \r\n\xFF",
                          false);
    fuzz::check_tokenizer(tok, in.substr(0, 512), false);
  } catch (const Error&) {
  }
  return 0;
}
