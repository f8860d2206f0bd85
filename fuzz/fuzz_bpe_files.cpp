// libFuzzer target for the vocab.json + merges.txt loader (BpeTokenizer::from_buffers, the
// same code as from_files). Input: vocab.json bytes, a NUL byte, merges.txt bytes (no NUL: all
// vocabulary, no merges). A tokenizer that loads must keep fuzz_bpe_common.h's invariants on
// the input's own bytes and on a fixed mixed-script text.
#include <cstdint>
#include <cstring>
#include <string_view>

#include "embedscope/core/error.h"
#include "fuzz_bpe_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace embedscope;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  size_t nul = in.find('\0');
  std::string_view vocab = in.substr(0, nul);
  std::string_view merges = nul == std::string_view::npos ? std::string_view() : in.substr(nul + 1);
  try {
    BpeTokenizer tok =
        BpeTokenizer::from_buffers(vocab, merges, "fuzz-vocab.json", "fuzz-merges.txt");
    fuzz::check_tokenizer(tok, "The quick brown fox's 123 naïve 日本語 \xF0\x9F\x98\x80  \n\xFF",
                          true);
    fuzz::check_tokenizer(tok, in.substr(0, 512), true);
  } catch (const Error&) {
  }
  return 0;
}
