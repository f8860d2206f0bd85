// embedscope analogy: "a is to b as c is to ?" by 3CosAdd or 3CosMul (gensim semantics).
#include "command.h"
#include "embedscope/api/text_output.h"
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
  ModelHandlePtr h = open_handle(ref, "auto", o.f.threads);
  require_cosine(o.f, "analogy ranks");
  api::AnalogyResult r = api::analogy(*h, {.a = o.f.args[0],
                                           .b = o.f.args[1],
                                           .c = o.f.args[2],
                                           .k = o.f.k,
                                           .method = o.method,
                                           .mode = o.f.mode,
                                           .include_query = o.f.include_query,
                                           .center = o.f.center,
                                           .filter = filter_spec(o.f)});
  o.f.json ? print_json(api::to_json(*h, r)) : print_text(api::to_text(*h, r));
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
          "Example:\n  embedscope analogy vectors.bin man king woman -k 5 --json     # queen ...\n"
          "Inputs are unit-normalised and excluded from the answer (--include-query keeps them).\n"
          "JSON: "
          "{\"a\",\"b\",\"c\",\"method\",\"mode\",\"neighbors\":[{\"id\",\"token\",\"score\"}...]"
          ",\"elapsed_ms\"}");
      return [o] { return run_analogy(*o); };
    },
    21);

}  // namespace
}  // namespace embedscope::cli
