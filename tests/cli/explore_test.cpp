// End-to-end: `embedscope explore` on a word2vec file numpy wrote with a planted neighbourhood.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

using namespace embedscope::test;
using nlohmann::json;

namespace {

void make_model(const TempDir& d) {
  auto r = run_python(R"(
import sys, numpy as np
rng = np.random.default_rng(0)
dim = 32
c = rng.normal(size=dim)
near = [("computers", 0.05), ("Computer", 0.1), ("calculator", 0.2), ("machine", 0.3), ("banana", 0.4)]
words = [("computer", c)] + [(w, c + s * rng.normal(size=dim) * np.sqrt(dim) / 3) for w, s in near]
words += [("filler%d" % i, rng.normal(size=dim) * 3) for i in range(30)]
with open(sys.argv[1], "w") as f:
    f.write("%d %d\n" % (len(words), dim))
    for w, v in words: f.write(w + " " + " ".join("%.6f" % x for x in v) + "\n")
)",
                      {d.file("vec.txt")});
  ASSERT_EQ(r.rc, 0) << r.err;
}

TEST(CliExplore, JsonHasLabelledNeighboursBaselineAndVerdict) {
  TempDir d;
  make_model(d);
  auto r = run(shell_quote(cli_path()) + " explore computer --model " + d.file("vec.txt") +
               " -k 4 --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = json::parse(r.out);
  EXPECT_EQ(j["query"], "computer");
  ASSERT_EQ(j["neighbors"].size(), 4u);
  EXPECT_EQ(j["neighbors"][0]["token"], "computers");
  EXPECT_EQ(j["neighbors"][0]["label"], "variant");
  EXPECT_EQ(j["neighbors"][2]["token"], "calculator");
  EXPECT_EQ(j["neighbors"][2]["label"], "synonym");
  EXPECT_EQ(j["neighbors"][3]["label"], "related");
  EXPECT_FALSE(j["neighbors"][3]["evidence"].get<std::string>().empty());
  EXPECT_EQ(j["labels"]["variant"], 2);
  EXPECT_EQ(j["labels"]["synonym"], 1);
  EXPECT_EQ(j["labels"]["related"], 1);
  EXPECT_EQ(j["labels"]["noise"], 0);
  EXPECT_EQ(j["baseline"]["top_scores"].size(), 4u);
  EXPECT_EQ(j["baseline"]["expected_top_scores"].size(), 4u);
  int total = 0;
  for (auto& [k, v] : j["baseline"]["labels"].items()) total += v.get<int>();
  EXPECT_EQ(total, 4);
  EXPECT_EQ(j["rows"][0]["text"], "computer");
  EXPECT_TRUE(j["rows"][0]["used"].get<bool>());
  EXPECT_NE(j["verdict"].get<std::string>().find("2 of 4 neighbours"), std::string::npos)
      << j["verdict"];
}

TEST(CliExplore, TextOutputShowsTableAndVerdict) {
  TempDir d;
  make_model(d);
  auto r =
      run(shell_quote(cli_path()) + " explore computer --model " + d.file("vec.txt") + " -k 3");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("computers"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("random baseline"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verdict: "), std::string::npos) << r.out;
}

TEST(CliExplore, UnknownWordExitsNotFound) {
  TempDir d;
  make_model(d);
  auto r = run(shell_quote(cli_path()) + " explore zebra --model " + d.file("vec.txt"));
  EXPECT_EQ(r.rc, 3);
  EXPECT_NE(r.err.find("error: 'zebra' is not in the vocabulary"), std::string::npos) << r.err;
}

TEST(CliExplore, SampleReportsLabelMix) {
  TempDir d;
  make_model(d);
  auto r = run(shell_quote(cli_path()) + " explore --sample 3 --model " + d.file("vec.txt") +
               " -k 2 --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = json::parse(r.out);
  EXPECT_EQ(j["words"].size(), 3u);
  int total = 0;
  for (auto& [k, v] : j["labels"].items()) total += v.get<int>();
  EXPECT_EQ(total, 6);
}

TEST(CliExplore, HelpHasAnExample) {
  auto r = run(shell_quote(cli_path()) + " explore --help");
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("embedscope explore computer"), std::string::npos);
}

}  // namespace

TEST(CliExplore, HashIdExploresThatRowLabelledAsItsWord) {
  TempDir d;
  make_model(d);
  auto by_word = run(shell_quote(cli_path()) + " explore computer --model " + d.file("vec.txt") +
                     " -k 4 --json");
  auto by_id =
      run(shell_quote(cli_path()) + " explore '#0' --model " + d.file("vec.txt") + " -k 4 --json");
  ASSERT_EQ(by_word.rc, 0) << by_word.err;
  ASSERT_EQ(by_id.rc, 0) << by_id.err;
  auto w = json::parse(by_word.out), i = json::parse(by_id.out);
  EXPECT_EQ(i["query"], "#0");
  EXPECT_EQ(i["rows"].size(), 1u);
  EXPECT_EQ(i["rows"][0]["ids"], json({0}));
  EXPECT_EQ(i["neighbors"], w["neighbors"]);  // row 0 is "computer": same list, same labels
  EXPECT_EQ(i["neighbors"][0]["label"], "variant");
  auto beyond =
      run(shell_quote(cli_path()) + " explore '#36' --model " + d.file("vec.txt") + " -k 4");
  EXPECT_NE(beyond.rc, 0);
  EXPECT_NE(beyond.err.find("row #36 is beyond the table's 36 rows"), std::string::npos)
      << beyond.err;
}
