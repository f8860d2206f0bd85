// The options of the library's request structs, described once: each option's names, help and
// the member it sets, so that every front end (the CLI's flags, the server's parameters, the
// Python keywords) takes the same names, help and default (the member's initialiser) from
// here instead of declaring its own copy.
//
// describe(v, request) calls the visitor v once per option, in help order:
//   v(names, member, help, spec)   an option stored as is in `member` (a bool is a flag)
//   v.text(names, help, setter)    an option given as text that the library parses; setter(s)
//                                  throws Error(kInvalidArgument) naming the flag and the value
// names are CLI11's comma-separated names ("-k,--k"); the last long name is the parameter's
// name. A describe() reads and writes nothing else, so running it over a default-constructed
// request lists every option with its default.
//
//   struct Print { template <class T> void operator()(auto names, T& m, auto help,
//                  OptionSpec = {}) { ... } void text(auto, auto, auto) {} };
//   api::ExploreRequest r;  Print p;  api::describe(p, r);
//
// Commands' summaries and --help examples are here too (CommandDoc), next to the options they
// show, so the CLI's files hold only binding and printing.
#pragma once

#include <string>
#include <string_view>

#include "embedscope/analysis/evaluate.h"
#include "embedscope/analysis/table_stats.h"
#include "embedscope/api/analogy.h"
#include "embedscope/api/explore.h"
#include "embedscope/api/hnsw.h"
#include "embedscope/api/info.h"
#include "embedscope/api/lookup.h"
#include "embedscope/api/neighbors.h"
#include "embedscope/api/projection.h"
#include "embedscope/api/relations.h"
#include "embedscope/api/train.h"
#include "embedscope/search/filters.h"

