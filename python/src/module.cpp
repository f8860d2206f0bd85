// _embedscope: the pybind11 binding under the Python package `embedscope` (python/embedscope).
//
// Binding code only: every operation is a library call (ModelHandle, api::shared_searcher,
// search/analogy.h, analysis/evaluate.h, api::explore, train_word2vec); these files convert
// arguments and results, check the shapes and dtypes of arrays passed in, map embedscope::Error
// to Python exceptions and release the GIL around anything that touches the table.
// This file: the module, exceptions, opening / training models, the table and the tokenizer;
// search.cpp: similarity and search; analysis.cpp: evaluation, explore, stats, compare.
//
// Exceptions: Error kInvalidArgument -> ValueError, kNotFound -> NotFoundError
// (a FileNotFoundError), kOutOfRange -> IndexError, kCorrupt -> FormatError (a ValueError),
// kUnsupported -> UnsupportedError (a ValueError), kIo -> OSError; the message is the library's.
//
// Lifetime: `vectors` arrays are views of the mapping whose base is a capsule owning a
// shared_ptr to the ModelHandle, so they stay valid after the Python model object is gone.
#include <cmath>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "binding.h"
#include "embedscope/core/error.h"
#include "embedscope/core/thread_pool.h"
#include "embedscope/formats/embeddings_file.h"
#include "embedscope/train/word2vec.h"

using namespace embedscope;
using namespace embedscope::python;

