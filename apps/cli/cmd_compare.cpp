// embedscope compare A B: neighbour overlap and Procrustes-aligned drift between two tables.
#include "command.h"
#include "common.h"
#include "embedscope/api/text_output.h"

namespace embedscope::cli {
namespace {

struct Opts {
  std::string a, b;
  CompareOptions c;
  bool json = false;
};

int run(Opts o) {
  ModelHandlePtr a = open_handle(o.a), b = open_handle(o.b);
  api::CompareReport rep = api::compare(*a, *b, o.c);
  o.json ? print_json(api::to_json(rep))
         : print_text(api::to_text(rep, a->table().dim(), b->table().dim()));
  return kExitOk;
}

Command reg(
    "compare", "Neighbour overlap@k and Procrustes-aligned drift between two tables",
    [](CLI::App& app) -> Runner {
      auto o = std::make_shared<Opts>();
      app.add_option("A", o->a, "first model (file, folder or hub id)")->required();
      app.add_option("B", o->b, "second model (shared vocabulary or same tokenizer)")->required();
      app.add_option("-k", o->c.k, "neighbours for overlap@k")->capture_default_str();
      app.add_option("--words", o->c.n_words, "sampled shared words for overlap (0 = all)")
          ->capture_default_str();
      app.add_option("--moved", o->c.n_moved, "rows that moved most to list")
          ->capture_default_str();
      app.add_option("--seed", o->c.seed, "sampling seed")->capture_default_str();
      app.add_option("--threads", o->c.n_threads, "search threads")->capture_default_str();
      add_json_flag(app, o->json);
      app.footer(
          "Examples:\n  embedscope compare before.bin after.bin -k 10\n  embedscope compare "
          "a.vec b.vec --json");
      return [o] { return run(*o); };
    },
    61);

}  // namespace
}  // namespace embedscope::cli
