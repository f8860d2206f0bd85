// The labeller, rule by rule, on the real WordNet 3.0 files (setup installs wordnet-base).
#include "embedscope/analysis/labeller.h"

#include <gtest/gtest.h>

namespace embedscope {
namespace {

const Labeller& lab() {
  static WordNet wn = WordNet::open();
  static Labeller l(wn);
  return l;
}

LabelResult L(std::string_view q, std::string_view n, bool marks = false) {
  return lab().label(q, TokenInfo{.text = n, .vocab_marks_word_starts = marks});
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(Labeller, PluralIsVariantBySharedLemma) {
  auto r = L("computer", "computers");
  EXPECT_EQ(r.label, Label::kVariant);
  EXPECT_TRUE(contains(r.evidence, "same lemma 'computer'")) << r.evidence;
}

TEST(Labeller, CaseAndLeadingSpaceIsVariant) {
  auto r = L("computer", " Computer");
  EXPECT_EQ(r.label, Label::kVariant);
  EXPECT_TRUE(contains(r.evidence, "up to case")) << r.evidence;
  EXPECT_EQ(L(" Computer", "computer").label, Label::kVariant);
}

TEST(Labeller, TokenizerMarkersAreIgnored) {
  EXPECT_EQ(L("computer",
              "\xC4\xA0"
              "computer")
                .label,
            Label::kVariant);  // GPT-2 "Ġ"
  EXPECT_EQ(L("computer",
              "\xE2\x96\x81"
              "Computer")
                .label,
            Label::kVariant);                                       // SentencePiece
  EXPECT_EQ(L("computer", "computer</w>").label, Label::kVariant);  // CLIP
}

TEST(Labeller, IrregularFormIsVariantViaExceptionList) {
  auto r = L("good", "better");
  EXPECT_EQ(r.label, Label::kVariant);
  EXPECT_TRUE(contains(r.evidence, "same lemma 'good'")) << r.evidence;
  EXPECT_EQ(L("goose", " geese").label, Label::kVariant);
}

TEST(Labeller, SharedStemIsVariantWhenWordNetLinksTheWords) {
  auto r = L("computer", "computational");
  EXPECT_EQ(r.label, Label::kVariant);
  EXPECT_TRUE(contains(r.evidence, "Snowball stem 'comput'")) << r.evidence;
  EXPECT_TRUE(contains(r.evidence, "pertainym")) << r.evidence;
}

TEST(Labeller, SharedStemIsNotEnoughForDifferentLemmas) {
  // Snowball joins them; WordNet knows both, with no link and no definition of one by the other.
  for (auto [a, b] : {std::pair{"physics", "physically"},
                      {"emergency", "emergence"},
                      {"unit", "unite"},
                      {"considerable", "considerate"},
                      {"expedition", "expedite"},
                      {"university", "universe"}}) {
    auto r = L(a, b);
    EXPECT_NE(r.label, Label::kVariant) << a << " ~ " << b << ": " << r.evidence;
  }
}

TEST(Labeller, DerivationalLinkIsVariant) {
  // decide/decision stem differently (decid, decis); WordNet links them with "+".
  auto r = L("decide", "decision");
  EXPECT_EQ(r.label, Label::kVariant);
  EXPECT_TRUE(contains(r.evidence, "WordNet derivation")) << r.evidence;
}

TEST(Labeller, AffixDerivationConfirmedByWordNetIsVariant) {
  auto r = L("effort", "effortless");  // defined by the base: "requiring ... no effort"
  EXPECT_EQ(r.label, Label::kVariant);
  EXPECT_TRUE(contains(r.evidence, "effort + '-less' = effortless")) << r.evidence;
  EXPECT_TRUE(contains(r.evidence, "WordNet defines effortless.a.01")) << r.evidence;
  r = L("control", "uncontrolled");  // "not being under control"
  EXPECT_EQ(r.label, Label::kVariant);
  EXPECT_TRUE(contains(r.evidence, "'un-' + controlled (control)")) << r.evidence;
  r = L("reread", "read");  // linked: reread.v.01 -hypernym-> read.v.01
  EXPECT_EQ(r.label, Label::kVariant);
  EXPECT_TRUE(contains(r.evidence, "WordNet link: reread.v.01 -hypernym-> read.v.01"))
      << r.evidence;
  EXPECT_EQ(L("happy", "unhappy").label, Label::kVariant);
  EXPECT_EQ(L("quick", "quickly").label, Label::kVariant);
  EXPECT_EQ(L("load", "overload").label, Label::kVariant);
}

TEST(Labeller, AffixAloneIsNotAVariant) {
  // WordNet knows the longer word, does not link the two and does not define one by the other.
  EXPECT_NE(L("stand", "understand").label, Label::kVariant);
  EXPECT_NE(L("ease", "disease").label, Label::kVariant);
  EXPECT_NE(L("corn", "corner").label, Label::kVariant);
}

TEST(Labeller, MorphyIsAppliedOncePerPartOfSpeech) {
  // "murderess" is no verb form of "murder" (s, then es, would be two detachments).
  auto r = L("murderer", "murderess");
  EXPECT_EQ(r.label, Label::kRelated);
  EXPECT_FALSE(contains(r.evidence, "murder (")) << r.evidence;
  EXPECT_TRUE(contains(r.evidence, "murderess.n.01")) << r.evidence;
}

TEST(Labeller, SharedSynsetIsSynonym) {
  auto r = L("car", "automobile");
  EXPECT_EQ(r.label, Label::kSynonym);
  EXPECT_TRUE(contains(r.evidence, "car.n.01")) << r.evidence;
  EXPECT_EQ(L("big", " large").label, Label::kSynonym);
}

TEST(Labeller, CoordinateTermsAreRelated) {
  auto r = L("lion", "tiger");
  EXPECT_EQ(r.label, Label::kRelated);
  EXPECT_TRUE(contains(r.evidence, "big_cat.n.01")) << r.evidence;
}

TEST(Labeller, GenericHypernymsRelateNothing) {
  // Shared hypernym person.n.01 (covers 10,297 synsets) for champion and tool (creature.n.03).
  EXPECT_EQ(L("champion", "tool").label, Label::kNoise);
  // Two hops through be.v.01.
  EXPECT_EQ(L("going", "hang").label, Label::kNoise);
  // Two hops through a usage hub (colloquialism.n.01) or a region (united_kingdom.n.01).
  EXPECT_EQ(L("slap", "bad").label, Label::kNoise);
  EXPECT_EQ(L("bar", "lady").label, Label::kNoise);
  // Milk and White are both rivers: not a relation between the words.
  EXPECT_EQ(L("milk", "white").label, Label::kNoise);
  // The specificity test itself.
  WordNet w = WordNet::open();
  Labeller lab(w);
  std::string why;
  EXPECT_FALSE(lab.specific(w.synsets("person", WnPos::kNoun)[0], &why));
  EXPECT_EQ(why, "covers over 328 synsets");
  EXPECT_TRUE(lab.specific(w.synsets("feline", WnPos::kNoun)[0], &why));
  EXPECT_EQ(why, "covers 60 synsets");
}

TEST(Labeller, HypernymIsRelated) {
  auto r = L("computer", "machine");
  EXPECT_EQ(r.label, Label::kRelated);
  EXPECT_TRUE(contains(r.evidence, "hypernym")) << r.evidence;
}

TEST(Labeller, AntonymIsRelated) {
  auto r = L("hot", "cold");
  EXPECT_EQ(r.label, Label::kRelated);
  EXPECT_TRUE(contains(r.evidence, "antonym")) << r.evidence;
}

TEST(Labeller, MeronymIsRelated) {
  auto r = L("finger", "hand");
  EXPECT_EQ(r.label, Label::kRelated);
  EXPECT_TRUE(contains(r.evidence, "holonym")) << r.evidence;
}

TEST(Labeller, UnrelatedWordIsNoise) {
  auto r = L("computer", "banana");
  EXPECT_EQ(r.label, Label::kNoise);
  EXPECT_EQ(r.noise, NoiseKind::kUnrelated);
}

TEST(Labeller, NumberAndPunctuationAreNoise) {
  EXPECT_EQ(L("computer", " 1990").noise, NoiseKind::kNumberOrPunct);
  EXPECT_EQ(L("computer", "...").noise, NoiseKind::kNumberOrPunct);
}

TEST(Labeller, SpecialAndByteTokensAreNoise) {
  EXPECT_EQ(L("computer", "<|endoftext|>").noise, NoiseKind::kSpecial);
  EXPECT_EQ(L("computer", "[CLS]").noise, NoiseKind::kSpecial);
  EXPECT_EQ(L("computer", "\xE2\x80").noise, NoiseKind::kSpecial);  // partial UTF-8
  EXPECT_EQ(L("computer", "\n").noise, NoiseKind::kSpecial);
  auto r = lab().label("computer", TokenInfo{.text = "foo", .special = true});
  EXPECT_EQ(r.noise, NoiseKind::kSpecial);
}

TEST(Labeller, FragmentsAreSubwordNoise) {
  EXPECT_EQ(L("computer", "##ing").noise, NoiseKind::kSubword);
  // In a GPT-2 style vocabulary a piece without the word-start mark that is not a word.
  EXPECT_EQ(L("computer", "omput", true).noise, NoiseKind::kSubword);
  // ...but the same-word piece is still a variant, and a real word without the mark is a word.
  EXPECT_EQ(L("computer", "computer", true).label, Label::kVariant);
  EXPECT_EQ(L("car", "automobile", true).label, Label::kSynonym);
  // Without word-start marks (word2vec) an unknown word is an unrelated word, not a fragment.
  EXPECT_EQ(L("computer", "omput", false).noise, NoiseKind::kUnrelated);
}

TEST(Labeller, RareRowIsNoiseWhenCountsAreKnown) {
  auto r = lab().label("computer", TokenInfo{.text = "banana", .count = 2});
  EXPECT_EQ(r.noise, NoiseKind::kRare);
  EXPECT_TRUE(contains(r.evidence, "count 2 < 5")) << r.evidence;
  // A related rare word stays related: the label describes the relation.
  EXPECT_EQ(lab().label("lion", TokenInfo{.text = "tiger", .count = 1}).label, Label::kRelated);
}

TEST(Labeller, QueryOutsideWordNetOnlyGetsSurfaceVariants) {
  EXPECT_EQ(L("qwzxv", "Qwzxv").label, Label::kVariant);
  EXPECT_EQ(L("qwzxv", "car").noise, NoiseKind::kUnrelated);
}

TEST(Labeller, PreparedQueryGivesSameResults) {
  PreparedQuery q = lab().prepare("cat");
  for (const char* n : {"dog", "cats", "banana", "feline", " 7"}) {
    auto a = lab().label(q, TokenInfo{.text = n});
    auto b = L("cat", n);
    EXPECT_EQ(a.label, b.label) << n;
    EXPECT_EQ(a.evidence, b.evidence) << n;
  }
}

TEST(Labeller, NamesAreStable) {
  EXPECT_EQ(label_name(Label::kVariant), "variant");
  EXPECT_EQ(label_name(Label::kSynonym), "synonym");
  EXPECT_EQ(label_name(Label::kRelated), "related");
  EXPECT_EQ(label_name(Label::kNoise), "noise");
  EXPECT_EQ(noise_kind_name(NoiseKind::kSubword), "subword");
}

}  // namespace
}  // namespace embedscope
