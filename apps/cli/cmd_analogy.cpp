// embedscope analogy: "a is to b as c is to ?" by 3CosAdd or 3CosMul (gensim semantics).
#include <cstdio>

#include "command.h"
#include "embedscope/core/error.h"
#include "search_cli.h"

namespace embedscope::cli {
namespace {

struct AnalogyOpts {
  SearchFlags f;
  std::string method = "3cosadd";
};

int run_analogy(AnalogyOpts o) {
  std::string ref = take_model_ref(o.f, 3);
  if (o.f.args.size() != 3)
    throw Error(ErrorCode::kInvalidArgument,
                "analogy needs three words A B C (A is to B as C is to ?), got " +
                    std::to_string(o.f.args.size()));
  LoadedSearch ls = load_search(ref, o.f);
  std::optional<std::vector<uint8_t>> allow;
  SearchOptions so = search_options(ls, o.f, &allow);
  AnalogyMethod method = parse_analogy_method(o.method);
  std::vector<Term> terms;
  json inputs = json::array();
  const float weights[3] = {-1.0f, 1.0f, 1.0f};  // gensim: positive=[b, c], negative=[a]
  for (size_t i = 0; i < 3; ++i) {
    ResolvedWord r;
    terms.push_back(resolve_term(ls, o.f.args[i], weights[i], &r));
    json p = resolved_json(r);
    p["word"] = o.f.args[i];
    inputs.push_back(p);
    if (!o.f.include_query) so.exclude.insert(so.exclude.end(), r.exclude.begin(), r.exclude.end());
  }
  double t0 = now_ms();
  auto nn = analogy(*ls.searcher, terms, method, so);
  double ms = now_ms() - t0;
  if (o.f.json) {
    print_json(json{{"a", o.f.args[0]}, {"b", o.f.args[1]}, {"c", o.f.args[2]},
                    {"method", analogy_method_name(method)}, {"mode", search_mode_name(so.mode)},
                    {"inputs", inputs}, {"model", ls.model->path}, {"elapsed_ms", ms},
                    {"neighbors", neighbors_json(ls, nn, Metric::kCosine)}});
    return kExitOk;
  }
  std::printf("%s : %s :: %s : ?   (%s, %.2f ms)\n", printable(o.f.args[0]).c_str(),
              printable(o.f.args[1]).c_str(), printable(o.f.args[2]).c_str(),
              std::string(analogy_method_name(method)).c_str(), ms);
  print_neighbors(ls, nn, Metric::kCosine);
  return kExitOk;
}

Command reg(
    "analogy", "A is to B as C is to ? (3CosAdd / 3CosMul, gensim semantics)",
    [](CLI::App& app) -> Runner {
      auto o = std::make_shared<AnalogyOpts>();
      app.add_option("ARGS", o->f.args, "[FILE] A B C");
      add_search_flags(app, o->f, true);
      app.add_option("--method", o->method, "3cosadd (default; gensim most_similar) or 3cosmul (most_similar_cosmul)");
      app.footer(
          "Example:\n"
          "  embedscope analogy vectors.bin man king woman -k 5 --json     # queen ...\n"
          "Inputs are unit-normalised and excluded from the answer (--include-query keeps them).\n"
          "JSON: {\"a\",\"b\",\"c\",\"method\",\"mode\",\"neighbors\":[{\"id\",\"token\",\"score\"}...],\"elapsed_ms\"}");
      return [o] { return run_analogy(*o); };
    },
    21);

}  // namespace
}  // namespace embedscope::cli
