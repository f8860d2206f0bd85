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
      {"@", "hypernym"},          {"@i", "instance hypernym"}, {"~", "hyponym"},
      {"~i", "instance hyponym"}, {"#m", "member holonym"},    {"#s", "substance holonym"},
      {"#p", "part holonym"},     {"%m", "member meronym"},    {"%s", "substance meronym"},
      {"%p", "part meronym"},     {"&", "similar to"},         {"!", "antonym"},
      {"^", "also see"},          {"=", "attribute"},          {"*", "entailment"},
      {">", "cause"},             {"$", "verb group"},         {"\\", "pertainym"},
      {"<", "participle"},        {";c", "domain topic"},      {"-c", "topic member"},
      {";r", "domain region"},    {"-r", "region member"},     {";u", "domain usage"},
      {"-u", "usage member"}};
  for (auto& [s, n] : kNames)
    if (s == sym) return n;
  return {};
}

bool is_hypernym(std::string_view sym) { return sym == "@" || sym == "@i"; }

std::string short_gloss(const std::string& g) {
  std::string s = g.substr(0, g.find(';'));
  if (s.size() > 70) s = s.substr(0, 67) + "...";
  return s;
}

}  // namespace

std::string_view label_name(Label l) {
  switch (l) {
    case Label::kVariant: return "variant";
    case Label::kSynonym: return "synonym";
    case Label::kRelated: return "related";
    case Label::kNoise: return "noise";
  }
  return "noise";
}

