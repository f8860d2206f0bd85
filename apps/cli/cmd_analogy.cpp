// embedscope analogy: "a is to b as c is to ?" by 3CosAdd or 3CosMul (gensim semantics).
#include <cstdio>

#include "command.h"
#include "embedscope/api/analogy.h"
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
  FilterSpec spec;
  SearchOptions so = search_options(ls, o.f, &allow, &spec);
  if (so.metric != Metric::kCosine)
    throw Error(ErrorCode::kInvalidArgument,
                "analogy ranks by cosine; drop --metric " + o.f.metric);
  api::AnalogyResult r = api::analogy(*ls.handle, {.a = o.f.args[0],
                                                   .b = o.f.args[1],
                                                   .c = o.f.args[2],
                                                   .k = so.k,
                                                   .method = o.method,
                                                   .mode = o.f.mode,
                                                   .include_query = o.f.include_query,
                                                   .center = o.f.center,
                                                   .filter = spec});
  if (o.f.json) {
    print_json(api::to_json(*ls.handle, r));
    return kExitOk;
  }
  const auto& nn = r.neighbors;
  const double ms = r.elapsed_ms;
  const AnalogyMethod method = r.method;
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
      app.add_option("--method", o->method,
                     "3cosadd (default; gensim most_similar) or 3cosmul (most_similar_cosmul)");
      app.footer(
          "Example:\n"
          "  embedscope analogy vectors.bin man king woman -k 5 --json     # queen ...\n"
          "Inputs are unit-normalised and excluded from the answer (--include-query keeps them).\n"
          "JSON: "
          "{\"a\",\"b\",\"c\",\"method\",\"mode\",\"neighbors\":[{\"id\",\"token\",\"score\"}...],"
          "\"elapsed_ms\"}");
      return [o] { return run_analogy(*o); };
    },
    21);

}  // namespace
}  // namespace embedscope::cli
