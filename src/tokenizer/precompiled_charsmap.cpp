// SentencePiece's compiled character map and the normalizers built on it (see
// precompiled_charsmap.h for the layout and the checks).
#include "tokenizer/precompiled_charsmap.h"

#include <unicode/brkiter.h>
#include <unicode/utext.h>

#include <cstring>

#include "embedscope/core/error.h"
#include "tokenizer/utf8.h"

namespace embedscope::hf {

namespace {

uint32_t unit_offset(uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); }
uint32_t unit_label(uint32_t u) { return u & ((1u << 31) | 0xFFu); }
bool unit_has_leaf(uint32_t u) { return ((u >> 8) & 1u) != 0; }
uint32_t unit_value(uint32_t u) { return u & ((1u << 31) - 1); }

// Continuation bytes still expected after byte b in a UTF-8 key; -1 when b cannot occur there.
int utf8_next_state(int state, uint8_t b) {
  const bool cont = (b & 0xC0) == 0x80;
  if (state > 0) return cont ? state - 1 : -1;
  if (b < 0x80) return 0;
  if (b >= 0xC2 && b <= 0xDF) return 1;
  if (b >= 0xE0 && b <= 0xEF) return 2;
  if (b >= 0xF0 && b <= 0xF4) return 3;
  return -1;
}

bool valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    i += utf8::decode(reinterpret_cast<const uint8_t*>(s.data()) + i, s.size() - i, &cp);
    if (cp == utf8::kInvalid) return false;
  }
  return true;
}

}  // namespace

std::shared_ptr<const CharsMap> CharsMap::read(std::string_view blob, const std::string& what) {
  auto corrupt = [&](const std::string& m) {
    throw Error(ErrorCode::kCorrupt,
                what + ": " + m + " (not a SentencePiece precompiled_charsmap?)");
  };
  if (blob.size() < 4)
    corrupt("is " + std::to_string(blob.size()) + " bytes, less than its 4-byte trie_size");
  uint32_t trie_size = 0;
  for (int k = 0; k < 4; ++k) trie_size |= uint32_t(static_cast<unsigned char>(blob[k])) << (8 * k);
  const size_t avail = blob.size() - 4;
  if (trie_size >= avail)
    corrupt("trie_size " + std::to_string(trie_size) + " leaves no room for the replacement " +
            "strings in the " + std::to_string(avail) + " bytes after it");
  if (trie_size % 4 != 0 || trie_size == 0)
    corrupt("trie_size " + std::to_string(trie_size) + " is not a positive multiple of 4");
  auto m = std::make_shared<CharsMap>();
  const size_t n = trie_size / 4;
  m->units_.resize(n);
  std::memcpy(m->units_.data(), blob.data() + 4, trie_size);  // no typed loads from the blob
  for (uint32_t& u : m->units_) {
    const auto* b = reinterpret_cast<const uint8_t*>(&u);
    u = uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24;
  }
  m->strings_.assign(blob.substr(4 + trie_size));
  const std::vector<uint32_t>& u = m->units_;
  const std::string& strs = m->strings_;

  // Depth-first walk of every node valid UTF-8 can reach. state[base]: 0 unseen, 1 on the
  // stack, 2 done; utf[base]: continuation bytes still due when the walk reached base.
  std::vector<uint8_t> state(n, 0);
  std::vector<int8_t> utf(n, 0);
  struct Frame {
    uint32_t base;
    unsigned next;
  };
  std::vector<Frame> stack;
  auto enter = [&](uint32_t base, int ustate, const std::string& from) {
    if (base >= n || (base | 0xFFu) >= n)
      corrupt(from + " leads to unit " + std::to_string(base) +
              ", whose 256 child slots run past " + "the " + std::to_string(n) +
              " units of the trie");
    if (state[base] == 1)
      corrupt(from + " leads back to unit " + std::to_string(base) + " (a cycle)");
    if (state[base] == 2) {
      if (utf[base] != ustate)
        corrupt(from + " reaches unit " + std::to_string(base) +
                " at another position in a UTF-8 character");
      return;
    }
    state[base] = 1;
    utf[base] = int8_t(ustate);
    stack.push_back({base, 0});
  };
  enter(unit_offset(u[0]), 0, "unit 0 (the root)");
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.next > 0xFF) {
      state[f.base] = 2;
      stack.pop_back();
      continue;
    }
    const uint32_t base = f.base;
    const auto c = uint8_t(f.next++);
    const int ns = utf8_next_state(utf[base], c);
    // No valid UTF-8 text takes this edge; byte 0 ends darts-clone's keys (its label marks the
    // value unit), so no key holds it and matching stops there.
    if (ns < 0 || c == 0) continue;
    const uint32_t child = base ^ c;
    if (unit_label(u[child]) != c) continue;
    const uint32_t next = child ^ unit_offset(u[child]);
    const std::string at = "unit " + std::to_string(child);
    if (unit_has_leaf(u[child])) {
      if (ns != 0) corrupt(at + " ends a key inside a UTF-8 character");
      if (next >= n)
        corrupt(at + " has its value at unit " + std::to_string(next) + ", past the " +
                std::to_string(n) + " units");
      const uint32_t v = unit_value(u[next]);
      if (v >= strs.size())
        corrupt(at + " maps to offset " + std::to_string(v) + ", past the " +
                std::to_string(strs.size()) + " bytes of replacement strings");
      const size_t end = strs.find('\0', v);
      if (end == std::string::npos)
        corrupt(at + " maps to offset " + std::to_string(v) +
                ", whose replacement has no NUL before the end of the blob");
      if (!valid_utf8(std::string_view(strs).substr(v, end - v)))
        corrupt(at + " maps to offset " + std::to_string(v) + ", whose replacement is not UTF-8");
    }
    enter(next, ns, at);
  }
  return m;
}

