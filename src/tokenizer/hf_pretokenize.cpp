// tokenizer.json pre-tokenizers and the PCRE2 regex they share. Semantics follow
// tokenizers/src/pre_tokenizers/*.rs (0.22) and its SplitDelimiterBehavior.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <array>

#include "embedscope/core/error.h"
#include "tokenizer/hf_impl.h"

namespace embedscope::hf {

namespace {

// Backtracking budget per match attempt: a pattern that needs more (nested quantifiers on a
// hostile input) is reported instead of hanging (docs/reliability.md T26).
constexpr uint32_t kMatchLimit = 2'000'000;
constexpr uint32_t kDepthLimit = 100'000;

}  // namespace

Regex::Regex(const Ctx& c, const std::string& pattern, const std::string& path)
    : pattern_(pattern) {
  int err = 0;
  PCRE2_SIZE off = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP, &err, &off, nullptr);
  if (!code) {
    std::array<PCRE2_UCHAR, 256> msg{};
    pcre2_get_error_message(err, msg.data(), msg.size());
    throw Error(ErrorCode::kUnsupported,
                c.file + ": " + path + " \"" + pattern + "\": PCRE2 cannot compile it at offset " +
                    std::to_string(off) + ": " + reinterpret_cast<const char*>(msg.data()));
  }
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // falls back to the interpreter if it fails
  code_ = code;
}

Regex::~Regex() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

void Regex::find_all(std::string_view s, std::vector<std::pair<size_t, size_t>>& out) const {
  out.clear();
  auto* code = static_cast<pcre2_code*>(code_);
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(code, nullptr);
  pcre2_match_context* mc = pcre2_match_context_create(nullptr);
  if (!md || !mc) {
    pcre2_match_data_free(md);
    pcre2_match_context_free(mc);
    throw std::bad_alloc();
  }
  pcre2_set_match_limit(mc, kMatchLimit);
  pcre2_set_depth_limit(mc, kDepthLimit);
  auto subject = reinterpret_cast<PCRE2_SPTR>(s.data());
  size_t start = 0;
  int rc = 0;
  while (start <= s.size()) {
    rc = pcre2_match(code, subject, s.size(), start, PCRE2_NO_UTF_CHECK, md, mc);
    if (rc < 0) break;
    PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    size_t b = ov[0], e = ov[1];
    out.emplace_back(b, e);
    if (e > b) {
      start = e;
    } else {  // an empty match: continue one character further
      if (e >= s.size()) break;
      start = e + 1;
      while (start < s.size() && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) ++start;
    }
  }
  pcre2_match_data_free(md);
  pcre2_match_context_free(mc);
  if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) {
    std::array<PCRE2_UCHAR, 256> msg{};
    pcre2_get_error_message(rc, msg.data(), msg.size());
    throw Error(ErrorCode::kInvalidArgument,
                "tokenizer regex \"" + pattern_ + "\" failed on a " + std::to_string(s.size()) +
                    "-byte input at byte " + std::to_string(start) + ": " +
                    reinterpret_cast<const char*>(msg.data()) + " (match limit " +
                    std::to_string(kMatchLimit) + ")");
  }
}

namespace {

struct ByteAlphabet {
  std::array<std::string, 256> chars;
  std::array<int16_t, 324> byte_of{};  // code point -> byte; alphabet code points are < 324
  ByteAlphabet() {
    byte_of.fill(-1);
    uint32_t n = 0;
    for (uint32_t b = 0; b < 256; ++b) {
      bool self = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
      uint32_t cp = self ? b : 256 + n++;
      append_utf8(chars[b], cp);
      byte_of[cp] = int16_t(b);
    }
  }
};

const ByteAlphabet& alphabet() {
  static const ByteAlphabet a;
  return a;
}

}  // namespace

const std::string& byte_char(uint8_t b) { return alphabet().chars[b]; }
int char_byte(uint32_t cp) { return cp < 324 ? alphabet().byte_of[cp] : -1; }

