// Neighbour labelling rules; the numbered list in labeller.h is the specification.
#include "embedscope/analysis/labeller.h"

#include <algorithm>
#include <cctype>
#include <deque>
#include <set>
#include <tuple>

namespace embedscope {

namespace {

bool valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += n;
  }
  return true;
}

bool is_ascii_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Semantic pointers followed for "related" and how a reader calls them. "+" (derivation) is a
// variant rule of its own and not followed here.
std::string_view relation_name(std::string_view sym) {
  static const std::pair<std::string_view, std::string_view> kNames[] = {
      {"@", "hypernym"},
      {"@i", "instance hypernym"},
      {"~", "hyponym"},
      {"~i", "instance hyponym"},
      {"#m", "member holonym"},
      {"#s", "substance holonym"},
      {"#p", "part holonym"},
      {"%m", "member meronym"},
      {"%s", "substance meronym"},
      {"%p", "part meronym"},
      {"&", "similar to"},
      {"!", "antonym"},
      {"^", "also see"},
      {"=", "attribute"},
      {"*", "entailment"},
      {">", "cause"},
      {"$", "verb group"},
      {"\\", "pertainym"},
      {"<", "participle"},
      {";c", "domain topic"},
      {"-c", "topic member"},
      {";r", "domain region"},
      {"-r", "region member"},
      {";u", "domain usage"},
      {"-u", "usage member"}};
  for (auto& [s, n] : kNames)
    if (s == sym) return n;
  return {};
}

bool is_hypernym(std::string_view sym) { return sym == "@" || sym == "@i"; }
bool is_hyponym(std::string_view sym) { return sym == "~" || sym == "~i"; }
// Domain pointers lead to hubs (colloquialism.n.01, military.n.01, united_kingdom.n.01) that
// tie together words with nothing else in common: followed as a one-pointer path only.
bool is_domain(std::string_view sym) {
  return sym.size() == 2 && (sym[0] == ';' || sym[0] == '-') &&
         (sym[1] == 'c' || sym[1] == 'r' || sym[1] == 'u');
}

std::string lower_ascii(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return s;
}

const char* pos_name(WnPos p) {
  switch (p) {
    case WnPos::kNoun:
      return "noun";
    case WnPos::kVerb:
      return "verb";
    case WnPos::kAdj:
      return "adjective";
    case WnPos::kAdv:
      return "adverb";
  }
  return "?";
}

// The gloss without its quoted examples (they use the word itself: "he stood up").
std::string definition_text(const std::string& gloss) {
  std::string out;
  bool quoted = false;
  for (char c : gloss) {
    if (c == '"')
      quoted = !quoted;
    else if (!quoted)
      out += c;
  }
  return out;
}

std::vector<std::string> gloss_words(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text + " ") {
    if (is_ascii_letter(c))
      cur += char(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    else if (!cur.empty())
      out.push_back(std::move(cur)), cur.clear();
  }
  return out;
}

// Derivational affixes. A prefix is attached as is ("re" + "read", "non-" + "stop"); a suffix
// with the usual spelling changes (happy -> happiness, hope -> hoping is inflection, gentle ->
// gently, basic -> basically, create -> creation, forget -> forgettable).
constexpr std::string_view kPrefixes[] = {
    "un", "re",    "over", "under", "out",   "mis",     "dis",  "non",   "pre",
    "in", "im",    "il",   "ir",    "anti",  "counter", "sub",  "super", "co",
    "de", "inter", "semi", "multi", "post",  "fore",    "self", "trans", "up",
    "en", "em",    "mid",  "ultra", "hyper", "micro",   "mini", "auto",  "bi"};
constexpr std::string_view kSuffixes[] = {
    "less", "ful",   "ness",  "ly",  "ment", "able", "ible", "er",   "or",    "ist",  "ism",
    "ity",  "ation", "ition", "ion", "al",   "ical", "ic",   "ish",  "ous",   "ive",  "y",
    "ize",  "ise",   "ify",   "en",  "hood", "ship", "dom",  "ward", "wards", "wise", "ance",
    "ence", "ant",   "ent",   "ess", "ee",   "ery",  "ry",   "ing",  "ed",    "like"};

