// _embedscope: the pybind11 binding under the Python package `embedscope` (python/embedscope).
//
// Binding code only: every operation is a library call (ModelHandle, api::shared_searcher,
// search/analogy.h, analysis/evaluate.h, api::explore); this file converts arguments and
// results, checks the shapes and dtypes of arrays passed in, maps embedscope::Error to Python
// exceptions and releases the GIL around anything that touches the table.
//
// Exceptions: Error kInvalidArgument -> ValueError, kNotFound -> NotFoundError
// (a FileNotFoundError), kOutOfRange -> IndexError, kCorrupt -> FormatError (a ValueError),
// kUnsupported -> UnsupportedError (a ValueError), kIo -> OSError; the message is the library's.
//
// Lifetime: `vectors` arrays are views of the mapping whose base is a capsule owning a
// shared_ptr to the ModelHandle, so they stay valid after the Python model object is gone.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstring>
#include <exception>
#include <filesystem>
#include <mutex>
#include <thread>
#include <memory>
#include <string>
#include <vector>

#include "embedscope/analysis/evaluate.h"
#include "embedscope/analysis/table_stats.h"
#include "embedscope/api/common.h"
#include "embedscope/api/explore.h"
#include "embedscope/api/neighbors.h"
#include "embedscope/core/error.h"
#include "embedscope/core/thread_pool.h"
#include "embedscope/formats/embeddings_file.h"
#include "embedscope/handle/model_handle.h"
#include "embedscope/search/analogy.h"
#include "embedscope/search/hnsw_index.h"
#include "embedscope/search/searcher.h"
#include "embedscope/train/word2vec.h"

namespace py = pybind11;
using namespace embedscope;

namespace {

PyObject* g_not_found = nullptr;
PyObject* g_format_error = nullptr;
PyObject* g_unsupported = nullptr;

// Raw bytes <-> Python str: UTF-8 with surrogateescape, so token bytes that are not UTF-8 round
// trip through index_to_key and back into a lookup.
py::str bytes_to_str(const std::string& s) {
  PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "surrogateescape");
  if (!o) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(o);
}
std::string str_to_bytes(const py::handle& h) {
  if (!PyUnicode_Check(h.ptr())) throw py::type_error("expected a str");
  PyObject* b = PyUnicode_AsEncodedString(h.ptr(), "utf-8", "surrogateescape");
  if (!b) throw py::error_already_set();
  std::string out(PyBytes_AS_STRING(b), static_cast<size_t>(PyBytes_GET_SIZE(b)));
  Py_DECREF(b);
  return out;
}

// One opened model. close() drops the handle; every method afterwards raises ValueError.
class PyModel {
 public:
  explicit PyModel(ModelHandlePtr h, bool word_keys) : h_(std::move(h)), word_keys_(word_keys) {}

  const ModelHandlePtr& h() const {
    if (!h_) throw py::value_error("this embedscope model is closed (close() was called)");
    return h_;
  }
  void close() { h_.reset(); }
  bool closed() const { return !h_; }
  // Keys are exact vocabulary words (gensim semantics) rather than the tokenizer's lookup.
  bool word_keys() const { return word_keys_ || !h()->tokenizer(); }

  std::shared_ptr<api::SharedSearcher> searcher() const { return api::shared_searcher(*h()); }

  size_t search_rows(size_t restrict_vocab) const {
    size_t n = h()->n_search_rows();
    return restrict_vocab > 0 ? std::min(n, restrict_vocab) : n;
  }

 private:
  ModelHandlePtr h_;
  bool word_keys_;
};

