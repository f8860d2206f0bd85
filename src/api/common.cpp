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

SharedSearcher::SharedSearcher(const EmbeddingTable& table, bool center) {
  auto first = std::make_unique<Searcher>(table, SearcherOptions{.n_threads = 0, .center = center});
  primary_ = first.get();
  free_.push_back(std::move(first));
}

SharedSearcher::Lease::Lease(const SharedSearcher& s) : owner(s) {
  {
    std::lock_guard<std::mutex> lock(s.mu_);
    if (!s.free_.empty()) {
      searcher = std::move(s.free_.back());
      s.free_.pop_back();
      return;
    }
  }
  searcher = std::make_unique<Searcher>(s.primary_->lane(1));  // primary_ is never destroyed
}

SharedSearcher::Lease::~Lease() {
  std::lock_guard<std::mutex> lock(owner.mu_);
  // The primary lane (all threads) stays at the back, where the next caller takes from.
  if (searcher.get() == owner.primary_)
    owner.free_.push_back(std::move(searcher));
  else
    owner.free_.insert(owner.free_.begin(), std::move(searcher));
}

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
