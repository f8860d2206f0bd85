// embedscope index build|query: an HNSW index for fast approximate neighbours.
#include <cstdio>

#include "command.h"
#include "embedscope/api/hnsw.h"
#include "embedscope/core/error.h"
#include "embedscope/search/filters.h"
#include "embedscope/search/hnsw_index.h"
#include "search_cli.h"

namespace embedscope::cli {
namespace {

struct IndexOpts {
  SearchFlags f;
  std::string out, index;
  size_t M = 16, ef_construction = 200, ef = 64;
  bool check_recall = false;
  bool all_rows = false;
};

int run_build(IndexOpts o) {
  std::string ref = take_model_ref(o.f, 0);
  if (!o.f.args.empty())
    throw Error(ErrorCode::kInvalidArgument,
                "index build takes one model (FILE or --model), got extra '" + o.f.args[0] + "'");
  double t0 = now_ms();
  Model m = load_model_ref(ref);
  size_t n = m.n_search_rows ? m.n_search_rows : m.emb.table.n_rows();
  // Rows never trained (count below the trainer's min_count) keep their random initial
  // vectors: noise that only costs graph quality, so they are left out when counts exist.
  std::optional<std::vector<uint8_t>> seen;
  if (!o.all_rows) seen = trained_rows(m.emb.vocab.counts(), m.emb.metadata);
  const bool seen_only = seen.has_value();
  double t1 = now_ms();
  HnswIndex ix = HnswIndex::build(m.emb.table, {.M = o.M,
                                                .ef_construction = o.ef_construction,
                                                .n_threads = o.f.threads,
                                                .n_rows = n,
                                                .allow = seen_only ? &*seen : nullptr});
  double build_ms = now_ms() - t1;
  uint64_t h = table_content_hash(m.emb.table);
  ix.save(o.out, h);
  json j{{"index", o.out},
         {"model", m.path},
         {"rows", n},
         {"indexed_rows", ix.n_indexed()},
         {"rows_selected", seen_only ? "trained (count >= min_count)" : "all"},
         {"dim", m.emb.table.dim()},
         {"M", o.M},
         {"ef_construction", o.ef_construction},
         {"model_hash", hash_hex(h)},
         {"build_ms", build_ms},
         {"total_ms", now_ms() - t0}};
  if (o.f.json)
    print_json(j);
  else
    std::printf("wrote %s: %zu of %zu rows%s, M %zu, ef_construction %zu, built in %.0f ms\n",
                o.out.c_str(), ix.n_indexed(), n, seen_only ? " (trained)" : "", o.M,
                o.ef_construction, build_ms);
  return kExitOk;
}

int run_query(IndexOpts o) {
  std::string ref = take_model_ref(o.f, 1);
  if (o.f.args.size() != 1)
    throw Error(ErrorCode::kInvalidArgument, "index query needs one query WORD (or #ID)");
  LoadedSearch ls = load_search(ref, o.f);
  std::optional<std::vector<uint8_t>> allow;
  FilterSpec spec;
  SearchOptions so = search_options(ls, o.f, &allow, &spec);
  api::HnswResult res = hnsw_query(ls, o.f, spec, o.index, api::NeighborQuery::word(o.f.args[0]),
                                   o.ef, o.check_recall);
  json j = api::to_json(*ls.handle, res);
  const std::vector<Neighbor>& nn = res.neighbors;
  const double ms = res.elapsed_ms;
  if (o.f.json) {
    print_json(j);
    return kExitOk;
  }
  std::printf("neighbors of '%s' (hnsw, ef %zu, %.3f ms):\n", printable(o.f.args[0]).c_str(), o.ef,
              ms);
  print_neighbors(ls, nn, Metric::kCosine);
  if (o.check_recall) {
    std::printf("recall@%zu vs exact: %.3f", so.k, j["recall"].get<double>());
    for (const auto& mm : j["missed"])
      std::printf("  missed %s", printable(mm["token"].get<std::string>()).c_str());
    std::printf("\n");
  }
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
      b->add_option("-o,--output", o->out, "index file to write")->required();
      b->add_option("--M", o->M, "HNSW graph degree (default 16)");
      b->add_option("--ef-construction", o->ef_construction,
                    "build-time search width (default 200)");
      b->add_flag("--all-rows", o->all_rows,
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
          "100 --check-recall --json\n"
          "JSON: {\"query\", \"neighbors\", \"mode\": \"hnsw\", \"elapsed_ms\", \"recall\", "
          "\"missed\"}");
      app.footer(
          "Examples:\n  embedscope index build --model vectors.bin -o v.hnsw\n"
          "  embedscope index query --model vectors.bin --index v.hnsw king --check-recall");
      return [o, b] { return b->parsed() ? run_build(*o) : run_query(*o); };
    },
    25);

}  // namespace
}  // namespace embedscope::cli