namespace {

enum class Behavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

Behavior parse_behavior(const Ctx& c, const json& j, const std::string& path) {
  const json& b = c.get(j, path, "behavior");
  if (b.is_string()) {
    std::string s = b.get<std::string>();
    if (s == "Removed") return Behavior::kRemoved;
    if (s == "Isolated") return Behavior::kIsolated;
    if (s == "MergedWithPrevious") return Behavior::kMergedWithPrevious;
    if (s == "MergedWithNext") return Behavior::kMergedWithNext;
    if (s == "Contiguous") return Behavior::kContiguous;
  }
  c.unsupported(path + ".behavior", b,
                "Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous");
}

// A piece cut into segments (begin, end, is_delimiter) that cover it in order; the behaviour
// says what happens to the delimiters. Adjacent non-delimiter segments stay separate pieces
// (Split with invert: each regex match is its own piece). Empty results are dropped, as in HF.
struct Seg {
  size_t b, e;
  bool d;
};

void split_segments(const Piece& p, const std::vector<Seg>& segs, Behavior how,
                    std::vector<Piece>& out) {
  // HF's SplitDelimiterBehavior folds, range by range.
  std::vector<std::pair<size_t, size_t>> r;
  bool prev_match = false;
  switch (how) {
    case Behavior::kRemoved:
      for (const Seg& g : segs)
        if (!g.d) r.emplace_back(g.b, g.e);
      break;
    case Behavior::kIsolated:
      for (const Seg& g : segs) r.emplace_back(g.b, g.e);
      break;
    case Behavior::kMergedWithPrevious:
      for (const Seg& g : segs) {
        if (g.d && !prev_match && !r.empty())
          r.back().second = g.e;
        else
          r.emplace_back(g.b, g.e);
        prev_match = g.d;
      }
      break;
    case Behavior::kMergedWithNext:
      for (size_t i = segs.size(); i-- > 0;) {
        const Seg& g = segs[i];
        if (g.d && !prev_match && !r.empty())
          r.back().first = g.b;
        else
          r.emplace_back(g.b, g.e);
        prev_match = g.d;
      }
      std::reverse(r.begin(), r.end());
      break;
    case Behavior::kContiguous:
      for (const Seg& g : segs) {
        if (g.d == prev_match && !r.empty())
          r.back().second = g.e;
        else
          r.emplace_back(g.b, g.e);
        prev_match = g.d;
      }
      break;
  }
  for (auto [b, e] : r)
    if (e > b) out.push_back(p.sub(b, e));
}

// Delimiters (sorted, disjoint) -> segments: the text between them is one segment each.
void split_piece(const Piece& p, const std::vector<std::pair<size_t, size_t>>& delims, Behavior how,
                 std::vector<Piece>& out) {
  if (delims.empty()) {
    if (!p.empty()) out.push_back(p);
    return;
  }
  std::vector<Seg> segs;
  size_t prev = 0;
  for (auto [b, e] : delims) {
    if (b > prev) segs.push_back({prev, b, false});
    segs.push_back({b, e, true});
    prev = e;
  }
  if (prev < p.s.size()) segs.push_back({prev, p.s.size(), false});
  split_segments(p, segs, how, out);
}

// Matches -> segments for Split: a match is a delimiter, or with invert a kept segment of its
// own and the gaps the delimiters.
void split_matches(const Piece& p, const std::vector<std::pair<size_t, size_t>>& m, bool invert,
                   Behavior how, std::vector<Piece>& out) {
  if (!invert) {
    split_piece(p, m, how, out);
    return;
  }
  std::vector<Seg> segs;
  size_t prev = 0;
  for (auto [b, e] : m) {
    if (b > prev) segs.push_back({prev, b, true});
    segs.push_back({b, e, false});
    prev = e;
  }
  if (prev < p.s.size()) segs.push_back({prev, p.s.size(), true});
  split_segments(p, segs, how, out);
}

// Delimiters = the characters for which pred(cp) holds, each one its own range.
template <class Pred>
void char_delims(const Piece& p, Pred pred, std::vector<std::pair<size_t, size_t>>& d) {
  d.clear();
  for (size_t i = 0; i < p.s.size();) {
    uint32_t cp = 0;
    size_t n = next_char(p.s, i, &cp);
    if (pred(cp)) d.emplace_back(i, i + n);
    i += n;
  }
}

template <class Pred>
void split_chars(std::vector<Piece>& pieces, Pred pred, Behavior how) {
  std::vector<Piece> out;
  std::vector<std::pair<size_t, size_t>> d;
  for (const Piece& p : pieces) {
    char_delims(p, pred, d);
    split_piece(p, d, how, out);
  }
  pieces = std::move(out);
}

constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

class ByteLevel final : public PreTokenizer {
 public:
  ByteLevel(const Ctx& c, bool add_prefix_space, bool use_regex, const std::string& path)
      : add_prefix_space_(add_prefix_space) {
    if (use_regex) re_ = std::make_unique<Regex>(c, kGpt2Pattern, path);
  }
  void apply(std::vector<Piece>& pieces) const override {
    std::vector<Piece> split;
    std::vector<std::pair<size_t, size_t>> m;
    for (Piece& p : pieces) {
      if (add_prefix_space_ && !p.empty() && p.s[0] != ' ') {
        Piece q;
        q.push(" ", p.a[0], p.b[0]);
        q.s += p.s;
        q.a.insert(q.a.end(), p.a.begin(), p.a.end());
        q.b.insert(q.b.end(), p.b.begin(), p.b.end());
        p = std::move(q);
      }
      if (re_) {
        re_->find_all(p.s, m);
        split_piece(p, m, Behavior::kIsolated, split);
      } else if (!p.empty()) {
        split.push_back(std::move(p));
      }
    }
    // Each byte becomes its alphabet character, aligned to the byte's original character.
    for (Piece& p : split) {
      Piece q;
      q.s.reserve(p.s.size() * 2);
      for (size_t i = 0; i < p.s.size(); ++i)
        q.push(byte_char(static_cast<uint8_t>(p.s[i])), p.a[i], p.b[i]);
      p = std::move(q);
    }
    pieces = std::move(split);
  }

