// `embedscope train` end to end: outputs read back by independent code (Python's struct/json for
// safetensors, gensim for word2vec files), progress lines, SIGKILL-and-resume, bad input.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "test_util.h"

using namespace embedscope::test;
using json = nlohmann::json;

namespace {

std::string topic_corpus(size_t n_sentences, unsigned seed) {
  std::mt19937 r(seed);
  std::string s;
  for (size_t i = 0; i < n_sentences; ++i) {
    char topic = (r() & 1) ? 'a' : 'b';
    for (int w = 0; w < 10; ++w) {
      s += topic;
      s += std::to_string(r() % 20);
      s += w == 9 ? '\n' : ' ';
    }
  }
  return s;
}

CommandResult cli(const std::string& args) {
  return run(shell_quote(cli_path()) + " train " + args);
}

// Reads a safetensors header with nothing but struct + json.
const char* kHeaderScript = R"PY(
import json, struct, sys
b = open(sys.argv[1], 'rb').read()
n = struct.unpack('<Q', b[:8])[0]
h = json.loads(b[8:8 + n])
meta = h.pop('__metadata__', {})
off = 8 + n
import numpy as np
counts = None
if 'embedscope.vocab.counts' in h:
    s, e = h['embedscope.vocab.counts']['data_offsets']
    counts = np.frombuffer(b[off + s: off + e], dtype='<i8').tolist()
print(json.dumps({'tensors': {k: {'dtype': v['dtype'], 'shape': v['shape']} for k, v in h.items()},
                  'meta': meta, 'counts': counts}))
)PY";

}  // namespace

TEST(CliTrain, HelpHasAnExample) {
  auto r = cli("--help");
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("embedscope train corpus.txt -o"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--checkpoint-every"), std::string::npos);
}

TEST(CliTrain, WritesSafetensorsWithVocabularyAndCounts) {
  TempDir d;
  write_file(d.file("c.txt"), topic_corpus(2000, 1));
  auto r = cli(shell_quote(d.file("c.txt")) + " -o " + shell_quote(d.file("v.safetensors")) +
               " --dim 16 --epochs 2 --min-count 1 --threads 1 --json -q");
  ASSERT_EQ(r.rc, 0) << r.err;
  json summary = json::parse(r.out);
  EXPECT_EQ(summary["rows"], 40);
  EXPECT_EQ(summary["corpus_words"], 20000);
  auto py = run_python(kHeaderScript, {d.file("v.safetensors")});
  json h = json::parse(py.out);
  EXPECT_EQ(h["tensors"]["embeddings"]["shape"], json::array({40, 16}));
  EXPECT_EQ(h["tensors"]["embeddings"]["dtype"], "F32");
  ASSERT_TRUE(h["counts"].is_array());
  uint64_t total = 0;
  for (auto& c : h["counts"]) total += c.get<uint64_t>();
  EXPECT_EQ(total, 20000u);
  EXPECT_EQ(h["meta"]["embedscope.train.arch"], "skipgram");
  EXPECT_EQ(h["meta"]["embedscope.train.dim"], "16");
  EXPECT_EQ(h["meta"]["embedscope.train.shared_negatives"], "0");  // fresh draws by default
  EXPECT_FALSE(h["meta"].contains("embedscope.tokenizer"));
}

// --shared-negatives is a different sampler: it must be what trains, and the file must say so.
TEST(CliTrain, SharedNegativesIsRecordedAndLearns) {
  TempDir d;
  write_file(d.file("c.txt"), topic_corpus(3000, 2));
  const std::string out = d.file("v.safetensors"), vec = d.file("v.vec");
  auto r = cli(shell_quote(d.file("c.txt")) + " -o " + shell_quote(out) +
               " --dim 16 --epochs 3 --min-count 1 --threads 1 --shared-negatives -q");
  ASSERT_EQ(r.rc, 0) << r.err;
  json h = json::parse(run_python(kHeaderScript, {out}).out);
  EXPECT_EQ(h["meta"]["embedscope.train.shared_negatives"], "1");
  r = cli(shell_quote(d.file("c.txt")) + " -o " + shell_quote(vec) +
          " --format word2vec --dim 16 --epochs 3 --min-count 1 --threads 1 --shared-negatives -q");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto py = run_python(
      "import sys\nfrom gensim.models import KeyedVectors\n"
      "kv = KeyedVectors.load_word2vec_format(sys.argv[1])\n"
      "print(sum(w[0] == 'a' for w, _ in kv.most_similar('a3', topn=5)))\n",
      {vec});
  EXPECT_EQ(py.out, "5\n");
  EXPECT_NE(cli("--help").out.find("--shared-negatives"), std::string::npos);
}

TEST(CliTrain, Word2VecOutputLoadsInGensimAndLearnedTopics) {
  TempDir d;
  write_file(d.file("c.txt"), topic_corpus(3000, 2));
  for (const char* fmt : {"word2vec", "word2vec-bin"}) {
    std::string out = d.file(std::string("v.") + fmt);
    auto r = cli(shell_quote(d.file("c.txt")) + " -o " + shell_quote(out) + " --format " + fmt +
                 " --dim 16 --epochs 3 --min-count 1 --threads 1 -q");
    ASSERT_EQ(r.rc, 0) << r.err;
    auto py = run_python(
        "import sys\nfrom gensim.models import KeyedVectors\n"
        "kv = KeyedVectors.load_word2vec_format(sys.argv[1], binary=sys.argv[2] == "
        "'word2vec-bin')\n"
        "near = [w for w, _ in kv.most_similar('a3', topn=5)]\n"
        "print(len(kv), kv.vector_size, sum(w[0] == 'a' for w in near))\n",
        {out, fmt});
    EXPECT_EQ(py.out, "40 16 5\n") << fmt;
  }
}

TEST(CliTrain, ProgressIsJsonLinesWhenNotATerminal) {
  TempDir d;
  write_file(d.file("c.txt"), topic_corpus(2000, 3));
  auto r = cli(shell_quote(d.file("c.txt")) + " -o " + shell_quote(d.file("v.safetensors")) +
               " --dim 8 --epochs 1 --min-count 1 --threads 1");
  ASSERT_EQ(r.rc, 0) << r.err;
  size_t lines = 0;
  std::istringstream in(r.err);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    json j = json::parse(line);  // throws (fails the test) on a non-JSON line
    EXPECT_EQ(j["event"], "progress");
    EXPECT_TRUE(j.contains("rate") && j.contains("eta_seconds") && j.contains("extra"));
    ++lines;
  }
  EXPECT_GE(lines, 1u);
  EXPECT_NE(r.out.find("wrote"), std::string::npos);
}

