// Saving a trained word2vec result: the table through formats/embeddings_file.h, metadata,
// row statistics.
#include <cstdio>
#include <filesystem>

#include "embedscope/core/atomic_file.h"
#include "embedscope/core/error.h"
#include "embedscope/train/word2vec.h"

namespace embedscope {

namespace {
std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}
}  // namespace

std::map<std::string, std::string> word2vec_metadata(const Word2VecResult& r,
                                                     const Word2VecOptions& o) {
  std::map<std::string, std::string> m;
  if (o.tokenizer)
    m["embedscope.tokenizer"] = o.tokenizer_name.empty() ? "custom" : o.tokenizer_name;
  const std::string p = "embedscope.train.";
  m[p + "arch"] = o.arch == W2vArch::kCbow ? "cbow" : "skipgram";
  m[p + "dim"] = std::to_string(o.dim);
  m[p + "window"] = std::to_string(o.window);
  m[p + "negative"] = std::to_string(o.negative);
  m[p + "hs"] = o.hs ? "1" : "0";
  m[p + "classic_skipgram"] = o.classic_skipgram ? "1" : "0";
  m[p + "shared_negatives"] = o.shared_negatives ? "1" : "0";
  m[p + "sample"] = num(o.sample);
  m[p + "min_count"] = std::to_string(o.min_count);
  m[p + "epochs"] = std::to_string(o.epochs);
  m[p + "lr"] = num(o.lr > 0 ? o.lr : (o.arch == W2vArch::kCbow ? 0.05 : 0.025));
  m[p + "seed"] = std::to_string(o.seed);
  m[p + "corpus_words"] = std::to_string(r.corpus_words);
  size_t trained = 0;
  for (uint8_t t : r.trained) trained += t;
  m[p + "rows_trained"] = std::to_string(trained);
  m[p + "seconds"] = num(r.seconds);
  return m;
}

void save_word2vec(const std::string& path, const Word2VecResult& r, const Word2VecOptions& o,
                   FileFormat format) {
  SaveOptions so;
  so.format = format;
  so.metadata = word2vec_metadata(r, o);
  save_embeddings(path, r.table, &r.vocab, so);
}

size_t remove_stale_temp_files(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path p(path);
  fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  const std::string prefix = p.filename().string() + ".tmp-";
  size_t n = 0;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.size() == prefix.size() + 6 && name.compare(0, prefix.size(), prefix) == 0) {
      std::error_code rm;
      n += fs::remove(it->path(), rm);
    }
  }
  return n;
}

void save_row_stats(const std::string& path, const Word2VecResult& r) {
  if (r.row_updates.size() != r.vocab.size() || r.row_drift.size() != r.vocab.size())
    throw Error(ErrorCode::kInvalidArgument,
                "row statistics were not collected (train with row_stats / --row-stats)");
  std::string out = "id\ttoken\tcount\ttrained\tupdates\tdrift\n";
  for (size_t i = 0; i < r.vocab.size(); ++i) {
    std::string tok;
    for (unsigned char c : r.vocab.token(TokenId(i))) {
      if (c < 0x20 || c == 0x7f || c == '\\') {
        char b[8];
        std::snprintf(b, sizeof b, "\\x%02X", c);
        tok += b;
      } else {
        tok += char(c);
      }
    }
    out += std::to_string(i) + "\t" + tok + "\t" + std::to_string(r.vocab.counts()[i]) + "\t" +
           std::to_string(int(r.trained[i])) + "\t" + std::to_string(r.row_updates[i]) + "\t" +
           num(r.row_drift[i]) + "\n";
  }
  write_file_atomic(path, out);
}

}  // namespace embedscope
