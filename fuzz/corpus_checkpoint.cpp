// Writes the checkpoint seed corpus: real checkpoints written by the trainer (negative sampling,
// hierarchical softmax with row statistics, CBOW) on a small generated corpus, plus handcrafted
// damage of each header field (with a valid checksum, so each reaches the check it targets).
// Usage: corpus_checkpoint OUT_DIR
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "embedscope/train/w2v_checkpoint.h"
#include "embedscope/train/word2vec.h"

namespace {

namespace fs = std::filesystem;

std::string read_all(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Replaces the header JSON of a checkpoint and fixes its length and checksum.
std::string with_header(const std::string& ck, const std::string& header) {
  uint64_t hl;
  std::memcpy(&hl, ck.data() + 8, 8);
  std::string out = ck.substr(0, 8);
  uint64_t n = header.size();
  out.append(reinterpret_cast<const char*>(&n), 8);
  out += header;
  out += ck.substr(16 + hl);
  uint64_t sum = embedscope::word2vec_checkpoint_checksum(
      std::as_bytes(std::span(out.data(), out.size() - 16)));
  std::memcpy(out.data() + out.size() - 16, &sum, 8);
  return out;
}

std::string replace_once(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: corpus_checkpoint OUT_DIR\n");
    return 2;
  }
  using namespace embedscope;
  const fs::path dir = argv[1];
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path work = dir / "work";
  fs::create_directories(work);
  {
    std::ofstream c(work / "corpus.txt");
    for (int i = 0; i < 3000; ++i) {  // two topics, 10-word sentences (30k words: 1 segment)
      char t = (i * 7919) % 3 ? 'a' : 'b';
      for (int w = 0; w < 10; ++w) c << t << ((i * 31 + w * 17) % 12) << (w == 9 ? '\n' : ' ');
    }
  }
  size_t n = 0;
  std::string first;
  struct Mode {
    const char* name;
    W2vArch arch;
    bool hs;
    size_t negative;
    bool row_stats;
  };
  for (const Mode& m : {Mode{"sg-ns", W2vArch::kSkipGram, false, 3, false},
                        Mode{"sg-hs-stats", W2vArch::kSkipGram, true, 0, true},
                        Mode{"cbow-ns-hs", W2vArch::kCbow, true, 2, false}}) {
    Word2VecOptions o;
    o.arch = m.arch;
    o.dim = 4;
    o.window = 2;
    o.negative = m.negative;
    o.hs = m.hs;
    o.min_count = 1;
    o.epochs = 2;
    o.row_stats = m.row_stats;
    o.work_dir = work.string();
    o.checkpoint_path = (work / (std::string(m.name) + ".ckpt")).string();
    o.checkpoint_every = 1;
    o.stop_after_segments = 1;  // as if killed after the first checkpoint
    train_word2vec({(work / "corpus.txt").string()}, o);
    std::string ck = read_all(o.checkpoint_path);
    std::ofstream(dir / (std::string("good-") + m.name + ".ckpt"), std::ios::binary) << ck;
    ++n;
    if (first.empty()) first = ck;
  }
  uint64_t hl;
  std::memcpy(&hl, first.data() + 8, 8);
  const std::string header = first.substr(16, hl);
  auto put = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(dir / ("bad-" + name + ".ckpt"), std::ios::binary) << bytes;
    ++n;
  };
  put("dim-zero",
      with_header(first, replace_once(header, "\"arrays\":{\"dim\":4", "\"arrays\":{\"dim\":0")));
  put("dim-huge", with_header(first, replace_once(header, "\"arrays\":{\"dim\":4",
                                                  "\"arrays\":{\"dim\":4611686018427387904")));
  put("rows-overflow",
      with_header(first, replace_once(header, "\"syn0\":", "\"syn0\":461168601842738790")));
  put("rows-negative", with_header(first, replace_once(header, "\"syn0\":", "\"syn0\":-")));
  put("epoch-beyond", with_header(first, replace_once(header, "\"epoch\":", "\"epoch\":9")));
  put("chunk-beyond",
      with_header(first, replace_once(header, "\"next_chunk\":", "\"next_chunk\":99999")));
  put("loss-string",
      with_header(first, replace_once(header, "\"epoch_loss\":", "\"epoch_loss\":\"x\",\"y\":")));
  put("no-arrays", with_header(first, replace_once(header, "\"arrays\"", "\"arrayz\"")));
  put("deep", with_header(first, std::string(64, '[') + std::string(64, ']')));
  put("not-json", with_header(first, "{\"fingerprint\":"));
  std::string old = first;
  std::memcpy(old.data(), "ESW2VCK1", 8);
  put("old-magic", old);
  put("truncated", first.substr(0, first.size() / 2));
  fs::remove_all(work);
  std::printf("wrote %zu seed files to %s\n", n, dir.c_str());
  return 0;
}
