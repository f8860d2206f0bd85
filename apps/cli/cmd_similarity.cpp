// embedscope similarity / rank / doesnt-match: relations between words (gensim semantics).
#include "command.h"
#include "embedscope/api/text_output.h"
#include "search_cli.h"

namespace embedscope::cli {
namespace {

int run_pair(SearchFlags f, bool rank) {
  std::string ref = take_model_ref(f, 2);
  if (f.args.size() != 2)
    throw Error(ErrorCode::kInvalidArgument, std::string(rank ? "rank" : "similarity") +
                                                 " needs two words A B, got " +
                                                 std::to_string(f.args.size()));
  ModelHandlePtr h = open_handle(ref, "auto", f.threads);
  api::PairResult r =
      api::word_pair(*h, {.a = f.args[0], .b = f.args[1], .rank = rank, .center = f.center});
  f.json ? print_json(api::to_json(*h, r)) : print_text(api::to_text(r));
  return kExitOk;
}

int run_doesnt_match(SearchFlags f) {
  ModelHandlePtr h = open_search(f, -1);
  api::DoesntMatchResult r = api::doesnt_match(*h, {.words = f.args, .center = f.center});
  f.json ? print_json(api::to_json(*h, r)) : print_text(api::to_text(r));
  return kExitOk;
}

Command reg_sim(
    "similarity", "Cosine similarity of two words",
    [](CLI::App& app) -> Runner {
      auto f = std::make_shared<SearchFlags>();
      app.add_option("ARGS", f->args, "[FILE] A B");
      add_search_flags(app, *f, false);
      app.footer(
          "Example:\n  embedscope similarity vectors.bin king queen --json\nJSON: {\"a\", \"b\", "
          "\"similarity\"} (words split into pieces use the mean of their rows)");
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
          "Example:\n  embedscope rank vectors.bin king queen --json\nrank = 1 + the number of "
          "rows (not A's own) more similar to A than B is.\nJSON: {\"a\", \"b\", \"rank\", "
          "\"similarity\"}");
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
