// embedscope neighbors: top-k nearest rows of a word, row id, vector or expression.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "command.h"
#include "embedscope/core/error.h"
#include "embedscope/search/filters.h"
#include "embedscope/search/hnsw_index.h"
#include "search_cli.h"

namespace embedscope::cli {
namespace {

struct NeighborsOpts {
  SearchFlags f;
  long long id = -1;
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
      throw Error(ErrorCode::kInvalidArgument, path + ": value " + std::to_string(v.size()) +
                                                   " '" + tok + "' is not a finite number");
    v.push_back(x);
  }
  if (v.size() != dim)
    throw Error(ErrorCode::kInvalidArgument, path + ": " + std::to_string(v.size()) +
                                                 " values, the model's dim is " + std::to_string(dim));
  return v;
}

struct Query {
  json desc;                    // "query" field
  json resolved;                // null or resolved_json
  std::vector<float> vec;       // search space
  std::vector<TokenId> own;     // excluded unless --include-query
};

Query word_query(const LoadedSearch& ls, const std::string& word) {
  ResolvedWord r;
  Term t = resolve_term(ls, word, 1.0f, &r);
  Query q{word, resolved_json(r), {}, r.exclude};
  if (t.ids.size() == 1) {
    q.vec = ls.searcher->row(t.ids[0]);
  } else {  // pieces: their mean
    q.vec.assign(ls.searcher->dim(), 0.0f);
    for (TokenId id : t.ids) {
      auto row = ls.searcher->row(id);
      for (size_t j = 0; j < row.size(); ++j) q.vec[j] += row[j] / float(t.ids.size());
    }
  }
  return q;
}

Query make_query(const LoadedSearch& ls, const NeighborsOpts& o) {
  int given = (o.id >= 0) + !o.vector_file.empty() + !o.expr.empty() + !o.f.args.empty();
  if (given != 1)
    throw Error(ErrorCode::kInvalidArgument,
                "give exactly one query: WORD, --id N, --vector FILE or --expr \"a - b + c\"");
  if (o.id >= 0) return word_query(ls, "#" + std::to_string(o.id));
  if (!o.vector_file.empty()) {
    auto v = read_vector(o.vector_file, ls.searcher->dim());
    return Query{o.vector_file, nullptr, ls.searcher->to_search_space(v), {}};
  }
  if (!o.expr.empty()) {
    std::vector<Term> terms;
    json parts = json::array();
    std::vector<TokenId> own;
    for (const ExpressionTerm& e : parse_expression(o.expr)) {
      ResolvedWord r;
      terms.push_back(resolve_term(ls, e.word, e.weight, &r));
      json p = resolved_json(r);
      p["word"] = e.word;
      p["weight"] = e.weight;
      parts.push_back(p);
      own.insert(own.end(), r.exclude.begin(), r.exclude.end());
    }
    return Query{o.expr, parts, compose_terms(*ls.searcher, terms), own};
  }
  return word_query(ls, o.f.args[0]);
}

int run_batch(const LoadedSearch& ls, const NeighborsOpts& o, SearchOptions so) {
  std::ifstream in(o.batch, std::ios::binary);
  if (!in) throw Error(ErrorCode::kNotFound, o.batch + ": cannot open batch file");
  std::vector<std::string> lines;
  std::vector<std::optional<Query>> qs;
  std::vector<std::string> errors;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    lines.push_back(line);
    try {
      qs.push_back(word_query(ls, line));
      errors.emplace_back();
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kNotFound && e.code() != ErrorCode::kOutOfRange &&
          e.code() != ErrorCode::kInvalidArgument)
        throw;
      qs.push_back(std::nullopt);
      errors.push_back(e.what());
    }
  }
  std::vector<float> mat;
  std::vector<std::vector<TokenId>> excl;
  std::vector<size_t> which;
  for (size_t i = 0; i < qs.size(); ++i) {
    if (!qs[i]) continue;
    mat.insert(mat.end(), qs[i]->vec.begin(), qs[i]->vec.end());
    excl.push_back(o.f.include_query ? std::vector<TokenId>{} : qs[i]->own);
    which.push_back(i);
  }
  double t0 = now_ms();
  auto res = ls.searcher->search_batch(mat, which.size(), so, &excl);
  double ms = now_ms() - t0;
  std::vector<const std::vector<Neighbor>*> per(qs.size(), nullptr);
  for (size_t j = 0; j < which.size(); ++j) per[which[j]] = &res[j];
  for (size_t i = 0; i < qs.size(); ++i) {
    if (o.f.json) {
      json j{{"query", lines[i]}, {"mode", search_mode_name(so.mode)}, {"metric", metric_name(so.metric)}};
      if (per[i]) {
        j["resolved"] = qs[i]->resolved;
        j["neighbors"] = neighbors_json(ls, *per[i], so.metric);
      } else {
        j["error"] = errors[i];
      }
      print_json(j, false);
    } else if (per[i]) {
      std::printf("%s:", printable(lines[i]).c_str());
      for (const Neighbor& n : *per[i])
        std::printf(" %s(%.4f)", printable(ls.words->display(n.id)).c_str(), double(n.score));
      std::printf("\n");
    } else {
      std::printf("%s: error: %s\n", printable(lines[i]).c_str(), errors[i].c_str());
    }
  }
  std::fprintf(stderr, "batch: %zu queries in %.3f ms (%s, %zu threads, %s)\n", which.size(), ms,
               std::string(search_mode_name(so.mode)).c_str(), ls.searcher->n_threads(),
               o.f.json ? "json" : "text");
  return kExitOk;
}

