// embedscope similarity / rank / doesnt-match: relations between words (gensim semantics).
#include <cstdio>

#include "command.h"
#include "embedscope/core/error.h"
#include "search_cli.h"

namespace embedscope::cli {
namespace {

std::vector<Term> terms_of(const LoadedSearch& ls, const std::vector<std::string>& words,
                           json* inputs) {
  std::vector<Term> t;
  for (const std::string& w : words) {
    ResolvedWord r;
    t.push_back(resolve_term(ls, w, 1.0f, &r));
    json p = resolved_json(r);
    p["word"] = w;
    inputs->push_back(p);
  }
  return t;
}

int run_pair(SearchFlags f, bool rank) {
  std::string ref = take_model_ref(f, 2);
  if (f.args.size() != 2)
    throw Error(ErrorCode::kInvalidArgument, std::string(rank ? "rank" : "similarity") +
                                                 " needs two words A B, got " +
                                                 std::to_string(f.args.size()));
  LoadedSearch ls = load_search(ref, f);
  json inputs = json::array();
  auto t = terms_of(ls, f.args, &inputs);
  json j{{"a", f.args[0]}, {"b", f.args[1]}, {"inputs", inputs}, {"model", ls.model->path}};
  float sim = term_similarity(*ls.searcher, t[0], t[1]);
  j["similarity"] = finite_or_null(sim);
  if (rank) j["rank"] = term_rank(*ls.searcher, t[0], t[1]);
  if (f.json) {
    print_json(j);
  } else if (rank) {
    std::printf("rank of '%s' among the neighbours of '%s': %zu (cosine %.4f)\n",
                printable(f.args[1]).c_str(), printable(f.args[0]).c_str(), j["rank"].get<size_t>(),
                double(sim));
  } else {
    std::printf("%.6f\n", double(sim));
  }
  return kExitOk;
}

int run_doesnt_match(SearchFlags f) {
  std::string ref = take_model_ref(f, -1);
  LoadedSearch ls = load_search(ref, f);
  json inputs = json::array();
  auto t = terms_of(ls, f.args, &inputs);
  DoesntMatch d = doesnt_match(*ls.searcher, t);
  if (f.json) {
    json scores = json::array();
    for (size_t i = 0; i < t.size(); ++i)
      scores.push_back({{"word", f.args[i]}, {"score", finite_or_null(d.scores[i])}});
    print_json(json{{"words", f.args},
                    {"odd_one_out", f.args[d.index]},
                    {"scores", scores},
                    {"inputs", inputs},
                    {"model", ls.model->path}});
  } else {
    std::printf("%s\n", printable(f.args[d.index]).c_str());
  }
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