template <bool kLongest>
size_t CharsMap::match(std::string_view s, std::string_view* out) const {
  // Only nodes read() checked are visited: the text is valid UTF-8 (the pipeline's invariant),
  // so every step follows an edge the walk above took.
  size_t best = 0;
  uint32_t value = 0;
  uint32_t base = unit_offset(units_[0]);
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<uint8_t>(s[i]);
    if (c == 0) break;  // as spm_precompiled and llama.cpp; read() walked no 0 edge
    const uint32_t child = base ^ c;
    const uint32_t unit = units_[child];
    if (unit_label(unit) != c) break;
    base = child ^ unit_offset(unit);
    if (unit_has_leaf(unit)) {
      best = i + 1;
      value = unit_value(units_[base]);
      if (!kLongest) break;
    }
  }
  if (best) *out = std::string_view(strings_.c_str() + value);
  return best;
}

size_t CharsMap::longest(std::string_view s, std::string_view* out) const {
  return match<true>(s, out);
}
size_t CharsMap::shortest(std::string_view s, std::string_view* out) const {
  return match<false>(s, out);
}

namespace {

const std::string_view kSpace = "\xE2\x96\x81";

// Appends `rep`, which replaced the k characters of p.s[begin, end), as Hugging Face's
// NormalizedString::transform aligns a replacement: its j-th character takes the range of the
// original's min(j, k - 1)-th. With escape, each space is written as U+2581.
void push_replacement(Piece& out, const Piece& p, size_t begin, size_t end, std::string_view rep,
                      bool escape = false) {
  std::vector<size_t> starts;  // byte offset of each original character
  for (size_t i = begin; i < end;) {
    uint32_t cp = 0;
    starts.push_back(i);
    i += next_char(p.s, i, &cp);
  }
  size_t j = 0;
  for (size_t i = 0; i < rep.size(); ++j) {
    uint32_t cp = 0;
    const size_t len = next_char(rep, i, &cp);
    const size_t o = starts[std::min(j, starts.size() - 1)];
    size_t o_end = o;
    uint32_t ocp = 0;
    o_end += next_char(p.s, o, &ocp);
    const std::string_view bytes = escape && cp == ' ' ? kSpace : rep.substr(i, len);
    out.push(bytes, p.a[o], p.b[o_end - 1]);
    i += len;
  }
}

class SpmNormalizer final : public Normalizer {
 public:
  explicit SpmNormalizer(SpmNormalizerSpec spec) : spec_(std::move(spec)) {}
  void apply(Piece& p) const override {
    const std::string& s = p.s;
    const size_t n = s.size();
    auto prefix = [&](size_t i, std::string_view* rep) {
      if (spec_.map) {
        const size_t len = spec_.map->longest(std::string_view(s).substr(i), rep);
        if (len) return len;
      }
      uint32_t cp = 0;
      const size_t len = next_char(s, i, &cp);
      *rep = std::string_view(s).substr(i, len);
      return len;
    };
    const bool squeeze = spec_.remove_extra_whitespaces;
    const std::string_view space = spec_.escape_whitespaces ? kSpace : " ";
    size_t i = 0;
    std::string_view rep;
    if (squeeze) {
      while (i < n) {
        const size_t len = prefix(i, &rep);
        if (rep != " ") break;
        i += len;
      }
    }
    Piece out;
    if (i == n) {
      p = std::move(out);
      return;
    }
    if (!spec_.treat_whitespace_as_suffix && spec_.add_dummy_prefix)
      out.push(space, p.a[i], p.b[i]);
    bool prev_space = squeeze;
    while (i < n) {
      const size_t len = prefix(i, &rep);
      size_t skipped = 0;
      while (prev_space && skipped < rep.size() && rep[skipped] == ' ') ++skipped;
      if (skipped < rep.size()) {
        // The skipped leading spaces count as replacement characters for the alignment.
        Piece part;
        push_replacement(part, p, i, i + len, rep, spec_.escape_whitespaces);
        const size_t from = skipped * (spec_.escape_whitespaces ? kSpace.size() : 1);
        out.s.append(part.s, from);
        out.a.insert(out.a.end(), part.a.begin() + long(from), part.a.end());
        out.b.insert(out.b.end(), part.b.begin() + long(from), part.b.end());
        prev_space = rep.back() == ' ';
      }
      i += len;
      if (!squeeze) prev_space = false;
    }
    if (squeeze) {
      while (out.s.size() >= space.size() && out.s.ends_with(space)) {
        const size_t k = out.s.size() - space.size();
        out.s.resize(k);
        out.a.resize(k);
        out.b.resize(k);
      }
    }
    if (spec_.treat_whitespace_as_suffix && spec_.add_dummy_prefix)
      out.push(space, p.b[n - 1], p.b[n - 1]);
    p = std::move(out);
  }