// Bases a suffixed word may come from: "happiness" - "ness" -> happi -> {happi, happie, happy}.
std::vector<std::string> suffix_bases(std::string_view stem, std::string_view suffix) {
  std::vector<std::string> out = {std::string(stem)};
  std::string s(stem);
  out.push_back(s + "e");
  if (s.size() >= 2 && s.back() == 'i') out.push_back(s.substr(0, s.size() - 1) + "y");
  if (s.size() >= 3 && s.back() == s[s.size() - 2] &&
      std::string_view("aeiou").find(s.back()) == std::string_view::npos)
    out.push_back(s.substr(0, s.size() - 1));
  if (suffix == "ly") {
    out.push_back(s + "le");                                          // gently
    if (s.ends_with("al")) out.push_back(s.substr(0, s.size() - 2));  // basically
  }
  return out;
}

std::string short_gloss(const std::string& g) {
  std::string s = g.substr(0, g.find(';'));
  if (s.size() > 70) s = s.substr(0, 67) + "...";
  return s;
}

}  // namespace

std::string_view label_name(Label l) {
  switch (l) {
    case Label::kVariant:
      return "variant";
    case Label::kSynonym:
      return "synonym";
    case Label::kRelated:
      return "related";
    case Label::kNoise:
      return "noise";
  }
  return "noise";
}

std::string_view noise_kind_name(NoiseKind k) {
  switch (k) {
    case NoiseKind::kNone:
      return "";
    case NoiseKind::kSpecial:
      return "special";
    case NoiseKind::kNumberOrPunct:
      return "number_or_punct";
    case NoiseKind::kSubword:
      return "subword";
    case NoiseKind::kRare:
      return "rare";
    case NoiseKind::kUnrelated:
      return "unrelated";
  }
  return "";
}

TokenForm normalize_token(std::string_view raw) {
  TokenForm f;
  if (!valid_utf8(raw)) {
    f.special = true;
    f.word = std::string(raw);
    f.lower = f.word;
    return f;
  }
  std::string_view s = raw;
  // Leading word-start markers: space, GPT-2's byte-level "Ġ" (U+0120), SentencePiece "▁".
  for (;;) {
    if (s.starts_with(" "))
      s.remove_prefix(1);
    else if (s.starts_with("\xC4\xA0"))
      s.remove_prefix(2);
    else if (s.starts_with("\xE2\x96\x81"))
      s.remove_prefix(3);
    else
      break;
    f.word_start = true;
  }
  if (s.starts_with("##") && s.size() > 2) {
    s.remove_prefix(2);
    f.continuation = true;
  }
  if (s.ends_with("</w>") && s.size() > 4) {  // CLIP-style word end
    s.remove_suffix(4);
    f.word_start = true;
  }
  f.word = std::string(s);
  f.lower = f.word;
  for (char& c : f.lower)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  bool wordlike = !s.empty();
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) f.special = true;
    bool letter = is_ascii_letter(char(c)) || c >= 0x80;
    if (letter) f.has_letter = true;
    bool inner = (c == '\'' || c == '-' || c == '.' || c == '_') && i > 0 && i + 1 < s.size();
    if (!letter && !inner) wordlike = false;
  }
  f.is_wordlike = wordlike && f.has_letter;
  // <|endoftext|>, <unk>, <s>, [CLS], [PAD]: bracketed markers, not words.
  if (s.size() >= 3 &&
      ((s.front() == '<' && s.back() == '>') || (s.front() == '[' && s.back() == ']')))
    f.special = true;
  if (raw.empty()) f.special = true;
  return f;
}

Labeller::Labeller(const WordNet& wn, LabelOptions options) : wn_(wn), opt_(options) {}

std::string Labeller::synset_text(SynsetId id) const {
  Synset s = wn_.synset(id);
  return wn_.synset_name(s);
}

