// Every command's --help keeps the flags and the example it had before its options moved to
// the library's descriptors (include/embedscope/api/options.h). The expected lists were
// captured from `embedscope CMD --help` of the binary before the move (commit 68c827a); only
// flag names are compared, so help wording may improve, and a flag may be added, never lost.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>

#include "test_util.h"

namespace embedscope {
namespace {

struct Case {
  const char* command;  // "index build" = a subcommand
  const char* flags;    // space-separated, each alias on its own, without -h/--help
  const char* example;  // a line of the Example(s) section
};

// clang-format off
constexpr Case kCases[] = {
    {"analogy", "--center --class --ids --include-query --json --k --method --metric --min-count --mode --model --regex --threads --top-n --words-file -k -m -t",
     R"(embedscope analogy vectors.bin man king woman -k 5 --json)"},
    {"compare", "--json --moved --seed --threads --words -k",
     R"(embedscope compare before.bin after.bin -k 10)"},
    {"convert", "--tensor --to",
     R"(embedscope convert vectors.bin vectors.safetensors)"},
    {"decode", "--bytes --json --model",
     R"(embedscope decode 464,3290)"},
    {"doesnt-match", "--center --json --model --threads -m -t",
     R"(embedscope doesnt-match vectors.bin breakfast lunch dinner car --json)"},
    {"eval", "--case-sensitive --dummy4unknown --json --model --restrict --threads --tokenizer -m -t",
     R"(embedscope eval analogy questions-words.txt --model vectors.bin)"},
    {"explore", "--all-tokens --init --json --model --sample --seed --threads --timings --tokenizer -k -m -t",
     R"(embedscope explore computer)"},
    {"index", "",
     R"(embedscope index build --model vectors.bin -o v.hnsw)"},
    {"index build", "--M --all-rows --center --ef-construction --json --model --output --threads -m -o -t",
     R"(embedscope index build --model vectors.bin -o vectors.hnsw --threads 2)"},
    {"index query", "--center --check-recall --class --ef --ids --include-query --index --json --k --metric --min-count --mode --model --regex --threads --top-n --words-file -k -m -t",
     R"(embedscope index query --model vectors.bin --index vectors.hnsw king --ef 100 --check-recall --json)"},
    {"info", "--full-stats --json --matrix --model --tensor -m",
     R"(embedscope info model.safetensors)"},
    {"lookup", "--ids --json --model --npy -m",
     R"(embedscope lookup vectors.bin king)"},
    {"neighbors", "--batch --center --check-recall --class --csls --ef --expr --id --ids --include-query --index --json --k --metric --min-count --mode --model --regex --threads --top-n --vector --words-file -k -m -t",
     R"(embedscope neighbors vectors.bin king -k 5)"},
    {"project", "--dims --exact-knn --json --method --min-dist --n-neighbors --no-cache --output --quiet --seed --threads -o -q -t",
     R"(embedscope project --method pca -o pca.npy)"},
    {"rank", "--center --json --model --threads -m -t",
     R"(embedscope rank vectors.bin king queen --json)"},
    {"serve", "--api-key --batch-wait-us --host --http-threads --index --keep-alive --max-batch --max-queued --model --models --no-auth --port --quiet --threads -m -p -q -t",
     R"(embedscope serve)"},
    {"similarity", "--center --json --model --threads -m -t",
     R"(embedscope similarity vectors.bin king queen --json)"},
    {"stats", "--components --json --pairs --queries --seed --threads -k",
     R"(embedscope stats vectors.bin)"},
    {"tokenize", "--allow-special --file --json --model",
     R"(embedscope tokenize " computer")"},
    {"train", "--arch --checkpoint --checkpoint-every --classic-skipgram --dim --epochs --format --hs --json --lr --max-vocab --min-count --mpi-sync --negative --output --quiet --resume --row-stats --sample --seed --shared-negatives --sync-every --sync-rows --threads --tokenizer --window -o -q -t",
     R"(embedscope train corpus.txt -o vectors.safetensors --dim 100 --epochs 5)"},
};
// clang-format on

// The flag names of the Options section: the first word of each line that starts with "  -",
// split at commas ("-k,--k UINT" -> -k, --k).
std::set<std::string> flags_of(const std::string& help) {
  std::set<std::string> out;
  std::istringstream in(help);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("  -", 0) != 0) continue;
    std::string names = line.substr(2, line.find(' ', 2) - 2);
    std::istringstream parts(names);
    for (std::string n; std::getline(parts, n, ',');)
      if (n != "-h" && n != "--help") out.insert(n);
  }
  return out;
}

TEST(CliHelp, EveryCommandKeepsItsFlagsAndExample) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.command);
    auto r = test::run(test::shell_quote(test::cli_path()) + " " + c.command + " --help");
    ASSERT_EQ(r.rc, 0) << r.err;
    std::set<std::string> have = flags_of(r.out);
    std::istringstream want(c.flags);
    size_t n = 0;
    for (std::string f; want >> f; ++n)
      EXPECT_TRUE(have.count(f)) << "lost flag " << f << "\n" << r.out;
    EXPECT_GE(have.size(), n) << r.out;
    EXPECT_NE(r.out.find(c.example), std::string::npos) << "lost example: " << c.example << "\n"
                                                        << r.out;
  }
}

// Options the library parses from text (--class, --ids) reject a bad value after the command
// line is read, through main's error handling: one `error:` line naming the value, exit 2 (no
// model is opened first, so none is needed here).
TEST(CliHelp, TextOptionsRejectBadValuesWithUsageErrors) {
  const std::string cli = test::shell_quote(test::cli_path());
  auto r = test::run(cli + " neighbors --model absent.txt king --class nouns");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("error: unknown token class 'nouns' (expected any, word, alpha or "
                       "nospecial)"),
            std::string::npos)
      << r.err;
  r = test::run(cli + " analogy --model absent.txt a b c --ids 1,x");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("error: --ids: 'x'"), std::string::npos) << r.err;
  r = test::run(cli + " lookup --model absent.txt --ids 1,,2");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("error: --ids: "), std::string::npos) << r.err;
}

// The parser above finds flags at all (else the test could not fail).
TEST(CliHelp, FlagParserSeesFlags) {
  std::set<std::string> f = flags_of("Options:\n  -k,--k UINT  n\n  --json  j\n    --not  x\n");
  EXPECT_EQ(f, (std::set<std::string>{"-k", "--k", "--json"}));
}

}  // namespace
}  // namespace embedscope
