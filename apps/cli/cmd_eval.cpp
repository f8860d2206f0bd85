// embedscope eval analogy|similarity FILE: gensim-compatible intrinsic evaluation.
#include <cstdio>
#include <memory>
#include <optional>

#include "command.h"
#include "common.h"
#include "embedscope/api/eval.h"
#include "embedscope/core/thread_pool.h"

namespace embedscope::cli {
namespace {

struct Opts {
  std::string kind, file, model, tokenizer = "auto";
  EvalOptions e;
  bool case_sensitive = false, json = false;
};

int run(Opts o) {
  o.e.case_insensitive = !o.case_sensitive;
  if (o.e.n_threads == 0) o.e.n_threads = process_threads();
  HandleOptions ho;
  ho.tokenizer = o.tokenizer;
  ModelHandlePtr h = open_handle(o.model, ho);
  if (o.kind == "analogy") {
    AnalogyResult r = api::eval_analogies(*h, o.file, o.e);
    if (auto w = api::oov_warning(*h, r.oov_ratio); !w.empty())
      std::fprintf(stderr, "warning: %s\n", w.c_str());
    if (o.json) {
      print_json(api::to_json(*h, o.file, r));
      return kExitOk;
    }
    for (auto& s : r.sections) {
      size_t n = s.correct + s.incorrect;
      std::printf("%-32s %6.2f%%  (%zu/%zu)\n", s.name.c_str(),
                  n ? 100.0 * double(s.correct) / double(n) : 0.0, s.correct, n);
    }
    std::printf(
        "questions %zu, out of vocabulary %zu (%.1f%%)%s\n", r.n_questions, r.n_oov, r.oov_ratio,
        r.n_composed ? (", multi-token words composed: " + std::to_string(r.n_composed)).c_str()
                     : "");
    return kExitOk;
  }
  PairsResult r = api::eval_pairs(*h, o.file, o.e);
  if (auto w = api::oov_warning(*h, r.oov_ratio); !w.empty())
    std::fprintf(stderr, "warning: %s\n", w.c_str());
  if (o.json) {
    print_json(api::to_json(*h, o.file, r));
    return kExitOk;
  }
  std::printf("Spearman %.4f  Pearson %.4f  pairs %zu  out of vocabulary %zu (%.1f%%)%s\n",
              r.spearman, r.pearson, r.n_pairs, r.n_oov, r.oov_ratio,
              r.n_composed
                  ? (", multi-token words composed: " + std::to_string(r.n_composed)).c_str()
                  : "");
  return kExitOk;
}

Command reg(
    "eval", "Analogy / word-similarity evaluation with gensim's semantics",
    [](CLI::App& app) -> Runner {
      auto o = std::make_shared<Opts>();
      app.add_option("KIND", o->kind, "analogy or similarity")
          ->required()
          ->check(CLI::IsMember({"analogy", "similarity"}));
      app.add_option("FILE", o->file,
                     "questions-words file (analogy) or TAB-separated word pairs (similarity)")
          ->required();
      app.add_option("--model,-m", o->model, "model (default: the embedded default model)");
      app.add_option("--restrict", o->e.restrict_vocab,
                     "only the N most frequent rows (gensim restrict_vocab)")
          ->capture_default_str();
      app.add_flag("--case-sensitive", o->case_sensitive,
                   "do not upper-case words (gensim case_insensitive=False)");
      app.add_flag("--dummy4unknown", o->e.dummy4unknown,
                   "count OOV questions as wrong / pairs as 0 (gensim)");
      app.add_option(
             "--tokenizer", o->tokenizer,
             "auto (the model's recorded or bundled tokenizer), gpt2, none, or a tokenizer.json / "
             "folder (token models: words are encoded, multi-token words composed)")
          ->capture_default_str();
      app.add_option("--threads", o->e.n_threads, "search threads (default: all cores)");
      app.add_flag("--json", o->json, "machine-readable output");
      app.footer(
          "Examples:\n  embedscope eval analogy questions-words.txt --model vectors.bin\n"
          "  embedscope eval similarity wordsim353.tsv --model vectors.bin --json");
      return [o] { return run(*o); };
    },
    62);

}  // namespace
}  // namespace embedscope::cli
