// BpeTokenizer (the GPT-2-family fast path) behind the Tokenizer interface.
#include "embedscope/core/error.h"
#include "embedscope/tokenizer/bpe.h"
#include "embedscope/tokenizer/tokenizer.h"
#include "tokenizer/hf_impl.h"

namespace embedscope {

namespace {

class BpeAdapter final : public Tokenizer {
 public:
  explicit BpeAdapter(BpeTokenizer bpe) : bpe_(std::move(bpe)) {}
  std::string describe() const override {
    return "byte-level BPE (" + std::string(pre_tokenizer_name(bpe_.pre_tokenizer())) + ")";
  }
  size_t vocab_size() const override { return bpe_.vocab_size(); }
  Encoding encode(std::string_view text, const EncodeOptions& options) const override {
    Encoding e;
    std::vector<size_t> starts;
    e.ids = bpe_.encode_with_offsets(text, &starts, !options.split_special_tokens);
    e.offsets.reserve(e.ids.size());
    // Tokens are raw bytes, so each one covers exactly its own length of the input.
    for (size_t i = 0; i < e.ids.size(); ++i)
      e.offsets.push_back({starts[i], starts[i] + bpe_.token_bytes(e.ids[i]).size()});
    return e;  // GPT-2-family files have no post-processor: add_special_tokens adds nothing
  }
  std::string decode_bytes(std::span<const TokenId> ids, bool skip_special) const override {
    if (!skip_special) return bpe_.decode_bytes(ids);
    std::vector<TokenId> kept;
    for (TokenId id : ids) {
      (void)bpe_.token_bytes(id);  // Error(kOutOfRange) for a bad id, as without skipping
      if (!bpe_.is_special(id)) kept.push_back(id);
    }
    return bpe_.decode_bytes(kept);
  }
  std::optional<std::string> token(TokenId id) const override {
    if (id < 0 || size_t(id) >= bpe_.vocab_size()) return std::nullopt;
    const std::string& raw = bpe_.token_bytes(id);
    if (bpe_.is_special(id)) return raw;
    std::string spelled;  // the byte-level alphabet, as vocab.json spells it ("Ġcomputer")
    for (char ch : raw) spelled += hf::byte_char(static_cast<uint8_t>(ch));
    return spelled;
  }
  std::optional<TokenId> token_id(std::string_view token) const override {
    std::string raw;
    for (size_t i = 0; i < token.size();) {
      uint32_t cp = 0;
      size_t n = 0;
      unsigned char b = static_cast<unsigned char>(token[i]);
      n = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
      if (i + n > token.size()) return bpe_.token_id(token);
      cp = uint32_t(b < 0x80 ? b : b < 0xE0 ? b & 0x1F : b < 0xF0 ? b & 0x0F : b & 0x07);
      for (size_t k = 1; k < n; ++k)
        cp = (cp << 6) | (static_cast<unsigned char>(token[i + k]) & 0x3F);
      int byte = hf::char_byte(cp);
      if (byte < 0) return bpe_.token_id(token);  // a special token is spelled as itself
      raw += char(byte);
      i += n;
    }
    if (auto id = bpe_.token_id(raw); id && !bpe_.is_special(*id)) return id;
    return bpe_.token_id(token);
  }
  std::string display(TokenId id) const override { return bpe_.display(id); }
  bool is_special(TokenId id) const override { return bpe_.is_special(id); }
  std::string token_bytes(TokenId id) const override { return bpe_.token_bytes(id); }
  const BpeTokenizer* bpe() const override { return &bpe_; }

 private:
  BpeTokenizer bpe_;
};

}  // namespace

std::unique_ptr<Tokenizer> make_tokenizer(BpeTokenizer bpe) {
  return std::make_unique<BpeAdapter>(std::move(bpe));
}

}  // namespace embedscope
