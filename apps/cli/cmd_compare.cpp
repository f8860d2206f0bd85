// embedscope compare A B: neighbour overlap and Procrustes-aligned drift between two tables.
#include "common.h"

namespace embedscope::cli {
namespace {

struct Opts {
  std::string a, b;
  CompareOptions c;
  bool json = false;
};

int run(Opts& o) {
  ModelHandlePtr a = open_handle(o.a), b = open_handle(o.b);
  return print(o.json, api::compare(*a, *b, o.c));
}

void flags(CLI::App& app, Opts& o) {
  app.add_option("A", o.a, "first model (file, folder or hub id)")->required();
  app.add_option("B", o.b, "second model (shared vocabulary or same tokenizer)")->required();
  api::describe(Bind{app}, o.c);
  add_json_flag(app, o.json);
}

Cmd<Opts> reg("compare", flags, run);

}  // namespace
}  // namespace embedscope::cli
