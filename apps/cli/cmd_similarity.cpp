// embedscope similarity / rank / doesnt-match: relations between words (gensim semantics).
#include <cstdio>

#include "command.h"
#include "embedscope/api/relations.h"
#include "embedscope/core/error.h"
#include "search_cli.h"

namespace embedscope::cli {
namespace {

int run_pair(SearchFlags f, bool rank) {
  std::string ref = take_model_ref(f, 2);
  if (f.args.size() != 2)
    throw Error(ErrorCode::kInvalidArgument, std::string(rank ? "rank" : "similarity") +
                                                 " needs two words A B, got " +
                                                 std::to_string(f.args.size()));
  LoadedSearch ls = load_search(ref, f);
  api::PairResult r = api::word_pair(
      *ls.handle, {.a = f.args[0], .b = f.args[1], .rank = rank, .center = f.center});
  if (f.json)
    print_json(api::to_json(*ls.handle, r));
  else if (rank)
    std::printf("rank of '%s' among the neighbours of '%s': %zu (cosine %.4f)\n",
                printable(r.request.b).c_str(), printable(r.request.a).c_str(), r.rank,
                double(r.similarity));
  else
    std::printf("%.6f\n", double(r.similarity));
  return kExitOk;
}

int run_doesnt_match(SearchFlags f) {
  std::string ref = take_model_ref(f, -1);
  LoadedSearch ls = load_search(ref, f);
  api::DoesntMatchResult r = api::doesnt_match(*ls.handle, {.words = f.args, .center = f.center});
  if (f.json)
    print_json(api::to_json(*ls.handle, r));
  else
    std::printf("%s\n", printable(f.args[r.odd]).c_str());
  return kExitOk;
}

Command reg_sim(
    "similarity", "Cosine similarity of two words",
    [](CLI::App& app) -> Runner {
      auto f = std::make_shared<SearchFlags>();
      app.add_option("ARGS", f->args, "[FILE] A B");
      add_search_flags(app, *f, false);
      app.footer(
          "Example:\n  embedscope similarity vectors.bin king queen --json\n"
          "JSON: {\"a\", \"b\", \"similarity\"} (words split into pieces use the mean of their "
          "rows)");
      return [f] { return run_pair(*f, false); };
    },
    22);

Command reg_rank(
    "rank", "Rank of B among the nearest neighbours of A (gensim rank)",
    [](CLI::App& app) -> Runner {
      auto f = std::make_shared<SearchFlags>();
      app.add_option("ARGS", f->args, "[FILE] A B");
      add_search_flags(app, *f, false);
      app.footer(
          "Example:\n  embedscope rank vectors.bin king queen --json\n"
          "rank = 1 + the number of rows (not A's own) more similar to A than B is.\n"
          "JSON: {\"a\", \"b\", \"rank\", \"similarity\"}");
      return [f] { return run_pair(*f, true); };
    },
    23);

Command reg_odd(
    "doesnt-match", "Which word does not belong with the others (gensim doesnt_match)",
    [](CLI::App& app) -> Runner {
      auto f = std::make_shared<SearchFlags>();
      app.add_option("ARGS", f->args, "[FILE] WORD WORD ... (FILE when it names an existing path)")
          ->required();
      add_search_flags(app, *f, false);
      app.footer(
          "Example:\n  embedscope doesnt-match vectors.bin breakfast lunch dinner car --json\n"
          "JSON: {\"words\", \"odd_one_out\", \"scores\": [{\"word\", \"score\"}...]}");
      return [f] { return run_doesnt_match(*f); };
    },
    24);

}  // namespace
}  // namespace embedscope::cli