// Rows of one key: an int row, "#N", an exact vocabulary word or token, or (token models) the
// word as the handle's WordLookup resolves it (" word" as one token, else the bare token, ...). KeyError "Key 'x' not present" as gensim.
std::vector<TokenId> lookup(const PyModel& m, const py::handle& key) {
  const auto& h = m.h();
  size_t n = h->table().n_rows();
  if (!h->tokenizer_loaded()) {  // the first lookup loads the tokenizer (GPT-2's: ~100 ms)
    py::gil_scoped_release nogil;
    h->tokenizer();
  }
  if (!PyUnicode_Check(key.ptr()) && !PyBool_Check(key.ptr()) &&
      (PyLong_Check(key.ptr()) || py::isinstance(key, py::module_::import("numpy").attr("integer")))) {
    long long id = py::int_(py::reinterpret_borrow<py::object>(key)).cast<long long>();
    if (id < 0 || static_cast<size_t>(id) >= n)
      throw py::key_error("Key '" + std::to_string(id) + "' not present (rows are 0.." +
                          std::to_string(n - 1) + ")");
    return {static_cast<TokenId>(id)};
  }
  if (!PyUnicode_Check(key.ptr()))
    throw py::type_error("a key is a str or an int row id, got " +
                         std::string(py::str(py::type::of(key).attr("__name__"))));
  std::string k = str_to_bytes(key);
  auto missing = [&]() { return py::key_error("Key '" + std::string(py::str(key)) + "' not present"); };
  if (auto id = h->vocab().find(k)) return {*id};
  // Exact token text next (index_to_key of a model without a vocabulary), so that
  // get_index(index_to_key[i]) == i as in gensim.
  if (h->vocab().empty() && !m.word_keys())
    if (auto id = h->tokenizer()->token_id(k); id && static_cast<size_t>(*id) < n) return {*id};
  if (m.word_keys()) {
    if (k.size() > 1 && k[0] == '#' && k.find_first_not_of("0123456789", 1) == std::string::npos &&
        h->vocab().empty()) {
      unsigned long long id = std::stoull(k.substr(1));
      if (id < n) return {static_cast<TokenId>(id)};
    }
    throw missing();
  }
  std::optional<ResolvedWord> r;
  try {
    r = h->words().resolve(k);
  } catch (const Error&) {
    throw missing();
  }
  if (!r) throw missing();
  return r->ids;
}

std::vector<Term> terms_of(const std::vector<std::pair<std::vector<TokenId>, float>>& in) {
  std::vector<Term> t;
  for (auto& [ids, w] : in) t.push_back(Term{ids, w});
  return t;
}

py::list neighbors_list(const std::vector<Neighbor>& nn) {
  py::list out;
  for (auto& n : nn) out.append(py::make_tuple(n.id, n.score));
  return out;
}

// A float32 1-D copy of a vector argument (most_similar's ndarray terms), checked against dim.
std::vector<float> vector_arg(const py::handle& v, size_t dim, const char* what) {
  auto a = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(v);
  if (!a) throw py::type_error(std::string(what) + ": expected a 1-D array of numbers");
  if (a.ndim() != 1 || static_cast<size_t>(a.shape(0)) != dim)
    throw py::value_error(std::string(what) + ": expected a 1-D array of " + std::to_string(dim) +
                          " values, got shape " + std::string(py::str(a.attr("shape"))));
  std::vector<float> out(a.data(), a.data() + dim);
  for (float x : out)
    if (!std::isfinite(x)) throw py::value_error(std::string(what) + ": contains NaN or Inf");
  return out;
}

// The query vector of most_similar: gensim's weighted mean of unit key vectors and raw vectors
// (cosine search ignores its length). Key terms go through the library's compose_terms.
std::vector<float> compose_query(const Searcher& s, const std::vector<Term>& keys,
                                 const std::vector<std::pair<std::vector<float>, float>>& vecs) {
  std::vector<float> q(s.dim(), 0.0f);
  if (!keys.empty()) {
    q = compose_terms(s, keys);
    for (auto& x : q) x *= static_cast<float>(keys.size());
  }
  for (auto& [v, w] : vecs)
    for (size_t i = 0; i < q.size(); ++i) q[i] += w * v[i];
  return q;
}

