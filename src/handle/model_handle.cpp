#include "embedscope/handle/model_handle.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "embedscope/core/error.h"
#include "embedscope/core/mapped_file.h"
#include "embedscope/tokenizer/gguf_vocab.h"
#include "embedscope/tokenizer/sentencepiece.h"
#include "embedscope/train/default_model.h"

namespace embedscope {

namespace {

// GPT-2's table has 50257 rows; checkpoints pad it to a multiple of 64 (50304).
bool looks_like_gpt2(size_t n_rows) { return n_rows >= 50257 && n_rows <= 50304; }

// A tokenizer.json that declares a normalizer: BpeTokenizer would ignore an NFC normalizer
// (Qwen's) and differ from Hugging Face on text that is not NFC, so such files take the full
// pipeline. A textual check on the top-level key (no other part of the format has one).
bool declares_normalizer(const std::string& file) {
  auto m = MappedFile::open(file);
  std::string_view t(reinterpret_cast<const char*>(m->data()), m->size());
  for (size_t at = t.find("\"normalizer\""); at != std::string_view::npos;
       at = t.find("\"normalizer\"", at + 1)) {
    size_t i = at + 12;
    while (i < t.size() && (t[i] == ' ' || t[i] == '\n' || t[i] == '\r' || t[i] == '\t')) ++i;
    if (i >= t.size() || t[i] != ':') continue;
    ++i;
    while (i < t.size() && (t[i] == ' ' || t[i] == '\n' || t[i] == '\r' || t[i] == '\t')) ++i;
    if (t.substr(i, 4) != "null") return true;
  }
  return false;
}

// The fast path for GPT-2-family files, else the full tokenizer.json pipeline (see the header).
std::shared_ptr<const Tokenizer> tokenizer_json_or_bpe(const std::string& file) {
  if (!declares_normalizer(file)) {
    try {
      return make_tokenizer(BpeTokenizer::from_tokenizer_json(file));
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kUnsupported) throw;
    }
  }
  return load_tokenizer(file);
}

// nullptr when the folder holds no tokenizer files.
std::shared_ptr<const Tokenizer> tokenizer_in_dir(const std::string& dir) {
  std::error_code ec;
  const std::string json = (std::filesystem::path(dir) / "tokenizer.json").string();
  if (std::filesystem::exists(json, ec)) return tokenizer_json_or_bpe(json);
  if (auto t = BpeTokenizer::find_in_dir(dir)) return make_tokenizer(std::move(*t));
  for (const char* spm : {"tokenizer.model", "spiece.model"})  // SentencePiece alone
    if (std::filesystem::exists(std::filesystem::path(dir) / spm, ec))
      return load_sentencepiece_model((std::filesystem::path(dir) / spm).string());
  return nullptr;
}

std::shared_ptr<const Tokenizer> tokenizer_from_path(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    if (auto t = tokenizer_in_dir(path)) return t;
    throw Error(ErrorCode::kNotFound,
                path +
                    ": no tokenizer files (tokenizer.json, or vocab.json + "
                    "merges.txt, or encoder.json + vocab.bpe) in this folder");
  }
  if (!std::filesystem::exists(path, ec))
    throw Error(ErrorCode::kInvalidArgument,
                "--tokenizer '" + path +
                    "': expected auto, gpt2, none, or an existing tokenizer.json or folder");
  if (path.ends_with(".model")) return load_sentencepiece_model(path);
  return tokenizer_json_or_bpe(path);
}

}  // namespace

TokenizerPlan plan_tokenizer(const Model& m, std::string_view choice) {
  if (choice == "none") return {};
  if (choice != "auto") return {"flag", std::string(choice)};
  if (auto it = m.emb.metadata.find("embedscope.tokenizer");
      it != m.emb.metadata.end() && it->second == "gpt2")
    return {"metadata", "gpt2"};
  if (!m.dir.empty() && !m.tokenizer_files.empty()) {
    std::string files;
    for (const auto& f : m.tokenizer_files) files += (files.empty() ? "" : " ") + f;
    return {"folder", files};
  }
  if (m.emb.format == FileFormat::kGguf) return {"gguf", "tokenizer.ggml.*"};
  if (looks_like_gpt2(m.emb.table.n_rows())) return {"gpt2-shape", "gpt2"};
  return {};
}