Labeller::PosLemmas Labeller::pos_lemmas(const std::string& word) const {
  PosLemmas out;
  for (WnPos p : kAllWnPos)
    for (auto& l : wn_.morphy(word, p, /*repeat=*/false)) out.emplace_back(p, std::move(l));
  return out;
}

// Synsets per part of speech in WordNet 3.0 (wnstats(7WN)); adjectives and adverbs have no
// hypernyms, their counts are never used.
constexpr int kPosSynsets[4] = {82115, 13767, 18156, 3621};

int Labeller::max_coverage(WnPos pos) const {
  return std::max(1, int(opt_.max_coverage_share * kPosSynsets[int(pos)]));
}

int Labeller::coverage(SynsetId s) const {
  {
    std::lock_guard<std::mutex> lk(cache_mu_);
    if (auto it = coverage_.find(s); it != coverage_.end()) return it->second;
  }
  // Breadth-first down hyponym and instance pointers; stops once past the threshold.
  const int cap = max_coverage(s.pos);
  std::set<SynsetId> seen = {s};
  std::vector<SynsetId> level = {s};
  while (!level.empty() && int(seen.size()) <= cap) {
    std::vector<SynsetId> next;
    for (SynsetId x : level) {
      for (const auto& p : wn_.synset(x).pointers)
        if (is_hyponym(p.symbol) && seen.insert(p.target).second) next.push_back(p.target);
      if (int(seen.size()) > cap) break;
    }
    level = std::move(next);
  }
  int n = std::min(int(seen.size()), cap + 1);
  std::lock_guard<std::mutex> lk(cache_mu_);
  coverage_[s] = n;
  return n;
}

int Labeller::depth(SynsetId s) const {
  {
    std::lock_guard<std::mutex> lk(cache_mu_);
    if (auto it = depth_.find(s); it != depth_.end()) return it->second;
  }
  // Shortest hypernym chain to a synset without hypernyms, counted up to min_depth.
  int d = 0;
  std::set<SynsetId> seen = {s};
  std::vector<SynsetId> level = {s};
  for (; d < opt_.min_depth; ++d) {
    std::vector<SynsetId> up;
    bool root = false;
    for (SynsetId x : level) {
      bool has_up = false;
      for (const auto& p : wn_.synset(x).pointers)
        if (is_hypernym(p.symbol)) {
          has_up = true;
          if (seen.insert(p.target).second) up.push_back(p.target);
        }
      if (!has_up) root = true;
    }
    if (root) break;
    level = std::move(up);
  }
  std::lock_guard<std::mutex> lk(cache_mu_);
  depth_[s] = d;
  return d;
}

bool Labeller::specific(SynsetId s, std::string* why) const {
  if (opt_.specificity == Specificity::kDepth) {
    int d = depth(s);
    if (why)
      *why = d >= opt_.min_depth ? std::to_string(opt_.min_depth) + "+ levels below a root"
                                 : std::to_string(d) + " levels below a root";
    return d >= opt_.min_depth;
  }
  int c = coverage(s), cap = max_coverage(s.pos);
  if (why)
    *why = c > cap ? "covers over " + std::to_string(cap) + " synsets"
                   : "covers " + std::to_string(c) + " synset" + (c > 1 ? "s" : "");
  return c <= cap;
}

// Whether a pointer may be followed at `hop` (0: from the query's own synsets), and whether
// the path may go on from its target. A domain pointer, and a kind-of pointer whose more
// general end is not specific, make a one-pointer path only (computer -hypernym-> machine is
// related; nothing is reached through machine.n.01, person.n.01 or colloquialism.n.01).
Labeller::Hop Labeller::hop_allowed(SynsetId from, std::string_view sym, SynsetId to,
                                    int hop) const {
  if (relation_name(sym).empty()) return {false, false};
  bool through = true;
  if (is_domain(sym) || sym == "@i" || sym == "~i")
    through = false;  // hubs; named instances
  else if (is_hypernym(sym))
    through = specific(to);
  else if (is_hyponym(sym))
    through = specific(from);
  return {through || hop == 0, through};
}

