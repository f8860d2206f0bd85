// embedscope index build|query: an HNSW index for fast approximate neighbours.
#include "common.h"

namespace embedscope::cli {
namespace {

struct Opts {
  SearchFlags f;
  api::IndexBuildRequest b;
  api::HnswRequest q;
  std::string index;
  // Accepted as by every search command, unused: index build's --center, index query's --mode.
  bool center = false;
  std::string mode = "exact";
};

int run_build(Opts o) {
  std::string ref = take_model_ref(o.f, 0);
  if (!o.f.args.empty())
    throw Error(ErrorCode::kInvalidArgument,
                "index build takes one model (FILE or --model), got extra '" + o.f.args[0] + "'");
  double t0 = now_ms();
  o.b.n_threads = o.f.threads;
  Model m = load_model_or_default(ref, {}, stderr_progress());
  end_stderr_progress(true);  // the default model's first-use training line, if any
  api::IndexBuildResult r = api::build_index(m, o.b);
  json j = api::to_json(r);
  j["total_ms"] = now_ms() - t0;
  o.f.json ? print_json(j) : print_text(api::to_text(r));
  return kExitOk;
}

int run_query(Opts o) {
  std::string ref = take_model_ref(o.f, 1);
  if (o.f.args.size() != 1)
    throw Error(ErrorCode::kInvalidArgument, "index query needs one query WORD (or #ID)");
  ModelHandlePtr h = open_handle(ref, "auto", o.f.threads);
  o.q.query = api::NeighborQuery::word(o.f.args[0]);
  api::HnswResult res = api::neighbors_hnsw(*h, o.index, o.q);
  o.f.json ? print_json(api::to_json(*h, res)) : print_text(api::index_query_text(*h, res));
  return kExitOk;
}

Command reg("index", [](CLI::App& app) -> Runner {
  auto o = std::make_shared<Opts>();
  app.require_subcommand(1);
  CLI::App* b = add_command(app, "build");
  add_search_flags(*b, o->f, "[FILE] the model");
  api::describe_center(Bind{*b}, o->center);
  api::describe(Bind{*b}, o->b);
  CLI::App* q = add_command(app, "query");
  add_search_flags(*q, o->f, "[FILE] WORD");
  api::describe(Bind{*q}, o->q);
  api::describe_metric(Bind{*q}, o->f.metric);
  api::describe_mode(Bind{*q}, o->mode);
  q->add_option("--index", o->index, "index file (embedscope index build)")->required();
  return [o, b] { return b->parsed() ? run_build(*o) : run_query(*o); };
});

}  // namespace
}  // namespace embedscope::cli
