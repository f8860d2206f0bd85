// Tokenizer-generic helpers (the interface's non-virtual parts).
#include "embedscope/tokenizer/tokenizer.h"

#include "embedscope/tokenizer/bpe.h"

namespace embedscope {

std::vector<WordVariant> word_variants(const Tokenizer& tok, std::string_view word) {
  while (!word.empty() && word.front() == ' ') word.remove_prefix(1);
  std::vector<std::string> texts;
  auto add = [&](std::string t) {
    for (const std::string& x : texts)
      if (x == t) return;
    texts.push_back(std::move(t));
  };
  std::string w(word);
  add(w);
  add(" " + w);
  if (!w.empty()) {
    std::string flipped = w;
    char c = flipped[0];
    if (c >= 'a' && c <= 'z')
      flipped[0] = char(c - 32);
    else if (c >= 'A' && c <= 'Z')
      flipped[0] = char(c + 32);
    add(flipped);
    add(" " + flipped);
  }
  std::vector<WordVariant> out;
  for (std::string& t : texts) {
    WordVariant v;
    v.ids = tok.encode_ids(t);
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