TokenizerChoice choose_tokenizer(const Model& m, std::string_view choice) {
  TokenizerChoice c;
  if (choice == "none") return c;
  if (choice == "gpt2") {
    c.tokenizer = make_tokenizer(BpeTokenizer::gpt2_default());
    c.source = "flag";
    return c;
  }
  if (choice != "auto") {
    c.tokenizer = tokenizer_from_path(std::string(choice));
    c.source = "flag";
    return c;
  }
  if (auto it = m.emb.metadata.find("embedscope.tokenizer");
      it != m.emb.metadata.end() && it->second == "gpt2") {
    c.tokenizer = make_tokenizer(BpeTokenizer::gpt2_default());
    c.source = "metadata";
    return c;
  }
  if (!m.dir.empty())
    if (auto t = tokenizer_in_dir(m.dir)) {
      c.tokenizer = std::move(t);
      c.source = "folder";
      return c;
    }
  if (m.emb.format == FileFormat::kGguf) {
    c.tokenizer = load_gguf_tokenizer(m.path);
    c.source = "gguf";
    return c;
  }
  if (looks_like_gpt2(m.emb.table.n_rows())) {
    // A GPT-2-shaped matrix without tokenizer files: GPT-2's vocabulary (fetched by setup),
    // when the file has no vocabulary or its tokens agree with GPT-2's. A missing one only
    // means words can't be tokenized; "#id" queries and exact tokens still work.
    try {
      BpeTokenizer t = BpeTokenizer::gpt2_default();
      bool agrees = true;
      for (size_t i = 0; i < std::min<size_t>(m.emb.vocab.size(), 50257) && agrees; i += 97)
        agrees = m.emb.vocab.token(TokenId(i)) == t.token_bytes(TokenId(i));
      if (agrees) {
        c.tokenizer = make_tokenizer(std::move(t));
        c.source = "gpt2-shape";
      }
    } catch (const Error&) {
    }
  }
  return c;
}

std::shared_ptr<const Tokenizer> open_tokenizer(const std::string& ref) {
  if (ref.empty() || ref == "gpt2") return make_tokenizer(BpeTokenizer::gpt2_default());
  std::error_code ec;
  if (!std::filesystem::exists(ref, ec))
    throw Error(ErrorCode::kNotFound, ref + ": no such file or folder");
  if (!std::filesystem::is_directory(ref, ec) && ref.size() > 5 && ref.ends_with(".gguf"))
    return load_gguf_tokenizer(ref);
  return tokenizer_from_path(ref);
}

ModelHandle::ModelHandle(Model model, HandleOptions options, bool is_default)
    : model_(std::move(model)), options_(std::move(options)), is_default_(is_default) {
  const std::string& t = options_.tokenizer;
  if (t != "auto" && t != "none" && t != "gpt2") {
    struct stat st;
    if (::stat(t.c_str(), &st) != 0)
      throw Error(ErrorCode::kInvalidArgument,
                  "--tokenizer '" + t +
                      "': expected auto, gpt2, none, or an existing tokenizer.json or folder");
  }
}

Model load_model_or_default(const std::string& ref, const ModelOptions& options,
                            const ProgressFn& progress) {
  if (!ref.empty()) return load_model(ref, options);
  Model m = load_model(ensure_default_model(progress), options);
  m.ref = "default";
  return m;
}

std::shared_ptr<ModelHandle> ModelHandle::open(const std::string& ref,
                                               const HandleOptions& options) {
  return from_model(load_model_or_default(ref, options.model, options.progress), options,
                    ref.empty());
}

std::shared_ptr<ModelHandle> ModelHandle::open(const std::string& ref) {
  static const HandleOptions kDefaults;
  return open(ref, kDefaults);
}

std::shared_ptr<ModelHandle> ModelHandle::from_model(Model model, const HandleOptions& options,
                                                     bool is_default) {
  return std::shared_ptr<ModelHandle>(new ModelHandle(std::move(model), options, is_default));
}

size_t ModelHandle::n_search_rows() const {
  return model_.n_search_rows ? std::min(model_.n_search_rows, table().n_rows()) : table().n_rows();
}

void ModelHandle::load_tokenizer() const {
  std::call_once(tok_once_, [this] {
    tok_ = choose_tokenizer(model_, options_.tokenizer);
    tok_loaded_.store(true, std::memory_order_release);
  });
}

const Tokenizer* ModelHandle::tokenizer() const {
  load_tokenizer();
  return tok_.tokenizer.get();
}

const std::string& ModelHandle::tokenizer_source() const {
  load_tokenizer();
  return tok_.source;
}

bool ModelHandle::tokenizer_loaded() const { return tok_loaded_.load(std::memory_order_acquire); }

const WordLookup& ModelHandle::words() const {
  std::call_once(words_once_, [this] {
    load_tokenizer();
    // WordLookup shares the tokenizer.
    words_ = std::make_unique<WordLookup>(&model_.emb.vocab, tok_.tokenizer, n_search_rows());
  });
  return *words_;
}

std::shared_ptr<void> ModelHandle::resource_any(
    const std::string& key, const std::function<std::shared_ptr<void>()>& build) const {
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard<std::mutex> lock(slots_mu_);
    auto& s = slots_[key];
    if (!s) s = std::make_shared<Slot>();
    slot = s;
  }
  // One build per key: other keys are built concurrently; a failed build leaves the slot empty.
  std::lock_guard<std::mutex> lock(slot->mu);
  if (!slot->value) slot->value = build();
  return slot->value;
}

}  // namespace embedscope
