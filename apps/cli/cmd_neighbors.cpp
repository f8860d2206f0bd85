// embedscope neighbors: top-k nearest rows of a word, row id, vector or expression.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <span>
#include <sstream>

#include "command.h"
#include "embedscope/api/hnsw.h"
#include "embedscope/api/neighbors.h"
#include "embedscope/core/error.h"
#include "embedscope/dist/launch.h"
#if ES_HAVE_MPI
#include "embedscope/dist/mpi_job.h"
#endif
#include "embedscope/search/filters.h"
#include "embedscope/search/hnsw_index.h"
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

std::vector<float> read_vector(const std::string& path, size_t dim) {
  std::string text;
  if (path == "-") {
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    text = ss.str();
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(ErrorCode::kNotFound, path + ": cannot open vector file");
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  for (char& c : text)
    if (c == ',' || c == '[' || c == ']') c = ' ';
  std::istringstream ss(text);
  std::vector<float> v;
  std::string tok;
  while (ss >> tok) {
    char* end = nullptr;
    float x = std::strtof(tok.c_str(), &end);
    if (end != tok.c_str() + tok.size() || !std::isfinite(x))
      throw Error(ErrorCode::kInvalidArgument, path + ": value " + std::to_string(v.size()) + " '" +
                                                   tok + "' is not a finite number");
    v.push_back(x);
  }
  if (v.size() != dim)
    throw Error(ErrorCode::kInvalidArgument, path + ": " + std::to_string(v.size()) +
                                                 " values, the model's dim is " +
                                                 std::to_string(dim));
  return v;
}

api::NeighborQuery make_query(const LoadedSearch& ls, const NeighborsOpts& o) {
  int given = (o.id != kNoId) + !o.vector_file.empty() + !o.expr.empty() + !o.f.args.empty();
  if (given != 1)
    throw Error(ErrorCode::kInvalidArgument,
                "give exactly one query: WORD, --id N, --vector FILE or --expr \"a - b + c\"");
  if (o.id != kNoId) return api::NeighborQuery::row(o.id);
  if (!o.vector_file.empty())
    return api::NeighborQuery::vec(read_vector(o.vector_file, ls.searcher->dim()), o.vector_file);
  if (!o.expr.empty()) return api::NeighborQuery::expr(o.expr);
  return api::NeighborQuery::word(o.f.args[0]);
}

api::NeighborsRequest request_from(const NeighborsOpts& o, const SearchOptions& so,
                                   const FilterSpec& spec) {
  api::NeighborsRequest r;
  r.k = so.k;
  r.metric = o.f.metric;
  r.mode = o.f.mode;
  r.include_query = o.f.include_query;
  r.center = o.f.center;
  r.csls_k = o.csls;
  r.filter = spec;
  return r;
}

int run_batch(const LoadedSearch& ls, const NeighborsOpts& o, api::NeighborsRequest req) {
  std::ifstream in(o.batch, std::ios::binary);
  if (!in) throw Error(ErrorCode::kNotFound, o.batch + ": cannot open batch file");
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    req.queries.push_back(api::NeighborQuery::word(line));
  }
  if (req.queries.empty()) throw Error(ErrorCode::kInvalidArgument, o.batch + ": no query lines");
  req.force_batch = true;
  // Under mpirun each process searches its share of the rows; rank 0 merges and prints.
  const bool sharded = dist::launched_process_count() > 1;
#if ES_HAVE_MPI
  std::optional<dist::MpiJob> mpi;
  if (sharded) {
    mpi.emplace();
    req.batch_search = [&](const Searcher& s, std::span<const float> q, size_t n,
                           const SearchOptions& so, const std::vector<std::vector<TokenId>>* excl) {
      return dist::sharded_search_batch(*mpi, s, q, n, so, excl);
    };
  }
  api::NeighborsResult res;
  try {
    res = api::neighbors(*ls.handle, req);
  } catch (const std::exception& e) {
    if (!mpi) throw;
    // The other ranks wait in the gather: end the job, naming this rank.
    std::fprintf(stderr, "error: rank %zu of %zu failed: %s\n", mpi->rank(), mpi->size(), e.what());
    std::fflush(stderr);
    const auto* err = dynamic_cast<const Error*>(&e);
    mpi->abort(err ? exit_code_for(err->code()) : kExitInternal);
  }
  if (mpi && mpi->rank() != 0) return kExitOk;
#else
  if (sharded) throw Error(ErrorCode::kUnsupported, dist::mpi_missing_message());
  api::NeighborsResult res = api::neighbors(*ls.handle, req);
#endif
  size_t n_ok = 0;
  for (const auto& a : res.answers) {
    n_ok += a.error.empty();
    std::string q = a.query.get<std::string>();
    if (o.f.json) {
      print_json(api::batch_line_json(*ls.handle, res, a), false);
    } else if (a.error.empty()) {
      std::printf("%s:", printable(q).c_str());
      for (const Neighbor& n : a.neighbors)
        std::printf(" %s(%.4f)", printable(ls.words->display(n.id)).c_str(), double(n.score));
      std::printf("\n");
    } else {
      std::printf("%s: error: %s\n", printable(q).c_str(), a.error.c_str());
    }
  }
  std::fprintf(stderr, "batch: %zu queries in %.3f ms (%s, %zu threads, %s)\n", n_ok,
               res.elapsed_ms, std::string(search_mode_name(res.mode)).c_str(), res.threads,
               o.f.json ? "json" : "text");
  return kExitOk;
}