 private:
  SpmNormalizerSpec spec_;
};

// One grapheme-cluster iterator per thread (ICU iterators are not thread-safe; creating one per
// call costs more than normalizing a short segment).
icu::BreakIterator& grapheme_iterator() {
  thread_local std::unique_ptr<icu::BreakIterator> it = [] {
    UErrorCode e = U_ZERO_ERROR;
    std::unique_ptr<icu::BreakIterator> b(
        icu::BreakIterator::createCharacterInstance(icu::Locale::getRoot(), e));
    if (U_FAILURE(e) || !b)
      throw Error(ErrorCode::kIo,
                  std::string("ICU grapheme iterator unavailable: ") + u_errorName(e));
    return b;
  }();
  return *it;
}

class HfPrecompiled final : public Normalizer {
 public:
  explicit HfPrecompiled(std::shared_ptr<const CharsMap> map) : map_(std::move(map)) {}
  void apply(Piece& p) const override {
    if (p.empty()) return;
    icu::BreakIterator& it = grapheme_iterator();
    UErrorCode e = U_ZERO_ERROR;
    UText* ut = utext_openUTF8(nullptr, p.s.data(), int64_t(p.s.size()), &e);
    ES_CHECK(U_SUCCESS(e));
    it.setText(ut, e);
    ES_CHECK(U_SUCCESS(e));
    // Hugging Face's list of (new character, change): 0 replaces the next original character,
    // 1 is inserted, -n replaces one and removes n more (precompiled.rs `replace`).
    struct Change {
      std::string_view ch;
      int change;
    };
    std::vector<Change> t;
    t.reserve(p.s.size());
    bool modified = false;
    const std::string_view s = p.s;
    auto count = [](std::string_view x) {
      size_t k = 0;
      for (char c : x) k += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
      return long(k);
    };
    auto replace = [&](std::string_view old_part, std::string_view rep) {
      modified = true;
      const long diff = count(rep) - count(old_part);
      for (size_t i = 0; i < rep.size();) {
        uint32_t cp = 0;
        const size_t len = next_char(rep, i, &cp);
        t.push_back({rep.substr(i, len), 0});
        i += len;
      }
      if (diff > 0)
        for (long k = 0; k < diff; ++k) t[t.size() - 1 - size_t(k)].change = 1;
      else if (diff < 0 && !t.empty())
        t.back().change += int(diff);
    };
    std::string_view rep;
    for (int32_t b = it.first(), g_end = it.next(); g_end != icu::BreakIterator::DONE;
         b = g_end, g_end = it.next()) {
      const std::string_view g = s.substr(size_t(b), size_t(g_end - b));
      if (g.size() < 6 && map_->shortest(g, &rep)) {
        replace(g, rep);
        continue;
      }
      for (size_t i = 0; i < g.size();) {
        uint32_t cp = 0;
        const size_t len = next_char(g, i, &cp);
        if (map_->shortest(g.substr(i, len), &rep))
          replace(g.substr(i, len), rep);
        else
          t.push_back({g.substr(i, len), 0});
        i += len;
      }
    }
    utext_close(ut);
    if (!modified) return;
    // NormalizedString::transform: a replacing character takes the alignment of the original
    // character it consumes, an inserted one that of the byte before.
    Piece out;
    out.s.reserve(p.s.size());
    size_t at = 0;
    for (const Change& c : t) {
      if (c.change > 0) {
        if (at == 0)
          out.push(c.ch, p.a[0], p.a[0]);  // HF: (0, 0) of the segment
        else
          out.push(c.ch, p.a[at - 1], p.b[at - 1]);
        continue;
      }
      const size_t k = std::min(at, p.s.size() - 1);
      out.push(c.ch, p.a[k], p.b[k]);
      for (int skip = 0; skip <= -c.change && at < p.s.size(); ++skip) {
        uint32_t cp = 0;
        at += next_char(p.s, at, &cp);
      }
    }
    p = std::move(out);
  }

