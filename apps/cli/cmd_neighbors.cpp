// embedscope neighbors: top-k nearest rows of a word, row id, vector or expression.
#include <functional>
#include <limits>

#include "command.h"
#include "embedscope/api/text_output.h"
#include "embedscope/dist/launch.h"
#if ES_HAVE_MPI
#include "embedscope/dist/mpi_job.h"
#endif
#include "search_cli.h"

namespace embedscope::cli {
namespace {

constexpr long long kNoId = std::numeric_limits<long long>::min();

struct NeighborsOpts {
  SearchFlags f;
  long long id = kNoId;
  std::string vector_file, expr, batch, index;
  size_t ef = 64, csls = 0;
  bool check_recall = false;
};

api::NeighborQuery make_query(const ModelHandle& h, const NeighborsOpts& o) {
  int given = (o.id != kNoId) + !o.vector_file.empty() + !o.expr.empty() + !o.f.args.empty();
  if (given != 1)
    throw Error(ErrorCode::kInvalidArgument,
                "give exactly one query: WORD, --id N, --vector FILE or --expr \"a - b + c\"");
  if (o.id != kNoId) return api::NeighborQuery::row(o.id);
  if (!o.vector_file.empty())
    return api::NeighborQuery::vec(api::read_query_vector(o.vector_file, h.table().dim()),
                                   o.vector_file);
  if (!o.expr.empty()) return api::NeighborQuery::expr(o.expr);
  return api::NeighborQuery::word(o.f.args[0]);
}

int print_batch(const ModelHandle& h, const NeighborsOpts& o, const api::NeighborsResult& res) {
  size_t n_ok = 0;
  for (const auto& a : res.answers) {
    n_ok += a.error.empty();
    if (o.f.json) print_json(api::batch_line_json(h, res, a), false);
  }
  if (!o.f.json) print_text(api::batch_text(h, res));
  std::fprintf(stderr, "batch: %zu queries in %.3f ms (%s, %zu threads, %s)\n", n_ok,
               res.elapsed_ms, std::string(search_mode_name(res.mode)).c_str(), res.threads,
               o.f.json ? "json" : "text");
  return kExitOk;
}

int run_batch(const ModelHandle& h, const NeighborsOpts& o, api::NeighborsRequest req) {
  if (!o.f.args.empty() || o.id != kNoId || !o.vector_file.empty() || !o.expr.empty())
    throw Error(ErrorCode::kInvalidArgument,
                "--batch takes its queries from the file; give no other query");
  req.queries = api::read_batch_queries(o.batch);
  req.force_batch = true;
  if (dist::launched_process_count() <= 1) return print_batch(h, o, api::neighbors(h, req));
#if ES_HAVE_MPI
  // Each process searches its share of the rows; rank 0 merges and prints.
  dist::MpiJob mpi;
  req.batch_search = std::bind_front(&dist::sharded_search_batch, std::ref(mpi));
  return dist::run_rank(
      mpi,
      [&] {
        api::NeighborsResult res = api::neighbors(h, req);
        return mpi.rank() == 0 ? print_batch(h, o, res) : kExitOk;
      },
      [](const std::exception& e) { return exit_code_for(e); });
#else
  throw Error(ErrorCode::kUnsupported, dist::mpi_missing_message());
#endif
}

int run_neighbors(NeighborsOpts o) {
  bool by_word = o.id == kNoId && o.vector_file.empty() && o.expr.empty() && o.batch.empty();
  ModelHandlePtr h = open_search(o.f, by_word ? 1 : 0);
  api::NeighborsRequest req;
  req.k = o.f.k;
  req.metric = o.f.metric;
  req.mode = o.f.mode;
  req.include_query = o.f.include_query;
  req.center = o.f.center;
  req.csls_k = o.csls;
  req.filter = filter_spec(o.f);
  if (!o.batch.empty()) return run_batch(*h, o, req);
  api::NeighborQuery q = make_query(*h, o);
  if (o.index.empty()) {
    req.queries.push_back(std::move(q));
    api::NeighborsResult res = api::neighbors(*h, req);
    o.f.json ? print_json(api::to_json(*h, res)) : print_text(api::to_text(*h, res));
    return kExitOk;
  }
  require_cosine(o.f, "--index searches");
  if (o.csls) throw Error(ErrorCode::kInvalidArgument, "--csls does not apply to --index");
  api::HnswResult res = hnsw_query(*h, o.f, o.index, std::move(q), o.ef, o.check_recall);
  o.f.json ? print_json(api::to_json(*h, res)) : print_text(api::to_text(*h, res));
  return kExitOk;
}

Command reg(
    "neighbors", "Nearest rows of a word, row id, vector or expression",
    [](CLI::App& app) -> Runner {
      auto o = std::make_shared<NeighborsOpts>();
      app.add_option("ARGS", o->f.args,
                     "[FILE] WORD: the model (optional) and the query word ('#123' = row 123)");
      add_search_flags(app, o->f, true);
      app.add_option("--id", o->id, "query by row id");
      app.add_option("--vector", o->vector_file,
                     "query by a vector: a text file of dim numbers ('-' = stdin)");
      app.add_option("--expr", o->expr,
                     "query by an expression, e.g. \"king - man + woman\", \"0.5*a + b\"");
      app.add_option("--batch", o->batch,
                     "file with one query per line (word or #ID); --json prints JSON lines");
      app.add_option("--csls", o->csls,
                     "CSLS re-ranking with this many neighbours for the hubness penalty");
      app.add_option("--index", o->index, "answer from an HNSW index (embedscope index build)");
      app.add_option("--ef", o->ef, "HNSW search width (with --index)");
      app.add_flag("--check-recall", o->check_recall,
                   "with --index: compare with exact search, list misses");
      app.footer(
          "Examples:\n  embedscope neighbors vectors.bin king -k 5\n  embedscope neighbors "
          "--model gpt2 computer --class word --json\n  embedscope neighbors vectors.bin --expr "
          "\"king - man + woman\" --mode fast\n  embedscope neighbors vectors.bin --batch "
          "words.txt --json --threads 2\n  mpirun -np 4 embedscope neighbors big.npy --batch "
          "words.txt --json  (row shards)\nJSON: {\"query\", \"neighbors\": [{\"id\", \"token\", "
          "\"score\"}...], \"mode\", \"elapsed_ms\"},\nsorted by score descending, ties by id "
          "(L2: score = -distance).");
      return [o] { return run_neighbors(*o); };
    },
    20);

}  // namespace
}  // namespace embedscope::cli
