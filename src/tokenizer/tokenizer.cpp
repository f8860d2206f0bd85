// Tokenizer-generic helpers (the interface's non-virtual parts).
#include "embedscope/tokenizer/tokenizer.h"

#include <algorithm>

#include "embedscope/tokenizer/bpe.h"

namespace embedscope {

std::vector<WordVariant> word_variants(const Tokenizer& tok, std::string_view word) {
  // GPT-2-family tokenizers keep their own rules (the same four variants, raw-byte tokens).
  if (const BpeTokenizer* bpe = tok.bpe()) return word_variants(*bpe, word);
  while (!word.empty() && word.front() == ' ') word.remove_prefix(1);
  std::vector<std::string> texts = word_variant_texts(word);
  const std::string w(word);
  std::vector<WordVariant> out;
  const EncodeOptions plain{.split_special_tokens = true};  // a word is plain text
  const std::vector<TokenId> lead = tok.encode_ids("a", plain);
  for (std::string& t : texts) {
    WordVariant v;
    v.ids = tok.encode_ids(t, plain);
    if (t.starts_with(' ')) {
      // " word" stands for the word in running text. Encoded alone, a Metaspace tokenizer
      // would read its space as a second word start (Llama-2: "▁" + "▁embed"...), so take
      // the word's ids after "a " instead, when "a"'s ids stay a prefix.
      std::vector<TokenId> all = tok.encode_ids("a" + t, plain);
      if (all.size() > lead.size() && std::equal(lead.begin(), lead.end(), all.begin()))
        v.ids.assign(all.begin() + std::ptrdiff_t(lead.size()), all.end());
    }
    v.text = std::move(t);
    out.push_back(std::move(v));
  }
  // Vocabulary spellings the encodings above may not reach: a SentencePiece word start, a
  // byte-level word start, a WordPiece continuation.
  for (const char* prefix : {"\xE2\x96\x81", "\xC4\xA0", "##"}) {
    std::string spelled = prefix + w;
    auto id = tok.token_id(spelled);
    if (!id || w.empty()) continue;
    bool seen = false;
    for (const WordVariant& v : out) seen = seen || (v.single_token() && v.ids[0] == *id);
    if (!seen) out.push_back({spelled, {*id}});
  }
  return out;
}

}  // namespace embedscope