int run_neighbors(NeighborsOpts o) {
  int n_words =
      (o.id != kNoId || !o.vector_file.empty() || !o.expr.empty() || !o.batch.empty()) ? 0 : 1;
  std::string ref = take_model_ref(o.f, n_words);
  LoadedSearch ls = load_search(ref, o.f);
  std::optional<std::vector<uint8_t>> allow;
  FilterSpec spec;
  SearchOptions so = search_options(ls, o.f, &allow, &spec);
  so.csls_k = o.csls;
  api::NeighborsRequest req = request_from(o, so, spec);
  if (!o.batch.empty()) {
    if (!o.f.args.empty() || o.id != kNoId || !o.vector_file.empty() || !o.expr.empty())
      throw Error(ErrorCode::kInvalidArgument,
                  "--batch takes its queries from the file; give no other query");
    return run_batch(ls, o, req);
  }
  req.queries.push_back(make_query(ls, o));
  json j;
  std::vector<Neighbor> nn;
  if (o.index.empty()) {
    api::NeighborsResult res = api::neighbors(*ls.handle, req);
    j = api::to_json(*ls.handle, res);
    nn = res.answers[0].neighbors;
  } else {
    if (so.metric != Metric::kCosine)
      throw Error(ErrorCode::kInvalidArgument,
                  "--index searches by cosine; drop --metric " + o.f.metric);
    if (o.csls) throw Error(ErrorCode::kInvalidArgument, "--csls does not apply to --index");
    api::HnswResult res = hnsw_query(ls, o.f, spec, o.index, req.queries[0], o.ef, o.check_recall);
    j = api::to_json(*ls.handle, res);
    nn = res.neighbors;
  }
  if (o.f.json) {
    print_json(j);
    return kExitOk;
  }
  std::string what = j["query"].is_string() ? j["query"].get<std::string>() : j["query"].dump();
  std::printf("neighbors of '%s' (%s, %s, %.2f ms):\n", printable(what).c_str(),
              std::string(metric_name(so.metric)).c_str(), j["mode"].get<std::string>().c_str(),
              j["elapsed_ms"].get<double>());
  if (j.contains("resolved") && j["resolved"].is_object() && j["resolved"]["how"] == "pieces") {
    std::printf("  (not one token: mean of");
    for (const auto& p : j["resolved"]["pieces"])
      std::printf(" %s", printable(p.get<std::string>()).c_str());
    std::printf(")\n");
  }
  if (j.contains("resolved") && j["resolved"].is_object() && j["resolved"]["how"] == "case-variant")
    std::printf("  (not a token as typed; using %s)\n",
                printable(j["resolved"]["pieces"][0].get<std::string>()).c_str());
  print_neighbors(ls, nn, so.metric);
  if (j.contains("recall")) {
    std::printf("recall@%zu vs exact: %.3f", so.k, j["recall"].get<double>());
    for (const auto& m : j["missed"])
      std::printf("  missed %s", printable(m["token"].get<std::string>()).c_str());
    std::printf("\n");
  }
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
          "Examples:\n"
          "  embedscope neighbors vectors.bin king -k 5\n"
          "  embedscope neighbors --model gpt2 computer --class word --json\n"
          "  embedscope neighbors vectors.bin --expr \"king - man + woman\" --mode fast\n"
          "  embedscope neighbors vectors.bin --batch words.txt --json --threads 2\n"
          "  mpirun -np 4 embedscope neighbors big.npy --batch words.txt --json  (row shards)\n"
          "JSON: {\"query\", \"neighbors\": [{\"id\", \"token\", \"score\"}...], \"mode\", "
          "\"elapsed_ms\"},\n"
          "sorted by score descending, ties by id (L2: score = -distance).");
      return [o] { return run_neighbors(*o); };
    },
    20);

}  // namespace
}  // namespace embedscope::cli
