// libFuzzer target for SentencePiece's precompiled_charsmap reader (src/tokenizer/
// precompiled_charsmap.cpp), through both public ways in: the input as a tokenizer.json
// "Precompiled" normalizer (Hugging Face's grapheme-wise application) and as the
// normalizer_spec.precompiled_charsmap of a small SentencePiece .model (SentencePiece's longest
// match and whitespace rules). A map that loads must normalize any text without escaping
// anything but embedscope::Error, with ids in the vocabulary and offsets within the text.
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "embedscope/core/error.h"
#include "embedscope/tokenizer/sentencepiece.h"
#include "embedscope/tokenizer/tokenizer.h"

namespace {

std::string base64(std::string_view bytes) {
  static const char* a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t w = 0;
  int bits = 0;
  for (char c : bytes) {
    w = w << 8 | uint8_t(c);
    bits += 8;
    while (bits >= 6) out += a[(w >> (bits -= 6)) & 63];
  }
  if (bits) out += a[(w << (6 - bits)) & 63];
  while (out.size() % 4) out += '=';
  return out;
}

std::string varint(uint64_t v) {
  std::string s;
  for (; v >= 0x80; v >>= 7) s += char((v & 0x7F) | 0x80);
  return s + char(v);
}
std::string field(int f, std::string_view bytes) {
  return varint(uint64_t(f) << 3 | 2) + varint(bytes.size()) + std::string(bytes);
}
std::string piece(const char* text, uint64_t type) {
  // score 0.0 (fixed32), type varint
  return field(1, field(1, text) + std::string("\x15\0\0\0\0", 5) + "\x18" + char(type));
}

void check(const embedscope::Tokenizer& tok) {
  for (std::string_view text :
       {std::string_view("The  quick\tbrown \xEF\xBC\xA6ox na\xC3\xAFve e\xCC\x81 \xF0\x9F\x98\x80 "
                         "\xEF\xAC\x81 \xE2\x85\xAB  \xFF "),
        std::string_view("   "), std::string_view("")}) {
    embedscope::Encoding e = tok.encode(text);
    if (e.offsets.size() != e.ids.size()) std::abort();
    for (size_t i = 0; i < e.ids.size(); ++i) {
      if (e.ids[i] < 0 || size_t(e.ids[i]) >= tok.vocab_size()) std::abort();
      if (e.offsets[i].begin > e.offsets[i].end || e.offsets[i].end > text.size()) std::abort();
    }
    (void)tok.decode(e.ids);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace embedscope;
  using nlohmann::json;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  try {
    json vocab = json::array({json::array({"<unk>", 0.0})});
    for (const char* p : {"\xE2\x96\x81", "a", "b", "e", "f", "\xE2\x96\x81T", "he"})
      vocab.push_back(json::array({p, -1.0}));
    json j = {{"normalizer", {{"type", "Precompiled"}, {"precompiled_charsmap", base64(in)}}},
              {"pre_tokenizer", {{"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}}},
              {"model", {{"type", "Unigram"}, {"unk_id", 0}, {"vocab", vocab}}}};
    check(*load_tokenizer_json_text(j.dump(), "fuzz.json"));
  } catch (const Error&) {
  }
  try {
    const std::string model = piece("<unk>", 2) + piece("\xE2\x96\x81", 1) + piece("a", 1) +
                              piece("e", 1) + field(3, field(1, "nmt_nfkc") + field(2, in));
    check(*load_sentencepiece_model_bytes(model, "fuzz.model"));
  } catch (const Error&) {
  }
  return 0;
}
