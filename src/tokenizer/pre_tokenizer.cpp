#include "tokenizer/pre_tokenizer.h"

#include <array>

#include "tokenizer/unicode_tables.h"
#include "tokenizer/utf8.h"

namespace embedscope {
namespace pretok {
namespace {

using unicode::kUniLetter;
using unicode::kUniNumber;
using unicode::kUniSpace;

// Class of a decoded unit. Invalid UTF-8 (a maximal invalid subpart) has class 0, like U+FFFD
// (So): it behaves as a symbol, [^\s\p{L}\p{N}].
struct Unit {
  uint8_t cls;
  uint8_t len;
  uint32_t cp;
};

constexpr std::array<uint8_t, 128> make_ascii_classes() {
  std::array<uint8_t, 128> t{};
  for (int c = 'a'; c <= 'z'; ++c) t[c] = kUniLetter;
  for (int c = 'A'; c <= 'Z'; ++c) t[c] = kUniLetter;
  for (int c = '0'; c <= '9'; ++c) t[c] = kUniNumber;
  for (int c = 9; c <= 13; ++c) t[c] = kUniSpace;
  t[' '] = kUniSpace;
  return t;
}
constexpr std::array<uint8_t, 128> kAscii = make_ascii_classes();

inline Unit unit_at(const uint8_t* s, size_t n, size_t pos) {
  uint8_t b = s[pos];
  if (b < 0x80) return {kAscii[b], 1, b};
  uint32_t cp;
  size_t len = utf8::decode(s + pos, n - pos, &cp);
  uint8_t cls = cp == utf8::kInvalid ? 0 : unicode::code_point_class(cp);
  return {cls, uint8_t(len), cp};
}

constexpr uint8_t kLN = kUniLetter | kUniNumber;
constexpr uint8_t kAny = kUniLetter | kUniNumber | kUniSpace;

// End of the run of units starting at pos whose class has any bit of `want` (want != 0) or, for
// want == 0, of "symbol" units ([^\s\p{L}\p{N}]).
inline size_t run_end(const uint8_t* s, size_t n, size_t pos, uint8_t want) {
  while (pos < n) {
    Unit u = unit_at(s, n, pos);
    bool in = want ? (u.cls & want) != 0 : (u.cls & kAny) == 0;
    if (!in) break;
    pos += u.len;
  }
  return pos;
}

inline size_t run_end_max(const uint8_t* s, size_t n, size_t pos, uint8_t want, int max_units) {
  for (int k = 0; k < max_units && pos < n; ++k) {
    Unit u = unit_at(s, n, pos);
    if (!(u.cls & want)) break;
    pos += u.len;
  }
  return pos;
}

inline bool is_newline(uint32_t cp) { return cp == '\r' || cp == '\n'; }

// 's|'t|'re|'ve|'m|'ll|'d (case_insensitive: the (?i:...) forms; 's' also matches U+017F LONG S
// under Unicode simple case folding, as in Rust regex and PCRE2 UCP).
size_t contraction(const uint8_t* s, size_t n, size_t pos, bool case_insensitive) {
  // s[pos] == '\''
  if (pos + 1 >= n) return 0;
  auto lower = [&](uint8_t c) -> uint8_t {
    return case_insensitive && c >= 'A' && c <= 'Z' ? uint8_t(c + 32) : c;
  };
  uint8_t a = lower(s[pos + 1]);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return pos + 2;
  if (case_insensitive && a == 0xC5 && pos + 2 < n && s[pos + 2] == 0xBF) return pos + 3;  // ſ
  if (pos + 2 >= n) return 0;
  uint8_t b = lower(s[pos + 2]);
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return pos + 3;
  return 0;
}

// \s+(?!\S) followed by \s+, for a whitespace unit at pos: the run minus its last unit when the
// run is followed by a non-space and has at least two units, else the whole run.
size_t space_run(const uint8_t* s, size_t n, size_t pos) {
  size_t last = pos, p = pos;
  while (p < n) {
    Unit u = unit_at(s, n, p);
    if (!(u.cls & kUniSpace)) break;
    last = p;
    p += u.len;
  }
  if (p == n || last == pos) return p;
  return last;
}

// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
size_t next_gpt2(const uint8_t* s, size_t n, size_t pos) {
  if (s[pos] == '\'') {
    if (size_t e = contraction(s, n, pos, false)) return e;
  }
  Unit u = unit_at(s, n, pos);
  size_t start = pos;
  if (u.cp == ' ' && pos + 1 < n) {
    Unit v = unit_at(s, n, pos + 1);
    if (!(v.cls & kUniSpace)) {  // " ?X+" with X the class of the next unit
      u = v;
      start = pos + 1;
    }
  }
  if (u.cls & kUniLetter) return run_end(s, n, start + u.len, kUniLetter);
  if (u.cls & kUniNumber) return run_end(s, n, start + u.len, kUniNumber);
  if (!(u.cls & kUniSpace)) return run_end(s, n, start + u.len, 0);
  return space_run(s, n, pos);
}

// Shared by cl100k, Llama-3 and Qwen2 (they differ in the digit group size and in possessive
// quantifiers, which do not change the matches of these particular patterns):
//   '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*|
//   \s*[\r\n]|\s+(?!\S)|\s+
// (Llama-3: ...|\s*[\r\n]+|... which ends at the same place: after the run's last \r or \n.)
size_t next_cl100k_like(const uint8_t* s, size_t n, size_t pos, int max_digits) {
  if (s[pos] == '\'') {
    if (size_t e = contraction(s, n, pos, true)) return e;
  }
  Unit u = unit_at(s, n, pos);
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (u.cls & kUniLetter) return run_end(s, n, pos + u.len, kUniLetter);
  if (!(u.cls & kLN) && !is_newline(u.cp) && pos + u.len < n) {
    Unit v = unit_at(s, n, pos + u.len);
    if (v.cls & kUniLetter) return run_end(s, n, pos + u.len + v.len, kUniLetter);
  }
  // \p{N}{1,3}
  if (u.cls & kUniNumber) return run_end_max(s, n, pos, kUniNumber, max_digits);
  // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
  size_t start = pos;
  Unit w = u;
  if (u.cp == ' ' && pos + 1 < n) {
    Unit v = unit_at(s, n, pos + 1);
    if (!(v.cls & kAny)) w = v, start = pos + 1;
  }
  if (!(w.cls & kAny)) {
    size_t e = run_end(s, n, start + w.len, 0);
    while (e < n && (s[e] == '\r' || s[e] == '\n')) ++e;
    return e;
  }
  // u is whitespace here. \s*[\r\n]: up to the run's last \r or \n.
  size_t p = pos, after_nl = 0;
  while (p < n) {
    Unit x = unit_at(s, n, p);
    if (!(x.cls & kUniSpace)) break;
    p += x.len;
    if (is_newline(x.cp)) after_nl = p;
  }
  if (after_nl) return after_nl;
  return space_run(s, n, pos);
}

}  // namespace

size_t next_piece(PreTokenizerKind kind, const uint8_t* s, size_t n, size_t pos) {
  switch (kind) {
    case PreTokenizerKind::kGpt2:
      return next_gpt2(s, n, pos);
    case PreTokenizerKind::kCl100k:
    case PreTokenizerKind::kLlama3:
      return next_cl100k_like(s, n, pos, 3);
    case PreTokenizerKind::kQwen2:
      return next_cl100k_like(s, n, pos, 1);
  }
  return n;
}

}  // namespace pretok

std::string_view pre_tokenizer_name(PreTokenizerKind kind) {
  switch (kind) {
    case PreTokenizerKind::kGpt2:
      return "gpt2";
    case PreTokenizerKind::kCl100k:
      return "cl100k";
    case PreTokenizerKind::kLlama3:
      return "llama3";
    case PreTokenizerKind::kQwen2:
      return "qwen2";
  }
  return "?";
}

std::optional<PreTokenizerKind> pre_tokenizer_for_pattern(std::string_view p) {
  // The patterns exactly as the reference tokenizer.json files declare them.
  static constexpr std::string_view kGpt2 =
      R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
  static constexpr std::string_view kCl100k =
      R"('(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+)";
  static constexpr std::string_view kLlama3 =
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  static constexpr std::string_view kQwen2 =
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  if (p == kGpt2) return PreTokenizerKind::kGpt2;
  if (p == kCl100k) return PreTokenizerKind::kCl100k;
  if (p == kLlama3) return PreTokenizerKind::kLlama3;
  if (p == kQwen2) return PreTokenizerKind::kQwen2;
  return std::nullopt;
}

std::vector<size_t> pre_tokenize(PreTokenizerKind kind, std::string_view text) {
  std::vector<size_t> ends;
  auto* s = reinterpret_cast<const uint8_t*>(text.data());
  for (size_t pos = 0; pos < text.size();) {
    pos = pretok::next_piece(kind, s, text.size(), pos);
    ends.push_back(pos);
  }
  return ends;
}

}  // namespace embedscope
