// libFuzzer target for the generic tokenizer.json reader (load_tokenizer_json_text). A file
// that loads must encode any bytes without escaping anything but embedscope::Error (a hostile
// Split regex may throw kInvalidArgument at its match limit), give one offset per id, offsets
// within the text, and decode its own ids.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "embedscope/core/error.h"
#include "embedscope/tokenizer/tokenizer.h"

namespace {

void check(const embedscope::Tokenizer& tok, std::string_view text) {
  using namespace embedscope;
  for (bool special : {false, true}) {
    Encoding e;
    try {
      e = tok.encode(text, {.add_special_tokens = special});
    } catch (const Error& err) {
      if (err.code() != ErrorCode::kInvalidArgument) throw;
      return;
    }
    if (e.offsets.size() != e.ids.size()) std::abort();
    for (size_t i = 0; i < e.ids.size(); ++i) {
      if (e.ids[i] < 0 || size_t(e.ids[i]) >= tok.vocab_size()) std::abort();
      if (e.offsets[i].begin > e.offsets[i].end || e.offsets[i].end > text.size()) std::abort();
    }
    (void)tok.decode(e.ids);
    (void)tok.decode(e.ids, true);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace embedscope;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  try {
    auto tok = load_tokenizer_json_text(in, "fuzz-tokenizer.json");
    check(*tok, "The quick brown fox's 123 naïve 日本語 \xF0\x9F\x98\x80  \r\n\xFF <s> [CLS]");
    check(*tok, in.substr(0, 512));
    for (TokenId id = 0; size_t(id) < tok->vocab_size() && id < 64; ++id) {
      if (tok->token(id)) (void)tok->display(id);
    }
  } catch (const Error&) {
  }
  return 0;
}