TEST(CliTrain, RowStatsFile) {
  TempDir d;
  write_file(d.file("c.txt"), topic_corpus(500, 4));
  auto r = cli(shell_quote(d.file("c.txt")) + " -o " + shell_quote(d.file("v.safetensors")) +
               " --dim 8 --epochs 1 --min-count 1 --threads 1 --row-stats -q");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::string tsv = read_file(d.file("v.safetensors.row_stats.tsv"));
  std::istringstream in(tsv);
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header, "id\ttoken\tcount\ttrained\tupdates\tdrift");
  size_t rows = 0;
  for (std::string line; std::getline(in, line);) ++rows;
  EXPECT_EQ(rows, 40u);
}

TEST(CliTrain, TokenModeHasOneRowPerGpt2Id) {
  TempDir d;
  std::string text;
  for (int i = 0; i < 50; ++i)
    text += "On Monday the whale swam past the ship. On Tuesday it rained.\n";
  write_file(d.file("c.txt"), text);
  auto r = cli(shell_quote(d.file("c.txt")) + " -o " + shell_quote(d.file("t.safetensors")) +
               " --tokenizer gpt2 --dim 8 --epochs 1 --min-count 1 --threads 1 -q --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto py = run_python(kHeaderScript, {d.file("t.safetensors")});
  json h = json::parse(py.out);
  EXPECT_EQ(h["tensors"]["embeddings"]["shape"], json::array({50257, 8}));
  EXPECT_EQ(h["meta"]["embedscope.tokenizer"], "gpt2");
  ASSERT_EQ(h["counts"].size(), 50257u);
  EXPECT_EQ(h["counts"][3321], 50);  // " Monday"
  EXPECT_EQ(h["counts"][0], 0);      // "!" never occurs: row kept, count 0
}

// SIGKILL at random moments while checkpoints are being written: afterwards the checkpoint is
// either absent or complete, and resuming from it gives exactly the uninterrupted result.
TEST(CliTrain, KilledAtRandomMomentsResumesBitIdentically) {
  TempDir d;
  write_file(d.file("c.txt"), topic_corpus(12000, 5));
  const std::string common =
      " --dim 16 --epochs 3 --min-count 1 --threads 1 --seed 3 -q"
      " --format word2vec-bin --checkpoint-every 1";
  auto ref = cli(shell_quote(d.file("c.txt")) + " -o " + shell_quote(d.file("ref.bin")) + common);
  ASSERT_EQ(ref.rc, 0) << ref.err;
  const std::string want = read_file(d.file("ref.bin"));
  auto t0 = std::chrono::steady_clock::now();
  cli(shell_quote(d.file("c.txt")) + " -o " + shell_quote(d.file("time.bin")) + common);
  const double full_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::mt19937 rng(12345);
  int resumed_from_checkpoint = 0;
  for (int iter = 0; iter < 10; ++iter) {
    std::string out = d.file("run" + std::to_string(iter) + ".bin");
    // Built before fork(): the child only makes async-signal-safe calls before exec.
    const std::string corpus = d.file("c.txt"), bin = cli_path();
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1);
      ::dup2(null, 2);
      execl(bin.c_str(), "embedscope", "train", corpus.c_str(), "-o", out.c_str(), "--dim", "16",
            "--epochs", "3", "--min-count", "1", "--threads", "1", "--seed", "3", "-q", "--format",
            "word2vec-bin", "--checkpoint-every", "1", (char*)nullptr);
      _exit(127);
    }
    int status = 0;
    bool exited = false;
    if (iter % 2 == 0) {
      // A moment anywhere in the run (it may land before the first checkpoint or after the end).
      int delay = int(std::uniform_real_distribution<double>(0.1, 0.95)(rng) * full_ms);
      std::this_thread::sleep_for(std::chrono::milliseconds(delay));
    } else {
      // A moment after the first checkpoint exists, so every other kill is known to land while
      // checkpoints are being rewritten, however fast this machine trains (the full run's time
      // is measured once and varies with load).
      auto start = std::chrono::steady_clock::now();
      while (!std::filesystem::exists(out + ".ckpt") &&
             std::chrono::steady_clock::now() - start < std::chrono::seconds(60)) {
        if (waitpid(pid, &status, WNOHANG) == pid) {
          exited = true;
          break;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
      std::this_thread::sleep_for(
          std::chrono::microseconds(std::uniform_int_distribution<int>(0, 3000)(rng)));
    }
    if (!exited) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
    bool had_ckpt = std::filesystem::exists(out + ".ckpt");
    auto r = cli(shell_quote(d.file("c.txt")) + " -o " + shell_quote(out) + common + " --resume");
    ASSERT_EQ(r.rc, 0) << "iteration " << iter << ": " << r.err;
    EXPECT_TRUE(read_file(out) == want)
        << "iteration " << iter << " differs from the uninterrupted run";
    resumed_from_checkpoint += had_ckpt;
    for (auto& e : std::filesystem::directory_iterator(d.path()))
      EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
  }
  EXPECT_GE(resumed_from_checkpoint, 3) << "the kills never landed after a checkpoint";
}

TEST(CliTrain, BadInputGivesClearErrors) {
  TempDir d;
  write_file(d.file("c.txt"), "one two three\n");
  write_file(d.file("empty.txt"), "");
  auto r =
      cli(shell_quote(d.file("c.txt")) + " -o " + shell_quote(d.file("v.safetensors")) + " -q");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("min_count = 5"), std::string::npos) << r.err;
  r = cli(shell_quote(d.file("empty.txt")) + " -o " + shell_quote(d.file("v.safetensors")) + " -q");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("empty vocabulary"), std::string::npos) << r.err;
  r = cli(shell_quote(d.file("c.txt")) + " -o " + shell_quote(d.file("v.safetensors")) +
          " --dim 0");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("dim 0"), std::string::npos) << r.err;
  r = cli(shell_quote(d.file("c.txt")) + " -o " + shell_quote(d.file("v.safetensors")) +
          " --window 100000");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("window 100000"), std::string::npos) << r.err;
  r = cli(shell_quote(d.file("c.txt")) + " -o " + shell_quote(d.file("no/such/dir/v.safetensors")) +
          " --min-count 1");
  EXPECT_EQ(r.rc, 6);
  EXPECT_NE(r.err.find("no/such/dir"), std::string::npos) << r.err;
  r = cli(shell_quote(d.file("missing.txt")) + " -o " + shell_quote(d.file("v.safetensors")));
  EXPECT_EQ(r.rc, 3);
  EXPECT_NE(r.err.find("missing.txt"), std::string::npos) << r.err;
}
