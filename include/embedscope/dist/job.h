// A front end's command as its part of the job an MPI launcher started, or alone. The one place
// that knows whether this process is one of several (launch.h) and, when it is, starts MPI
// (mpi_job.h), shares the work between the ranks and ends the whole job when one rank fails.
// Alone, each call is the plain api call. Built twice where MPI is found: es_dist (no MPI, for
// the CLI everyone runs) and es_dist_mpi (for its -mpi twin, which a launched CLI execs:
// exec_mpi_build). A build without MPI launched as several processes gets Error(kUnsupported)
// saying how to enable it (mpi_missing_message()).
//
//   auto s = dist::train(request, progress);   // every rank trains
//   if (s) print(*s);                                             // rank 0 (or alone)
//
// A rank whose work throws prints "error: rank R of N (host H) failed: ..." and ends every
// process of the job with exit_code(e) (core/error.h; MPI_Abort): the other ranks would otherwise
// wait in a collective forever. Alone, errors propagate as exceptions.
#pragma once

#include <optional>
#include <string_view>

#include "embedscope/api/neighbors.h"
#include "embedscope/api/train.h"
#include "embedscope/core/progress.h"

namespace embedscope::dist {

// Whether this build runs MPI jobs itself (es_dist_mpi).
bool built_with_mpi();

// Called first thing by a front end built without MPI: when this process is one of several an
// MPI launcher started, replaces it with `<this executable>-mpi` and the same arguments (same
// pid, which the launcher tracks), so that only MPI jobs load MPI's libraries. Returns when
// there is nothing to do: started alone, built with MPI, or no such file (the command then fails
// with mpi_missing_message()'s advice).
void exec_mpi_build(char** argv);

// api::train(). Under MPI every rank trains its share of the corpus and syncs rows through a
// W2vCollective whose policy is r.mpi_sync, "sum" or "average" (SyncPolicy; anything else is
// Error(kInvalidArgument)); rank 0 alone writes the output and returns the summary (with the
// collective's "sync" report), the other ranks return nullopt.
std::optional<api::TrainSummary> train(const api::TrainRequest& r, ProgressFn progress = nullptr);

// api::neighbors() for a batch request. Under MPI each rank scans its share of the rows and
// rank 0 merges the answers (sharded_search_batch): the result on rank 0, nullopt elsewhere.
std::optional<api::NeighborsResult> neighbors(const ModelHandle& h, api::NeighborsRequest r);

}  // namespace embedscope::dist
