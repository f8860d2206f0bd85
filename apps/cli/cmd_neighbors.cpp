// embedscope neighbors: top-k nearest rows of a word, row id, vector or expression.
#include <limits>

#include "common.h"
#include "embedscope/dist/job.h"

namespace embedscope::cli {
namespace {

constexpr long long kNoId = std::numeric_limits<long long>::min();

struct Opts {
  SearchFlags f;
  api::NeighborsRequest r;
  api::HnswRequest hnsw;  // --ef, --check-recall (the rest comes from r)
  long long id = kNoId;
  std::string vector_file, expr, batch, index;
};

api::NeighborQuery make_query(const ModelHandle& h, const Opts& o) {
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

int print_batch(const ModelHandle& h, const Opts& o, const api::NeighborsResult& res) {
  for (const auto& a : res.answers)
    if (o.f.json) print_json(api::batch_line_json(h, res, a), false);
  if (!o.f.json) print_text(api::batch_text(h, res));
  std::fputs(api::batch_summary(res, o.f.json).c_str(), stderr);
  return kExitOk;
}

int run_batch(const ModelHandle& h, Opts& o) {
  if (!o.f.args.empty() || o.id != kNoId || !o.vector_file.empty() || !o.expr.empty())
    throw Error(ErrorCode::kInvalidArgument,
                "--batch takes its queries from the file; give no other query");
  o.r.queries = api::read_batch_queries(o.batch);
  o.r.force_batch = true;
  // Under mpirun each process searches its share of the rows; rank 0 merges and prints.
  std::optional<api::NeighborsResult> res = dist::neighbors(h, o.r);
  return res ? print_batch(h, o, *res) : kExitOk;
}

int run(Opts& o) {
  bool by_word = o.id == kNoId && o.vector_file.empty() && o.expr.empty() && o.batch.empty();
  ModelHandlePtr h = open_search(o.f, by_word ? 1 : 0);
  if (!o.batch.empty()) return run_batch(*h, o);
  api::NeighborQuery q = make_query(*h, o);
  if (o.index.empty()) {
    o.r.queries.push_back(std::move(q));
    return print(o.f.json, api::neighbors(*h, o.r), *h);
  }
  require_cosine(o.r.metric, "--index searches");
  if (o.r.csls_k) throw Error(ErrorCode::kInvalidArgument, "--csls does not apply to --index");
  api::HnswRequest& x = o.hnsw;
  x.query = std::move(q);
  std::tie(x.k, x.include_query, x.center, x.filter) =
      std::tie(o.r.k, o.r.include_query, o.r.center, o.r.filter);
  return print(o.f.json, api::neighbors_hnsw(*h, o.index, x), *h);
}

void flags(CLI::App& app, Opts& o) {
  add_search_flags(app, o.f,
                   "[FILE] WORD: the model (optional) and the query word ('#123' = row 123)");
  api::describe(Bind{app}, o.r);
  app.add_option("--id", o.id, "query by row id");
  app.add_option("--vector", o.vector_file,
                 "query by a vector: a text file of dim numbers ('-' = stdin)");
  app.add_option("--expr", o.expr,
                 "query by an expression, e.g. \"king - man + woman\", \"0.5*a + b\"");
  app.add_option("--batch", o.batch,
                 "file with one query per line (word or #ID); --json prints JSON lines");
  app.add_option("--index", o.index, "answer from an HNSW index (embedscope index build)");
  api::describe_hnsw(Bind{app}, o.hnsw);
}

Cmd<Opts> reg("neighbors", flags, run);

}  // namespace
}  // namespace embedscope::cli