PreparedQuery Labeller::prepare(std::string_view query) const {
  PreparedQuery q;
  q.word = std::string(query);
  q.form = normalize_token(query);
  if (q.form.special || !q.form.has_letter) return q;
  q.lemmas = pos_lemmas(q.form.lower);
  q.stem = stemmer_.stem(q.form.lower);
  std::set<SynsetId> seen;
  for (auto& [p, l] : q.lemmas)
    for (SynsetId s : wn_.synsets(l, p))
      if (seen.insert(s).second) q.synsets.push_back(s);
  // Breadth-first over allowed pointers; nodes at the last hop are recorded, not parsed.
  std::vector<SynsetId> frontier = q.synsets;
  for (SynsetId s : q.synsets) q.reached[s] = {s, "", 0, true};
  for (int hop = 0; hop < opt_.max_hops && !frontier.empty(); ++hop) {
    std::vector<SynsetId> next;
    for (SynsetId s : frontier) {
      if (!q.reached[s].expand) continue;
      Synset syn = wn_.synset(s);
      for (const auto& p : syn.pointers) {
        Hop h = hop_allowed(s, p.symbol, p.target, hop);
        if (!h.allowed) continue;
        PreparedQuery::Reach r{s, p.symbol, hop + 1, h.through};
        auto [it, fresh] = q.reached.emplace(p.target, r);
        if (fresh) {
          next.push_back(p.target);
        } else if (it->second.hops == hop + 1 && !it->second.expand && r.expand) {
          it->second = r;  // also reached by an ordinary pointer: that path is the one kept
        }
      }
    }
    frontier = std::move(next);
  }
  // Hypernyms up to max_hypernym_depth levels.
  std::vector<SynsetId> level = q.synsets;
  for (int d = 1; d <= opt_.max_hypernym_depth && !level.empty(); ++d) {
    std::vector<SynsetId> up;
    for (SynsetId s : level)
      for (const auto& p : wn_.synset(s).pointers)
        if (p.symbol == "@" && q.ancestors.emplace(p.target, d).second) up.push_back(p.target);
    level = std::move(up);
  }
  return q;
}

// A WordNet pointer from a synset of a lemma in `a` to a synset of a lemma in `b` (lexical
// pointers word to word), or a synset both share.
std::optional<std::string> Labeller::link(const PosLemmas& a, const PosLemmas& b,
                                          bool derivation_only) const {
  auto in = [](const PosLemmas& v, WnPos p, const std::string& w) {
    return std::find(v.begin(), v.end(), std::make_pair(p, w)) != v.end();
  };
  std::map<SynsetId, std::string> b_syn;
  for (auto& [p, l] : b)
    for (SynsetId s : wn_.synsets(l, p)) b_syn.emplace(s, l);
  for (auto& [p, l] : a) {
    for (SynsetId s : wn_.synsets(l, p)) {
      Synset syn = wn_.synset(s);
      if (!derivation_only && b_syn.count(s)) return "share synset " + wn_.synset_name(syn);
      for (const auto& ptr : syn.pointers) {
        if (derivation_only && ptr.symbol != "+") continue;
        if (ptr.source_word != 0) {  // lexical: word to word
          if (ptr.source_word > syn.words.size()) continue;
          if (lower_ascii(syn.words[ptr.source_word - 1]) != l) continue;
          Synset t = wn_.synset(ptr.target);
          if (ptr.target_word == 0 || ptr.target_word > t.words.size()) continue;
          std::string dst = lower_ascii(t.words[ptr.target_word - 1]);
          if (!in(b, ptr.target.pos, dst)) continue;
          std::string rel =
              ptr.symbol == "+" ? "derivation" : std::string(relation_name(ptr.symbol));
          if (rel.empty()) rel = ptr.symbol;
          return l + " (" + wn_.synset_name(syn) + ") -" + rel + "-> " + dst + " (" +
                 wn_.synset_name(t) + ")";
        }
        if (b_syn.count(ptr.target)) {
          std::string rel(relation_name(ptr.symbol));
          if (rel.empty()) rel = ptr.symbol;
          return wn_.synset_name(syn) + " -" + rel + "-> " + synset_text(ptr.target);
        }
      }
    }
  }
  return std::nullopt;
}

