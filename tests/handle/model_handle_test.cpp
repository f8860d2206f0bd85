// ModelHandle: the one tokenizer policy (including the tokenizer a model's metadata names) and
// its thread-safety (shared resources built once, lookups from many threads).
#include "embedscope/handle/model_handle.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "embedscope/core/error.h"
#include "embedscope/formats/embeddings_file.h"
#include "test_util.h"

using namespace embedscope;
using namespace embedscope::test;

namespace {

// A (rows x 2) table with the GPT-2 vocabulary's first `rows` tokens and optional metadata.
std::string write_table(const TempDir& d, const std::string& name, size_t rows,
                        std::map<std::string, std::string> metadata, bool with_vocab = true) {
  std::vector<float> data(rows * 2);
  for (size_t i = 0; i < data.size(); ++i) data[i] = float(i % 7) - 3.0f;
  EmbeddingTable t = EmbeddingTable::from_f32(rows, 2, std::move(data));
  BpeTokenizer gpt2 = BpeTokenizer::gpt2_default();
  std::vector<std::string> words;
  for (size_t i = 0; i < rows; ++i)
    words.push_back(i < gpt2.vocab_size() ? gpt2.token_bytes(TokenId(i))
                                          : "extra" + std::to_string(i));
  Vocabulary v;
  for (auto& w : words) v.add(std::move(w));
  SaveOptions so;
  so.format = FileFormat::kSafetensors;
  so.metadata = std::move(metadata);
  std::string path = d.file(name);
  save_embeddings(path, t, with_vocab ? &v : nullptr, so);
  return path;
}

}  // namespace

TEST(ModelHandle, UsesTheTokenizerTheModelsMetadataNames) {
  TempDir d;
  // 50300 rows: not GPT-2-shaped by count alone would still match 50257..50304, so use a size
  // outside it to show the metadata, not the shape, chose GPT-2.
  std::string path = write_table(d, "m.safetensors", 50400, {{"embedscope.tokenizer", "gpt2"}});
  auto h = ModelHandle::open(path);
  EXPECT_EQ(h->tokenizer_source(), "metadata");
  ASSERT_NE(h->tokenizer(), nullptr);
  auto r = h->words().resolve("computer");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->ids, std::vector<TokenId>{3644});
  EXPECT_EQ(r->how, "token");
  // "unbelievability" is several GPT-2 tokens: resolved as pieces through the tokenizer.
  auto p = h->words().resolve("unbelievability");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->how, "pieces");
  EXPECT_GT(p->ids.size(), 1u);
}

TEST(ModelHandle, WithoutMetadataOrFilesOnlyTheVocabularyIsUsed) {
  TempDir d;
  std::string path = write_table(d, "m.safetensors", 50400, {});
  auto h = ModelHandle::open(path);
  EXPECT_EQ(h->tokenizer_source(), "none");
  EXPECT_EQ(h->tokenizer(), nullptr);
  auto r = h->words().resolve("computer");  // the bare vocabulary entry, as typed
  ASSERT_TRUE(r);
  EXPECT_EQ(r->ids, std::vector<TokenId>{33215});
  EXPECT_EQ(r->how, "word");
  EXPECT_FALSE(h->words().resolve("unbelievability"));
}

TEST(ModelHandle, ExplicitTokenizerChoicesAndTheirErrors) {
  TempDir d;
  std::string path = write_table(d, "m.safetensors", 50400, {{"embedscope.tokenizer", "gpt2"}});
  HandleOptions none;
  none.tokenizer = "none";
  EXPECT_EQ(ModelHandle::open(path, none)->tokenizer_source(), "none");
  HandleOptions gpt2;
  gpt2.tokenizer = "gpt2";
  EXPECT_EQ(ModelHandle::open(path, gpt2)->tokenizer_source(), "flag");
  HandleOptions bad;
  bad.tokenizer = d.file("no-such-tokenizer.json");
  try {
    ModelHandle::open(path, bad);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("no-such-tokenizer.json"), std::string::npos) << e.what();
  }
}

TEST(ModelHandle, SharedResourcesAreBuiltOnceUnderConcurrentUse) {
  TempDir d;
  std::string path = write_table(d, "m.safetensors", 50400, {{"embedscope.tokenizer", "gpt2"}});
  auto h = ModelHandle::open(path);
  std::atomic<int> builds{0};
  std::vector<std::shared_ptr<int>> got(8);
  std::vector<std::vector<TokenId>> ids(8);
  std::vector<std::thread> ts;
  for (size_t t = 0; t < 8; ++t)
    ts.emplace_back([&, t] {
      got[t] = h->resource<int>("answer", [&] {
        ++builds;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        return std::make_shared<int>(42);
      });
      ids[t] = h->words().resolve("embedding")->ids;
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(builds.load(), 1);
  for (size_t t = 0; t < 8; ++t) {
    ASSERT_TRUE(got[t]);
    EXPECT_EQ(got[t].get(), got[0].get());
    EXPECT_EQ(*got[t], 42);
    EXPECT_EQ(ids[t], ids[0]);
  }
  // A build that throws leaves the slot empty; the next caller builds it.
  EXPECT_THROW(
      h->resource<int>("flaky", []() -> std::shared_ptr<int> { throw Error(ErrorCode::kIo, "x"); }),
      Error);
  EXPECT_EQ(*h->resource<int>("flaky", [] { return std::make_shared<int>(7); }), 7);
}