 private:
  std::shared_ptr<const CharsMap> map_;
};

}  // namespace

std::unique_ptr<Normalizer> make_spm_normalizer(SpmNormalizerSpec spec) {
  return std::make_unique<SpmNormalizer>(std::move(spec));
}

std::unique_ptr<Normalizer> make_hf_precompiled(std::shared_ptr<const CharsMap> map) {
  return std::make_unique<HfPrecompiled>(std::move(map));
}

std::string base64_decode(std::string_view text, const std::string& what) {
  auto value = [](char ch) -> int {
    if (ch >= 'A' && ch <= 'Z') return ch - 'A';
    if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9') return ch - '0' + 52;
    if (ch == '+') return 62;
    if (ch == '/') return 63;
    return -1;
  };
  if (text.size() % 4 != 0)
    throw Error(ErrorCode::kCorrupt, what + " is not base64: " + std::to_string(text.size()) +
                                         " characters, not a multiple of 4");
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char ch = text[i + size_t(k)];
      const bool last = i + 4 == text.size();
      if (ch == '=' && last && k >= 2 && (k == 3 || text[i + 3] == '=')) {
        v[k] = 0;
        ++pad;
        continue;
      }
      v[k] = value(ch);
      if (v[k] < 0 || pad > 0)
        throw Error(ErrorCode::kCorrupt, what + " is not base64: character " +
                                             std::to_string(i + size_t(k)) + " is '" +
                                             std::string(1, ch) + "'");
    }
    const uint32_t w =
        uint32_t(v[0]) << 18 | uint32_t(v[1]) << 12 | uint32_t(v[2]) << 6 | uint32_t(v[3]);
    out += char(w >> 16);
    if (pad < 2) out += char((w >> 8) & 0xFF);
    if (pad < 1) out += char(w & 0xFF);
  }
  return out;
}

}  // namespace embedscope::hf