// A definition of the longer word that uses the shorter one (or a form of it).
std::optional<std::string> Labeller::defines(const PosLemmas& longer, const std::string& shorter,
                                             const PosLemmas& shorter_lemmas) const {
  for (auto& [p, l] : longer)
    for (SynsetId s : wn_.synsets(l, p)) {
      Synset syn = wn_.synset(s);
      std::string def = definition_text(syn.gloss);
      for (const auto& w : gloss_words(def)) {
        bool hit = w == shorter;
        if (!hit)
          for (auto& [wp, wl] : pos_lemmas(w))
            for (auto& [sp, sl] : shorter_lemmas)
              if (wl == sl) hit = true;
        if (hit) {
          while (!def.empty() && (def.back() == ' ' || def.back() == ';')) def.pop_back();
          if (def.size() > 70) def = def.substr(0, 67) + "...";
          return "WordNet defines " + wn_.synset_name(syn) + " as '" + def + "'";
        }
      }
    }
  return std::nullopt;
}

std::optional<std::string> Labeller::affix_variant(const std::string& a, const PosLemmas& al,
                                                   const std::string& b,
                                                   const PosLemmas& bl) const {
  auto forms = [](const std::string& w, const PosLemmas& ls) {
    std::vector<std::string> f = {w};
    for (auto& [p, l] : ls)
      if (std::find(f.begin(), f.end(), l) == f.end()) f.push_back(l);
    return f;
  };
  auto try_dir = [&](const std::string& lw, const PosLemmas& ll, const std::string& sw,
                     const PosLemmas& sl) -> std::optional<std::string> {
    if (sl.empty()) return std::nullopt;  // the base must be a word WordNet knows
    std::vector<std::string> sforms = forms(sw, sl);
    auto is_base = [&](const std::string& x) {
      return x.size() >= 3 && std::find(sforms.begin(), sforms.end(), x) != sforms.end();
    };
    std::optional<std::string> how;
    for (const std::string& L : forms(lw, ll)) {
      for (std::string_view pre : kPrefixes) {
        if (how || !L.starts_with(pre) || L.size() < pre.size() + 3) continue;
        std::string rest = L.substr(pre.size());
        if (rest.starts_with("-")) rest.erase(0, 1);
        bool ok = is_base(rest);
        std::string base = rest;
        if (!ok)
          for (auto& [p, l] : pos_lemmas(rest))
            if (is_base(l)) ok = true, base = rest + " (" + l + ")";
        if (ok) how = "'" + std::string(pre) + "-' + " + base + " = " + L;
      }
      for (std::string_view suf : kSuffixes) {
        if (how || !L.ends_with(suf) || L.size() < suf.size() + 3) continue;
        for (const auto& base :
             suffix_bases(std::string_view(L).substr(0, L.size() - suf.size()), suf))
          if (!how && is_base(base)) how = base + " + '-" + std::string(suf) + "' = " + L;
      }
      if (how) break;
    }
    if (!how) return std::nullopt;
    std::string ev = "derivation by affix: " + *how;
    if (ll.empty()) return ev + " ('" + lw + "' is not in WordNet)";
    if (auto l = link(ll, sl, false)) return ev + "; WordNet link: " + *l;
    if (auto l = link(sl, ll, false)) return ev + "; WordNet link: " + *l;
    if (auto d = defines(ll, sw, sl)) return ev + "; " + *d;
    return std::nullopt;
  };
  if (a.size() > b.size()) return try_dir(a, al, b, bl);
  if (b.size() > a.size()) return try_dir(b, bl, a, al);
  return std::nullopt;
}