namespace embedscope::api {

// How a front end checks and shows an option beyond its C++ type.
struct OptionSpec {
  std::string_view choices = {};  // "a|b|c": the value must be one of these
  double min = 0, max = 0;        // min < max: the value must lie in [min, max]
  bool positive = false;          // the value must be > 0
  bool show_default = false;      // help shows the default (the member's initialiser)
  bool required = false;
  bool negate = false;  // a bool flag that sets false (--case-sensitive -> case_insensitive)
};

// --metric of the searches (cosine, dot, l2); analogy and HNSW accept only cosine.
template <class V>
void describe_metric(V&& v, std::string& metric) {
  v("--metric", metric, "cosine (default), dot or l2");
}

template <class V>
void describe(V&& v, FilterSpec& f) {
  v.text("--ids", "only these rows (comma-separated ids)",
         [&f](const std::string& s) { f.ids = parse_id_list(s, "--ids"); });
  v("--words-file", f.words_file, "only the rows of the words in this file (one per line)");
  v("--regex", f.regex, "only tokens whose readable form matches (ECMAScript)");
  v("--min-count", f.min_count, "only rows with at least this training count");
  v.text("--class", "token class: any, word (whole word with leading space), alpha, nospecial",
         [&f](const std::string& s) { f.token_class = parse_token_class(s); });
  v("--top-n", f.top_n, "only the N most frequent rows");
}

// --mode of the exact searches (exact, fast).
template <class V>
void describe_mode(V&& v, std::string& mode) {
  v("--mode", mode, "exact (default) or fast (int8 scan + exact re-rank)");
}

// The fields every top-k query shares (NeighborsRequest, AnalogyRequest, HnswRequest).
template <class V, class R>
void describe_query(V&& v, R& r) {
  v("-k,--k", r.k, "number of neighbours", {.positive = true});
  v("--include-query", r.include_query, "keep the query's own rows in the answer");
  describe(v, r.filter);
}

// --center alone (similarity, rank, doesnt-match, index build).
template <class V>
void describe_center(V&& v, bool& center) {
  v("--center", center, "subtract the mean row first (anisotropy correction)");
}

template <class V>
void describe(V&& v, NeighborsRequest& r) {
  describe_center(v, r.center);
  describe_metric(v, r.metric);
  describe_mode(v, r.mode);
  describe_query(v, r);
  v("--csls", r.csls_k, "CSLS re-ranking with this many neighbours for the hubness penalty");
}

template <class V>
void describe(V&& v, AnalogyRequest& r) {
  describe_center(v, r.center);
  describe_mode(v, r.mode);
  describe_query(v, r);
  v("--method", r.method,
    "3cosadd (default; gensim most_similar) or 3cosmul (most_similar_cosmul)");
}

// The HNSW search's own options (neighbors --index and index query).
template <class V>
void describe_hnsw(V&& v, HnswRequest& r) {
  v("--ef", r.ef, "HNSW search width (with --index; larger = better recall, slower)",
    {.show_default = true});
  v("--check-recall", r.check_recall,
    "with --index: compare with exact search: recall@k and the missed rows");
}

template <class V>
void describe(V&& v, HnswRequest& r) {
  describe_center(v, r.center);
  describe_query(v, r);
  describe_hnsw(v, r);
}

template <class V>
void describe(V&& v, IndexBuildRequest& r) {
  v("-o,--output", r.out, "index file to write", {.required = true});
  v("--M", r.M, "HNSW graph degree", {.show_default = true});
  v("--ef-construction", r.ef_construction, "build-time search width", {.show_default = true});
  v("--all-rows", r.all_rows,
    "also index rows never seen in training (by default a model with per-row counts indexes "
    "only rows with count > 0)");
}

template <class V>
void describe(V&& v, ExploreRequest& r) {
  v("-k", r.k, "number of neighbours", {.show_default = true});
  v("--sample", r.sample, "explore N frequent words (seeded) and report the label mix");
  v("--seed", r.seed, "seed of the random baseline and of --sample", {.show_default = true});
  v("--init", r.init, "baseline init distribution (normal:STD or uniform:A; default: the model's)");
  v("--all-tokens", r.all_tokens, "consider every row, not only whole-word tokens");
}

template <class V>
void describe(V&& v, InfoRequest& r) {
  v("--matrix", r.matrix, "input (default) or output embedding", {.choices = "input|output"});
  v("--full-stats", r.full_stats,
    "norm statistics over every row (default: 4096 rows in 64 evenly spaced runs when the "
    "matrix is over 32 MB)");
}

template <class V>
void describe(V&& v, LookupRequest& r) {
  v.text("--ids", "comma-separated row ids, e.g. 1,2,3",
         [&r](const std::string& s) { r.ids = parse_id_list(s, "--ids"); });
}

template <class V>
void describe(V&& v, ConvertRequest& r) {
  v("--to", r.to, "safetensors | npy | word2vec | word2vec-bin (default: from OUT's extension)");
  v("--tensor", r.tensor, "tensor to take from IN");
}

template <class V>
void describe(V&& v, EvalOptions& e) {
  v("--restrict", e.restrict_vocab, "only the N most frequent rows (gensim restrict_vocab)",
    {.show_default = true});
  v("--case-sensitive", e.case_insensitive,
    "do not upper-case words (gensim case_insensitive=False)", {.negate = true});
  v("--dummy4unknown", e.dummy4unknown, "count OOV questions as wrong / pairs as 0 (gensim)");
}

template <class V>
void describe(V&& v, StatsOptions& s) {
  v("-k", s.hub_k, "neighbours for hubness", {.show_default = true});
  v("--queries", s.n_queries, "hubness query rows (seeded sample)", {.show_default = true});
  v("--pairs", s.n_pairs, "random pairs for the pair-cosine distribution", {.show_default = true});
  v("--components", s.n_components, "PCA components to report", {.show_default = true});
  v("--seed", s.seed, "sampling seed", {.show_default = true});
  v("--threads", s.n_threads, "search threads", {.show_default = true});
}

template <class V>
void describe(V&& v, CompareOptions& c) {
  v("-k", c.k, "neighbours for overlap@k", {.show_default = true});
  v("--words", c.n_words, "sampled shared words for overlap (0 = all)", {.show_default = true});
  v("--moved", c.n_moved, "rows that moved most to list", {.show_default = true});
  v("--seed", c.seed, "sampling seed", {.show_default = true});
  v("--threads", c.n_threads, "search threads", {.show_default = true});
}

template <class V>
void describe(V&& v, ProjectionRequest& r) {
  v("--method", r.method, "pca (exact) or umap", {.choices = "pca|umap", .show_default = true});
  v("--dims", r.dims, "output dimensions", {.choices = "2|3", .show_default = true});
  v("--n-neighbors", r.n_neighbors, "UMAP: neighbours of the kNN graph",
    {.min = 2, .max = 200, .show_default = true});
  v("--exact-knn", r.exact_knn, "UMAP: the exact kNN graph (default: NN-descent above 4096 rows)");
  v("--min-dist", r.min_dist, "UMAP: minimum distance in the layout",
    {.min = 0, .max = 1, .show_default = true});
  v("--seed", r.seed, "UMAP: random seed (same seed and threads: same output)",
    {.show_default = true});
}

// TrainRequest with its Word2VecOptions (--threads is the front end's process-wide flag).
template <class V>
void describe(V&& v, TrainRequest& r) {
  Word2VecOptions& w = r.w;
  constexpr OptionSpec d{.show_default = true};
  v("-o,--output", r.out, "Output file (.safetensors, .bin, .txt/.vec)", {.required = true});
  v("--arch", r.arch, "skipgram or cbow", d);
  v("--dim", w.dim, "Vector size", d);
  v("--window", w.window, "Maximum context distance", d);
  v("--negative", w.negative, "Negative samples (0: off)", d);
  v("--hs", w.hs, "Hierarchical softmax");
  v("--shared-negatives", w.shared_negatives,
    "Skip-gram: one draw of negatives per center word for its whole window (~1.4x faster, "
    "slightly lower quality; default: fresh negatives for every (context, center) pair, as "
    "word2vec.c/gensim)");
  v("--classic-skipgram", w.classic_skipgram,
    "Skip-gram: word2vec.c's own per-pair loop, unpipelined (the reference; same math as the "
    "default, slower)");
  v("--sample", w.sample, "Subsampling threshold (0: off)", d);
  v("--min-count", w.min_count, "Ignore words rarer than this", d);
  v("--max-vocab", w.max_vocab, "Keep at most this many rows trained (0: all)");
  v("--epochs", w.epochs, "Passes over the corpus", d);
  v("--lr", w.lr, "Starting learning rate (default 0.025 skipgram, 0.05 cbow)");
  v("--seed", w.seed, "Random seed (one thread + a seed is reproducible)", d);
  v("--format", r.format, "safetensors, word2vec or word2vec-bin (default: from -o)");
  v("--tokenizer", r.tokenizer,
    "Train over token ids: gpt2, a tokenizer folder or a tokenizer.json");
  v("--row-stats", w.row_stats, "Also write OUT.row_stats.tsv (updates, drift)");
  v("--checkpoint-every", w.checkpoint_every,
    "Write a checkpoint every N words (atomic; OUT.ckpt)");
  v("--checkpoint", r.checkpoint, "Checkpoint path (default OUT.ckpt)");
  v("--resume", w.resume, "Continue from the checkpoint if it exists");
  v("--sync-every", w.sync_every,
    "MPI: synchronise the most frequent rows every N words of each process (0: every segment of "
    "32 chunks)",
    d);
  v("--sync-rows", w.sync_rows,
    "MPI: how many of the most frequent rows (of each matrix) sync often", d);
  v("--no-sync-tiers", w.sync_tiers,
    "MPI: sync only the --sync-rows hottest rows between epoch ends (no wider syncs of every "
    "8th, 64th... sync)",
    {.negate = true});
  v("--mpi-sync", r.mpi_sync,
    "MPI: sum (each row = last sync + every rank's change) or average (pWord2Vec)",
    {.choices = "sum|average", .show_default = true});
}

}  // namespace embedscope::api
