#include "batcher.h"

#include <chrono>

#include "embedscope/core/error.h"

namespace embedscope::server {

namespace {
// Requests that may share one batch call agree on everything but the query.
std::string options_key(const api::NeighborsRequest& r) {
  std::string k =
      std::to_string(r.k) + '|' + r.metric + '|' + r.mode + '|' + char('0' + r.include_query) +
      char('0' + r.center) + '|' + std::to_string(r.filter.min_count) + '|' +
      std::to_string(int(r.filter.token_class)) + '|' + std::to_string(r.filter.top_n) + '|';
  for (TokenId id : r.filter.ids) k += std::to_string(id) + ',';
  return k;
}
}  // namespace

NeighborsBatcher::NeighborsBatcher(ModelHandlePtr h, size_t max_batch, int max_wait_us)
    : h_(std::move(h)), max_batch_(max_batch ? max_batch : 1), max_wait_us_(max_wait_us) {
  th_ = std::thread([this] { loop(); });
}

NeighborsBatcher::~NeighborsBatcher() { stop(); }

void NeighborsBatcher::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.notify_all();
  if (th_.joinable()) th_.join();
}

size_t NeighborsBatcher::queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return q_.size();
}

api::NeighborsResult NeighborsBatcher::submit(api::NeighborsRequest r) {
  auto item = std::make_shared<Item>();
  item->key = options_key(r);
  item->req = std::move(r);
  std::future<Outcome> f = item->done.get_future();
  {
    std::lock_guard<std::mutex> lock(mu_);
    arriving_.fetch_sub(1);
    if (stop_) throw Error(ErrorCode::kIo, "server is shutting down");
    q_.push_back(item);
  }
  cv_.notify_all();
  Outcome o = f.get();
  if (!o.failed) return std::move(o.result);
  if (o.library_error) throw Error(o.code, o.message);
  throw std::runtime_error(o.message);
}

void NeighborsBatcher::fail(Item& item) {
  Outcome o;
  o.failed = true;
  try {
    throw;
  } catch (const Error& e) {
    o.library_error = true;
    o.code = e.code();
    o.message = std::string(e.what());
  } catch (const std::exception& e) {
    o.message = std::string(e.what());
  } catch (...) {
    o.message = "unknown exception";
  }
  item.done.set_value(std::move(o));
}

void NeighborsBatcher::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !q_.empty(); });
    if (q_.empty()) return;  // stopping, nothing left
    // Wait (bounded) for announced requests only: an idle server never waits.
    if (max_wait_us_ > 0 && q_.size() < max_batch_ && arriving_.load() > 0) {
      auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(max_wait_us_);
      cv_.wait_until(lock, until,
                     [&] { return stop_ || q_.size() >= max_batch_ || arriving_.load() <= 0; });
    }
    std::vector<std::shared_ptr<Item>> items;
    const std::string key = q_.front()->key;
    for (auto it = q_.begin(); it != q_.end() && items.size() < max_batch_;) {
      if ((*it)->key == key) {
        items.push_back(*it);
        it = q_.erase(it);
      } else {
        ++it;
      }
    }
    lock.unlock();
    run(items);
    lock.lock();
  }
}

void NeighborsBatcher::run(std::vector<std::shared_ptr<Item>>& items) {
  stats_.batches.fetch_add(1);
  stats_.queries.fetch_add(items.size());
  if (items.size() == 1) {
    try {
      items[0]->done.set_value(Outcome{api::neighbors(*h_, items[0]->req)});
    } catch (...) {
      fail(*items[0]);
    }
    return;
  }
  api::NeighborsRequest all = items[0]->req;
  all.queries.clear();
  for (auto& it : items) all.queries.push_back(it->req.queries.at(0));
  all.force_batch = true;
  api::NeighborsResult res;
  try {
    res = api::neighbors(*h_, all);
  } catch (...) {
    for (auto& it : items) fail(*it);
    return;
  }
  for (size_t i = 0; i < items.size(); ++i) {
    api::NeighborsAnswer& a = res.answers[i];
    try {
      if (!a.error.empty()) {
        // Re-run alone: the single path throws this query's error with its code.
        items[i]->done.set_value(Outcome{api::neighbors(*h_, items[i]->req)});
        continue;
      }
      api::NeighborsResult one;
      one.metric = res.metric;
      one.mode = res.mode;
      one.k = res.k;
      one.threads = res.threads;
      one.csls_k = res.csls_k;
      one.centered = res.centered;
      one.batch = false;
      one.elapsed_ms = res.elapsed_ms;
      one.answers.push_back(std::move(a));
      items[i]->done.set_value(Outcome{std::move(one)});
    } catch (...) {
      fail(*items[i]);
    }
  }
}

}  // namespace embedscope::server
