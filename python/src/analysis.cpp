// Evaluation (gensim's evaluate_word_pairs / evaluate_word_analogies), explore, stats, compare.
#include <string>

#include "binding.h"
#include "embedscope/analysis/evaluate.h"
#include "embedscope/analysis/table_stats.h"
#include "embedscope/api/explore.h"
#include "embedscope/core/thread_pool.h"

namespace embedscope::python {
namespace {

py::dict dist_dict(const Distribution& d) {
  py::dict o;
  o["mean"] = d.mean;
  o["sd"] = d.sd;
  o["min"] = d.min;
  o["p01"] = d.p01;
  o["p50"] = d.p50;
  o["p99"] = d.p99;
  o["max"] = d.max;
  return o;
}

}  // namespace

void bind_analysis(PyModelClass& cls) {
  cls.def("evaluate_word_pairs",
          [](const PyModel& s, const std::string& path, size_t restrict_vocab,
             bool case_insensitive, bool dummy4unknown) {
            auto h = s.h();
            PairsResult r;
            {
              py::gil_scoped_release nogil;
              r = evaluate_word_pairs(h->model().emb, s.word_keys() ? nullptr : h->tokenizer(),
                                      path,
                                      EvalOptions{.restrict_vocab = restrict_vocab,
                                                  .case_insensitive = case_insensitive,
                                                  .dummy4unknown = dummy4unknown,
                                                  .n_threads = process_threads()});
            }
            py::dict d;
            d["pearson"] = r.pearson;
            d["spearman"] = r.spearman;
            d["oov_ratio"] = r.oov_ratio;
            d["n_pairs"] = r.n_pairs;
            d["n_oov"] = r.n_oov;
            d["n_composed"] = r.n_composed;
            return d;
          })
      .def("evaluate_word_analogies",
           [](const PyModel& s, const std::string& path, size_t restrict_vocab,
              bool case_insensitive, bool dummy4unknown) {
             auto h = s.h();
             AnalogyResult r;
             {
               py::gil_scoped_release nogil;
               r = evaluate_analogies(h->model().emb, s.word_keys() ? nullptr : h->tokenizer(),
                                      path,
                                      EvalOptions{.restrict_vocab = restrict_vocab,
                                                  .case_insensitive = case_insensitive,
                                                  .dummy4unknown = dummy4unknown,
                                                  .n_threads = process_threads()});
             }
             py::list sections;
             for (auto& sec : r.sections) {
               py::dict d;
               d["section"] = sec.name;
               // gensim's lists of (a, b, c, expected) questions.
               auto questions = [](const std::vector<std::array<std::string, 4>>& qs) {
                 py::list out;
                 for (const auto& q : qs)
                   out.append(py::make_tuple(bytes_to_str(q[0]), bytes_to_str(q[1]),
                                             bytes_to_str(q[2]), bytes_to_str(q[3])));
                 return out;
               };
               d["correct"] = questions(sec.correct_questions);
               d["incorrect"] = questions(sec.incorrect_questions);
               sections.append(d);
             }
             py::dict d;
             d["score"] = r.score;
             d["sections"] = sections;
             d["n_questions"] = r.n_questions;
             d["n_oov"] = r.n_oov;
             d["oov_ratio"] = r.oov_ratio;
             d["n_composed"] = r.n_composed;
             return d;
           })
      // api::explore's JSON document as text (json.loads on the Python side).
      .def(
          "explore",
          [](const PyModel& s, const std::string& word, size_t k, uint64_t seed, bool all_tokens,
             const std::string& init) {
            auto h = s.h();
            py::gil_scoped_release nogil;
            api::ExploreRequest req{.word = word,
                                    .k = k,
                                    .seed = seed,
                                    .all_tokens = all_tokens,
                                    .init = init,
                                    .sample = 0,
                                    .lazy_tokenizer = true};
            return api::dump_json(api::to_json(*h, api::explore(*h, req)), -1);
          },
          py::arg("word"), py::arg("k") = 10, py::arg("seed") = 42, py::arg("all_tokens") = false,
          py::arg("init") = "")
      // table_stats: the fields of `embedscope stats --json`.
      .def(
          "stats",
          [](const PyModel& s, size_t n_pairs, size_t hub_k, size_t n_queries, size_t n_components,
             uint64_t seed) {
            auto h = s.h();
            TableStats t;
            {
              py::gil_scoped_release nogil;
              StatsOptions o;
              o.n_rows_limit = h->n_search_rows();
              o.n_pairs = n_pairs;
              o.hub_k = hub_k;
              o.n_queries = n_queries;
              o.n_components = n_components;
              o.seed = seed;
              o.n_threads = process_threads();
              t = table_stats(h->table(), o);
            }
            py::list hubs;
            for (auto& [id, c] : t.top_hubs) {
              py::dict d;
              d["id"] = id;
              d["k_occurrence"] = c;
              hubs.append(d);
            }
            py::dict anis, hub, out;
            anis["mean_cos_to_mean"] = t.mean_cos_to_mean;
            anis["random_pair_cos"] = dist_dict(t.pair_cos);
            hub["k"] = t.hub_k;
            hub["queries"] = t.n_queries;
            hub["k_occurrence_skew"] = t.k_occurrence_skew;
            hub["antihub_share"] = t.antihub_share;
            hub["top_hubs"] = hubs;
            out["rows"] = t.n_rows;
            out["dim"] = t.dim;
            out["norms"] = dist_dict(t.norms);
            out["zero_rows"] = t.n_zero;
            out["nonfinite_rows"] = t.n_nonfinite;
            out["anisotropy"] = anis;
            out["hubness"] = hub;
            out["pca_explained"] = t.pca_explained;
            return out;
          },
          py::arg("n_pairs") = 20000, py::arg("hub_k") = 10, py::arg("n_queries") = 2000,
          py::arg("n_components") = 10, py::arg("seed") = 42)
      // compare_tables: the fields of `embedscope compare --json`.
      .def(
          "compare",
          [](const PyModel& s, const PyModel& other, size_t k, size_t n_words, size_t n_moved,
             uint64_t seed) {
            auto a = s.h();
            auto b = other.h();
            CompareResult r;
            {
              py::gil_scoped_release nogil;
              CompareOptions o;
              o.k = k;
              o.n_words = n_words;
              o.n_moved = n_moved;
              o.seed = seed;
              o.n_threads = process_threads();
              r = compare_tables(a->model().emb, b->model().emb, o);
            }
            py::list overlaps, moved;
            for (auto& w : r.overlaps)
              overlaps.append(py::make_tuple(bytes_to_str(w.word), w.overlap));
            for (auto& w : r.moved) moved.append(py::make_tuple(bytes_to_str(w.word), w.drift));
            py::dict out;
            out["shared_rows"] = r.n_shared;
            out["matched_by"] = r.matched_by;
            out["k"] = k;
            out["mean_overlap"] = r.mean_overlap;
            out["overlaps"] = overlaps;
            out["aligned"] = r.aligned;
            out["mean_drift"] = r.mean_drift;
            out["median_drift"] = r.median_drift;
            out["moved"] = moved;
            return out;
          },
          py::arg("other"), py::arg("k") = 10, py::arg("n_words") = 1000, py::arg("n_moved") = 20,
          py::arg("seed") = 42);
}

}  // namespace embedscope::python
