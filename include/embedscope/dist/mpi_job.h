// The MPI side of embedscope (built only when CMake finds MPI: ES_HAVE_MPI): the job's
// processes, and the collective operations the word2vec trainer's W2vCollective hooks need.
// No MPI header leaks out of here; src/dist holds every MPI call.
//
//   dist::MpiJob job;                                  // MPI_Init_thread
//   auto coll = dist::make_w2v_collective(job, {});
//   Word2VecOptions o; o.collective = coll.get();       // train_word2vec as usual
//
// Errors: Error(kUnsupported) when the MPI library cannot give the thread level the trainer
// needs (MPI_THREAD_SERIALIZED: collectives are called from whichever training thread closes a
// segment) or when a message passes MPI's int-count limit; Error(kIo) for a failed MPI call
// (by default MPI ends the whole job on an error instead).
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "embedscope/search/searcher.h"
#include "embedscope/train/word2vec.h"

namespace embedscope::dist {

// One per process, for the process's lifetime: MPI_Init_thread on construction, MPI_Finalize
// on destruction. Not copyable.
class MpiJob {
 public:
  MpiJob();
  ~MpiJob();
  MpiJob(const MpiJob&) = delete;
  MpiJob& operator=(const MpiJob&) = delete;
  size_t rank() const { return rank_; }
  size_t size() const { return size_; }
  std::string host() const;  // the processor name MPI reports (the host)
  void barrier();
  // Ends every process of the job with this exit code (MPI_Abort); for a failure on one rank
  // that the others, blocked in a collective, would otherwise wait for forever.
  [[noreturn]] void abort(int exit_code);

 private:
  size_t rank_ = 0, size_ = 1;
};

// How sync() makes rows identical.
enum class SyncPolicy {
  // Each row becomes its value at the last sync plus the sum of every process's change since
  // then: what a row would be had all processes updated one shared copy (Hogwild across
  // processes). Keeps a copy of the rows as of the last sync (the weights' size once more).
  kSumOfChanges,
  // The mean of the processes' values (pWord2Vec, Ji et al. 2016): no copy, but a row trained
  // on one process only keeps 1/size of its change.
  kAverage,
};

struct CollectiveOptions {
  SyncPolicy policy = SyncPolicy::kSumOfChanges;
  // Test hook (tests/dist): rank `fail_rank` fails at its fail_after_syncs-th sync, by raising
  // SIGKILL (kill = true) or by throwing Error(kIo) (a rank that fails cleanly). 0: never.
  size_t fail_rank = 0;
  uint64_t fail_after_syncs = 0;
  bool kill = true;
};

// What a W2vCollective moved, for reports and the benchmark.
struct CollectiveStats {
  uint64_t syncs = 0;            // sync() calls
  uint64_t rows_synced = 0;      // rows over all syncs
  uint64_t bytes_reduced = 0;    // payload bytes this process contributed to Allreduce syncs
  uint64_t full_sync_bytes = 0;  // payload of one sync of every row
  double seconds = 0;            // spent inside sync()
};

class MpiCollective : public W2vCollective {
 public:
  virtual CollectiveStats stats() const = 0;
};

// A W2vCollective over MPI_COMM_WORLD.
std::unique_ptr<MpiCollective> make_w2v_collective(MpiJob& job, const CollectiveOptions& options);

// Batch search over row shards (collective; the signature of Searcher::search_batch): process r
// of N searches only rows [r R / N, (r + 1) R / N) of `full`'s table (R: its rows, or
// options.n_rows_limit), through a Searcher over a view of those rows, so it reads only their
// pages of a mapped file; rank 0 gathers every process's top k per query and merges them by
// (score descending, id ascending), the order Searcher uses, so its answer equals
// full.search_batch's. Other ranks return n_queries empty lists. Error(kUnsupported) for what a
// shard cannot answer alone: centering and CSLS (they need every row), fast mode.
std::vector<std::vector<Neighbor>> sharded_search_batch(
    MpiJob& job, const Searcher& full, std::span<const float> queries, size_t n_queries,
    const SearchOptions& options, const std::vector<std::vector<TokenId>>* exclude_per_query);

// Reads the test hook from EMBEDSCOPE_TEST_FAIL_RANK="RANK:SYNCS[:throw]" (unset: none).
CollectiveOptions collective_options_from_env(CollectiveOptions base);

// What a front end needs around one operation run as a rank (the CLI's train and
// neighbors --batch under mpirun):

// "sum" -> kSumOfChanges, "average" -> kAverage; Error(kInvalidArgument) naming --mpi-sync.
SyncPolicy parse_sync_policy(std::string_view name);
// {policy, syncs, rows_synced, bytes_per_process, full_sync_bytes, seconds}
nlohmann::json to_json(const CollectiveStats& s, std::string_view policy);
// Runs fn() on this rank and returns what it returns. When fn throws, the rank prints
// "error: rank R of N (host H) failed: WHAT" to stderr and ends every rank of the job with
// exit_code(e): the others would wait in a collective for it forever otherwise.
int run_rank(MpiJob& job, const std::function<int()>& fn,
             const std::function<int(const std::exception&)>& exit_code);

}  // namespace embedscope::dist