std::string_view noise_kind_name(NoiseKind k) {
  switch (k) {
    case NoiseKind::kNone: return "";
    case NoiseKind::kSpecial: return "special";
    case NoiseKind::kNumberOrPunct: return "number_or_punct";
    case NoiseKind::kSubword: return "subword";
    case NoiseKind::kRare: return "rare";
    case NoiseKind::kUnrelated: return "unrelated";
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
    if (s.starts_with(" ")) s.remove_prefix(1);
    else if (s.starts_with("\xC4\xA0")) s.remove_prefix(2);
    else if (s.starts_with("\xE2\x96\x81")) s.remove_prefix(3);
    else break;
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
  if (s.size() >= 3 && ((s.front() == '<' && s.back() == '>') || (s.front() == '[' && s.back() == ']')))
    f.special = true;
  if (raw.empty()) f.special = true;
  return f;
}

Labeller::Labeller(const WordNet& wn, LabelOptions options) : wn_(wn), opt_(options) {}

std::string Labeller::synset_text(SynsetId id) const {
  Synset s = wn_.synset(id);
  return wn_.synset_name(s);
}

PreparedQuery Labeller::prepare(std::string_view query) const {
  PreparedQuery q;
  q.word = std::string(query);
  q.form = normalize_token(query);
  if (q.form.special || !q.form.has_letter) return q;
  q.lemmas = wn_.lemmas(q.form.lower);
  q.stem = stemmer_.stem(q.form.lower);
  std::set<SynsetId> seen;
  for (WnPos p : kAllWnPos)
    for (const auto& l : wn_.morphy(q.form.lower, p))
      for (SynsetId s : wn_.synsets(l, p))
        if (seen.insert(s).second) q.synsets.push_back(s);
  // Breadth-first over semantic pointers; nodes at the last hop are recorded, not parsed.
  std::vector<SynsetId> frontier = q.synsets;
  for (SynsetId s : q.synsets) q.reached[s] = {s, "", 0};
  for (int hop = 0; hop < opt_.max_hops && !frontier.empty(); ++hop) {
    std::vector<SynsetId> next;
    for (SynsetId s : frontier) {
      Synset syn = wn_.synset(s);
      for (const auto& p : syn.pointers) {
        if (relation_name(p.symbol).empty()) continue;
        if (q.reached.emplace(p.target, PreparedQuery::Reach{s, p.symbol, hop + 1}).second)
          next.push_back(p.target);
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
        if (is_hypernym(p.symbol) && q.ancestors.emplace(p.target, d).second) up.push_back(p.target);
    level = std::move(up);
  }
  return q;
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
    return variant("same word up to case, leading space or tokenizer marker ('" + f.word +
                   "' ~ '" + q.form.word + "')");
  if (!f.has_letter) return noise(NoiseKind::kNumberOrPunct, "number or punctuation");
  std::vector<std::string> nb_lemmas = wn_.lemmas(f.lower);
  bool fragment = f.continuation || !f.is_wordlike ||
                  (nb.vocab_marks_word_starts && !f.word_start && nb_lemmas.empty());
  if (fragment)
    return noise(NoiseKind::kSubword, f.continuation ? "word-piece continuation '##" + f.word + "'"
                                                     : "subword fragment '" + f.word +
                                                           "' (not a whole word)");
  for (const auto& l : nb_lemmas)
    if (std::find(q.lemmas.begin(), q.lemmas.end(), l) != q.lemmas.end())
      return variant("same lemma '" + l + "' (WordNet morphy: " + f.lower + " -> " + l + ", " +
                     q.form.lower + " -> " + l + ")");
  if (!q.stem.empty()) {
    std::string st = stemmer_.stem(f.lower);
    if (st == q.stem && st.size() >= 3) return variant("same Snowball stem '" + st + "'");
  }
  // Neighbour synsets, per POS, and the lemma each came from.
  std::vector<std::pair<SynsetId, std::string>> nb_syn;
  {
    std::set<SynsetId> seen;
    for (WnPos p : kAllWnPos)
      for (const auto& l : wn_.morphy(f.lower, p))
        for (SynsetId s : wn_.synsets(l, p))
          if (seen.insert(s).second) nb_syn.emplace_back(s, l);
  }
  // Derivational links ("+" is lexical: word numbers name the exact words linked).
  auto derivation = [&](const std::vector<SynsetId>& from, const std::vector<std::string>& from_lemmas,
                        const std::vector<std::string>& to_lemmas) -> std::optional<std::string> {
    for (SynsetId s : from) {
      Synset syn = wn_.synset(s);
      for (const auto& p : syn.pointers) {
        if (p.symbol != "+") continue;
        if (p.source_word == 0 || p.source_word > syn.words.size()) continue;
        std::string src = syn.words[p.source_word - 1];
        for (char& c : src) c = char(std::tolower(static_cast<unsigned char>(c)));
        if (std::find(from_lemmas.begin(), from_lemmas.end(), src) == from_lemmas.end()) continue;
        Synset t = wn_.synset(p.target);
        if (p.target_word == 0 || p.target_word > t.words.size()) continue;
        std::string dst = t.words[p.target_word - 1];
        for (char& c : dst) c = char(std::tolower(static_cast<unsigned char>(c)));
        if (std::find(to_lemmas.begin(), to_lemmas.end(), dst) != to_lemmas.end())
          return "WordNet derivation: " + src + " (" + wn_.synset_name(syn) + ") -> " + dst +
                 " (" + wn_.synset_name(t) + ")";
      }
    }
    return std::nullopt;
  };
  {
    std::vector<SynsetId> nb_ids;
    for (auto& [s, l] : nb_syn) nb_ids.push_back(s);
    if (auto ev = derivation(q.synsets, q.lemmas, nb_lemmas)) return variant(*ev);
    if (auto ev = derivation(nb_ids, nb_lemmas, q.lemmas)) return variant(*ev);
  }
  for (auto& [s, l] : nb_syn) {
    if (std::find(q.synsets.begin(), q.synsets.end(), s) != q.synsets.end()) {
      Synset syn = wn_.synset(s);
      std::string words;
      for (size_t i = 0; i < syn.words.size() && i < 6; ++i)
        words += (i ? ", " : "") + syn.words[i];
      if (syn.words.size() > 6) words += ", ...";
      r.label = Label::kSynonym;
      r.evidence = "share synset " + wn_.synset_name(syn) + " {" + words + "}: " + short_gloss(syn.gloss);
      return r;
    }
  }
  // Related: a short pointer path from the query's synsets.
  // The neighbour synset with the shortest path (then the first in sense order).
  const SynsetId* closest = nullptr;
  int closest_hops = 1 << 30;
  for (auto& [s, l] : nb_syn) {
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
      steps.push_back(" -" + std::string(relation_name(jt->second.symbol)) + "-> " + synset_text(cur));
      cur = jt->second.prev;
    }
    std::string ev = synset_text(cur);
    for (auto i = steps.rbegin(); i != steps.rend(); ++i) ev += *i;
    r.label = Label::kRelated;
    r.evidence = "WordNet path: " + ev;
    return r;
  }
  // Related: a shared hypernym close above both, below WordNet's top levels.
  if (!q.ancestors.empty()) {
    std::map<SynsetId, std::pair<int, SynsetId>> nb_anc;  // ancestor -> (levels, from synset)
    std::vector<std::pair<SynsetId, SynsetId>> level;
    for (auto& [s, l] : nb_syn) level.emplace_back(s, s);
    for (int d = 1; d <= opt_.max_hypernym_depth && !level.empty(); ++d) {
      std::vector<std::pair<SynsetId, SynsetId>> up;
      for (auto& [s, origin] : level)
        for (const auto& p : wn_.synset(s).pointers)
          if (is_hypernym(p.symbol) && nb_anc.emplace(p.target, std::make_pair(d, origin)).second)
            up.emplace_back(p.target, origin);
      level = std::move(up);
    }
    // Best shared ancestor: fewest total levels, then smallest id (deterministic).
    std::optional<std::tuple<int, SynsetId, int, int, SynsetId>> best;
    for (auto& [a, dn] : nb_anc) {
      auto qa = q.ancestors.find(a);
      if (qa == q.ancestors.end()) continue;
      int total = qa->second + dn.first;
      if (best && std::get<0>(*best) <= total) continue;
      // Depth of `a` below entity.n.01: shortest hypernym chain, capped at 4 (all we need).
      int depth = 0;
      std::vector<SynsetId> lv = {a};
      while (depth < 4 && !lv.empty()) {
        std::vector<SynsetId> up;
        for (SynsetId s : lv)
          for (const auto& p : wn_.synset(s).pointers)
            if (is_hypernym(p.symbol)) up.push_back(p.target);
        if (up.empty()) break;
        lv = std::move(up);
        ++depth;
      }
      if (depth < 4) continue;
      best = std::make_tuple(total, a, qa->second, dn.first, dn.second);
    }
    if (best) {
      auto [total, a, dq, dnb, origin] = *best;
      r.label = Label::kRelated;
      r.evidence = "both are kinds of " + synset_text(a) + " (" + q.form.lower + ": " +
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
  if (nb_lemmas.empty()) return noise(NoiseKind::kUnrelated, "no shared form; '" + f.lower + "' is not in WordNet");
  if (q.lemmas.empty()) return noise(NoiseKind::kUnrelated, "no shared form; the query is not in WordNet");
  return noise(NoiseKind::kUnrelated,
               "no shared form, synset or WordNet path within " + std::to_string(opt_.max_hops) + " hops");
}

}  // namespace embedscope