namespace {

PyObject* g_not_found = nullptr;
PyObject* g_format_error = nullptr;
PyObject* g_unsupported = nullptr;

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
        case ErrorCode::kInvalidArgument:
          type = PyExc_ValueError;
          break;
        case ErrorCode::kNotFound:
          type = g_not_found;
          break;
        case ErrorCode::kOutOfRange:
          type = PyExc_IndexError;
          break;
        case ErrorCode::kCorrupt:
          type = g_format_error;
          break;
        case ErrorCode::kUnsupported:
          type = g_unsupported;
          break;
        case ErrorCode::kIo:
          type = PyExc_OSError;
          break;
      }
      PyErr_SetString(type, e.what());
    }
  });

  m.def(
      "set_threads", [](size_t n) { set_process_threads(n); }, py::arg("n"),
      "Threads every parallel operation uses (0 = all cores). Set before the first search; "
      "after it, another count raises ValueError.");
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
        if (arch == "skipgram")
          o.arch = W2vArch::kSkipGram;
        else if (arch == "cbow")
          o.arch = W2vArch::kCbow;
        else
          throw py::value_error("train: arch='" + arch + "': expected 'skipgram' or 'cbow'");
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
          std::shared_ptr<const Tokenizer> tok;
          if (!tokenizer.empty()) {
            tok = open_tokenizer(tokenizer);
            // The trainer's token mode reads GPT-2-family tokenizers (BpeTokenizer) only.
            if (!tok->bpe())
              throw Error(ErrorCode::kUnsupported,
                          "train: tokenizer " + tokenizer + " is " + tok->describe() +
                              "; training in token mode needs a byte-level BPE tokenizer");
            o.tokenizer = tok->bpe();
            o.tokenizer_name =
                tokenizer == "gpt2" ? "gpt2" : std::filesystem::absolute(tokenizer).string();
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
        if (matrix == "output")
          o.model.matrix = MatrixKind::kOutput;
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
          model.init_hint =
              "uniform:" + std::to_string(0.5 / std::max<size_t>(1, model.emb.table.dim()));
          HandleOptions o;
          o.tokenizer = "none";
          h = ModelHandle::from_model(std::move(model), o);
        }
        return std::make_shared<PyModel>(std::move(h), true);
      },
      py::arg("path"), py::arg("binary"));

  cls.def_property_readonly("n_rows", [](const PyModel& s) { return s.h()->table().n_rows(); })
      .def_property_readonly("dim", [](const PyModel& s) { return s.h()->table().dim(); })
      .def_property_readonly("n_search_rows",
                             [](const PyModel& s) { return s.h()->n_search_rows(); })
      .def_property_readonly(
          "dtype", [](const PyModel& s) { return std::string(dtype_name(s.h()->table().dtype())); })
      .def_property_readonly("name", [](const PyModel& s) { return s.h()->name(); })
      .def_property_readonly("path", [](const PyModel& s) { return s.h()->model().path; })
      .def_property_readonly(
          "format",
          [](const PyModel& s) { return std::string(format_name(s.h()->model().emb.format)); })
      .def_property_readonly("zero_copy",
                             [](const PyModel& s) { return s.h()->table().zero_copy(); })
      .def_property_readonly("closed", &PyModel::closed)
      .def_property_readonly("word_keys", &PyModel::word_keys)
      .def_property_readonly("has_tokenizer",
                             [](const PyModel& s) {
                               const auto& h = s.h();
                               py::gil_scoped_release nogil;
                               return h->tokenizer() != nullptr;
                             })
      .def_property_readonly("tokenizer_source",
                             [](const PyModel& s) {
                               const auto& h = s.h();
                               py::gil_scoped_release nogil;
                               return h->tokenizer_source();
                             })
      .def("close", &PyModel::close)
      // The table as a read-only numpy array. F32: a view of the mapping; F16: a float16 view;
      // BF16 (numpy has no bfloat16): a float32 copy. Its base owns the handle.
      .def("vectors",
           [](const PyModel& s) -> py::array {
             auto h = s.h();
             const auto& t = h->table();
             std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(t.n_rows()),
                                            static_cast<py::ssize_t>(t.dim())};
             py::array out;
             if (t.dtype() == DType::kBF16) {
               auto* copy = new EmbeddingTable(t.to_f32());
               py::capsule owner(copy, [](void* p) { delete static_cast<EmbeddingTable*>(p); });
               out = py::array(py::dtype::of<float>(), shape, copy->f32(), owner);
             } else {
               auto* keep = new ModelHandlePtr(h);
               py::capsule owner(keep, [](void* p) { delete static_cast<ModelHandlePtr*>(p); });
               py::dtype dt =
                   t.dtype() == DType::kF32 ? py::dtype::of<float>() : py::dtype("float16");
               out = py::array(dt, shape, static_cast<const void*>(t.data()), owner);
             }
             py::detail::array_proxy(out.ptr())->flags &=
                 ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
             return out;
           })
      .def("keys",
           [](const PyModel& s) {
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
               std::string k = i < v.size() ? v.token(static_cast<TokenId>(i))
                                            : words->raw_token(static_cast<TokenId>(i));
               if (k.empty() && i >= v.size()) k = "#" + std::to_string(i);
               out[i] = bytes_to_str(k);
             }
             return out;
           })
      .def(
          "lookup", [](const PyModel& s, py::handle key) { return lookup(s, key); }, py::arg("key"))
      .def("norms",
           [](const PyModel& s) {
             auto h = s.h();
             {
               py::gil_scoped_release nogil;
               h->table().norms();
             }
             const auto& n = h->table().norms();
             auto* keep = new ModelHandlePtr(h);
             py::capsule owner(keep, [](void* p) { delete static_cast<ModelHandlePtr*>(p); });
             py::array out(py::dtype::of<float>(), {static_cast<py::ssize_t>(n.size())}, n.data(),
                           owner);
             py::detail::array_proxy(out.ptr())->flags &=
                 ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
             return out;
           })
      .def("row",
           [](const PyModel& s, TokenId id) {
             auto h = s.h();
             if (id < 0 || static_cast<size_t>(id) >= h->table().n_rows())
               throw py::index_error("row " + std::to_string(id) + " out of range");
             return to_array(h->table().row(static_cast<size_t>(id)));
           })
      .def("normed",
           [](const PyModel& s) {
             auto h = s.h();
             const auto& t = h->table();
             py::array_t<float> out(
                 {static_cast<py::ssize_t>(t.n_rows()), static_cast<py::ssize_t>(t.dim())});
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
      // Tokenizer (Error when the model has none: the Python side checks has_tokenizer first).
      .def(
          "encode",
          [](const PyModel& s, const std::string& text, bool allow_special,
             bool offsets) -> py::object {
            auto h = s.h();
            std::vector<TokenId> ids;
            std::vector<size_t> offs;
            {
              py::gil_scoped_release nogil;
              const Tokenizer* t = h->tokenizer();
              if (!t) throw Error(ErrorCode::kNotFound, "this model has no tokenizer");
              Encoding e = t->encode(text, {.split_special_tokens = !allow_special});
              ids = std::move(e.ids);
              if (offsets)
                for (const TokenSpan& sp : e.offsets) offs.push_back(sp.begin);
            }
            if (offsets) return py::make_tuple(ids, offs);
            return py::cast(ids);
          },
          py::arg("text"), py::arg("allow_special") = false, py::arg("offsets") = false)
      .def(
          "decode",
          [](const PyModel& s, const std::vector<TokenId>& ids, bool raw) -> py::object {
            auto h = s.h();
            std::string out;
            {
              py::gil_scoped_release nogil;
              const Tokenizer* t = h->tokenizer();
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
      .def(
          "save",
          [](const PyModel& s, const std::string& path, const std::string& format) {
            auto h = s.h();
            SaveOptions o;
            if (!format.empty()) o.format = parse_format_name(format);
            py::gil_scoped_release nogil;
            const Vocabulary* v = h->vocab().empty() ? nullptr : &h->vocab();
            save_embeddings(path, h->table(), v, o);
          },
          py::arg("path"), py::arg("format") = "")
      .def("token_vocab_size", [](const PyModel& s) {
        const Tokenizer* t = s.h()->tokenizer();
        return t ? t->vocab_size() : 0;
      });
  bind_search(cls);
  bind_analysis(cls);
}
