// libFuzzer target for encode / decode on arbitrary bytes. The tokenizer is built in-process
// (no files needed): byte-level BPE trained for up to 400 merges on a fixed mixed-script text,
// plus <|endoftext|>. Input byte 0 picks the pre-tokenizer (GPT-2, cl100k, Llama-3, Qwen2); the
// rest is the text, checked against fuzz_bpe_common.h's invariants, including equality with
// encoder.py's loop on every pre-token (exercises the whole-token shortcut and the bucketed
// merge of pieces longer than 64 bytes).
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "embedscope/core/error.h"
#include "fuzz_bpe_common.h"

namespace {

using namespace embedscope;

constexpr std::string_view kTrainText =
    "The quick brown fox jumps over the lazy dog. the theory of the thing; they'll say it's "
    "there, and we've seen them. aaaaaaaaaaaaaaaa bbbb 1234567890 1111 2222 000000 ---- ==== "
    "naïve café résumé Straße İstanbul δοκιμή тест тест 日本語 日本語 中文 한국어 עברית العربية "
    "\xF0\x9F\x98\x80\xF0\x9F\x98\x80 \t\t  \n\n\r\n    indentation    everywhere    "
    "<|endoftext|> endoftext the the the then than that this these those";

BpeParts trained_parts(PreTokenizerKind kind) {
  BpeParts parts;
  parts.source = "fuzz-trained";
  parts.pre_tokenizer = kind;
  std::map<std::string, TokenId> id_of;
  for (int b = 0; b < 256; ++b) {
    parts.tokens.push_back(std::string(1, char(b)));
    id_of[parts.tokens.back()] = TokenId(b);
  }
  std::vector<std::vector<TokenId>> words;
  size_t begin = 0;
  for (size_t e : pre_tokenize(kind, kTrainText)) {
    std::vector<TokenId> w;
    for (size_t i = begin; i < e; ++i) w.push_back(TokenId(uint8_t(kTrainText[i])));
    words.push_back(std::move(w));
    begin = e;
  }
  for (int m = 0; m < 400; ++m) {
    std::map<std::pair<TokenId, TokenId>, int> counts;
    for (const auto& w : words)
      for (size_t i = 0; i + 1 < w.size(); ++i) ++counts[{w[i], w[i + 1]}];
    std::pair<TokenId, TokenId> best{-1, -1};
    int best_n = 1;
    for (const auto& [pair, n] : counts)
      if (n > best_n) best = pair, best_n = n;
    if (best.first < 0) break;
    std::string joined = parts.tokens[size_t(best.first)] + parts.tokens[size_t(best.second)];
    auto [it, fresh] = id_of.emplace(joined, TokenId(parts.tokens.size()));
    if (fresh) parts.tokens.push_back(joined);
    parts.merges.push_back(
        {parts.tokens[size_t(best.first)], parts.tokens[size_t(best.second)], size_t(m + 1)});
    for (auto& w : words) {
      std::vector<TokenId> out;
      for (size_t i = 0; i < w.size(); ++i) {
        if (i + 1 < w.size() && std::pair{w[i], w[i + 1]} == best) {
          out.push_back(it->second);
          ++i;
        } else {
          out.push_back(w[i]);
        }
      }
      w = std::move(out);
    }
  }
  parts.special.push_back(TokenId(parts.tokens.size()));
  parts.tokens.push_back("<|endoftext|>");
  return parts;
}

const BpeTokenizer& tokenizer(int which) {
  static const BpeTokenizer toks[4] = {
      BpeTokenizer::from_parts(trained_parts(PreTokenizerKind::kGpt2)),
      BpeTokenizer::from_parts(trained_parts(PreTokenizerKind::kCl100k)),
      BpeTokenizer::from_parts(trained_parts(PreTokenizerKind::kLlama3)),
      BpeTokenizer::from_parts(trained_parts(PreTokenizerKind::kQwen2)),
  };
  return toks[which & 3];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  embedscope::fuzz::check_tokenizer(tokenizer(data[0]), text, true);
  return 0;
}
