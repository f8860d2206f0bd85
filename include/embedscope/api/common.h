// api: the operations every front end offers, as library functions that take a ModelHandle and
// a request struct and return a result, plus the one JSON serialisation of each result. The CLI's
// --json, the HTTP server's responses and the Python module's dicts are these documents, so the
// same request gives the same document everywhere.
//
// This header: JSON helpers and the shared resources the operations use.
//
// JSON conventions: numbers that are not finite are null (JSON has no NaN); strings that are not
// valid UTF-8 (raw token bytes) are replaced with U+FFFD when dumped (dump_json), never thrown.
//
// Thread-safety: shared_searcher() and shared_labeller() build once and are safe to call from
// many threads; a SharedSearcher runs concurrent operations on separate lanes (see below).
#pragma once

#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "embedscope/handle/model_handle.h"
#include "embedscope/handle/word_lookup.h"
#include "embedscope/search/searcher.h"

namespace embedscope {
class Labeller;
class WordNet;
}  // namespace embedscope

namespace embedscope::api {

using json = nlohmann::json;

// A JSON number, or null when v is not finite.
json finite_or_null(double v);
// A token or word for one-line display: control bytes (and DEL) as <0xNN>, everything else as
// it is. What the CLI prints and what the stats document lists.
std::string printable(std::string_view s);
// Serialises with invalid UTF-8 replaced by U+FFFD. indent < 0: one line.
std::string dump_json(const json& j, int indent = 2);

// A word (or "#id") through the handle's word lookup; Error(kNotFound) naming the word, the
// model's path and its vocabulary size when it does not resolve.
ResolvedWord resolve_word(const ModelHandle& h, const std::string& word);

// The handle's searcher (one per centering choice). Concurrent calls share it: a Searcher is
// safe to query from many threads (its queries run on the process pool, core/thread_pool.h),
// so there are no per-caller copies ("lanes") to create, keep or free; N concurrent callers
// share the pool's process_threads() threads plus their own.
class SharedSearcher {
 public:
  SharedSearcher(const EmbeddingTable& table, bool center);
  // Runs fn(const Searcher&) and returns its result.
  template <class F>
  auto with(F&& fn) const {
    return fn(searcher_);
  }
  const Searcher& unlocked() const { return searcher_; }

 private:
  Searcher searcher_;
};

std::shared_ptr<SharedSearcher> shared_searcher(const ModelHandle& h, bool center = false);

// WordNet and the labeller: one per process (they do not depend on the model), opened on first
// use. Error(kNotFound) naming scripts/setup.sh when WordNet is not installed.
const Labeller& shared_labeller();

}  // namespace embedscope::api