py::array_t<float> to_array(std::vector<float> v) {
  auto* p = new std::vector<float>(std::move(v));
  py::capsule owner(p, [](void* x) { delete static_cast<std::vector<float>*>(x); });
  return py::array_t<float>({static_cast<py::ssize_t>(p->size())}, {sizeof(float)}, p->data(), owner);
}

// Validates a query batch for search(): 2-D, C-contiguous, float32 (zero copy) or float16
// (widened), dim columns, finite. Returns a pointer to float32 rows (into `widened` for F16).
const float* query_rows(const py::array& q, size_t dim, std::vector<float>& widened, size_t* n_out) {
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
                          " columns but the model's vectors have " + std::to_string(dim) + "; " + pass);
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
    widened.assign(static_cast<const float*>(w.data()), static_cast<const float*>(w.data()) + n * dim);
    rows = widened.data();
  }
  return rows;
}

void check_finite(const float* rows, size_t n, size_t dim) {
  for (size_t i = 0; i < n * dim; ++i)
    if (!std::isfinite(rows[i]))
      throw py::value_error("search: Q[" + std::to_string(i / dim) + ", " + std::to_string(i % dim) +
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

PYBIND11_MODULE(_embedscope, m) {
  m.doc() = "embedscope C++ core (use the `embedscope` package, not this module directly)";

  g_not_found = PyErr_NewException("embedscope.NotFoundError", PyExc_FileNotFoundError, nullptr);
  g_format_error = PyErr_NewException("embedscope.FormatError", PyExc_ValueError, nullptr);
  g_unsupported = PyErr_NewException("embedscope.UnsupportedError", PyExc_ValueError, nullptr);
  m.attr("NotFoundError") = py::handle(g_not_found);
  m.attr("FormatError") = py::handle(g_format_error);
  m.attr("UnsupportedError") = py::handle(g_unsupported);
  Py_INCREF(g_not_found);
  Py_INCREF(g_format_error);
  Py_INCREF(g_unsupported);

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      PyObject* type = PyExc_RuntimeError;
      switch (e.code()) {
        case ErrorCode::kInvalidArgument: type = PyExc_ValueError; break;
        case ErrorCode::kNotFound: type = g_not_found; break;
        case ErrorCode::kOutOfRange: type = PyExc_IndexError; break;
        case ErrorCode::kCorrupt: type = g_format_error; break;
        case ErrorCode::kUnsupported: type = g_unsupported; break;
        case ErrorCode::kIo: type = PyExc_OSError; break;
      }
      PyErr_SetString(type, e.what());
    }
  });

  m.def("set_threads", [](size_t n) { set_process_threads(n); }, py::arg("n"),
        "Threads every parallel operation uses (0 = all cores). Set before the first search.");
  m.def("threads", []() { return process_threads(); });

  py::class_<PyModel, std::shared_ptr<PyModel>> cls(m, "Model");

  // train_word2vec over files / folders, the CLI's options; the result is opened as a handle
  // (with the GPT-2 / given tokenizer in token mode). progress(dict) is called with the GIL
  // taken; an exception it raises is re-raised when training ends.
  m.def(
      "train",
      [](const std::vector<std::string>& inputs, const std::string& arch, size_t dim, size_t window,
         size_t negative, bool hs, bool shared_negatives, double sample, uint64_t min_count,
         size_t max_vocab, size_t epochs, double lr, size_t threads, uint64_t seed,
         const std::string& tokenizer, py::object progress, double progress_interval) {
        Word2VecOptions o;
        if (arch == "skipgram") o.arch = W2vArch::kSkipGram;
        else if (arch == "cbow") o.arch = W2vArch::kCbow;
        else throw py::value_error("train: arch='" + arch + "': expected 'skipgram' or 'cbow'");
        o.dim = dim;
        o.window = window;
        o.negative = negative;
        o.hs = hs;
        o.shared_negatives = shared_negatives;
        o.sample = sample;
        o.min_count = min_count;
        o.max_vocab = max_vocab;
        o.epochs = epochs;
        o.lr = static_cast<float>(lr);
        o.threads = threads ? threads : process_threads();
        o.seed = seed;
        o.progress_interval = progress_interval;
        struct CbState {
          py::object fn;
          std::exception_ptr err;
        };
        auto st = std::make_shared<CbState>();
        if (!progress.is_none()) {
          st->fn = progress;
          o.progress = [st](const ProgressInfo& p) {
            py::gil_scoped_acquire gil;
            if (st->err) return;
            try {
              py::dict d;
              d["what"] = p.what;
              d["done"] = p.done;
              d["total"] = p.total;
              d["unit"] = p.unit;
              d["rate"] = p.rate;
              d["eta_seconds"] = p.eta_seconds;
              d["extra"] = p.extra;
              st->fn(d);
            } catch (...) {
              st->err = std::current_exception();
            }
          };
        }
        ModelHandlePtr h;
        py::dict info;
        Word2VecResult r;
        {
          py::gil_scoped_release nogil;
          validate_word2vec_options(o);
          std::optional<BpeTokenizer> tok;
          if (!tokenizer.empty()) {
            if (tokenizer == "gpt2") tok = BpeTokenizer::gpt2_default();
            else if (std::filesystem::is_directory(tokenizer)) tok = BpeTokenizer::find_in_dir(tokenizer);
            else tok = BpeTokenizer::from_tokenizer_json(tokenizer);
            if (!tok) throw Error(ErrorCode::kNotFound, "train: tokenizer " + tokenizer +
                                                            ": no tokenizer.json or vocab.json + merges.txt in it");
            o.tokenizer = &*tok;
            o.tokenizer_name = tokenizer == "gpt2" ? "gpt2" : std::filesystem::absolute(tokenizer).string();
          }
          r = train_word2vec(inputs, o);
          Model model;
          model.emb.metadata = word2vec_metadata(r, o);
          model.emb.table = r.table;
          model.emb.vocab = r.vocab;
          model.emb.format = FileFormat::kSafetensors;
          model.ref = "trained";
          model.n_search_rows = r.table.n_rows();
          model.init_hint = "uniform:" + std::to_string(1.0 / std::max<size_t>(1, dim));
          HandleOptions ho;
          ho.tokenizer = tokenizer.empty() ? "none" : tokenizer;
          h = ModelHandle::from_model(std::move(model), ho);
        }
        if (st->err) std::rethrow_exception(st->err);
        size_t trained = 0;
        for (uint8_t t : r.trained) trained += t;
        info["rows"] = r.table.n_rows();
        info["rows_trained"] = trained;
        info["corpus_words"] = r.corpus_words;
        info["seconds"] = r.seconds;
        info["words_per_second"] = r.words_per_second;
        info["final_loss"] = r.final_loss;
        info["threads"] = o.threads;
        info["simd"] = r.simd_target;
        return py::make_tuple(std::make_shared<PyModel>(std::move(h), tokenizer.empty()), info);
      },
      py::arg("inputs"), py::arg("arch"), py::arg("dim"), py::arg("window"), py::arg("negative"),
      py::arg("hs"), py::arg("shared_negatives"), py::arg("sample"), py::arg("min_count"),
      py::arg("max_vocab"), py::arg("epochs"), py::arg("lr"), py::arg("threads"), py::arg("seed"),
      py::arg("tokenizer"), py::arg("progress"), py::arg("progress_interval"));

  m.def(
      "open",
      [](const std::string& ref, const std::string& tokenizer, const std::string& matrix) {
        HandleOptions o;
        o.tokenizer = tokenizer;
        if (matrix == "output") o.model.matrix = MatrixKind::kOutput;
        else if (matrix != "input")
          throw py::value_error("matrix='" + matrix + "': expected 'input' or 'output'");
        ModelHandlePtr h;
        {
          py::gil_scoped_release nogil;
          h = ModelHandle::open(ref, o);
        }
        return std::make_shared<PyModel>(std::move(h), false);
      },
      py::arg("ref") = "", py::arg("tokenizer") = "auto", py::arg("matrix") = "input");

  m.def(
      "open_word2vec",
      [](const std::string& path, bool binary) {
        ModelHandlePtr h;
        {
          py::gil_scoped_release nogil;
          LoadOptions lo;
          lo.format = binary ? FileFormat::kWord2VecBinary : FileFormat::kWord2VecText;
          Model model;
          model.emb = load_embeddings(path, lo);
          model.ref = path;
          model.path = path;
          model.n_search_rows = model.emb.table.n_rows();
          model.init_hint = "uniform:" + std::to_string(0.5 / std::max<size_t>(1, model.emb.table.dim()));
          HandleOptions o;
          o.tokenizer = "none";
          h = ModelHandle::from_model(std::move(model), o);
        }
        return std::make_shared<PyModel>(std::move(h), true);
      },
      py::arg("path"), py::arg("binary"));

  cls.def_property_readonly("n_rows", [](const PyModel& s) { return s.h()->table().n_rows(); })
      .def_property_readonly("dim", [](const PyModel& s) { return s.h()->table().dim(); })
      .def_property_readonly("n_search_rows", [](const PyModel& s) { return s.h()->n_search_rows(); })
      .def_property_readonly("dtype", [](const PyModel& s) { return std::string(dtype_name(s.h()->table().dtype())); })
      .def_property_readonly("name", [](const PyModel& s) { return s.h()->name(); })
      .def_property_readonly("path", [](const PyModel& s) { return s.h()->model().path; })
      .def_property_readonly("format", [](const PyModel& s) { return std::string(format_name(s.h()->model().emb.format)); })
      .def_property_readonly("zero_copy", [](const PyModel& s) { return s.h()->table().zero_copy(); })
      .def_property_readonly("closed", &PyModel::closed)
      .def_property_readonly("word_keys", &PyModel::word_keys)
      .def_property_readonly("has_tokenizer", [](const PyModel& s) {
        const auto& h = s.h();
        py::gil_scoped_release nogil;
        return h->tokenizer() != nullptr;
      })
      .def_property_readonly("tokenizer_source", [](const PyModel& s) {
        const auto& h = s.h();
        py::gil_scoped_release nogil;
        return h->tokenizer_source();
      })
      .def("close", &PyModel::close)
      // The table as a read-only numpy array. F32: a view of the mapping; F16: a float16 view;
      // BF16 (numpy has no bfloat16): a float32 copy. Its base owns the handle.
      .def("vectors", [](const PyModel& s) -> py::array {
        auto h = s.h();
        const auto& t = h->table();
        std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(t.n_rows()), static_cast<py::ssize_t>(t.dim())};
        py::array out;
        if (t.dtype() == DType::kBF16) {
          auto* copy = new EmbeddingTable(t.to_f32());
          py::capsule owner(copy, [](void* p) { delete static_cast<EmbeddingTable*>(p); });
          out = py::array(py::dtype::of<float>(), shape, copy->f32(), owner);
        } else {
          auto* keep = new ModelHandlePtr(h);
          py::capsule owner(keep, [](void* p) { delete static_cast<ModelHandlePtr*>(p); });
          py::dtype dt = t.dtype() == DType::kF32 ? py::dtype::of<float>() : py::dtype("float16");
          out = py::array(dt, shape, static_cast<const void*>(t.data()), owner);
        }
        py::detail::array_proxy(out.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
        return out;
      })
      .def("keys", [](const PyModel& s) {
        const auto& h = s.h();
        const Vocabulary& v = h->vocab();
        size_t n = h->table().n_rows();
        py::list out(n);
        const WordLookup* words = nullptr;
        if (v.size() < n) {
          py::gil_scoped_release nogil;
          words = &h->words();
        }
        for (size_t i = 0; i < n; ++i) {
          std::string k = i < v.size() ? v.token(static_cast<TokenId>(i)) : words->raw_token(static_cast<TokenId>(i));
          if (k.empty() && i >= v.size()) k = "#" + std::to_string(i);
          out[i] = bytes_to_str(k);
        }
        return out;
      })
      .def("lookup", [](const PyModel& s, py::handle key) { return lookup(s, key); }, py::arg("key"))
      .def("norms", [](const PyModel& s) {
        auto h = s.h();
        {
          py::gil_scoped_release nogil;
          h->table().norms();
        }
        const auto& n = h->table().norms();
        auto* keep = new ModelHandlePtr(h);
        py::capsule owner(keep, [](void* p) { delete static_cast<ModelHandlePtr*>(p); });
        py::array out(py::dtype::of<float>(), {static_cast<py::ssize_t>(n.size())}, n.data(), owner);
        py::detail::array_proxy(out.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
        return out;
      })
      .def("row", [](const PyModel& s, TokenId id) {
        auto h = s.h();
        if (id < 0 || static_cast<size_t>(id) >= h->table().n_rows())
          throw py::index_error("row " + std::to_string(id) + " out of range");
        return to_array(h->table().row(static_cast<size_t>(id)));
      })
      .def("normed", [](const PyModel& s) {
        auto h = s.h();
        const auto& t = h->table();
        py::array_t<float> out({static_cast<py::ssize_t>(t.n_rows()), static_cast<py::ssize_t>(t.dim())});
        float* o = out.mutable_data();
        {
          py::gil_scoped_release nogil;
          const auto& norms = t.norms();
          for (size_t i = 0; i < t.n_rows(); ++i) {
            float* r = o + i * t.dim();
            t.row_f32(i, r);
            for (size_t j = 0; j < t.dim(); ++j) r[j] /= norms[i];
          }
        }
        return out;
      })
      // most_similar: key terms (rows, weight) and vector terms (array, weight). topn == 0:
      // every score of rows [0, restrict_vocab) as an array (gensim's topn=None).
      .def("most_similar",
           [](const PyModel& s, const std::vector<std::pair<std::vector<TokenId>, float>>& keys,
              const std::vector<std::pair<py::object, float>>& vec_terms, size_t topn,
              size_t restrict_vocab, const std::string& mode) -> py::object {
             auto ss = s.searcher();
             size_t dim = s.h()->table().dim();
             std::vector<std::pair<std::vector<float>, float>> vecs;
             for (auto& [v, w] : vec_terms) vecs.emplace_back(vector_arg(v, dim, "most_similar"), w);
             std::vector<Term> terms = terms_of(keys);
             if (terms.empty() && vecs.empty()) throw py::value_error("cannot compute similarity with no input");
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
                 for (auto& t : terms) so.exclude.insert(so.exclude.end(), t.ids.begin(), t.ids.end());
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
               nn = ss->with([&](const Searcher& sr) { return analogy(sr, terms, AnalogyMethod::kMul, so); });
             }
             return neighbors_list(nn);
           })
      .def("similarity",
           [](const PyModel& s, std::vector<TokenId> a, std::vector<TokenId> b) {
             auto ss = s.searcher();
             py::gil_scoped_release nogil;
             return ss->with([&](const Searcher& sr) { return term_similarity(sr, Term{a, 1}, Term{b, 1}); });
           })
      .def("rank",
           [](const PyModel& s, std::vector<TokenId> a, std::vector<TokenId> b) {
             auto ss = s.searcher();
             py::gil_scoped_release nogil;
             return ss->with([&](const Searcher& sr) { return term_rank(sr, Term{a, 1}, Term{b, 1}); });
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
      .def("cosines",
           [](const PyModel& s, py::object query, std::optional<std::vector<TokenId>> others) {
             auto ss = s.searcher();
             std::vector<float> q;
             std::vector<TokenId> ids;
             bool by_rows = py::isinstance<py::list>(query);
             if (by_rows) ids = query.cast<std::vector<TokenId>>();
             else q = vector_arg(query, s.h()->table().dim(), "distances");
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
      .def("search",
           [](const PyModel& s, const py::array& q, long long k, const std::string& mode,
              const std::string& metric, long long ef) {
             auto h = s.h();
             size_t dim = h->table().dim(), rows = h->n_search_rows();
             if (k <= 0) throw py::value_error("search: k must be at least 1, got " + std::to_string(k));
             if (static_cast<size_t>(k) > rows)
               throw py::value_error("search: k = " + std::to_string(k) + " exceeds the model's " +
                                     std::to_string(rows) + " searchable rows");
             SearchOptions so;
             so.k = static_cast<size_t>(k);
             bool hnsw = mode == "hnsw";
             if (mode != "exact" && mode != "fast" && !hnsw)
               throw py::value_error("search: mode='" + mode + "': expected 'exact', 'fast' or 'hnsw'");
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
                   d[i * so.k + j] = have ? (so.metric == Metric::kL2 ? -res[i][j].score : res[i][j].score)
                                          : -INFINITY;
                   ip[i * so.k + j] = have ? res[i][j].id : -1;
                 }
             }
             return py::make_tuple(D, I);
           },
           py::arg("Q"), py::arg("k"), py::arg("mode") = "exact", py::arg("metric") = "cosine",
           py::arg("ef") = 64)
      // Builds the HNSW index now (else the first mode="hnsw" search does), with these options.
      .def("build_hnsw",
           [](const PyModel& s, size_t M, size_t ef_construction) {
             auto h = s.h();
             py::gil_scoped_release nogil;
             auto ix = shared_hnsw(*h, M, ef_construction);
             return ix->index.n_indexed();
           },
           py::arg("M") = 16, py::arg("ef_construction") = 200)
      .def("evaluate_word_pairs",
           [](const PyModel& s, const std::string& path, size_t restrict_vocab, bool case_insensitive,
              bool dummy4unknown) {
             auto h = s.h();
             PairsResult r;
             {
               py::gil_scoped_release nogil;
               r = evaluate_word_pairs(h->model().emb, s.word_keys() ? nullptr : h->tokenizer(), path,
                                       EvalOptions{.restrict_vocab = restrict_vocab, .case_insensitive = case_insensitive,
                                                   .dummy4unknown = dummy4unknown, .n_threads = process_threads()});
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
           [](const PyModel& s, const std::string& path, size_t restrict_vocab, bool case_insensitive,
              bool dummy4unknown) {
             auto h = s.h();
             AnalogyResult r;
             {
               py::gil_scoped_release nogil;
               r = evaluate_analogies(h->model().emb, s.word_keys() ? nullptr : h->tokenizer(), path,
                                      EvalOptions{.restrict_vocab = restrict_vocab, .case_insensitive = case_insensitive,
                                                  .dummy4unknown = dummy4unknown, .n_threads = process_threads()});
             }
             py::list sections;
             for (auto& sec : r.sections) {
               py::dict d;
               d["section"] = sec.name;
               d["correct"] = sec.correct;
               d["incorrect"] = sec.incorrect;
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
      .def("explore",
           [](const PyModel& s, const std::string& word, size_t k, uint64_t seed, bool all_tokens,
              const std::string& init) {
             auto h = s.h();
             py::gil_scoped_release nogil;
             api::ExploreRequest req{.word = word, .k = k, .seed = seed, .all_tokens = all_tokens,
                                     .init = init, .sample = 0, .lazy_tokenizer = true};
             return api::dump_json(api::to_json(*h, api::explore(*h, req)), -1);
           },
           py::arg("word"), py::arg("k") = 10, py::arg("seed") = 42, py::arg("all_tokens") = false,
           py::arg("init") = "")
      // api::neighbors for one query (a word by the library's lookup policy, "#N", a row id, a
      // vector, or an expression): its JSON document as text, as `neighbors --json` prints it.
      .def("neighbors",
           [](const PyModel& s, py::object query, bool expression, size_t k, const std::string& metric,
              const std::string& mode, bool include_query, bool center, size_t csls_k,
              const std::string& token_class, const std::string& regex, size_t top_n) {
             auto h = s.h();
             api::NeighborsRequest req;
             if (PyUnicode_Check(query.ptr())) {
               std::string q = str_to_bytes(query);
               req.queries.push_back(expression ? api::NeighborQuery::expr(q) : api::NeighborQuery::word(q));
             } else if (PyLong_Check(query.ptr()) && !PyBool_Check(query.ptr())) {
               req.queries.push_back(api::NeighborQuery::row(query.cast<int64_t>()));
             } else {
               req.queries.push_back(api::NeighborQuery::vec(vector_arg(query, h->table().dim(), "neighbors")));
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
           py::arg("query"), py::arg("expression") = false, py::arg("k") = 10, py::arg("metric") = "cosine",
           py::arg("mode") = "exact", py::arg("include_query") = false, py::arg("center") = false,
           py::arg("csls_k") = 0, py::arg("token_class") = "any", py::arg("regex") = "", py::arg("top_n") = 0)
      // Tokenizer (Error when the model has none: the Python side checks has_tokenizer first).
      .def("encode",
           [](const PyModel& s, const std::string& text, bool allow_special, bool offsets) -> py::object {
             auto h = s.h();
             std::vector<TokenId> ids;
             std::vector<size_t> offs;
             {
               py::gil_scoped_release nogil;
               const BpeTokenizer* t = h->tokenizer();
               if (!t) throw Error(ErrorCode::kNotFound, "this model has no tokenizer");
               ids = offsets ? t->encode_with_offsets(text, &offs, allow_special) : t->encode(text, allow_special);
             }
             if (offsets) return py::make_tuple(ids, offs);
             return py::cast(ids);
           },
           py::arg("text"), py::arg("allow_special") = false, py::arg("offsets") = false)
      .def("decode",
           [](const PyModel& s, const std::vector<TokenId>& ids, bool raw) -> py::object {
             auto h = s.h();
             std::string out;
             {
               py::gil_scoped_release nogil;
               const BpeTokenizer* t = h->tokenizer();
               if (!t) throw Error(ErrorCode::kNotFound, "this model has no tokenizer");
               out = raw ? t->decode_bytes(ids) : t->decode(ids);
             }
             if (raw) return py::bytes(out);
             return py::str(out);
           },
           py::arg("ids"), py::arg("raw") = false)
      .def("display",
           [](const PyModel& s, TokenId id) {
             auto h = s.h();
             if (id < 0 || static_cast<size_t>(id) >= h->words().n_rows())
               throw py::index_error("row " + std::to_string(id) + " out of range");
             return h->words().display(id);
           })
      // save_embeddings: format "" = from the extension; the vocabulary goes along when the model
      // has one (word2vec formats need it).
      .def("save",
           [](const PyModel& s, const std::string& path, const std::string& format) {
             auto h = s.h();
             SaveOptions o;
             if (!format.empty()) o.format = parse_format_name(format);
             py::gil_scoped_release nogil;
             const Vocabulary* v = h->vocab().empty() ? nullptr : &h->vocab();
             save_embeddings(path, h->table(), v, o);
           },
           py::arg("path"), py::arg("format") = "")
      // table_stats: the fields of `embedscope stats --json`.
      .def("stats",
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
      .def("compare",
           [](const PyModel& s, const PyModel& other, size_t k, size_t n_words, size_t n_moved, uint64_t seed) {
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
             for (auto& w : r.overlaps) overlaps.append(py::make_tuple(bytes_to_str(w.word), w.overlap));
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
           py::arg("seed") = 42)
      .def("token_vocab_size", [](const PyModel& s) {
        const BpeTokenizer* t = s.h()->tokenizer();
        return t ? t->vocab_size() : 0;
      });
}
