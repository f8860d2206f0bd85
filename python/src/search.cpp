// Similarity, batch search and neighbours: most_similar (3CosAdd), most_similar_cosmul, similarity,
// rank, doesnt_match, cosines, search (exact / fast / hnsw), build_hnsw, neighbors.
#include <cmath>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "binding.h"
#include "embedscope/api/neighbors.h"
#include "embedscope/core/error.h"
#include "embedscope/core/thread_pool.h"
#include "embedscope/search/hnsw_index.h"

namespace embedscope::python {
namespace {

// Validates a query batch for search(): 2-D, C-contiguous, float32 (zero copy) or float16
// (widened), dim columns, finite. Returns a pointer to float32 rows (into `widened` for F16).
const float* query_rows(const py::array& q, size_t dim, std::vector<float>& widened,
                        size_t* n_out) {
  const std::string pass = "pass a C-contiguous float32 array of shape (n, " + std::to_string(dim) +
                           "), e.g. np.ascontiguousarray(Q, dtype=np.float32)";
  bool f32 = q.dtype().is(py::dtype::of<float>());
  bool f16 = q.dtype().is(py::dtype("float16"));
  if (!f32 && !f16)
    throw py::value_error("search: Q has dtype " + std::string(py::str(q.dtype())) + "; " + pass);
  if (q.ndim() != 2)
    throw py::value_error("search: Q has " + std::to_string(q.ndim()) + " dimension(s); " + pass +
                          " (one query: Q.reshape(1, -1))");
  if (static_cast<size_t>(q.shape(1)) != dim)
    throw py::value_error("search: Q has " + std::to_string(q.shape(1)) +
                          " columns but the model's vectors have " + std::to_string(dim) + "; " +
                          pass);
  if (!(q.flags() & py::array::c_style))
    throw py::value_error("search: Q is not C-contiguous; " + pass);
  size_t n = static_cast<size_t>(q.shape(0));
  if (n == 0) throw py::value_error("search: Q has no rows; " + pass);
  *n_out = n;
  const float* rows = nullptr;
  if (f32) {
    rows = static_cast<const float*>(q.data());
  } else {
    // numpy's float16 -> float32 conversion of the (small) query batch only.
    py::array w = q.attr("astype")("float32");
    widened.assign(static_cast<const float*>(w.data()),
                   static_cast<const float*>(w.data()) + n * dim);
    rows = widened.data();
  }
  return rows;
}

void check_finite(const float* rows, size_t n, size_t dim) {
  for (size_t i = 0; i < n * dim; ++i)
    if (!std::isfinite(rows[i]))
      throw py::value_error("search: Q[" + std::to_string(i / dim) + ", " +
                            std::to_string(i % dim) +
                            "] is not finite (NaN or Inf); queries must be finite");
}

// The handle's HNSW index (cosine), built on first use of mode="hnsw"; one search at a time.
struct SharedHnsw {
  explicit SharedHnsw(HnswIndex ix) : index(std::move(ix)) {}
  std::mutex mu;
  HnswIndex index;
};
std::shared_ptr<SharedHnsw> shared_hnsw(const ModelHandle& h, size_t M, size_t ef_construction) {
  return h.resource<SharedHnsw>("hnsw:python", [&] {
    HnswBuildOptions o;
    o.M = M;
    o.ef_construction = ef_construction;
    o.n_threads = process_threads();
    o.n_rows = h.n_search_rows();
    return std::make_shared<SharedHnsw>(HnswIndex::build(h.table(), o));
  });
}

}  // namespace

void bind_search(PyModelClass& cls) {
  cls
      // most_similar: key terms (rows, weight) and vector terms (array, weight). topn == 0:
      // every score of rows [0, restrict_vocab) as an array (gensim's topn=None).
      .def(
          "most_similar",
          [](const PyModel& s, const std::vector<std::pair<std::vector<TokenId>, float>>& keys,
             const std::vector<std::pair<py::object, float>>& vec_terms, size_t topn,
             size_t restrict_vocab, const std::string& mode) -> py::object {
            auto ss = s.searcher();
            size_t dim = s.h()->table().dim();
            std::vector<std::pair<std::vector<float>, float>> vecs;
            for (auto& [v, w] : vec_terms) vecs.emplace_back(vector_arg(v, dim, "most_similar"), w);
            std::vector<Term> terms = terms_of(keys);
            if (terms.empty() && vecs.empty())
              throw py::value_error("cannot compute similarity with no input");
            SearchOptions so;
            so.k = topn;
            so.mode = parse_search_mode(mode);
            so.n_rows_limit = s.search_rows(restrict_vocab);
            if (topn == 0) {
              std::vector<float> all;
              {
                py::gil_scoped_release nogil;
                all = ss->with([&](const Searcher& sr) {
                  return sr.score_all(compose_query(sr, terms, vecs), Metric::kCosine);
                });
              }
              all.resize(std::min(all.size(), so.n_rows_limit));
              return to_array(std::move(all));
            }
            std::vector<Neighbor> nn;
            {
              py::gil_scoped_release nogil;
              nn = ss->with([&](const Searcher& sr) {
                if (vecs.empty()) return analogy(sr, terms, AnalogyMethod::kAdd, so);
                for (auto& t : terms)
                  so.exclude.insert(so.exclude.end(), t.ids.begin(), t.ids.end());
                return sr.search(compose_query(sr, terms, vecs), so);
              });
            }
            return neighbors_list(nn);
          },
          py::arg("keys"), py::arg("vectors"), py::arg("topn"), py::arg("restrict_vocab"),
          py::arg("mode") = "exact")
      .def("most_similar_cosmul",
           [](const PyModel& s, const std::vector<std::pair<std::vector<TokenId>, float>>& keys,
              size_t topn, size_t restrict_vocab) {
             auto ss = s.searcher();
             std::vector<Term> terms = terms_of(keys);
             SearchOptions so;
             so.k = topn;
             so.n_rows_limit = s.search_rows(restrict_vocab);
             std::vector<Neighbor> nn;
             {
               py::gil_scoped_release nogil;
               nn = ss->with(
                   [&](const Searcher& sr) { return analogy(sr, terms, AnalogyMethod::kMul, so); });
             }
             return neighbors_list(nn);
           })
      .def("similarity",
           [](const PyModel& s, std::vector<TokenId> a, std::vector<TokenId> b) {
             auto ss = s.searcher();
             py::gil_scoped_release nogil;
             return ss->with([&](const Searcher& sr) {
               return term_similarity(sr, Term{a, 1}, Term{b, 1});
             });
           })
      .def("rank",
           [](const PyModel& s, std::vector<TokenId> a, std::vector<TokenId> b) {
             auto ss = s.searcher();
             py::gil_scoped_release nogil;
             return ss->with([&](const Searcher& sr) {
               return term_rank(sr, Term{a, 1}, Term{b, 1});
             });
           })
      .def("doesnt_match",
           [](const PyModel& s, const std::vector<std::vector<TokenId>>& words) {
             auto ss = s.searcher();
             std::vector<Term> terms;
             for (auto& w : words) terms.push_back(Term{w, 1});
             py::gil_scoped_release nogil;
             return ss->with([&](const Searcher& sr) { return doesnt_match(sr, terms).index; });
           })
      // Cosine similarity of a query (rows' mean, or a vector) to every row, or to `others`.
      .def(
          "cosines",
          [](const PyModel& s, py::object query, std::optional<std::vector<TokenId>> others) {
            auto ss = s.searcher();
            std::vector<float> q;
            std::vector<TokenId> ids;
            bool by_rows = py::isinstance<py::list>(query);
            if (by_rows)
              ids = query.cast<std::vector<TokenId>>();
            else
              q = vector_arg(query, s.h()->table().dim(), "distances");
            std::vector<float> out;
            {
              py::gil_scoped_release nogil;
              out = ss->with([&](const Searcher& sr) {
                if (by_rows) q = compose_terms(sr, std::vector<Term>{Term{ids, 1}});
                if (!others) return sr.score_all(q, Metric::kCosine);
                std::vector<float> r;
                for (TokenId id : *others) r.push_back(sr.score(q, id, Metric::kCosine));
                return r;
              });
            }
            return to_array(std::move(out));
          },
          py::arg("query"), py::arg("others") = py::none())
      .def(
          "search",
          [](const PyModel& s, const py::array& q, long long k, const std::string& mode,
             const std::string& metric, long long ef) {
            auto h = s.h();
            size_t dim = h->table().dim(), rows = h->n_search_rows();
            if (k <= 0)
              throw py::value_error("search: k must be at least 1, got " + std::to_string(k));
            if (static_cast<size_t>(k) > rows)
              throw py::value_error("search: k = " + std::to_string(k) + " exceeds the model's " +
                                    std::to_string(rows) + " searchable rows");
            SearchOptions so;
            so.k = static_cast<size_t>(k);
            bool hnsw = mode == "hnsw";
            if (mode != "exact" && mode != "fast" && !hnsw)
              throw py::value_error("search: mode='" + mode +
                                    "': expected 'exact', 'fast' or 'hnsw'");
            if (hnsw && metric != "cosine")
              throw py::value_error("search: mode='hnsw' searches by cosine; metric='" + metric +
                                    "' needs mode='exact' or 'fast'");
            if (hnsw && ef <= 0) throw py::value_error("search: ef must be at least 1");
            so.mode = hnsw ? SearchMode::kExact : parse_search_mode(mode);
            so.metric = parse_metric(metric);
            so.n_rows_limit = rows;
            std::vector<float> widened;
            size_t n = 0;
            const float* rowsp = query_rows(q, dim, widened, &n);
            py::array_t<float> D({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(k)});
            py::array_t<int64_t> I({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(k)});
            float* d = D.mutable_data();
            int64_t* ip = I.mutable_data();
            auto ss = s.searcher();
            {
              py::gil_scoped_release nogil;
              check_finite(rowsp, n, dim);
              std::vector<std::vector<Neighbor>> res;
              if (hnsw) {
                auto ix = shared_hnsw(*h, 16, 200);
                std::lock_guard<std::mutex> lock(ix->mu);
                HnswSearchOptions ho;
                ho.k = so.k;
                ho.ef = static_cast<size_t>(ef);
                for (size_t i = 0; i < n; ++i)
                  res.push_back(ix->index.search(std::span<const float>(rowsp + i * dim, dim), ho));
              } else {
                res = ss->with([&](const Searcher& sr) {
                  return sr.search_batch(std::span<const float>(rowsp, n * dim), n, so);
                });
              }
              for (size_t i = 0; i < n; ++i)
                for (size_t j = 0; j < so.k; ++j) {
                  bool have = j < res[i].size();
                  d[i * so.k + j] =
                      have ? (so.metric == Metric::kL2 ? -res[i][j].score : res[i][j].score)
                           : -INFINITY;
                  ip[i * so.k + j] = have ? res[i][j].id : -1;
                }
            }
            return py::make_tuple(D, I);
          },
          py::arg("Q"), py::arg("k"), py::arg("mode") = "exact", py::arg("metric") = "cosine",
          py::arg("ef") = 64)
      // The exact scan's int8 prefilter (Searcher::prefilter_stats): queries it answered and
      // the rows it rescored in float32, over every lane of the model's searcher.
      .def("prefilter_stats",
           [](const PyModel& s) {
             Searcher::PrefilterStats st = s.searcher()->unlocked().prefilter_stats();
             py::dict d;
             d["queries"] = st.queries;
             d["rescored"] = st.candidates;
             // whether search(Q, k) batches can use it (the CPU has AVX-512 VNNI)
             d["batch_kernel"] = Searcher::batch_prefilter_available();
             return d;
           })
      // Builds the HNSW index now (else the first mode="hnsw" search does), with these options.
      .def(
          "build_hnsw",
          [](const PyModel& s, size_t M, size_t ef_construction) {
            auto h = s.h();
            py::gil_scoped_release nogil;
            auto ix = shared_hnsw(*h, M, ef_construction);
            return ix->index.n_indexed();
          },
          py::arg("M") = 16, py::arg("ef_construction") = 200)
      // api::neighbors for one query (a word by the library's lookup policy, "#N", a row id, a
      // vector, or an expression): its JSON document as text, as `neighbors --json` prints it.
      .def(
          "neighbors",
          [](const PyModel& s, py::object query, bool expression, size_t k,
             const std::string& metric, const std::string& mode, bool include_query, bool center,
             size_t csls_k, const std::string& token_class, const std::string& regex,
             size_t top_n) {
            auto h = s.h();
            api::NeighborsRequest req;
            if (PyUnicode_Check(query.ptr())) {
              std::string q = str_to_bytes(query);
              req.queries.push_back(expression ? api::NeighborQuery::expr(q)
                                               : api::NeighborQuery::word(q));
            } else if (PyLong_Check(query.ptr()) && !PyBool_Check(query.ptr())) {
              req.queries.push_back(api::NeighborQuery::row(query.cast<int64_t>()));
            } else {
              req.queries.push_back(
                  api::NeighborQuery::vec(vector_arg(query, h->table().dim(), "neighbors")));
            }
            req.k = k;
            req.metric = metric;
            req.mode = mode;
            req.include_query = include_query;
            req.center = center;
            req.csls_k = csls_k;
            req.filter.token_class = parse_token_class(token_class);
            req.filter.regex = regex;
            req.filter.top_n = top_n;
            py::gil_scoped_release nogil;
            api::NeighborsResult r = api::neighbors(*h, req);
            return api::dump_json(api::to_json(*h, r), -1);
          },
          py::arg("query"), py::arg("expression") = false, py::arg("k") = 10,
          py::arg("metric") = "cosine", py::arg("mode") = "exact", py::arg("include_query") = false,
          py::arg("center") = false, py::arg("csls_k") = 0, py::arg("token_class") = "any",
          py::arg("regex") = "", py::arg("top_n") = 0);
}

}  // namespace embedscope::python