int run_neighbors(NeighborsOpts o) {
  int n_words = (o.id >= 0 || !o.vector_file.empty() || !o.expr.empty() || !o.batch.empty()) ? 0 : 1;
  std::string ref = take_model_ref(o.f, n_words);
  LoadedSearch ls = load_search(ref, o.f);
  std::optional<std::vector<uint8_t>> allow;
  SearchOptions so = search_options(ls, o.f, &allow);
  so.csls_k = o.csls;
  if (!o.batch.empty()) {
    if (!o.f.args.empty() || o.id >= 0 || !o.vector_file.empty() || !o.expr.empty())
      throw Error(ErrorCode::kInvalidArgument, "--batch takes its queries from the file; give no other query");
    return run_batch(ls, o, so);
  }
  Query q = make_query(ls, o);
  if (!o.f.include_query) so.exclude = q.own;
  json j{{"query", q.desc}, {"model", ls.model->path}, {"metric", metric_name(so.metric)},
         {"k", so.k}, {"threads", ls.searcher->n_threads()}};
  if (!q.resolved.is_null()) j["resolved"] = q.resolved;
  std::vector<Neighbor> nn;
  double t0 = now_ms();
  if (!o.index.empty()) {
    if (so.metric != Metric::kCosine)
      throw Error(ErrorCode::kInvalidArgument, "--index searches by cosine; drop --metric " + o.f.metric);
    HnswIndex ix = HnswIndex::load(o.index, table_content_hash(ls.searcher->table()));
    j["index_load_ms"] = now_ms() - t0;
    t0 = now_ms();
    nn = ix.search(q.vec, {.k = so.k, .ef = o.ef, .exclude = so.exclude, .allow = so.allow});
    j["mode"] = "hnsw";
    j["ef"] = o.ef;
    j["elapsed_ms"] = now_ms() - t0;
    if (o.check_recall) {
      std::vector<uint8_t> both;
      restrict_to_indexed_rows(ls, ix.n_indexed(), so, both);
      double t1 = now_ms();
      auto exact = ls.searcher->search(q.vec, so);
      double exact_ms = now_ms() - t1;
      json missed = json::array();
      size_t hit = 0;
      for (const Neighbor& e : exact) {
        bool found = false;
        for (const Neighbor& a : nn) found = found || a.id == e.id;
        if (found) ++hit;
        else missed.push_back({{"id", e.id}, {"token", ls.words->display(e.id)}, {"score", e.score}});
      }
      double recall = exact.empty() ? 1.0 : double(hit) / double(exact.size());
      j["recall"] = recall;
      j["missed"] = missed;
      j["exact_ms"] = exact_ms;
    }
  } else {
    nn = ls.searcher->search(q.vec, so);
    j["mode"] = search_mode_name(so.mode);
    j["elapsed_ms"] = now_ms() - t0;
  }
  if (so.csls_k) j["csls_k"] = so.csls_k;
  if (ls.searcher->centered()) j["centered"] = true;
  j["neighbors"] = neighbors_json(ls, nn, so.metric);
  if (o.f.json) {
    print_json(j);
    return kExitOk;
  }
  std::string what = q.desc.is_string() ? q.desc.get<std::string>() : q.desc.dump();
  std::printf("neighbors of '%s' (%s, %s, %.2f ms):\n", printable(what).c_str(),
              std::string(metric_name(so.metric)).c_str(), j["mode"].get<std::string>().c_str(),
              j["elapsed_ms"].get<double>());
  if (j.contains("resolved") && j["resolved"].is_object() && j["resolved"]["how"] == "pieces") {
    std::printf("  (not one token: mean of");
    for (const auto& p : j["resolved"]["pieces"]) std::printf(" %s", printable(p.get<std::string>()).c_str());
    std::printf(")\n");
  }
  if (j.contains("resolved") && j["resolved"].is_object() && j["resolved"]["how"] == "case-variant")
    std::printf("  (not a token as typed; using %s)\n",
                printable(j["resolved"]["pieces"][0].get<std::string>()).c_str());
  print_neighbors(ls, nn, so.metric);
  if (j.contains("recall")) {
    std::printf("recall@%zu vs exact: %.3f", so.k, j["recall"].get<double>());
    for (const auto& m : j["missed"]) std::printf("  missed %s", printable(m["token"].get<std::string>()).c_str());
    std::printf("\n");
  }
  return kExitOk;
}

