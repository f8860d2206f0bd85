// Front-end glue around an MPI rank: the sync policy by name, the collective's report, and a
// failing rank ending the job (include/embedscope/dist/mpi_job.h).
#include <cstdio>

#include "embedscope/core/error.h"
#include "embedscope/dist/mpi_job.h"

namespace embedscope::dist {

SyncPolicy parse_sync_policy(std::string_view name) {
  if (name == "sum") return SyncPolicy::kSumOfChanges;
  if (name == "average") return SyncPolicy::kAverage;
  throw Error(ErrorCode::kInvalidArgument,
              "--mpi-sync " + std::string(name) + ": expected sum or average");
}

nlohmann::json to_json(const CollectiveStats& s, std::string_view policy) {
  return {{"policy", policy},
          {"syncs", s.syncs},
          {"rows_synced", s.rows_synced},
          {"bytes_per_process", s.bytes_reduced},
          {"full_sync_bytes", s.full_sync_bytes},
          {"seconds", s.seconds}};
}

int run_rank(MpiJob& job, const std::function<int()>& fn,
             const std::function<int(const std::exception&)>& exit_code) {
  try {
    return fn();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: rank %zu of %zu (host %s) failed: %s\n", job.rank(), job.size(),
                 job.host().c_str(), e.what());
    std::fflush(stderr);
    job.abort(exit_code(e));
  }
}

}  // namespace embedscope::dist
