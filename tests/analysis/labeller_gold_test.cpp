// The labeller measured on a gold set (issue 26): precision and recall per label, and how often
// random pairs of common words come out as anything but noise. The figures in docs/explore.md
// come from this file:
//
//   build/bin/analysis_test --gtest_filter='LabellerGold.*'
//
// prints the tables (stdout) and asserts the targets. The gold set:
//   random      2,000 pairs of the 3,000 most frequent single-word WordNet lemmas (frequency:
//               summed sense tag counts of cntlist.rev), drawn with a fixed seed; gold: noise
//   inflection  hand-written (run/running, child/children, good/better, ...); gold: variant
//   derivation  hand-written, common affixes (effort/effortless, control/uncontrolled, ...);
//               gold: variant
//   control     hand-written pairs that share letters, not a word (stand/understand,
//               ease/disease, physics/physically, ...); gold: anything but variant
//   wn-related  one direct semantic link (hypernym, hyponym, antonym, part/member
//               meronym/holonym, similar-to) from the first sense of every 10th frequent
//               lemma, to a single-word lemma of the target synset, when the two words share
//               no synset (obtain/get do: receive.v.02); gold: related
//   wn-synonym  two single-word lemmas of the first synset of every 10th frequent lemma;
//               gold: synonym
//   human       hand-written pairs a reader calls related (cat/dog, doctor/nurse, ...);
//               gold: related or synonym (king/queen share king.n.02)
// Nothing here is an output of our own code: the lists are written by hand or read from
// WordNet's own files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "embedscope/analysis/labeller.h"