Command reg(
    "neighbors", "Nearest rows of a word, row id, vector or expression",
    [](CLI::App& app) -> Runner {
      auto o = std::make_shared<NeighborsOpts>();
      app.add_option("ARGS", o->f.args, "[FILE] WORD: the model (optional) and the query word ('#123' = row 123)");
      add_search_flags(app, o->f, true);
      app.add_option("--id", o->id, "query by row id");
      app.add_option("--vector", o->vector_file, "query by a vector: a text file of dim numbers ('-' = stdin)");
      app.add_option("--expr", o->expr, "query by an expression, e.g. \"king - man + woman\", \"0.5*a + b\"");
      app.add_option("--batch", o->batch, "file with one query per line (word or #ID); --json prints JSON lines");
      app.add_option("--csls", o->csls, "CSLS re-ranking with this many neighbours for the hubness penalty");
      app.add_option("--index", o->index, "answer from an HNSW index (embedscope index build)");
      app.add_option("--ef", o->ef, "HNSW search width (with --index)");
      app.add_flag("--check-recall", o->check_recall, "with --index: compare with exact search, list misses");
      app.footer(
          "Examples:\n"
          "  embedscope neighbors vectors.bin king -k 5\n"
          "  embedscope neighbors --model gpt2 computer --class word --json\n"
          "  embedscope neighbors vectors.bin --expr \"king - man + woman\" --mode fast\n"
          "  embedscope neighbors vectors.bin --batch words.txt --json --threads 2\n"
          "JSON: {\"query\", \"neighbors\": [{\"id\", \"token\", \"score\"}...], \"mode\", \"elapsed_ms\"},\n"
          "sorted by score descending, ties by id (L2: score = -distance).");
      return [o] { return run_neighbors(*o); };
    },
    20);

}  // namespace
}  // namespace embedscope::cli
