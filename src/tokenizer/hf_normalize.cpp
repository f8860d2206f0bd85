// tokenizer.json normalizers, the aligned text they work on, and the Unicode properties the
// pipeline shares (ICU). Semantics follow tokenizers/src/normalizers/*.rs (0.22).
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <algorithm>

#include "embedscope/core/error.h"
#include "tokenizer/hf_impl.h"
#include "tokenizer/precompiled_charsmap.h"
#include "tokenizer/utf8.h"

namespace embedscope::hf {

void Ctx::corrupt(const std::string& path, const std::string& what) const {
  throw Error(ErrorCode::kCorrupt, file + ": " + path + " " + what);
}

void Ctx::unsupported(const std::string& path, const json& value, const std::string& known) const {
  std::string v = value.dump();
  if (v.size() > 200) v = v.substr(0, 200) + "...";
  throw Error(ErrorCode::kUnsupported,
              file + ": " + path + " " + v + " is not supported (supported: " + known + ")");
}

const json& Ctx::get(const json& obj, const std::string& path, const char* key) const {
  if (!obj.is_object())
    corrupt(path, "is " + std::string(obj.type_name()) + ", expected an object");
  auto it = obj.find(key);
  if (it == obj.end()) corrupt(path + "." + key, "is missing");
  return *it;
}

std::string Ctx::str(const json& obj, const std::string& path, const char* key) const {
  const json& v = get(obj, path, key);
  if (!v.is_string())
    corrupt(path + "." + key, "is " + std::string(v.type_name()) + ", expected a string");
  return v.get<std::string>();
}

bool Ctx::flag(const json& obj, const std::string& path, const char* key, bool dflt) const {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return dflt;
  if (!it->is_boolean())
    corrupt(path + "." + key, "is " + std::string(it->type_name()) + ", expected a boolean");
  return it->get<bool>();
}

size_t next_char(std::string_view s, size_t i, uint32_t* cp) {
  size_t n = utf8::decode(reinterpret_cast<const uint8_t*>(s.data()) + i, s.size() - i, cp);
  ES_CHECK(*cp != utf8::kInvalid);  // the pipeline only sees valid UTF-8
  return n;
}

void append_utf8(std::string& out, uint32_t cp) {
  char buf[4];
  size_t n = 0;
  utf8::append(cp, buf, &n);
  out.append(buf, n);
}

Piece piece_from(std::string_view text, size_t base) {
  Piece p;
  p.s.assign(text);
  p.a.resize(text.size());
  p.b.resize(text.size());
  for (size_t i = 0; i < text.size();) {
    uint32_t cp = 0;
    size_t n = next_char(text, i, &cp);
    for (size_t k = 0; k < n; ++k) {
      p.a[i + k] = uint32_t(base + i);
      p.b[i + k] = uint32_t(base + i + n);
    }
    i += n;
  }
  return p;
}

Piece Piece::sub(size_t begin, size_t end) const {
  Piece p;
  p.s = s.substr(begin, end - begin);
  p.a.assign(a.begin() + long(begin), a.begin() + long(end));
  p.b.assign(b.begin() + long(begin), b.begin() + long(end));
  return p;
}

bool is_white_space(uint32_t cp) { return u_hasBinaryProperty(UChar32(cp), UCHAR_WHITE_SPACE); }
bool is_punctuation(uint32_t cp) { return (U_GET_GC_MASK(UChar32(cp)) & U_GC_P_MASK) != 0; }
bool is_bert_punctuation(uint32_t cp) {
  bool ascii = (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
               (cp >= 123 && cp <= 126);
  // U+166D CANADIAN SYLLABICS CHI SIGN was Po until Unicode 12 (So since); HF's tables
  // (unicode_categories, Unicode 8-era) still call it punctuation.
  return ascii || is_punctuation(cp) || cp == 0x166D;
}
bool is_mark_nonspacing(uint32_t cp) { return u_charType(UChar32(cp)) == U_NON_SPACING_MARK; }

namespace {

// Rewrites p one character at a time: f(cp, out) appends the replacement (possibly nothing);
// the replacement's bytes take the character's alignment.
template <class F>
void map_chars(Piece& p, F f) {
  Piece out;
  out.s.reserve(p.s.size());
  std::string buf;
  for (size_t i = 0; i < p.s.size();) {
    uint32_t cp = 0;
    size_t n = next_char(p.s, i, &cp);
    buf.clear();
    f(cp, buf);
    out.push(buf, p.a[i], p.b[i + n - 1]);
    i += n;
  }
  p = std::move(out);
}

bool is_ascii(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}

// Unicode normalization. The text is cut where ICU says a character starts a normalization
// boundary, so each segment normalizes alone (the result equals normalizing the whole) and its
// output is aligned to the segment's original range.
class UnicodeNorm final : public Normalizer {
 public:
  UnicodeNorm(const Ctx& c, const std::string& type, const std::string& path) {
    UErrorCode err = U_ZERO_ERROR;
    if (type == "NFC") n2_ = icu::Normalizer2::getNFCInstance(err);
    if (type == "NFD") n2_ = icu::Normalizer2::getNFDInstance(err);
    if (type == "NFKC") n2_ = icu::Normalizer2::getNFKCInstance(err);
    if (type == "NFKD") n2_ = icu::Normalizer2::getNFKDInstance(err);
    if (U_FAILURE(err) || !n2_)
      throw Error(ErrorCode::kIo, c.file + ": " + path + ": ICU normalizer " + type +
                                      " unavailable: " + u_errorName(err));
  }
  void apply(Piece& p) const override {
    if (is_ascii(p.s)) return;
    UErrorCode err = U_ZERO_ERROR;
    icu::UnicodeString whole = icu::UnicodeString::fromUTF8(p.s);
    if (n2_->isNormalized(whole, err) && U_SUCCESS(err)) return;
    Piece out;
    size_t seg = 0;
    auto flush = [&](size_t end) {
      if (end == seg) return;
      UErrorCode e = U_ZERO_ERROR;
      icu::UnicodeString u =
          icu::UnicodeString::fromUTF8(icu::StringPiece(p.s.data() + seg, int32_t(end - seg)));
      icu::UnicodeString r = n2_->normalize(u, e);
      ES_CHECK(U_SUCCESS(e));
      std::string bytes;
      r.toUTF8String(bytes);
      if (r.length() == u.length()) {
        // As many UTF-16 units as before (unchanged, reordered marks, a one-for-one mapping):
        // the i-th character keeps the i-th original character's range.
        size_t src = seg;
        for (size_t i = 0; i < bytes.size();) {
          uint32_t cp = 0;
          size_t n = next_char(bytes, i, &cp);
          uint32_t scp = 0;
          size_t sn = src < end ? next_char(p.s, src, &scp) : 0;
          size_t at = src < end ? src : end - 1;
          out.push(std::string_view(bytes).substr(i, n), p.a[at], p.b[at + (sn ? sn : 1) - 1]);
          src += sn;
          i += n;
        }
      } else {
        out.push(bytes, p.a[seg], p.b[end - 1]);
      }
      seg = end;
    };
    for (size_t i = 0; i < p.s.size();) {
      uint32_t cp = 0;
      size_t n = next_char(p.s, i, &cp);
      if (i > seg && n2_->hasBoundaryBefore(UChar32(cp))) flush(i);
      i += n;
    }
    flush(p.s.size());
    p = std::move(out);
  }

 private:
  const icu::Normalizer2* n2_ = nullptr;
};

void lowercase(Piece& p) {
  if (is_ascii(p.s)) {
    for (char& ch : p.s)
      if (ch >= 'A' && ch <= 'Z') ch = char(ch - 'A' + 'a');
    return;
  }
  // Rust's char::to_lowercase: the simple mapping plus SpecialCasing's one unconditional
  // multi-character lowercase, U+0130 -> "i" U+0307.
  map_chars(p, [](uint32_t cp, std::string& out) {
    if (cp == 0x130) {
      out += "i\xCC\x87";
      return;
    }
    append_utf8(out, uint32_t(u_tolower(UChar32(cp))));
  });
}

void strip_accents(Piece& p) {
  if (is_ascii(p.s)) return;  // no nonspacing marks
  map_chars(p, [](uint32_t cp, std::string& out) {
    if (!is_mark_nonspacing(cp)) append_utf8(out, cp);
  });
}

class Lowercase final : public Normalizer {
 public:
  void apply(Piece& p) const override { lowercase(p); }
};

class StripAccents final : public Normalizer {
 public:
  void apply(Piece& p) const override { strip_accents(p); }
};

class Strip final : public Normalizer {
 public:
  Strip(bool left, bool right) : left_(left), right_(right) {}
  void apply(Piece& p) const override {
    size_t begin = 0, end = p.s.size();
    if (left_) {
      while (begin < end) {
        uint32_t cp = 0;
        size_t n = next_char(p.s, begin, &cp);
        if (!is_white_space(cp)) break;
        begin += n;
      }
    }
    if (right_) {
      while (end > begin) {
        size_t s = end - 1;
        while (s > begin && (static_cast<unsigned char>(p.s[s]) & 0xC0) == 0x80) --s;
        uint32_t cp = 0;
        next_char(p.s, s, &cp);
        if (!is_white_space(cp)) break;
        end = s;
      }
    }
    if (begin != 0 || end != p.s.size()) p = p.sub(begin, end);
  }

 private:
  bool left_, right_;
};

class Prepend final : public Normalizer {
 public:
  explicit Prepend(std::string s) : s_(std::move(s)) {}
  void apply(Piece& p) const override {
    if (p.empty()) return;
    Piece out;
    out.push(s_, p.a[0], p.b[0]);
    out.s += p.s;
    out.a.insert(out.a.end(), p.a.begin(), p.a.end());
    out.b.insert(out.b.end(), p.b.begin(), p.b.end());
    p = std::move(out);
  }

 private:
  std::string s_;
};

// Replace: a literal string or a regex; each match becomes `content`, aligned as HF's
// NormalizedString::replace aligns it: every character inserted after the match's characters are
// removed, so it takes the range of the match's last byte (of the byte before an empty match).
class Replace final : public Normalizer {
 public:
  Replace(std::string literal, std::unique_ptr<Regex> re, std::string content)
      : literal_(std::move(literal)), re_(std::move(re)), content_(std::move(content)) {}
  void apply(Piece& p) const override {
    std::vector<std::pair<size_t, size_t>> m;
    if (re_) {
      re_->find_all(p.s, m);
    } else {
      for (size_t pos = p.s.find(literal_); pos != std::string::npos;
           pos = p.s.find(literal_, pos + literal_.size()))
        m.emplace_back(pos, pos + literal_.size());
    }
    if (m.empty()) return;
    Piece out;
    size_t prev = 0;
    for (auto [b, e] : m) {
      if (b > prev) append_range(out, p, prev, b);
      if (e > b)
        out.push(content_, p.a[e - 1], p.b[e - 1]);
      else if (b > 0)
        out.push(content_, p.a[b - 1], p.b[b - 1]);
      else if (!p.s.empty())
        out.push(content_, p.a[0], p.a[0]);
      prev = e;
    }
    if (prev < p.s.size()) append_range(out, p, prev, p.s.size());
    p = std::move(out);
  }

 private:
  static void append_range(Piece& out, const Piece& p, size_t b, size_t e) {
    out.s.append(p.s, b, e - b);
    out.a.insert(out.a.end(), p.a.begin() + long(b), p.a.begin() + long(e));
    out.b.insert(out.b.end(), p.b.begin() + long(b), p.b.begin() + long(e));
  }
  std::string literal_;
  std::unique_ptr<Regex> re_;
  std::string content_;
};

bool is_chinese_char(uint32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

// bert.rs: clean_text, handle_chinese_chars, strip_accents (default: = lowercase), lowercase.
class BertNorm final : public Normalizer {
 public:
  BertNorm(bool clean, bool chinese, bool strip, bool lower)
      : clean_(clean),
        chinese_(chinese),
        strip_(strip),
        lower_(lower),
        nfd_(std::make_unique<UnicodeNorm>(Ctx{}, "NFD", "normalizer")) {}
  void apply(Piece& p) const override {
    // Printable ASCII (U+0020..U+007E) is left as it is by clean_text and handle_chinese_chars.
    const bool printable = std::all_of(p.s.begin(), p.s.end(), [](char ch) {
      return static_cast<unsigned char>(ch) >= 0x20 && static_cast<unsigned char>(ch) < 0x7F;
    });
    if (clean_ && !printable) {
      map_chars(p, [](uint32_t cp, std::string& out) {
        if (cp == 0 || cp == 0xFFFD) return;
        if (cp == '\t' || cp == '\n' || cp == '\r') {
          out += ' ';
          return;
        }
        // HF's is_control is unicode_categories' is_other: Cc, Cf, Co (Cs cannot occur);
        // unassigned code points (Cn) are kept.
        int8_t t = u_charType(UChar32(cp));
        if (t == U_CONTROL_CHAR || t == U_FORMAT_CHAR || t == U_PRIVATE_USE_CHAR) return;
        if (is_white_space(cp)) {
          out += ' ';
          return;
        }
        append_utf8(out, cp);
      });
    }
    if (chinese_ && !printable) {
      map_chars(p, [](uint32_t cp, std::string& out) {
        bool c = is_chinese_char(cp);
        if (c) out += ' ';
        append_utf8(out, cp);
        if (c) out += ' ';
      });
    }
    if (strip_) {
      nfd_->apply(p);
      strip_accents(p);
    }
    if (lower_) lowercase(p);
  }

 private:
  bool clean_, chinese_, strip_, lower_;
  std::unique_ptr<UnicodeNorm> nfd_;
};

class Sequence final : public Normalizer {
 public:
  explicit Sequence(std::vector<std::unique_ptr<Normalizer>> parts) : parts_(std::move(parts)) {}
  void apply(Piece& p) const override {
    for (const auto& n : parts_) n->apply(p);
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> parts_;
};

}  // namespace

std::unique_ptr<Normalizer> make_normalizer(const Ctx& c, const json& j, const std::string& path) {
  const std::string type = c.str(j, path, "type");
  if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD")
    return std::make_unique<UnicodeNorm>(c, type, path);
  if (type == "Lowercase") return std::make_unique<Lowercase>();
  if (type == "StripAccents") return std::make_unique<StripAccents>();
  if (type == "Strip")
    return std::make_unique<Strip>(c.flag(j, path, "strip_left", true),
                                   c.flag(j, path, "strip_right", true));
  if (type == "Prepend") return std::make_unique<Prepend>(c.str(j, path, "prepend"));
  if (type == "Replace") {
    const json& pat = c.get(j, path, "pattern");
    std::string content = c.str(j, path, "content");
    if (pat.is_object() && pat.contains("String") && pat["String"].is_string()) {
      std::string lit = pat["String"].get<std::string>();
      if (lit.empty()) c.corrupt(path + ".pattern.String", "is empty");
      return std::make_unique<Replace>(lit, nullptr, content);
    }
    if (pat.is_object() && pat.contains("Regex") && pat["Regex"].is_string())
      return std::make_unique<Replace>(
          "", std::make_unique<Regex>(c, pat["Regex"].get<std::string>(), path + ".pattern.Regex"),
          content);
    c.unsupported(path + ".pattern", pat, "{\"String\": ...}, {\"Regex\": ...}");
  }
  if (type == "BertNormalizer") {
    bool lower = c.flag(j, path, "lowercase", true);
    return std::make_unique<BertNorm>(c.flag(j, path, "clean_text", true),
                                      c.flag(j, path, "handle_chinese_chars", true),
                                      c.flag(j, path, "strip_accents", lower), lower);
  }
  if (type == "Precompiled") {
    const std::string field = path + ".precompiled_charsmap";
    const std::string blob =
        base64_decode(c.str(j, path, "precompiled_charsmap"), c.file + ": " + field);
    return make_hf_precompiled(CharsMap::read(blob, c.file + ": " + field));
  }
  // Internal (spm_model.cpp, gguf_vocab.cpp): SentencePiece's whole normalizer, the charsmap as
  // JSON binary (absent: identity).
  if (type == "SentencePiece" && c.internal) {
    SpmNormalizerSpec spec;
    if (auto it = j.find("precompiled_charsmap");
        it != j.end() && it->is_binary() && !it->get_binary().empty()) {
      const auto& bin = it->get_binary();
      spec.map =
          CharsMap::read(std::string_view(reinterpret_cast<const char*>(bin.data()), bin.size()),
                         c.file + ": " + c.str(j, path, "charsmap_field"));
    }
    spec.add_dummy_prefix = c.flag(j, path, "add_dummy_prefix", true);
    spec.remove_extra_whitespaces = c.flag(j, path, "remove_extra_whitespaces", true);
    spec.escape_whitespaces = c.flag(j, path, "escape_whitespaces", true);
    spec.treat_whitespace_as_suffix = c.flag(j, path, "treat_whitespace_as_suffix", false);
    return make_spm_normalizer(std::move(spec));
  }
  if (type == "Sequence") {
    const json& list = c.get(j, path, "normalizers");
    if (!list.is_array()) c.corrupt(path + ".normalizers", "is not an array");
    std::vector<std::unique_ptr<Normalizer>> parts;
    for (size_t i = 0; i < list.size(); ++i)
      parts.push_back(
          make_normalizer(c, list[i], path + ".normalizers[" + std::to_string(i) + "]"));
    return std::make_unique<Sequence>(std::move(parts));
  }
  c.unsupported(path + ".type", j["type"],
                "NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Strip, Prepend, Replace, "
                "BertNormalizer, Precompiled, Sequence");
}

}  // namespace embedscope::hf
