#include "embedscope/api/common.h"

#include <cmath>
#include <cstdio>

#include "embedscope/analysis/labeller.h"
#include "embedscope/analysis/wordnet.h"
#include "embedscope/core/error.h"

namespace embedscope::api {

json finite_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

ResolvedWord resolve_word(const ModelHandle& h, const std::string& word) {
  const WordLookup& w = h.words();
  std::optional<ResolvedWord> r = w.resolve(word);
  if (!r)
    throw Error(ErrorCode::kNotFound, "'" + word + "' is not in the vocabulary of " +
                                          h.model().path + " (" + std::to_string(h.vocab().size()) +
                                          " entries" + (w.has_tokenizer() ? "" : ", no tokenizer") +
                                          ")");
  return *r;
}

std::string printable(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) {
      char b[8];
      std::snprintf(b, sizeof b, "<0x%02X>", c);
      out += b;
    } else {
      out += char(c);
    }
  }
  return out;
}

std::string dump_json(const json& j, int indent) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

SharedSearcher::SharedSearcher(const EmbeddingTable& table, bool center)
    : searcher_(table, SearcherOptions{.n_threads = 0, .center = center}) {}

std::shared_ptr<SharedSearcher> shared_searcher(const ModelHandle& h, bool center) {
  return h.resource<SharedSearcher>(center ? "searcher:centered" : "searcher", [&] {
    return std::make_shared<SharedSearcher>(h.table(), center);
  });
}

namespace {
struct LabellerHolder {
  WordNet wn;
  Labeller lab;
  LabellerHolder() : wn(WordNet::open()), lab(wn) {}
};
}  // namespace

const Labeller& shared_labeller() {
  static std::mutex mu;
  static std::unique_ptr<LabellerHolder> holder;
  std::lock_guard<std::mutex> lock(mu);
  if (!holder) holder = std::make_unique<LabellerHolder>();  // a failed open is retried
  return holder->lab;
}

}  // namespace embedscope::api
