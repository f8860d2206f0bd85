// embedscope compare A B: neighbour overlap and Procrustes-aligned drift between two tables.
#include <cstdio>
#include <memory>

#include "command.h"
#include "common.h"
#include "embedscope/api/compare.h"

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
  const CompareResult& r = rep.result;
  if (o.json) {
    print_json(api::to_json(rep));
    return kExitOk;
  }
  std::printf("%s vs %s: %zu shared rows (matched by %s)\n", rep.a.c_str(), rep.b.c_str(),
              r.n_shared, r.matched_by.c_str());
  std::printf("overlap@%zu: %.3f mean over %zu words\n", o.c.k, r.mean_overlap, r.overlaps.size());
  if (r.aligned) {
    std::printf("Procrustes-aligned drift (1 - cos): mean %.4f, median %.4f\n", r.mean_drift,
                r.median_drift);
    std::printf("moved most:\n");
    for (auto& w : r.moved) std::printf("  %-20s %.4f\n", printable(w.word).c_str(), w.drift);
  } else {
    std::printf("dims differ (%zu vs %zu): no Procrustes alignment\n", a->table().dim(),
                b->table().dim());
  }
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
      app.add_flag("--json", o->json, "machine-readable output");
      app.footer(
          "Examples:\n  embedscope compare before.bin after.bin -k 10\n  embedscope compare a.vec "
          "b.vec --json");
      return [o] { return run(*o); };
    },
    61);

}  // namespace
}  // namespace embedscope::cli