namespace embedscope {
namespace {

const WordNet& wn() {
  static WordNet w = WordNet::open();
  return w;
}

struct Pair {
  std::string a, b;
};

// (base, inflected form)
const Pair kInflections[] = {
    {"run", "running"},
    {"run", "ran"},
    {"run", "runs"},
    {"child", "children"},
    {"go", "went"},
    {"go", "gone"},
    {"go", "going"},
    {"mouse", "mice"},
    {"man", "men"},
    {"woman", "women"},
    {"foot", "feet"},
    {"tooth", "teeth"},
    {"goose", "geese"},
    {"be", "was"},
    {"have", "had"},
    {"have", "has"},
    {"do", "did"},
    {"do", "done"},
    {"see", "saw"},
    {"see", "seen"},
    {"take", "took"},
    {"take", "taken"},
    {"eat", "ate"},
    {"eat", "eaten"},
    {"write", "wrote"},
    {"write", "written"},
    {"give", "gave"},
    {"give", "given"},
    {"make", "made"},
    {"buy", "bought"},
    {"think", "thought"},
    {"bring", "brought"},
    {"teach", "taught"},
    {"catch", "caught"},
    {"sing", "sang"},
    {"sing", "sung"},
    {"swim", "swam"},
    {"begin", "began"},
    {"drink", "drank"},
    {"drive", "drove"},
    {"fly", "flew"},
    {"fly", "flies"},
    {"know", "knew"},
    {"grow", "grew"},
    {"speak", "spoke"},
    {"break", "broke"},
    {"choose", "chose"},
    {"fall", "fell"},
    {"feel", "felt"},
    {"keep", "kept"},
    {"leave", "left"},
    {"lose", "lost"},
    {"meet", "met"},
    {"pay", "paid"},
    {"say", "said"},
    {"sell", "sold"},
    {"send", "sent"},
    {"sit", "sat"},
    {"sleep", "slept"},
    {"stand", "stood"},
    {"tell", "told"},
    {"win", "won"},
    {"understand", "understood"},
    {"wear", "wore"},
    {"hide", "hid"},
    {"ride", "rode"},
    {"rise", "rose"},
    {"shake", "shook"},
    {"steal", "stole"},
    {"throw", "threw"},
    {"hold", "held"},
    {"lead", "led"},
    {"mean", "meant"},
    {"box", "boxes"},
    {"church", "churches"},
    {"dish", "dishes"},
    {"city", "cities"},
    {"baby", "babies"},
    {"leaf", "leaves"},
    {"knife", "knives"},
    {"wife", "wives"},
    {"wolf", "wolves"},
    {"half", "halves"},
    {"datum", "data"},
    {"analysis", "analyses"},
    {"crisis", "crises"},
    {"criterion", "criteria"},
    {"phenomenon", "phenomena"},
    {"cactus", "cacti"},
    {"ox", "oxen"},
    {"big", "bigger"},
    {"big", "biggest"},
    {"good", "better"},
    {"good", "best"},
    {"bad", "worse"},
    {"bad", "worst"},
    {"happy", "happier"},
    {"happy", "happiest"},
    {"large", "larger"},
    {"fast", "faster"},
    {"early", "earlier"},
    {"hot", "hotter"},
    {"nice", "nicer"},
    {"walk", "walked"},
    {"walk", "walking"},
    {"stop", "stopped"},
    {"stop", "stopping"},
    {"try", "tried"},
    {"try", "tries"},
    {"hope", "hoped"},
    {"hope", "hoping"},
    {"plan", "planned"},
    {"cry", "cried"},
    {"study", "studies"},
    {"study", "studied"},
    {"carry", "carried"},
    {"die", "dying"},
    {"lie", "lying"},
    {"tie", "tied"},
    {"play", "played"},
    {"play", "plays"},
    {"watch", "watches"},
    {"fix", "fixes"},
    {"computer", "computers"},
    {"dog", "dogs"},
    {"house", "houses"},
    {"horse", "horses"},
    {"bus", "buses"},
    {"glass", "glasses"},
    {"class", "classes"},
    {"book", "books"},
    {"idea", "ideas"},
    {"country", "countries"},
    {"boy", "boys"},
    {"day", "days"},
    {"key", "keys"},
    {"toy", "toys"},
    {"potato", "potatoes"},
    {"hero", "heroes"},
    {"echo", "echoes"},
    {"wait", "waiting"},
    {"love", "loved"},
    {"make", "making"},
};

// (base, derived form): prefixes and suffixes that do not change the base's meaning much.
const Pair kDerivations[] = {
    // un-
    {"control", "uncontrolled"},
    {"happy", "unhappy"},
    {"able", "unable"},
    {"known", "unknown"},
    {"usual", "unusual"},
    {"certain", "uncertain"},
    {"fair", "unfair"},
    {"kind", "unkind"},
    {"lucky", "unlucky"},
    {"comfortable", "uncomfortable"},
    {"employed", "unemployed"},
    {"necessary", "unnecessary"},
    {"likely", "unlikely"},
    {"fortunate", "unfortunate"},
    // re-
    {"read", "reread"},
    {"build", "rebuild"},
    {"write", "rewrite"},
    {"open", "reopen"},
    {"start", "restart"},
    {"appear", "reappear"},
    {"elect", "reelect"},
    {"organize", "reorganize"},
    {"heat", "reheat"},
    {"fill", "refill"},
    // over-
    {"load", "overload"},
    {"eat", "overeat"},
    {"flow", "overflow"},
    {"work", "overwork"},
    {"estimate", "overestimate"},
    {"weight", "overweight"},
    {"heat", "overheat"},
    {"sleep", "oversleep"},
    {"react", "overreact"},
    {"crowd", "overcrowd"},
    // -less
    {"effort", "effortless"},
    {"care", "careless"},
    {"hope", "hopeless"},
    {"home", "homeless"},
    {"help", "helpless"},
    {"power", "powerless"},
    {"end", "endless"},
    {"use", "useless"},
    {"harm", "harmless"},
    {"fear", "fearless"},
    {"meaning", "meaningless"},
    {"pain", "painless"},
    // -ful
    {"hope", "hopeful"},
    {"care", "careful"},
    {"help", "helpful"},
    {"use", "useful"},
    {"power", "powerful"},
    {"pain", "painful"},
    {"beauty", "beautiful"},
    {"success", "successful"},
    {"thank", "thankful"},
    {"fear", "fearful"},
    // -ness
    {"kind", "kindness"},
    {"dark", "darkness"},
    {"happy", "happiness"},
    {"sad", "sadness"},
    {"weak", "weakness"},
    {"aware", "awareness"},
    {"ill", "illness"},
    {"fit", "fitness"},
    {"empty", "emptiness"},
    {"lonely", "loneliness"},
    // -ly
    {"quick", "quickly"},
    {"slow", "slowly"},
    {"easy", "easily"},
    {"gentle", "gently"},
    {"basic", "basically"},
    {"real", "really"},
    {"sudden", "suddenly"},
    {"careful", "carefully"},
    {"final", "finally"},
    {"quiet", "quietly"},
    {"rapid", "rapidly"},
    {"usual", "usually"},
    // dis- mis-
    {"agree", "disagree"},
    {"like", "dislike"},
    {"honest", "dishonest"},
    {"appear", "disappear"},
    {"connect", "disconnect"},
    {"understand", "misunderstand"},
    {"lead", "mislead"},
    {"spell", "misspell"},
    // -ment -er -able -ion -al -ist -hood -ship
    {"develop", "development"},
    {"govern", "government"},
    {"move", "movement"},
    {"pay", "payment"},
    {"agree", "agreement"},
    {"teach", "teacher"},
    {"play", "player"},
    {"write", "writer"},
    {"drive", "driver"},
    {"read", "readable"},
    {"accept", "acceptable"},
    {"break", "breakable"},
    {"act", "action"},
    {"create", "creation"},
    {"educate", "education"},
    {"nation", "national"},
    {"person", "personal"},
    {"nature", "natural"},
    {"art", "artist"},
    {"piano", "pianist"},
    {"child", "childhood"},
    {"neighbor", "neighborhood"},
    {"friend", "friendship"},
    {"leader", "leadership"},
};

// Pairs that share letters but are different words: never variants.
const Pair kControls[] = {
    {"stand", "understand"},    {"ease", "disease"},
    {"physics", "physically"},  {"emergency", "emergence"},
    {"unit", "unite"},          {"considerable", "considerate"},
    {"expedition", "expedite"}, {"university", "universe"},
    {"corn", "corner"},         {"arm", "army"},
    {"car", "carpet"},          {"sing", "single"},
    {"bus", "business"},        {"cat", "category"},
    {"hum", "human"},           {"murderer", "murderess"},
};

// Pairs a reader calls related (coordinate terms, parts, typical associates).
const Pair kHuman[] = {
    {"cat", "dog"},        {"car", "truck"},       {"apple", "banana"},
    {"doctor", "nurse"},   {"king", "queen"},      {"coffee", "tea"},
    {"piano", "violin"},   {"hammer", "nail"},     {"river", "lake"},
    {"chair", "table"},    {"shirt", "trousers"},  {"bread", "butter"},
    {"train", "bus"},      {"lion", "tiger"},      {"finger", "hand"},
    {"wheel", "car"},      {"teacher", "student"}, {"computer", "keyboard"},
    {"hot", "cold"},       {"day", "night"},       {"father", "mother"},
    {"brother", "sister"}, {"gold", "silver"},     {"rain", "snow"},
    {"knife", "fork"},     {"ship", "boat"},       {"house", "roof"},
    {"tree", "leaf"},      {"eye", "ear"},         {"red", "blue"},
    {"oak", "pine"},       {"wine", "beer"},       {"guitar", "drum"},
    {"city", "town"},      {"soldier", "army"},    {"horse", "donkey"},
    {"milk", "cheese"},    {"sun", "moon"},        {"winter", "summer"},
    {"pencil", "pen"},     {"cup", "mug"},         {"shoe", "boot"},
    {"bee", "wasp"},       {"salt", "pepper"},     {"computer", "calculator"},
    {"song", "music"},     {"bank", "money"},      {"physics", "chemistry"},
    {"war", "battle"},     {"book", "page"},
};

// Frequent single-word WordNet lemmas: cntlist.rev "sense_key sense_number tag_count" summed
// over a lemma's senses; ties broken by the lemma.
const std::vector<std::string>& frequent_lemmas() {
  static const std::vector<std::string> out = [] {
    std::ifstream in(wn().dir() + "/cntlist.rev");
    EXPECT_TRUE(in) << wn().dir() << "/cntlist.rev";
    std::unordered_map<std::string, uint64_t> count;
    std::string key;
    uint64_t sense, n;
    while (in >> key >> sense >> n) {
      std::string lemma = key.substr(0, key.find('%'));
      bool alpha = lemma.size() >= 2 && std::all_of(lemma.begin(), lemma.end(),
                                                    [](char c) { return c >= 'a' && c <= 'z'; });
      if (alpha) count[lemma] += n;
    }
    std::vector<std::pair<uint64_t, std::string>> v;
    for (auto& [l, c] : count) v.emplace_back(c, l);
    std::sort(v.begin(), v.end(), [](auto& x, auto& y) {
      return x.first != y.first ? x.first > y.first : x.second < y.second;
    });
    std::vector<std::string> r;
    for (size_t i = 0; i < v.size() && r.size() < 3000; ++i) r.push_back(v[i].second);
    return r;
  }();
  return out;
}

std::vector<Pair> random_pairs() {
  const auto& lem = frequent_lemmas();
  std::mt19937_64 rng(26);
  std::vector<Pair> out;
  while (out.size() < 2000) {
    size_t i = size_t(rng() % lem.size()), j = size_t(rng() % lem.size());
    if (i != j) out.push_back({lem[i], lem[j]});
  }
  return out;
}

bool single_word(const std::string& w) {
  return w.size() >= 2 &&
         std::all_of(w.begin(), w.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}

// First synset of a lemma, in noun, verb, adjective, adverb order.
std::optional<Synset> first_synset(const std::string& lemma) {
  for (WnPos p : kAllWnPos) {
    auto ids = wn().synsets(lemma, p);
    if (!ids.empty()) return wn().synset(ids[0]);
  }
  return std::nullopt;
}

bool share_synset(const std::string& a, const std::string& b) {
  for (WnPos p : kAllWnPos)
    for (SynsetId x : wn().synsets(a, p))
      for (SynsetId y : wn().synsets(b, p))
        if (x == y) return true;
  return false;
}

std::vector<Pair> wordnet_related() {
  static const std::set<std::string> kLinks = {"@", "~", "!", "%p", "#p", "%m", "#m", "&"};
  std::vector<Pair> out;
  const auto& lem = frequent_lemmas();
  for (size_t i = 5; i < lem.size(); i += 10) {
    auto s = first_synset(lem[i]);
    if (!s) continue;
    bool done = false;
    for (const auto& p : s->pointers) {
      if (done || !kLinks.count(p.symbol)) continue;
      Synset t = wn().synset(p.target);
      for (std::string w : t.words) {
        for (char& c : w) c = char(std::tolower(static_cast<unsigned char>(c)));
        // A different word that is not a form of the query (WordNet itself calls those variants).
        if (!single_word(w) || w == lem[i] || w.substr(0, 4) == lem[i].substr(0, 4) ||
            w.starts_with(lem[i]) || lem[i].starts_with(w) || w.ends_with(lem[i]) ||
            lem[i].ends_with(w) || share_synset(w, lem[i]))
          continue;
        out.push_back({lem[i], w});
        done = true;
        break;
      }
    }
  }
  return out;
}

std::vector<Pair> wordnet_synonyms() {
  std::vector<Pair> out;
  const auto& lem = frequent_lemmas();
  for (size_t i = 0; i < lem.size(); i += 10) {
    auto s = first_synset(lem[i]);
    if (!s) continue;
    for (std::string w : s->words) {
      for (char& c : w) c = char(std::tolower(static_cast<unsigned char>(c)));
      if (single_word(w) && w != lem[i] && w.substr(0, 4) != lem[i].substr(0, 4)) {
        out.push_back({lem[i], w});
        break;
      }
    }
  }
  return out;
}

enum class Gold { kVariant, kSynonym, kRelated, kNoise, kNotVariant, kRelatedOrSynonym };

struct Set {
  std::string name;
  Gold gold;
  std::vector<Pair> pairs;
};

const std::vector<Set>& gold_sets() {
  static const std::vector<Set> sets = [] {
    std::vector<Set> s;
    s.push_back({"random", Gold::kNoise, random_pairs()});
    s.push_back({"inflection", Gold::kVariant, {std::begin(kInflections), std::end(kInflections)}});
    s.push_back({"derivation", Gold::kVariant, {std::begin(kDerivations), std::end(kDerivations)}});
    s.push_back({"control", Gold::kNotVariant, {std::begin(kControls), std::end(kControls)}});
    s.push_back({"wn-related", Gold::kRelated, wordnet_related()});
    s.push_back({"wn-synonym", Gold::kSynonym, wordnet_synonyms()});
    s.push_back({"human", Gold::kRelatedOrSynonym, {std::begin(kHuman), std::end(kHuman)}});
    return s;
  }();
  return sets;
}

struct SetResult {
  size_t n = 0;
  size_t by_label[4] = {0, 0, 0, 0};  // Label order: variant synonym related noise
  std::vector<std::string> misses;    // "a ~ b: label: evidence"
};

struct Eval {
  std::map<std::string, SetResult> sets;
  // Precision per label over the whole gold set (controls count against "variant" only).
  double precision[4] = {0, 0, 0, 0};
  size_t labelled[4] = {0, 0, 0, 0};
  double rate(const std::string& set, Label l) const {
    const auto& r = sets.at(set);
    return r.n ? double(r.by_label[int(l)]) / double(r.n) : 0.0;
  }
  double non_noise(const std::string& set) const { return 1.0 - rate(set, Label::kNoise); }
};

bool hit(Gold g, Label l) {
  switch (g) {
    case Gold::kVariant:
      return l == Label::kVariant;
    case Gold::kSynonym:
      return l == Label::kSynonym;
    case Gold::kRelated:
      return l == Label::kRelated;
    case Gold::kNoise:
      return l == Label::kNoise;
    case Gold::kNotVariant:
      return l != Label::kVariant;
    case Gold::kRelatedOrSynonym:
      return l == Label::kRelated || l == Label::kSynonym;
  }
  return false;
}

Eval evaluate(const Labeller& lab) {
  Eval e;
  size_t correct[4] = {0, 0, 0, 0}, total[4] = {0, 0, 0, 0};
  for (const Set& s : gold_sets()) {
    SetResult& r = e.sets[s.name];
    for (const Pair& p : s.pairs) {
      LabelResult res = lab.label(p.a, TokenInfo{.text = p.b});
      ++r.n;
      ++r.by_label[int(res.label)];
      if (!hit(s.gold, res.label))
        r.misses.push_back(p.a + " ~ " + p.b + ": " + std::string(label_name(res.label)) + ": " +
                           res.evidence);
      int l = int(res.label);
      if (s.gold == Gold::kNotVariant) {
        if (res.label == Label::kVariant) ++total[l];
        continue;
      }
      ++total[l];
      if (hit(s.gold, res.label)) ++correct[l];
    }
  }
  for (int l = 0; l < 4; ++l) {
    e.labelled[l] = total[l];
    e.precision[l] = total[l] ? double(correct[l]) / double(total[l]) : 0.0;
  }
  return e;
}

std::string pct(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", 100.0 * x);
  return b;
}

std::string table(const Eval& e) {
  std::ostringstream o;
  o << "| set | pairs | gold | variant | synonym | related | noise | recall |\n"
       "|---|---:|---|---:|---:|---:|---:|---:|\n";
  for (const Set& s : gold_sets()) {
    const SetResult& r = e.sets.at(s.name);
    static const char* kGold[] = {"variant", "synonym",     "related",
                                  "noise",   "not variant", "related or synonym"};
    size_t hits = 0;
    for (int l = 0; l < 4; ++l)
      if (hit(s.gold, Label(l))) hits += r.by_label[l];
    o << "| " << s.name << " | " << r.n << " | " << kGold[int(s.gold)];
    for (int l = 0; l < 4; ++l) o << " | " << r.by_label[l];
    o << " | " << pct(r.n ? double(hits) / double(r.n) : 0) << " |\n";
  }
  o << "\n| label | labelled | precision |\n|---|---:|---:|\n";
  for (int l = 0; l < 4; ++l)
    o << "| " << label_name(Label(l)) << " | " << e.labelled[l] << " | " << pct(e.precision[l])
      << " |\n";
  o << "\nrandom pairs labelled non-noise: " << pct(e.non_noise("random")) << " (variant "
    << e.sets.at("random").by_label[0] << ", synonym " << e.sets.at("random").by_label[1]
    << ", related " << e.sets.at("random").by_label[2] << ")\n";
  return o.str();
}

void print_misses(const Eval& e, const std::string& set, size_t max) {
  const auto& m = e.sets.at(set).misses;
  std::printf("%s misses (%zu):\n", set.c_str(), m.size());
  for (size_t i = 0; i < m.size() && i < max; ++i) std::printf("  %s\n", m[i].c_str());
}

TEST(LabellerGold, GoldSetIsBuiltFromWordNet) {
  ASSERT_EQ(frequent_lemmas().size(), 3000u);
  // cntlist's most frequent lemmas are the everyday verbs.
  const auto& f = frequent_lemmas();
  EXPECT_TRUE(std::find(f.begin(), f.begin() + 20, "be") != f.begin() + 20);
  EXPECT_TRUE(std::find(f.begin(), f.begin() + 20, "have") != f.begin() + 20);
  EXPECT_EQ(random_pairs().size(), 2000u);
  EXPECT_GE(std::size(kDerivations), 50u);
  EXPECT_GE(wordnet_related().size(), 200u);
  EXPECT_GE(wordnet_synonyms().size(), 100u);
}

TEST(LabellerGold, MeetsTheTargetsOfIssue26) {
  WordNet w = WordNet::open();
  Labeller lab(w);
  Eval e = evaluate(lab);
  std::printf("%s\n", table(e).c_str());
  print_misses(e, "random", 200);
  print_misses(e, "inflection", 50);
  print_misses(e, "derivation", 50);
  print_misses(e, "control", 50);
  print_misses(e, "human", 50);
  print_misses(e, "wn-related", 40);
  // Random pairs of common words: at most 2% anything but noise, and no variants among them
  // that are not derivations.
  EXPECT_LE(e.non_noise("random"), 0.02);
  EXPECT_GE(e.rate("derivation", Label::kVariant), 0.90);
  EXPECT_GE(e.rate("inflection", Label::kVariant), 0.99);
  EXPECT_EQ(e.sets.at("control").by_label[int(Label::kVariant)], 0u)
      << "a control pair came out as a variant";
}

// Which specificity test separates random pairs (noise) from related ones (human, wn-related)
// better: the figures behind LabelOptions' defaults (docs/explore.md).
TEST(LabellerGold, SpecificityTestsCompared) {
  WordNet w = WordNet::open();
  std::printf(
      "| test | random non-noise | random related | human related/synonym | related precision |\n"
      "|---|---:|---:|---:|---:|\n");
  auto row = [&](const std::string& name, LabelOptions o) {
    Labeller lab(w, o);
    Eval e = evaluate(lab);
    std::printf("| %s | %s | %s | %s | %s |\n", name.c_str(), pct(e.non_noise("random")).c_str(),
                pct(e.rate("random", Label::kRelated)).c_str(),
                pct(e.rate("human", Label::kRelated) + e.rate("human", Label::kSynonym)).c_str(),
                pct(e.precision[int(Label::kRelated)]).c_str());
    return e;
  };
  for (double c : {0.0005, 0.001, 0.0025, 0.004, 0.0045, 0.005, 0.01, 0.02}) {
    char name[64];
    std::snprintf(name, sizeof name, "coverage <= %.2f%% (%d nouns, %d verbs)", 100 * c,
                  int(c * 82115), int(c * 13767));
    row(name, {.specificity = Specificity::kCoverage, .max_coverage_share = c});
  }
  for (int d : {2, 3, 4, 5, 6, 7})
    row("depth >= " + std::to_string(d), {.specificity = Specificity::kDepth, .min_depth = d});
}

}  // namespace
}  // namespace embedscope
