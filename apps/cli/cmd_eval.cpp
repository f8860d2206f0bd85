// embedscope eval analogy|similarity FILE: gensim-compatible intrinsic evaluation.
#include "common.h"
#include "embedscope/api/eval.h"

namespace embedscope::cli {
namespace {

struct Opts {
  std::string kind, file, model, tokenizer = "auto";
  EvalOptions e;
  bool json = false;
};

template <class R>
int report(const ModelHandle& h, const Opts& o, const R& r) {
  if (auto w = api::oov_warning(h, r.oov_ratio); !w.empty())
    std::fprintf(stderr, "warning: %s\n", w.c_str());
  o.json ? print_json(api::to_json(h, o.file, r)) : print_text(api::to_text(h, r));
  return kExitOk;
}

int run(Opts& o) {
  ModelHandlePtr h = open_handle(o.model, o.tokenizer);
  if (o.kind == "analogy") return report(*h, o, api::eval_analogies(*h, o.file, o.e));
  return report(*h, o, api::eval_pairs(*h, o.file, o.e));
}

void flags(CLI::App& app, Opts& o) {
  app.add_option("KIND", o.kind, "analogy or similarity")
      ->required()
      ->check(CLI::IsMember({"analogy", "similarity"}));
  app.add_option("FILE", o.file,
                 "questions-words file (analogy) or TAB-separated word pairs (similarity)")
      ->required();
  add_model_flag(app, o.model);
  api::describe(Bind{app}, o.e);
  app.add_option("--tokenizer", o.tokenizer,
                 "auto (the model's recorded or bundled tokenizer), gpt2, none, or a "
                 "tokenizer.json / folder (token models: words are encoded, multi-token words "
                 "composed)")
      ->capture_default_str();
  add_threads_flag(app, o.e.n_threads);
  add_json_flag(app, o.json);
}

Cmd<Opts> reg("eval", flags, run);

}  // namespace
}  // namespace embedscope::cli
