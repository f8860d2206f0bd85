// embedscope analogy: "a is to b as c is to ?" by 3CosAdd or 3CosMul (gensim semantics).
#include "common.h"

namespace embedscope::cli {
namespace {

struct Opts {
  SearchFlags f;
  api::AnalogyRequest r;
};

int run(Opts& o) {
  ModelHandlePtr h = open_search(o.f, 3, "analogy", "three words A B C (A is to B as C is to ?)");
  require_cosine(o.f.metric, "analogy ranks");
  std::tie(o.r.a, o.r.b, o.r.c) = std::tie(o.f.args[0], o.f.args[1], o.f.args[2]);
  return print(o.f.json, api::analogy(*h, o.r), *h);
}

void flags(CLI::App& app, Opts& o) {
  add_search_flags(app, o.f, "[FILE] A B C");
  api::describe(Bind{app}, o.r);
  api::describe_metric(Bind{app}, o.f.metric);
}

Cmd<Opts> reg("analogy", flags, run);

}  // namespace
}  // namespace embedscope::cli
