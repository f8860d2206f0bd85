// ModelHandle: one opened model, shared by every front end (CLI, HTTP server, Python module).
//
// A handle is opened from a model reference ("" = the embedded default model, trained on first
// use; a hub id; a Hugging Face folder; a file; see formats/model.h) and owns:
//   - the Model: the mmapped embedding matrix, its vocabulary, counts and metadata;
//   - its tokenizer, chosen by choose_tokenizer() below (the one policy in the library);
//   - the word -> rows lookup (WordLookup, the one implementation);
//   - lazily built shared resources (a searcher, an int8 copy, WordNet and the labeller, an
//     explorer, an HNSW index...), each built once on first use and then shared. The handle does
//     not know their types: the layers above (search, analysis, api) key them by name through
//     resource<T>(), so the dependency still points inward.
//
// Thread-safety: every const method may be called from many threads at once. The tokenizer and
// the word lookup are built once (std::call_once) and are immutable afterwards; resource<T>()
// builds each key exactly once, concurrent callers of the same key wait for that build, and a
// build that throws is retried by the next caller. The resources themselves state their own
// thread-safety (a Searcher serves one query at a time: api/ guards it with a mutex).
//
// Threads: the handle starts none. Everything below it that runs in parallel uses
// process_threads() (core/thread_pool.h), set once by the front end from --threads.
//
// Errors: open() throws what load_model() / ensure_default_model() throw (Error kNotFound,
// kCorrupt, kUnsupported, kIo), and Error(kInvalidArgument) for an unknown tokenizer choice;
// Error(kNotFound) when an explicit tokenizer path does not exist.
//
//   auto h = ModelHandle::open("gpt2");           // or "" for the default model
//   h->table().n_rows();                           // 50257
//   h->words().resolve("computer")->ids;           // {3644}
//   h->tokenizer_source();                         // "folder" (vocab.json + merges.txt)
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "embedscope/core/progress.h"
#include "embedscope/formats/model.h"
#include "embedscope/handle/word_lookup.h"
#include "embedscope/tokenizer/bpe.h"
#include "embedscope/tokenizer/tokenizer.h"

namespace embedscope {

// The tokenizer policy. `choice`:
//   "none"  no tokenizer: words are looked up as vocabulary entries;
//   "gpt2"  GPT-2's byte-level BPE (the vocabulary setup.sh fetches);
//   a path  a tokenizer.json, or a folder holding tokenizer.json or vocab.json + merges.txt;
//   "auto"  the first that applies:
//     1. the model's metadata names one (`embedscope.tokenizer` = "gpt2", written by
//        `embedscope train --tokenizer gpt2` and by the default model)       -> "metadata"
//     2. tokenizer files beside the weights (HF folder)                        -> "folder"
//     3. a GGUF file's own vocabulary (tokenizer.ggml.*)                       -> "gguf"
//     4. a GPT-2-shaped matrix (50257..50304 rows) whose vocabulary, if any, agrees with
//        GPT-2's tokens                                                         -> "gpt2-shape"
//     else none.
// `source` says which rule chose it ("none" when there is no tokenizer).
//
// Which implementation loads the files (open_tokenizer() below): GPT-2-family files (vocab.json
// + merges.txt, a tokenizer.json that BpeTokenizer reads: byte-level BPE with a known split
// pattern and no normalizer) take the BpeTokenizer fast path behind make_tokenizer(); any other
// tokenizer.json (SentencePiece-style BPE, WordPiece, normalizers...) is read by
// load_tokenizer(), the full Hugging Face pipeline. Both give Hugging Face's ids.
struct TokenizerChoice {
  std::shared_ptr<const Tokenizer> tokenizer;
  std::string source = "none";
};
TokenizerChoice choose_tokenizer(const Model& model, std::string_view choice = "auto");

// A tokenizer by reference, as `tokenize --model` and `train --tokenizer` take it: "" or "gpt2"
// (GPT-2's vocabulary from setup), a folder (tokenizer.json, or vocab.json + merges.txt), a
// tokenizer.json, or a .gguf (its own vocabulary). The fast path first, as above.
// Error(kNotFound) when the path does not exist or a folder holds no tokenizer files; what the
// loaders throw (kCorrupt, kUnsupported) for bad files.
std::shared_ptr<const Tokenizer> open_tokenizer(const std::string& ref);

// What choose_tokenizer() would pick, without loading it (GPT-2's merges cost ~100 ms, over
// `info`'s budget): source as above, and name "gpt2", the tokenizer files beside the weights,
// "tokenizer.ggml.*", the explicit path, or "". The gpt2-shape rule is reported when the shape
// matches; loading also checks that the vocabulary agrees with GPT-2's tokens.
struct TokenizerPlan {
  std::string source = "none";
  std::string name;
};
TokenizerPlan plan_tokenizer(const Model& model, std::string_view choice = "auto");

// Loads `ref` as load_model() does, or for "" the embedded default model (trained on first use,
// reporting to `progress`; its Model::ref is "default"). What ModelHandle::open() loads; for
// front ends that need the Model itself (info, index build).
Model load_model_or_default(const std::string& ref, const ModelOptions& options = {},
                            const ProgressFn& progress = nullptr);

struct HandleOptions {
  ModelOptions model;              // matrix (input/output), explicit tensor, strict UTF-8
  std::string tokenizer = "auto";  // see choose_tokenizer()
  ProgressFn progress;             // first-use training of the default model
};

class ModelHandle {
 public:
  // Opens `ref` ("" = the default model). The matrix is mapped, not copied; the tokenizer is
  // chosen now but loaded on first use of tokenizer() / words().
  static std::shared_ptr<ModelHandle> open(const std::string& ref, const HandleOptions& options);
  static std::shared_ptr<ModelHandle> open(const std::string& ref);
  // Wraps an already loaded model (tests, the trainer's output).
  static std::shared_ptr<ModelHandle> from_model(Model model, const HandleOptions& options = {},
                                                 bool is_default = false);

