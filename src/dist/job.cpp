#include "embedscope/dist/job.h"

#include <unistd.h>

#include <string>

#include "embedscope/core/error.h"
#include "embedscope/core/paths.h"
#include "embedscope/dist/launch.h"
#ifndef ES_HAVE_MPI
#define ES_HAVE_MPI 0
#endif
#if ES_HAVE_MPI
#include "embedscope/dist/mpi_job.h"
#endif

namespace embedscope::dist {

#if ES_HAVE_MPI
namespace {
int exit_code_of(const std::exception& e) { return exit_code(e); }  // one overload, by name
}  // namespace
#endif

namespace {

// This executable's path + "-mpi" ("" if it cannot be read).
std::string twin_path() {
  const std::string self = executable_path();
  return self.empty() ? self : self + "-mpi";
}

[[maybe_unused]] std::string missing_message() {
#if ES_MPI_TWIN
  return "started as one of " + std::to_string(launched_process_count()) + " MPI processes, but " +
         twin_path() +
         " (the MPI build of this program, which runs its MPI jobs) is missing or cannot run: "
         "build it (cmake --build --preset release) or keep it next to this executable";
#else
  return mpi_missing_message();
#endif
}

}  // namespace

bool built_with_mpi() { return ES_HAVE_MPI != 0; }

void exec_mpi_build(char** argv) {
  if (ES_HAVE_MPI || launched_process_count() <= 1) return;
  const std::string twin = twin_path();
  if (twin.empty() || ::access(twin.c_str(), X_OK) != 0) return;
  ::execv(twin.c_str(), argv);  // returns only on failure: the command then says what is missing
}

std::optional<api::TrainSummary> train(const api::TrainRequest& r, ProgressFn progress) {
  if (launched_process_count() <= 1) return api::train(r, {}, std::move(progress));
#if ES_HAVE_MPI
  MpiJob mpi;
  auto coll = make_w2v_collective(
      mpi, collective_options_from_env({.policy = parse_sync_policy(r.mpi_sync)}));
  api::TrainJob job{.rank = mpi.rank(),
                    .size = mpi.size(),
                    .local_size = local_process_count(),
                    .collective = coll.get(),
                    .sync_stats = [&] { return to_json(coll->stats(), r.mpi_sync); }};
  std::optional<api::TrainSummary> s;
  run_rank(
      mpi, [&] { return (s = api::train(r, job, progress)), 0; }, exit_code_of);
  return s;
#else
  throw Error(ErrorCode::kUnsupported, missing_message());
#endif
}

std::optional<api::NeighborsResult> neighbors(const ModelHandle& h, api::NeighborsRequest r) {
  if (launched_process_count() <= 1) return api::neighbors(h, r);
#if ES_HAVE_MPI
  MpiJob mpi;
  r.batch_search = std::bind_front(&sharded_search_batch, std::ref(mpi));
  std::optional<api::NeighborsResult> res;
  run_rank(
      mpi,
      [&] {
        api::NeighborsResult x = api::neighbors(h, r);
        if (mpi.rank() == 0) res = std::move(x);
        return 0;
      },
      exit_code_of);
  return res;
#else
  (void)h;
  throw Error(ErrorCode::kUnsupported, missing_message());
#endif
}

}  // namespace embedscope::dist
