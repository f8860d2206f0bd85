// embedscope index build|query: an HNSW index for fast approximate neighbours.
#include "command.h"
#include "embedscope/api/text_output.h"
#include "search_cli.h"

namespace embedscope::cli {
namespace {

struct IndexOpts {
  SearchFlags f;
  api::IndexBuildRequest b;
  std::string index;
  size_t ef = 64;
  bool check_recall = false;
};

int run_build(IndexOpts o) {
  std::string ref = take_model_ref(o.f, 0);
  if (!o.f.args.empty())
    throw Error(ErrorCode::kInvalidArgument,
                "index build takes one model (FILE or --model), got extra '" + o.f.args[0] + "'");
  double t0 = now_ms();
  o.b.n_threads = o.f.threads;
  api::IndexBuildResult r = api::build_index(load_model_ref(ref), o.b);
  json j = api::to_json(r);
  j["total_ms"] = now_ms() - t0;
  o.f.json ? print_json(j) : print_text(api::to_text(r));
  return kExitOk;
}

int run_query(IndexOpts o) {
  std::string ref = take_model_ref(o.f, 1);
  if (o.f.args.size() != 1)
    throw Error(ErrorCode::kInvalidArgument, "index query needs one query WORD (or #ID)");
  ModelHandlePtr h = open_handle(ref, "auto", o.f.threads);
  api::HnswResult res =
      hnsw_query(*h, o.f, o.index, api::NeighborQuery::word(o.f.args[0]), o.ef, o.check_recall);
  o.f.json ? print_json(api::to_json(*h, res)) : print_text(api::index_query_text(*h, res));
  return kExitOk;
}

Command reg(
    "index", "Build or query an HNSW index (approximate cosine neighbours)",
    [](CLI::App& app) -> Runner {
      auto o = std::make_shared<IndexOpts>();
      app.require_subcommand(1);
      CLI::App* b =
          app.add_subcommand("build", "Build an index for a model and write it atomically");
      b->add_option("ARGS", o->f.args, "[FILE] the model");
      add_search_flags(*b, o->f, false);
      b->add_option("-o,--output", o->b.out, "index file to write")->required();
      b->add_option("--M", o->b.M, "HNSW graph degree (default 16)");
      b->add_option("--ef-construction", o->b.ef_construction,
                    "build-time search width (default 200)");
      b->add_flag("--all-rows", o->b.all_rows,
                  "also index rows never seen in training (by default a model with per-row counts "
                  "indexes only rows with count > 0)");
      b->footer(
          "Example:\n  embedscope index build --model vectors.bin -o vectors.hnsw --threads 2\n"
          "The file stores the model's content hash; queries refuse it when the model changed.");
      CLI::App* q = app.add_subcommand("query", "Nearest neighbours from an index");
      q->add_option("ARGS", o->f.args, "[FILE] WORD");
      add_search_flags(*q, o->f, true);
      q->add_option("--index", o->index, "index file (embedscope index build)")->required();
      q->add_option("--ef", o->ef, "search width (default 64; larger = better recall, slower)");
      q->add_flag("--check-recall", o->check_recall,
                  "compare with exact search: recall@k and the missed rows");
      q->footer(
          "Example:\n  embedscope index query --model vectors.bin --index vectors.hnsw king --ef "
          "100 --check-recall --json\nJSON: {\"query\", \"neighbors\", \"mode\": \"hnsw\", "
          "\"elapsed_ms\", \"recall\", \"missed\"}");
      app.footer(
          "Examples:\n  embedscope index build --model vectors.bin -o v.hnsw\n  embedscope index "
          "query --model vectors.bin --index v.hnsw king --check-recall");
      return [o, b] { return b->parsed() ? run_build(*o) : run_query(*o); };
    },
    25);

}  // namespace
}  // namespace embedscope::cli
