// Shared parts of the _embedscope binding (python/src/*.cpp): the model object, key lookup and
// the conversions between library types and Python objects. Binding code only.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "embedscope/api/common.h"
#include "embedscope/handle/model_handle.h"
#include "embedscope/search/analogy.h"
#include "embedscope/search/searcher.h"

namespace embedscope::python {

namespace py = pybind11;

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

using PyModelClass = py::class_<PyModel, std::shared_ptr<PyModel>>;

// Raw bytes <-> Python str: UTF-8 with surrogateescape, so token bytes that are not UTF-8 round
// trip through index_to_key and back into a lookup.
py::str bytes_to_str(const std::string& s);
std::string str_to_bytes(const py::handle& h);

// Rows of one key: an int row, "#N", an exact vocabulary word or token, or (token models) the
// word as the handle's WordLookup resolves it (" word" as one token, else the bare token, ...).
// KeyError "Key 'x' not present" as gensim.
std::vector<TokenId> lookup(const PyModel& m, const py::handle& key);

std::vector<Term> terms_of(const std::vector<std::pair<std::vector<TokenId>, float>>& in);
// [(id, score), ...]
py::list neighbors_list(const std::vector<Neighbor>& nn);
// A float32 1-D copy of a vector argument, checked against dim and for NaN / Inf.
std::vector<float> vector_arg(const py::handle& v, size_t dim, const char* what);
// most_similar's query: gensim's weighted mean of unit key vectors and raw vectors.
std::vector<float> compose_query(const Searcher& s, const std::vector<Term>& keys,
                                 const std::vector<std::pair<std::vector<float>, float>>& vecs);
// A 1-D float32 array owning v.
py::array_t<float> to_array(std::vector<float> v);

// The methods defined in search.cpp (similarity, search, neighbors) and analysis.cpp
// (evaluation, explore, stats, compare).
void bind_search(PyModelClass& cls);
void bind_analysis(PyModelClass& cls);

}  // namespace embedscope::python