  ModelHandle(const ModelHandle&) = delete;
  ModelHandle& operator=(const ModelHandle&) = delete;

  const Model& model() const { return model_; }
  const EmbeddingTable& table() const { return model_.emb.table; }
  const Vocabulary& vocab() const { return model_.emb.vocab; }
  // "default" for the default model, else the reference as given.
  const std::string& name() const { return model_.ref; }
  bool is_default() const { return is_default_; }
  // Rows eligible for search (padded rows beyond the tokenizer excluded).
  size_t n_search_rows() const;

  // The tokenizer (nullptr when the policy found none); loaded on first call. Word queries,
  // tokenize / decode / embed, explore and eval all go through it.
  const Tokenizer* tokenizer() const;
  // Which rule of choose_tokenizer() applied: "metadata", "folder", "gguf", "gpt2-shape",
  // "flag" (an explicit choice), or "none". Loads the tokenizer if needed.
  const std::string& tokenizer_source() const;
  // Whether tokenizer() has been loaded already (it never loads).
  bool tokenizer_loaded() const;
  // Word -> rows with this handle's tokenizer (built on first call).
  const WordLookup& words() const;

  // The shared resource named `key`, built by `build` on first use (see the file comment).
  template <class T>
  std::shared_ptr<T> resource(const std::string& key,
                              const std::function<std::shared_ptr<T>()>& build) const {
    return std::static_pointer_cast<T>(
        resource_any(key, [&]() -> std::shared_ptr<void> { return build(); }));
  }

 private:
  ModelHandle(Model model, HandleOptions options, bool is_default);
  std::shared_ptr<void> resource_any(const std::string& key,
                                     const std::function<std::shared_ptr<void>()>& build) const;
  void load_tokenizer() const;

  Model model_;
  HandleOptions options_;
  bool is_default_ = false;

  mutable std::once_flag tok_once_, words_once_;
  mutable TokenizerChoice tok_;
  mutable std::atomic<bool> tok_loaded_{false};
  mutable std::unique_ptr<WordLookup> words_;

  struct Slot {
    std::mutex mu;
    std::shared_ptr<void> value;
  };
  mutable std::mutex slots_mu_;
  mutable std::map<std::string, std::shared_ptr<Slot>> slots_;
};

using ModelHandlePtr = std::shared_ptr<ModelHandle>;

}  // namespace embedscope
