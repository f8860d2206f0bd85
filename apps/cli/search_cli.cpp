#include "search_cli.h"

#include <sys/stat.h>

#include "embedscope/api/lookup.h"
#include "embedscope/search/hnsw_index.h"

namespace embedscope::cli {

void add_search_flags(CLI::App& app, SearchFlags& f, bool with_query) {
  add_model_flag(app, f.model);
  add_threads_flag(app, f.threads);
  add_json_flag(app, f.json);
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
  // An existing path is always the model (so a missing word gives an arity error, not a
  // silent switch to the default model); otherwise count the words.
  struct stat st;
  if (::stat(f.args[0].c_str(), &st) != 0 && (n_words < 0 || f.args.size() <= size_t(n_words)))
    return "";
  std::string ref = f.args[0];
  f.args.erase(f.args.begin());
  return ref;
}

ModelHandlePtr open_search(SearchFlags& f, int n_words) {
  std::string ref = take_model_ref(f, n_words);
  return open_handle(ref, "auto", f.threads);
}

FilterSpec filter_spec(const SearchFlags& f) {
  FilterSpec spec;
  if (!f.ids.empty()) spec.ids = api::parse_id_list(f.ids, "--ids");
  spec.words_file = f.words_file;
  spec.regex = f.regex;
  spec.min_count = f.min_count;
  spec.token_class = parse_token_class(f.token_class);
  spec.top_n = f.top_n;
  return spec;
}

void require_cosine(const SearchFlags& f, const std::string& what) {
  if (parse_metric(f.metric) != Metric::kCosine)
    throw Error(ErrorCode::kInvalidArgument, what + " by cosine; drop --metric " + f.metric);
}

api::HnswResult hnsw_query(const ModelHandle& h, const SearchFlags& f, const std::string& index,
                           api::NeighborQuery q, size_t ef, bool check_recall) {
  const double t0 = now_ms();
  HnswIndex ix = HnswIndex::load(index, table_content_hash(h.table()));
  const double load_ms = now_ms() - t0;
  api::HnswResult res = api::neighbors_hnsw(h, ix,
                                            {.query = std::move(q),
                                             .k = f.k,
                                             .ef = ef,
                                             .include_query = f.include_query,
                                             .center = f.center,
                                             .filter = filter_spec(f),
                                             .check_recall = check_recall});
  res.index_load_ms = load_ms;
  return res;
}

}  // namespace embedscope::cli
