// embedscope stats: norms, anisotropy, hubness, PCA spectrum of one table.
#include "common.h"

namespace embedscope::cli {
namespace {

struct Opts {
  std::string model;
  StatsOptions s;
  bool json = false;
};

int run(Opts& o) {
  ModelHandlePtr h = open_handle(o.model);
  return print(o.json, api::stats(*h, o.s), *h);
}

void flags(CLI::App& app, Opts& o) {
  app.add_option("MODEL", o.model,
                 "model: file, folder or hub id (default: the embedded default model)");
  api::describe(Bind{app}, o.s);
  add_json_flag(app, o.json);
}

Cmd<Opts> reg("stats", flags, run);

}  // namespace
}  // namespace embedscope::cli
