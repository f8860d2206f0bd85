// Key lookup and conversions shared by the binding's files (binding.h).
#include <cmath>
#include <string>
#include <vector>

#include "binding.h"
#include "embedscope/core/error.h"

namespace embedscope::python {

py::str bytes_to_str(const std::string& s) {
  PyObject* o =
      PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "surrogateescape");
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

// Rows of one key: an int row, "#N", an exact vocabulary word or token, or (token models) the
// word as the handle's WordLookup resolves it (" word" as one token, else the bare token, ...).
// KeyError "Key 'x' not present" as gensim.
std::vector<TokenId> lookup(const PyModel& m, const py::handle& key) {
  const auto& h = m.h();
  size_t n = h->table().n_rows();
  if (!h->tokenizer_loaded()) {  // the first lookup loads the tokenizer (GPT-2's: ~100 ms)
    py::gil_scoped_release nogil;
    h->tokenizer();
  }
  if (!PyUnicode_Check(key.ptr()) && !PyBool_Check(key.ptr()) &&
      (PyLong_Check(key.ptr()) ||
       py::isinstance(key, py::module_::import("numpy").attr("integer")))) {
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
  auto missing = [&]() {
    return py::key_error("Key '" + std::string(py::str(key)) + "' not present");
  };
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
  return py::array_t<float>({static_cast<py::ssize_t>(p->size())}, {sizeof(float)}, p->data(),
                            owner);
}

}  // namespace embedscope::python
