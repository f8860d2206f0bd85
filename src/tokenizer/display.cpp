// Readable token forms, the U+FFFD text policy, and word variants for probing.
#include <cstdio>

#include "embedscope/tokenizer/bpe.h"
#include "tokenizer/utf8.h"

namespace embedscope {

namespace {
void append_hex(std::string* out, const uint8_t* p, size_t n) {
  char buf[8];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "<0x%02X>", p[i]);
    *out += buf;
  }
}
}  // namespace

std::string display_token(std::string_view raw) {
  std::string out;
  auto* p = reinterpret_cast<const uint8_t*>(raw.data());
  for (size_t i = 0; i < raw.size();) {
    uint32_t cp;
    size_t len = utf8::decode(p + i, raw.size() - i, &cp);
    if (cp == utf8::kInvalid) {
      append_hex(&out, p + i, len);  // partial or invalid UTF-8: show the bytes
    } else if (cp == ' ') {
      out += "\u2423";  // ␣ OPEN BOX
    } else if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0)) {
      append_hex(&out, p + i, len);  // C0 / DEL / C1 controls
    } else {
      out.append(raw.data() + i, len);
    }
    i += len;
  }
  return out;
}

std::string utf8_replace_invalid(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  for (size_t i = 0; i < bytes.size();) {
    uint32_t cp;
    size_t len = utf8::decode(p + i, bytes.size() - i, &cp);
    if (cp == utf8::kInvalid)
      out += "\xEF\xBF\xBD";
    else
      out.append(bytes.data() + i, len);
    i += len;
  }
  return out;
}

std::vector<std::string> word_variant_texts(std::string_view word) {
  while (!word.empty() && word.front() == ' ') word.remove_prefix(1);
  std::vector<std::string> texts;
  auto add = [&](std::string t) {
    for (auto& x : texts)
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
  return texts;
}

std::vector<WordVariant> word_variants(const BpeTokenizer& tok, std::string_view word) {
  std::vector<std::string> texts = word_variant_texts(word);
  std::vector<WordVariant> out;
  for (auto& t : texts) {
    WordVariant v;
    v.ids = tok.encode(t);
    v.text = std::move(t);
    out.push_back(std::move(v));
  }
  return out;
}

size_t default_variant(const std::vector<WordVariant>& variants) {
  for (size_t i = 0; i < variants.size(); ++i)
    if (!variants[i].text.empty() && variants[i].text[0] == ' ' && variants[i].single_token())
      return i;
  for (size_t i = 0; i < variants.size(); ++i)
    if (variants[i].single_token()) return i;
  for (size_t i = 0; i < variants.size(); ++i)
    if (!variants[i].text.empty() && variants[i].text[0] == ' ') return i;
  return 0;
}

}  // namespace embedscope