LabelResult Labeller::label(const PreparedQuery& q, const TokenInfo& nb) const {
  LabelResult r;
  TokenForm f = normalize_token(nb.text);
  auto noise = [&](NoiseKind k, std::string ev) {
    r.label = Label::kNoise;
    r.noise = k;
    r.evidence = std::move(ev);
    return r;
  };
  auto variant = [&](std::string ev) {
    r.label = Label::kVariant;
    r.evidence = std::move(ev);
    return r;
  };
  if (nb.special || f.special)
    return noise(NoiseKind::kSpecial, nb.special ? "special token of the tokenizer"
                                                 : "special or byte token (not a word)");
  if (!q.form.lower.empty() && f.lower == q.form.lower)
    return variant("same word up to case, leading space or tokenizer marker ('" + f.word + "' ~ '" +
                   q.form.word + "')");
  if (!f.has_letter) return noise(NoiseKind::kNumberOrPunct, "number or punctuation");
  PosLemmas nb_lemmas = pos_lemmas(f.lower);
  bool fragment = f.continuation || !f.is_wordlike ||
                  (nb.vocab_marks_word_starts && !f.word_start && nb_lemmas.empty());
  if (fragment)
    return noise(NoiseKind::kSubword, f.continuation
                                          ? "word-piece continuation '##" + f.word + "'"
                                          : "subword fragment '" + f.word + "' (not a whole word)");
  // 4. Same lemma in one part of speech.
  for (const auto& pl : nb_lemmas)
    if (std::find(q.lemmas.begin(), q.lemmas.end(), pl) != q.lemmas.end())
      return variant("same lemma '" + pl.second + "' (WordNet morphy, " + pos_name(pl.first) +
                     ": " + f.lower + " -> " + pl.second + ", " + q.form.lower + " -> " +
                     pl.second + ")");
  // 5. A derivational link, word to word.
  if (auto ev = link(q.lemmas, nb_lemmas, true)) return variant("WordNet derivation: " + *ev);
  if (auto ev = link(nb_lemmas, q.lemmas, true)) return variant("WordNet derivation: " + *ev);
  // 6. A common affix that WordNet confirms (or cannot deny).
  if (!q.form.lower.empty())
    if (auto ev = affix_variant(q.form.lower, q.lemmas, f.lower, nb_lemmas)) return variant(*ev);
  // 7. Same Snowball stem, unless WordNet tells the two words apart.
  if (!q.stem.empty()) {
    std::string st = stemmer_.stem(f.lower);
    if (st == q.stem && st.size() >= 3) {
      std::string ev = "same Snowball stem '" + st + "'";
      if (q.lemmas.empty()) return variant(ev + " ('" + q.form.lower + "' is not in WordNet)");
      if (nb_lemmas.empty()) return variant(ev + " ('" + f.lower + "' is not in WordNet)");
      if (auto l = link(q.lemmas, nb_lemmas, false)) return variant(ev + "; WordNet link: " + *l);
      if (auto l = link(nb_lemmas, q.lemmas, false)) return variant(ev + "; WordNet link: " + *l);
      if (auto d = defines(nb_lemmas, q.form.lower, q.lemmas)) return variant(ev + "; " + *d);
      if (auto d = defines(q.lemmas, f.lower, nb_lemmas)) return variant(ev + "; " + *d);
    }
  }
  // Neighbour synsets, per POS.
  std::vector<SynsetId> nb_syn;
  {
    std::set<SynsetId> seen;
    for (auto& [p, l] : nb_lemmas)
      for (SynsetId s : wn_.synsets(l, p))
        if (seen.insert(s).second) nb_syn.push_back(s);
  }
  // 8. Synonym.
  for (SynsetId s : nb_syn) {
    if (std::find(q.synsets.begin(), q.synsets.end(), s) != q.synsets.end()) {
      Synset syn = wn_.synset(s);
      std::string words;
      for (size_t i = 0; i < syn.words.size() && i < 6; ++i)
        words += (i ? ", " : "") + syn.words[i];
      if (syn.words.size() > 6) words += ", ...";
      r.label = Label::kSynonym;
      r.evidence =
          "share synset " + wn_.synset_name(syn) + " {" + words + "}: " + short_gloss(syn.gloss);
      return r;
    }
  }
  // 9a. Related: a short allowed pointer path from the query's synsets; the neighbour synset
  // with the shortest path (then the first in sense order).
  const SynsetId* closest = nullptr;
  int closest_hops = 1 << 30;
  for (const SynsetId& s : nb_syn) {
    auto it = q.reached.find(s);
    if (it != q.reached.end() && it->second.hops < closest_hops) {
      closest = &s;
      closest_hops = it->second.hops;
    }
  }
  if (closest) {
    SynsetId s = *closest;
    std::vector<std::string> steps;
    SynsetId cur = s;
    for (int guard = 0; guard <= opt_.max_hops; ++guard) {
      auto jt = q.reached.find(cur);
      if (jt == q.reached.end() || jt->second.symbol.empty()) break;
      steps.push_back(" -" + std::string(relation_name(jt->second.symbol)) + "-> " +
                      synset_text(cur));
      cur = jt->second.prev;
    }
    std::string ev = synset_text(cur);
    for (auto i = steps.rbegin(); i != steps.rend(); ++i) ev += *i;
    r.label = Label::kRelated;
    r.evidence = "WordNet path: " + ev;
    return r;
  }
  // 9b. Related: a specific shared hypernym close above both.
  if (!q.ancestors.empty()) {
    std::map<SynsetId, std::pair<int, SynsetId>> nb_anc;  // ancestor -> (levels, from synset)
    std::vector<std::pair<SynsetId, SynsetId>> level;
    for (SynsetId s : nb_syn) level.emplace_back(s, s);
    for (int d = 1; d <= opt_.max_hypernym_depth && !level.empty(); ++d) {
      std::vector<std::pair<SynsetId, SynsetId>> up;
      for (auto& [s, origin] : level)
        for (const auto& p : wn_.synset(s).pointers)
          if (p.symbol == "@" && nb_anc.emplace(p.target, std::make_pair(d, origin)).second)
            up.emplace_back(p.target, origin);
      level = std::move(up);
    }
    // Best shared ancestor: fewest total levels, then smallest id (deterministic).
    std::optional<std::tuple<int, SynsetId, int, int, SynsetId, std::string>> best;
    for (auto& [a, dn] : nb_anc) {
      auto qa = q.ancestors.find(a);
      if (qa == q.ancestors.end()) continue;
      int total = qa->second + dn.first;
      if (best && std::get<0>(*best) <= total) continue;
      std::string why;
      if (!specific(a, &why)) continue;
      best = std::make_tuple(total, a, qa->second, dn.first, dn.second, why);
    }
    if (best) {
      auto [total, a, dq, dnb, origin, why] = *best;
      r.label = Label::kRelated;
      r.evidence = "both are kinds of " + synset_text(a) + " (" + why + "; " + q.form.lower + ": " +
                   std::to_string(dq) + " level" + (dq > 1 ? "s" : "") + " up, " +
                   synset_text(origin) + ": " + std::to_string(dnb) + " level" +
                   (dnb > 1 ? "s" : "") + " up)";
      return r;
    }
  }
  if (nb.count && *nb.count < opt_.rare_count)
    return noise(NoiseKind::kRare, "rare row: count " + std::to_string(*nb.count) + " < " +
                                       std::to_string(opt_.rare_count));
  if (nb_lemmas.empty() && q.lemmas.empty())
    return noise(NoiseKind::kUnrelated, "no shared form; neither word is in WordNet");
  if (nb_lemmas.empty())
    return noise(NoiseKind::kUnrelated, "no shared form; '" + f.lower + "' is not in WordNet");
  if (q.lemmas.empty())
    return noise(NoiseKind::kUnrelated, "no shared form; the query is not in WordNet");
  return noise(NoiseKind::kUnrelated, "no shared form, synset or WordNet path within " +
                                          std::to_string(opt_.max_hops) + " hops");
}

}  // namespace embedscope
