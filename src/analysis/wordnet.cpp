// WordNet dict reader: binary search over the mapped index files, synsets parsed by offset.
#include "embedscope/analysis/wordnet.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <unordered_map>

#include "embedscope/core/error.h"
#include "embedscope/core/mapped_file.h"
#include "embedscope/core/paths.h"

namespace embedscope {

namespace {

constexpr const char* kPosName[4] = {"noun", "verb", "adj", "adv"};
// Longest line we accept; WordNet 3.0's longest data line is ~16 KB (synsets with hundreds of
// pointers). A longer "line" means the file is not a WordNet dict file.
constexpr size_t kMaxLine = size_t(1) << 20;

std::string lower_key(std::string_view s) {
  std::string k(s);
  for (char& c : k) {
    if (c == ' ')
      c = '_';
    else if (c >= 'A' && c <= 'Z')
      c = char(c - 'A' + 'a');
  }
  return k;
}

std::vector<std::string_view> split_spaces(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

// Parses an unsigned number in `base`; false on empty, bad digit or overflow past `max`.
bool parse_uint(std::string_view s, int base, uint64_t max, uint64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  uint64_t v = 0;
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (base == 16 && c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else if (base == 16 && c >= 'A' && c <= 'F')
      d = c - 'A' + 10;
    else
      return false;
    if (d >= base) return false;
    v = v * uint64_t(base) + uint64_t(d);
    if (v > max) return false;
  }
  *out = v;
  return true;
}

bool pos_from_char(char c, WnPos* out) {
  switch (c) {
    case 'n':
      *out = WnPos::kNoun;
      return true;
    case 'v':
      *out = WnPos::kVerb;
      return true;
    case 'a':
    case 's':
      *out = WnPos::kAdj;
      return true;
    case 'r':
      *out = WnPos::kAdv;
      return true;
  }
  return false;
}

// WordNet's detachment rules (morph.c sufx/addr tables), by POS.
struct Rule {
  std::string_view suffix, ending;
};
constexpr Rule kNounRules[] = {{"s", ""},      {"ses", "s"},   {"xes", "x"},   {"zes", "z"},
                               {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"}};
constexpr Rule kVerbRules[] = {{"s", ""},   {"ies", "y"}, {"es", "e"},  {"es", ""},
                               {"ed", "e"}, {"ed", ""},   {"ing", "e"}, {"ing", ""}};
constexpr Rule kAdjRules[] = {{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}};

std::span<const Rule> rules_for(WnPos pos) {
  switch (pos) {
    case WnPos::kNoun:
      return kNounRules;
    case WnPos::kVerb:
      return kVerbRules;
    case WnPos::kAdj:
      return kAdjRules;
    case WnPos::kAdv:
      return {};
  }
  return {};
}

}  // namespace

char wn_pos_char(WnPos pos) { return "nvar"[int(pos)]; }

struct WordNet::Impl {
  std::shared_ptr<const MappedFile> index[4], data[4];
  size_t index_body[4] = {0, 0, 0, 0};  // byte offset of the first non-license line
  std::unordered_map<std::string, std::vector<std::string>> exc[4];

  std::string_view bytes(const std::shared_ptr<const MappedFile>& f) const {
    return {reinterpret_cast<const char*>(f->data()), f->size()};
  }

  // The index line for `key`, or empty.
  std::string_view find_index_line(WnPos pos, std::string_view key) const {
    std::string_view p = bytes(index[int(pos)]);
    size_t lo = index_body[int(pos)], hi = p.size();
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      size_t ls = mid;
      while (ls > lo && p[ls - 1] != '\n') --ls;
      size_t le = p.find('\n', ls);
      if (le == std::string_view::npos) le = p.size();
      std::string_view line = p.substr(ls, le - ls);
      std::string_view lk = line.substr(0, std::min(line.find(' '), line.size()));
      int cmp = lk.compare(key);
      if (cmp == 0) return line;
      if (cmp < 0)
        lo = le + 1;
      else
        hi = ls;
    }
    return {};
  }

  [[noreturn]] void corrupt_index(WnPos pos, std::string_view line, const std::string& what) const {
    std::string_view p = bytes(index[int(pos)]);
    size_t off = size_t(line.data() - p.data());
    throw Error(ErrorCode::kCorrupt,
                index[int(pos)]->path() + ": line at byte " + std::to_string(off) + ": " + what);
  }

  std::vector<SynsetId> parse_index_line(WnPos pos, std::string_view line) const {
    auto t = split_spaces(line);
    // lemma pos synset_cnt p_cnt [ptr x p_cnt] sense_cnt tagsense_cnt offsets...
    if (t.size() < 6)
      corrupt_index(pos, line, "expected at least 6 fields, found " + std::to_string(t.size()));
    uint64_t n_syn = 0, n_ptr = 0;
    if (!parse_uint(t[2], 10, 1u << 20, &n_syn))
      corrupt_index(pos, line, "synset_cnt '" + std::string(t[2]) + "' is not a number <= 1048576");
    if (!parse_uint(t[3], 10, 1u << 20, &n_ptr))
      corrupt_index(pos, line, "p_cnt '" + std::string(t[3]) + "' is not a number <= 1048576");
    size_t first = 4 + size_t(n_ptr) + 2;
    if (first > t.size() || t.size() - first != n_syn)
      corrupt_index(pos, line,
                    "synset_cnt " + std::to_string(n_syn) + " and p_cnt " + std::to_string(n_ptr) +
                        " need " + std::to_string(first + n_syn) + " fields, line has " +
                        std::to_string(t.size()));
    std::vector<SynsetId> out;
    out.reserve(size_t(n_syn));
    for (size_t i = first; i < t.size(); ++i) {
      uint64_t off;
      if (t[i].size() != 8 || !parse_uint(t[i], 10, 99999999, &off))
        corrupt_index(pos, line, "synset_offset '" + std::string(t[i]) + "' is not 8 digits");
      out.push_back({pos, uint32_t(off)});
    }
    return out;
  }
};

WordNet::WordNet(WordNet&&) noexcept = default;
WordNet& WordNet::operator=(WordNet&&) noexcept = default;
WordNet::~WordNet() = default;

std::string WordNet::default_dir() {
  const char* e = std::getenv("WNSEARCHDIR");
  if (e && *e) return e;
  return "/usr/share/wordnet";
}

WordNet WordNet::open(const std::string& dir_in) {
  std::string dir = dir_in.empty() ? default_dir() : dir_in;
  if (!file_exists(dir + "/index.noun"))
    throw Error(ErrorCode::kNotFound,
                dir +
                    ": no WordNet dict files (index.noun missing); install the Debian package "
                    "wordnet-base (scripts/setup.sh does) or set WNSEARCHDIR");
  WordNet wn;
  wn.dir_ = dir;
  wn.impl_ = std::make_unique<Impl>();
  Impl& im = *wn.impl_;
  for (int p = 0; p < 4; ++p) {
    im.index[p] = MappedFile::open(dir + "/index." + kPosName[p]);
    im.data[p] = MappedFile::open(dir + "/data." + kPosName[p]);
    std::string_view b = im.bytes(im.index[p]);
    size_t off = 0;
    while (off < b.size() && b.substr(off, 2) == "  ") {  // license header
      size_t e = b.find('\n', off);
      off = e == std::string_view::npos ? b.size() : e + 1;
    }
    im.index_body[p] = off;
    std::string exc_path = dir + "/" + kPosName[p] + ".exc";
    if (!file_exists(exc_path))
      continue;  // older dict folders may lack one; morphy then uses rules
    std::string text = read_small_file(exc_path, size_t(16) << 20);
    size_t pos = 0, line_no = 0;
    while (pos < text.size()) {
      size_t e = text.find('\n', pos);
      if (e == std::string::npos) e = text.size();
      ++line_no;
      auto t = split_spaces(std::string_view(text).substr(pos, e - pos));
      if (t.size() == 1)
        throw Error(ErrorCode::kCorrupt, exc_path + ": line " + std::to_string(line_no) +
                                             ": expected 'inflected base...', found one field '" +
                                             std::string(t[0]) + "'");
      if (t.size() >= 2) {
        auto& v = im.exc[p][std::string(t[0])];
        for (size_t i = 1; i < t.size(); ++i) v.emplace_back(t[i]);
      }
      pos = e + 1;
    }
  }
  return wn;
}

std::vector<SynsetId> WordNet::synsets(std::string_view lemma, WnPos pos) const {
  std::string key = lower_key(lemma);
  if (key.empty()) return {};
  std::string_view line = impl_->find_index_line(pos, key);
  if (line.empty()) return {};
  return impl_->parse_index_line(pos, line);
}

bool WordNet::has_lemma(std::string_view lemma, WnPos pos) const {
  std::string key = lower_key(lemma);
  return !key.empty() && !impl_->find_index_line(pos, key).empty();
}

Synset WordNet::synset(SynsetId id) const {
  const auto& f = impl_->data[int(id.pos)];
  std::string_view p = impl_->bytes(f);
  auto fail = [&](const std::string& what) -> Error {
    return Error(ErrorCode::kCorrupt,
                 f->path() + ": synset at byte " + std::to_string(id.offset) + ": " + what);
  };
  if (id.offset >= p.size())
    throw Error(ErrorCode::kOutOfRange, f->path() + ": synset offset " + std::to_string(id.offset) +
                                            " is beyond the file size " + std::to_string(p.size()));
  size_t end = p.find('\n', id.offset);
  if (end == std::string_view::npos) end = p.size();
  if (end - id.offset > kMaxLine)
    throw fail("line longer than " + std::to_string(kMaxLine) + " bytes");
  std::string_view line = p.substr(id.offset, end - id.offset);
  size_t bar = line.find(" | ");
  Synset s;
  s.id = id;
  if (bar != std::string_view::npos) {
    s.gloss = std::string(line.substr(bar + 3));
    while (!s.gloss.empty() && (s.gloss.back() == ' ' || s.gloss.back() == '\r'))
      s.gloss.pop_back();
    line = line.substr(0, bar);
  }
  auto t = split_spaces(line);
  char want[16];
  std::snprintf(want, sizeof want, "%08u", unsigned(id.offset));
  if (t.empty() || t[0] != want)
    throw fail("line starts with '" + std::string(t.empty() ? "" : t[0].substr(0, 16)) +
               "', expected its own offset " + want + " (offset does not point at a synset)");
  if (t.size() < 5) throw fail("expected at least 5 fields, found " + std::to_string(t.size()));
  uint64_t w_cnt;
  if (!parse_uint(t[3], 16, 255, &w_cnt) || w_cnt == 0)
    throw fail("w_cnt '" + std::string(t[3]) + "' is not a hex count in 1..ff");
  size_t i = 4;
  if (t.size() < i + 2 * w_cnt + 1)
    throw fail("w_cnt " + std::to_string(w_cnt) + " needs " + std::to_string(i + 2 * w_cnt + 1) +
               " fields, line has " + std::to_string(t.size()));
  for (uint64_t w = 0; w < w_cnt; ++w, i += 2) {
    std::string word(t[i]);
    if (id.pos == WnPos::kAdj && !word.empty() && word.back() == ')') {  // "galore(ip)"
      size_t open = word.rfind('(');
      if (open != std::string::npos && open > 0) word.resize(open);
    }
    s.words.push_back(std::move(word));
  }
  uint64_t p_cnt;
  if (!parse_uint(t[i], 10, 999, &p_cnt))
    throw fail("p_cnt '" + std::string(t[i]) + "' is not a decimal count <= 999");
  ++i;
  if (t.size() < i + 4 * p_cnt)
    throw fail("p_cnt " + std::to_string(p_cnt) + " needs " + std::to_string(i + 4 * p_cnt) +
               " fields, line has " + std::to_string(t.size()));
  s.pointers.reserve(size_t(p_cnt));
  for (uint64_t k = 0; k < p_cnt; ++k, i += 4) {
    WnPointer ptr;
    ptr.symbol = std::string(t[i]);
    uint64_t off, st;
    if (t[i + 1].size() != 8 || !parse_uint(t[i + 1], 10, 99999999, &off))
      throw fail("pointer " + std::to_string(k) + " offset '" + std::string(t[i + 1]) +
                 "' is not 8 digits");
    if (t[i + 2].size() != 1 || !pos_from_char(t[i + 2][0], &ptr.target.pos))
      throw fail("pointer " + std::to_string(k) + " pos '" + std::string(t[i + 2]) +
                 "' is not one of n v a s r");
    if (t[i + 3].size() != 4 || !parse_uint(t[i + 3], 16, 0xffff, &st))
      throw fail("pointer " + std::to_string(k) + " source/target '" + std::string(t[i + 3]) +
                 "' is not 4 hex digits");
    ptr.target.offset = uint32_t(off);
    ptr.source_word = uint8_t(st >> 8);
    ptr.target_word = uint8_t(st & 0xff);
    if (ptr.source_word > w_cnt)
      throw fail("pointer " + std::to_string(k) + " source word " +
                 std::to_string(ptr.source_word) + " > w_cnt " + std::to_string(w_cnt));
    s.pointers.push_back(std::move(ptr));
  }
  return s;
}

std::string WordNet::synset_name(const Synset& s) const {
  if (s.words.empty()) return "?";
  std::string w = lower_key(s.words[0]);
  auto ids = synsets(w, s.id.pos);
  size_t sense = 0;
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] == s.id) sense = i + 1;
  char buf[16];
  std::snprintf(buf, sizeof buf, ".%c.%02zu", wn_pos_char(s.id.pos), sense);
  return w + buf;
}

std::vector<std::string> WordNet::morphy(std::string_view word_in, WnPos pos, bool repeat) const {
  std::string word = lower_key(word_in);
  std::vector<std::string> result;
  auto keep = [&](const std::string& f) {
    if (!f.empty() && has_lemma(f, pos) &&
        std::find(result.begin(), result.end(), f) == result.end())
      result.push_back(f);
  };
  if (word.empty()) return result;
  const auto& exc = impl_->exc[int(pos)];
  if (auto it = exc.find(word); it != exc.end()) {
    keep(word);
    for (const auto& b : it->second) keep(b);
    return result;
  }
  auto rules = rules_for(pos);
  auto apply = [&](const std::vector<std::string>& forms) {
    std::vector<std::string> out;
    for (const auto& f : forms)
      for (const Rule& r : rules)
        if (f.size() > r.suffix.size() && f.ends_with(r.suffix))
          out.push_back(f.substr(0, f.size() - r.suffix.size()) + std::string(r.ending));
    return out;
  };
  std::vector<std::string> forms = apply({word});
  keep(word);
  for (const auto& f : forms) keep(f);
  // Repeated detachment (NLTK's loop) for forms like "ladies's"; bounded because each pass
  // shortens every form.
  while (repeat && result.empty() && !forms.empty()) {
    forms = apply(forms);
    for (const auto& f : forms) keep(f);
  }
  return result;
}

std::vector<std::string> WordNet::lemmas(std::string_view word) const {
  std::vector<std::string> out;
  for (WnPos p : kAllWnPos)
    for (auto& l : morphy(word, p))
      if (std::find(out.begin(), out.end(), l) == out.end()) out.push_back(std::move(l));
  return out;
}

}  // namespace embedscope
