// embedscope explore WORD: labelled neighbours, a random baseline and a verdict.
#include "command.h"
#include "common.h"
#include "embedscope/api/explore.h"
#include "embedscope/api/text_output.h"

namespace embedscope::cli {
namespace {

struct Opts {
  api::ExploreRequest r;
  std::string model, tokenizer = "auto";
  size_t threads = 0;
  bool json = false, timings = false;
};

int run(Opts o) {
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
    o.json ? print_json(api::to_json(*h, s)) : print_text(api::to_text(*h, s));
  } else {
    ExploreResult r = api::explore(*h, o.r);
    report();
    o.json ? print_json(api::to_json(*h, r)) : print_text(api::to_text(*h, r));
  }
  return kExitOk;
}

Command reg(
    "explore", "Labelled nearest neighbours of a word, against a random baseline",
    [](CLI::App& app) -> Runner {
      auto o = std::make_shared<Opts>();
      app.add_option("WORD", o->r.word, "the word to explore (omit with --sample)");
      add_model_flag(app, o->model);
      app.add_option("-k", o->r.k, "number of neighbours")->capture_default_str();
      add_json_flag(app, o->json);
      app.add_option("--sample", o->r.sample,
                     "explore N frequent words (seeded) and report the label mix");
      app.add_option("--seed", o->r.seed, "seed of the random baseline and of --sample")
          ->capture_default_str();
      app.add_option("--init", o->r.init,
                     "baseline init distribution (normal:STD or uniform:A; default: the model's)");
      app.add_option("--tokenizer", o->tokenizer,
                     "auto (files beside the model; GPT-2 for the default model), gpt2 or none")
          ->capture_default_str();
      app.add_flag("--all-tokens", o->r.all_tokens,
                   "consider every row, not only whole-word tokens");
      add_threads_flag(app, o->threads);
      app.add_flag("--timings", o->timings, "print phase timings (ms) to stderr");
      app.footer(
          "Labels: variant (same word up to case/space/markers, same WordNet lemma or Snowball "
          "stem,\nWordNet derivation), synonym (shared synset), related (WordNet path of <= 2 "
          "hops or a shared\nhypernym <= 2 levels up), noise (special, number/punct, subword, "
          "rare, unrelated). See docs/explore.md.\n\nExamples:\n  embedscope explore computer\n  "
          "embedscope explore king --model vectors.bin -k 5 --json\n  embedscope explore "
          "--sample 50 --model gpt2");
      return [o] {
        if (o->r.sample == 0 && o->r.word.empty())
          throw Error(ErrorCode::kInvalidArgument, "explore: give a WORD or --sample N");
        return run(*o);
      };
    },
    20);

}  // namespace
}  // namespace embedscope::cli
