// embedscope explore WORD: labelled neighbours, a random baseline and a verdict.
#include "common.h"

namespace embedscope::cli {
namespace {

struct Opts {
  api::ExploreRequest r;
  std::string model, tokenizer = "auto";
  size_t threads = 0;
  bool json = false, timings = false;
};

int run(Opts& o) {
  if (o.r.sample == 0 && o.r.word.empty())
    throw Error(ErrorCode::kInvalidArgument, "explore: give a WORD or --sample N");
  o.r.lazy_tokenizer = true;  // a one-shot process: skip loading merges when it can
  if (o.tokenizer != "auto" && o.tokenizer != "gpt2" && o.tokenizer != "none")
    throw Error(ErrorCode::kInvalidArgument,
                "--tokenizer '" + o.tokenizer + "': expected auto, gpt2 or none");
  double t0 = now_ms();
  ModelHandlePtr h = open_handle(o.model, o.tokenizer, o.threads);
  double t1 = now_ms();
  // --timings: phase costs on stderr (bench/explore_bench.sh reads them).
  auto report = [&] {
    if (o.timings)
      std::fprintf(stderr, "timings_ms: load_model %.1f explore %.1f\n", t1 - t0, now_ms() - t1);
  };
  if (o.r.sample > 0) {
    SampleResult s = api::explore_sample(*h, o.r);
    report();
    return print(o.json, s, *h);
  }
  ExploreResult r = api::explore(*h, o.r);
  report();
  return print(o.json, r, *h);
}

void flags(CLI::App& app, Opts& o) {
  app.add_option("WORD", o.r.word, "the word to explore (omit with --sample)");
  add_model_flag(app, o.model);
  api::describe(Bind{app}, o.r);
  add_json_flag(app, o.json);
  app.add_option("--tokenizer", o.tokenizer,
                 "auto (files beside the model; GPT-2 for the default model), gpt2 or none")
      ->capture_default_str();
  add_threads_flag(app, o.threads);
  app.add_flag("--timings", o.timings, "print phase timings (ms) to stderr");
}

Cmd<Opts> reg("explore", flags, run);

}  // namespace
}  // namespace embedscope::cli
