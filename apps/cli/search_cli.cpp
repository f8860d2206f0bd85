#include "search_cli.h"

#include <sys/stat.h>

#include <cstdio>

#include "embedscope/api/lookup.h"
#include "embedscope/api/neighbors.h"
#include "embedscope/core/error.h"
#include "embedscope/core/thread_pool.h"

namespace embedscope::cli {

void add_search_flags(CLI::App& app, SearchFlags& f, bool with_query) {
  app.add_option(
      "--model,-m", f.model,
      "model: file, Hugging Face folder or hub id (default: the embedded default model)");
  app.add_option("--threads,-t", f.threads, "threads (default: all cores)");
  app.add_flag("--json", f.json, "machine-readable output");
  app.add_flag("--center", f.center, "subtract the mean row first (anisotropy correction)");
  if (!with_query) return;
  app.add_option("-k,--k", f.k, "number of neighbours")->check(CLI::PositiveNumber);
  app.add_option("--metric", f.metric, "cosine (default), dot or l2");
  app.add_option("--mode", f.mode, "exact (default) or fast (int8 scan + exact re-rank)");
  app.add_flag("--include-query", f.include_query, "keep the query's own rows in the answer");
  app.add_option("--ids", f.ids, "only these rows (comma-separated ids)");
  app.add_option("--words-file", f.words_file,
                 "only the rows of the words in this file (one per line)");
  app.add_option("--regex", f.regex, "only tokens whose readable form matches (ECMAScript)");
  app.add_option("--min-count", f.min_count, "only rows with at least this training count");
  app.add_option("--class", f.token_class,
                 "token class: any, word (whole word with leading space), alpha, nospecial");
  app.add_option("--top-n", f.top_n, "only the N most frequent rows");
}

std::string take_model_ref(SearchFlags& f, int n_words) {
  if (!f.model.empty() || f.args.empty()) return f.model;
  bool first_is_model;
  // An existing path is always the model (so a missing word gives an arity error, not a
  // silent switch to the default model); otherwise count the words.
  struct stat st;
  first_is_model =
      ::stat(f.args[0].c_str(), &st) == 0 || (n_words >= 0 && f.args.size() > size_t(n_words));
  if (!first_is_model) return "";
  std::string ref = f.args[0];
  f.args.erase(f.args.begin());
  return ref;
}

LoadedSearch load_search(const std::string& ref, const SearchFlags& f) {
  double t0 = now_ms();
  LoadedSearch ls;
  if (f.threads) set_process_threads(f.threads);
  ls.handle = open_handle(ref);
  ls.model = &ls.handle->model();
  ls.words = &ls.handle->words();
  ls.shared = api::shared_searcher(*ls.handle, f.center);
  ls.searcher = &ls.shared->unlocked();
  ls.load_ms = now_ms() - t0;
  return ls;
}

Term resolve_term(const LoadedSearch& ls, const std::string& word, float weight,
                  ResolvedWord* info) {
  ResolvedWord r = api::resolve_word(*ls.handle, word);
  if (info) *info = r;
  return Term{r.ids, weight};
}

SearchOptions search_options(const LoadedSearch& ls, const SearchFlags& f,
                             std::optional<std::vector<uint8_t>>* allow, FilterSpec* spec_out) {
  SearchOptions o;
  o.k = f.k;
  o.metric = parse_metric(f.metric);
  o.mode = parse_search_mode(f.mode);
  o.n_rows_limit = ls.words->n_rows();
  FilterSpec spec;
  if (!f.ids.empty()) spec.ids = api::parse_id_list(f.ids, "--ids");
  spec.words_file = f.words_file;
  spec.regex = f.regex;
  spec.min_count = f.min_count;
  spec.token_class = parse_token_class(f.token_class);
  spec.top_n = f.top_n;
  *allow = build_filter(spec, *ls.words);
  if (spec_out) *spec_out = spec;
  if (*allow) o.allow = &**allow;
  return o;
}

api::HnswResult hnsw_query(const LoadedSearch& ls, const SearchFlags& f, const FilterSpec& spec,
                           const std::string& index, api::NeighborQuery q, size_t ef,
                           bool check_recall) {
  const double t0 = now_ms();
  HnswIndex ix = HnswIndex::load(index, table_content_hash(ls.searcher->table()));
  const double load_ms = now_ms() - t0;
  api::HnswResult res = api::neighbors_hnsw(*ls.handle, ix,
                                            {.query = std::move(q),
                                             .k = f.k,
                                             .ef = ef,
                                             .include_query = f.include_query,
                                             .center = f.center,
                                             .filter = spec,
                                             .check_recall = check_recall});
  res.index_load_ms = load_ms;
  return res;
}

json resolved_json(const ResolvedWord& r) { return api::resolved_json(r); }

json neighbors_json(const LoadedSearch& ls, const std::vector<Neighbor>& nn, Metric metric) {
  return api::neighbors_json(*ls.handle, nn, metric);
}

void print_neighbors(const LoadedSearch& ls, const std::vector<Neighbor>& nn, Metric metric) {
  for (size_t r = 0; r < nn.size(); ++r) {
    float v = metric == Metric::kL2 ? -nn[r].score : nn[r].score;
    std::printf("%4zu  %-24s %9.4f  #%d\n", r + 1, printable(ls.words->display(nn[r].id)).c_str(),
                double(v), nn[r].id);
  }
}

}  // namespace embedscope::cli