 private:
  bool add_prefix_space_;
  std::unique_ptr<Regex> re_;
};

class Split final : public PreTokenizer {
 public:
  Split(std::string literal, std::unique_ptr<Regex> re, Behavior how, bool invert)
      : literal_(std::move(literal)), re_(std::move(re)), how_(how), invert_(invert) {}
  void apply(std::vector<Piece>& pieces) const override {
    std::vector<Piece> out;
    std::vector<std::pair<size_t, size_t>> m;
    for (const Piece& p : pieces) {
      if (re_) {
        re_->find_all(p.s, m);
      } else {
        m.clear();
        for (size_t pos = p.s.find(literal_); pos != std::string::npos;
             pos = p.s.find(literal_, pos + literal_.size()))
          m.emplace_back(pos, pos + literal_.size());
      }
      split_matches(p, m, invert_, how_, out);
    }
    pieces = std::move(out);
  }

 private:
  std::string literal_;
  std::unique_ptr<Regex> re_;
  Behavior how_;
  bool invert_;
};

enum class Prepend { kAlways, kFirst, kNever };

class Metaspace final : public PreTokenizer {
 public:
  Metaspace(std::string replacement, Prepend scheme, bool split)
      : rep_(std::move(replacement)), scheme_(scheme), split_(split) {}
  void apply(std::vector<Piece>& pieces) const override {
    std::vector<Piece> out;
    std::vector<std::pair<size_t, size_t>> d;
    for (Piece& p : pieces) {
      if (p.empty()) continue;
      Piece q;
      bool first = p.a[0] == 0;  // the piece starts the original text
      bool prepend = scheme_ == Prepend::kAlways || (scheme_ == Prepend::kFirst && first);
      if (prepend && p.s.compare(0, rep_.size(), rep_) != 0 && p.s[0] != ' ')
        q.push(rep_, p.a[0], p.b[0]);
      for (size_t i = 0; i < p.s.size(); ++i) {
        if (p.s[i] == ' ')
          q.push(rep_, p.a[i], p.b[i]);
        else
          q.push(std::string_view(&p.s[i], 1), p.a[i], p.b[i]);
      }
      if (split_) {
        d.clear();
        for (size_t pos = q.s.find(rep_); pos != std::string::npos;
             pos = q.s.find(rep_, pos + rep_.size()))
          d.emplace_back(pos, pos + rep_.size());
        split_piece(q, d, Behavior::kMergedWithNext, out);
      } else {
        out.push_back(std::move(q));
      }
    }
    pieces = std::move(out);
  }

 private:
  std::string rep_;
  Prepend scheme_;
  bool split_;
};

class BertPre final : public PreTokenizer {
 public:
  void apply(std::vector<Piece>& pieces) const override {
    split_chars(pieces, is_white_space, Behavior::kRemoved);
    split_chars(pieces, is_bert_punctuation, Behavior::kIsolated);
  }
};

class WhitespaceSplit final : public PreTokenizer {
 public:
  void apply(std::vector<Piece>& pieces) const override {
    split_chars(pieces, is_white_space, Behavior::kRemoved);
  }
};

// Whitespace: the regex \w+|[^\w\s]+, its matches kept (invert of Removed delimiters).
class Whitespace final : public PreTokenizer {
 public:
  explicit Whitespace(const Ctx& c) : re_(c, R"(\w+|[^\w\s]+)", "pre_tokenizer") {}
  void apply(std::vector<Piece>& pieces) const override {
    std::vector<Piece> out;
    std::vector<std::pair<size_t, size_t>> m;
    for (const Piece& p : pieces) {
      re_.find_all(p.s, m);
      split_matches(p, m, true, Behavior::kRemoved, out);
    }
    pieces = std::move(out);
  }

