// NeighborsBatcher: dynamic micro-batching for POST /v1/neighbors.
//
// Each single-query request submits its query and blocks; one dispatcher thread takes every
// queued query with the same options (k, metric, mode, center, include_query, filter) and runs
// them as ONE api::neighbors batch (one sgemm over the table), then hands each request its own
// single-query document (api::to_json of a one-answer result, the CLI's `neighbors --json`).
// The searcher serves one call at a time anyway, so queries that arrive while a batch runs wait
// for the next one; the dispatcher additionally waits up to `max_wait_us` for requests that
// are being parsed (announce()d but not yet submitted), never when none are. A batch of one
// runs the single-query path, so an idle server answers exactly what the CLI prints.
//
// Thread-safety: submit() from any number of threads; stop() once, from one thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

#include "embedscope/api/neighbors.h"
#include "embedscope/core/error.h"

namespace embedscope::server {

using json = nlohmann::json;

struct BatcherStats {
  std::atomic<uint64_t> batches{0}, queries{0};
};

class NeighborsBatcher {
 public:
  NeighborsBatcher(ModelHandlePtr h, size_t max_batch, int max_wait_us);
  ~NeighborsBatcher();

  // A request is being parsed and will probably submit() soon (the dispatcher may wait for it).
  void announce() { arriving_.fetch_add(1); }
  void withdraw() { arriving_.fetch_sub(1); }  // it won't (parse error); not after submit()
  // `r` holds exactly one query. Returns its one-answer result (api::to_json gives the
  // single-query document; the caller serialises, off the dispatcher thread); throws what a
  // single api::neighbors() call throws (Error kNotFound / kOutOfRange / kInvalidArgument ...).
  // Call after announce(): submit() withdraws the announcement.
  api::NeighborsResult submit(api::NeighborsRequest r);
  void stop();
  size_t queued() const;
  const BatcherStats& stats() const { return stats_; }

 private:
  // A failure travels as a value (code and message copied on the dispatcher thread) and is
  // thrown afresh on the request's thread: an exception object shared across threads is
  // reference-counted inside libstdc++, where ThreadSanitizer cannot see the synchronisation.
  struct Outcome {
    api::NeighborsResult result;
    bool failed = false;
    bool library_error = false;  // an embedscope::Error (else another std::exception)
    ErrorCode code = ErrorCode::kInvalidArgument;
    std::string message{};
  };
  struct Item {
    api::NeighborsRequest req;
    std::string key;
    std::promise<Outcome> done;
  };
  static void fail(Item& item);  // sets the outcome from the exception being handled
  void loop();
  void run(std::vector<std::shared_ptr<Item>>& items);

  ModelHandlePtr h_;
  size_t max_batch_;
  int max_wait_us_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Item>> q_;
  std::atomic<int> arriving_{0};
  bool stop_ = false;
  BatcherStats stats_;
  std::thread th_;
};

}  // namespace embedscope::server
