// embedscope similarity / rank / doesnt-match: relations between words (gensim semantics).
#include "common.h"

namespace embedscope::cli {
namespace {

struct Opts {
  SearchFlags f;
  bool center = false;
};

int run_pair(Opts& o, bool rank) {
  ModelHandlePtr h = open_search(o.f, 2, rank ? "rank" : "similarity", "two words A B");
  api::PairRequest q{.a = o.f.args[0], .b = o.f.args[1], .rank = rank, .center = o.center};
  return print(o.f.json, api::word_pair(*h, q), *h);
}

int run_doesnt_match(Opts& o) {
  ModelHandlePtr h = open_search(o.f, -1);
  return print(o.f.json, api::doesnt_match(*h, {.words = o.f.args, .center = o.center}), *h);
}

// The three commands' flags: the positionals, --model, --threads, --json, --center.
void flags(CLI::App& app, Opts& o) {
  add_search_flags(app, o.f, "[FILE] A B");
  api::describe_center(Bind{app}, o.center);
}

void odd_flags(CLI::App& app, Opts& o) {
  flags(app, o);
  app.get_option("ARGS")
      ->description("[FILE] WORD WORD ... (FILE when it names an existing path)")
      ->required();
}

Cmd<Opts> reg_sim("similarity", flags, [](Opts& o) { return run_pair(o, false); });
Cmd<Opts> reg_rank("rank", flags, [](Opts& o) { return run_pair(o, true); });
Cmd<Opts> reg_odd("doesnt-match", odd_flags, run_doesnt_match);

}  // namespace
}  // namespace embedscope::cli