 private:
  Regex re_;
};

class Punctuation final : public PreTokenizer {
 public:
  explicit Punctuation(Behavior how) : how_(how) {}
  void apply(std::vector<Piece>& pieces) const override {
    split_chars(pieces, is_bert_punctuation, how_);
  }

 private:
  Behavior how_;
};

class Digits final : public PreTokenizer {
 public:
  explicit Digits(bool individual) : individual_(individual) {}
  void apply(std::vector<Piece>& pieces) const override {
    split_chars(
        pieces, [](uint32_t cp) { return cp >= '0' && cp <= '9'; },
        individual_ ? Behavior::kIsolated : Behavior::kContiguous);
  }

 private:
  bool individual_;
};

class Sequence final : public PreTokenizer {
 public:
  explicit Sequence(std::vector<std::unique_ptr<PreTokenizer>> parts) : parts_(std::move(parts)) {}
  void apply(std::vector<Piece>& pieces) const override {
    for (const auto& p : parts_) p->apply(pieces);
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> parts_;
};

}  // namespace

std::unique_ptr<PreTokenizer> make_pre_tokenizer(const Ctx& c, const json& j,
                                                 const std::string& path) {
  const std::string type = c.str(j, path, "type");
  if (type == "ByteLevel") {
    return std::make_unique<ByteLevel>(c, c.flag(j, path, "add_prefix_space", true),
                                       c.flag(j, path, "use_regex", true), path);
  }
  if (type == "Split") {
    const json& pat = c.get(j, path, "pattern");
    Behavior how = parse_behavior(c, j, path);
    bool invert = c.flag(j, path, "invert", false);
    if (pat.is_object() && pat.contains("String") && pat["String"].is_string()) {
      std::string lit = pat["String"].get<std::string>();
      if (lit.empty()) c.corrupt(path + ".pattern.String", "is empty");
      return std::make_unique<Split>(lit, nullptr, how, invert);
    }
    if (pat.is_object() && pat.contains("Regex") && pat["Regex"].is_string())
      return std::make_unique<Split>(
          "", std::make_unique<Regex>(c, pat["Regex"].get<std::string>(), path + ".pattern.Regex"),
          how, invert);
    c.unsupported(path + ".pattern", pat, "{\"String\": ...}, {\"Regex\": ...}");
  }
  if (type == "Metaspace") {
    std::string rep = c.str(j, path, "replacement");
    if (rep.empty()) c.corrupt(path + ".replacement", "is empty");
    Prepend scheme = Prepend::kAlways;
    auto it = j.find("prepend_scheme");
    if (it != j.end() && !it->is_null()) {
      std::string s = it->is_string() ? it->get<std::string>() : "";
      if (s == "always")
        scheme = Prepend::kAlways;
      else if (s == "first")
        scheme = Prepend::kFirst;
      else if (s == "never")
        scheme = Prepend::kNever;
      else
        c.unsupported(path + ".prepend_scheme", *it, "always, first, never");
    } else if (!c.flag(j, path, "add_prefix_space", true)) {
      scheme = Prepend::kNever;
    }
    return std::make_unique<Metaspace>(rep, scheme, c.flag(j, path, "split", true));
  }
  if (type == "BertPreTokenizer") return std::make_unique<BertPre>();
  if (type == "WhitespaceSplit") return std::make_unique<WhitespaceSplit>();
  if (type == "Whitespace") return std::make_unique<Whitespace>(c);
  if (type == "Punctuation") {
    Behavior how = j.contains("behavior") ? parse_behavior(c, j, path) : Behavior::kIsolated;
    return std::make_unique<Punctuation>(how);
  }
  if (type == "Digits")
    return std::make_unique<Digits>(c.flag(j, path, "individual_digits", false));
  if (type == "Sequence") {
    const json& list = c.get(j, path, "pretokenizers");
    if (!list.is_array()) c.corrupt(path + ".pretokenizers", "is not an array");
    std::vector<std::unique_ptr<PreTokenizer>> parts;
    for (size_t i = 0; i < list.size(); ++i)
      parts.push_back(
          make_pre_tokenizer(c, list[i], path + ".pretokenizers[" + std::to_string(i) + "]"));
    return std::make_unique<Sequence>(std::move(parts));
  }
  c.unsupported(path + ".type", j["type"],
                "ByteLevel, Split, Metaspace, BertPreTokenizer, Whitespace, WhitespaceSplit, "
                "Punctuation, Digits, Sequence");
}

}  // namespace embedscope::hf
