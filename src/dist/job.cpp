#include "embedscope/dist/job.h"

#include "embedscope/core/error.h"
#include "embedscope/dist/launch.h"
#if ES_HAVE_MPI
#include "embedscope/dist/mpi_job.h"
#endif

namespace embedscope::dist {

#if ES_HAVE_MPI
namespace {
int exit_code_of(const std::exception& e) { return exit_code(e); }  // one overload, by name
}  // namespace
#endif

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
  throw Error(ErrorCode::kUnsupported, mpi_missing_message());
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
  throw Error(ErrorCode::kUnsupported, mpi_missing_message());
#endif
}

}  // namespace embedscope::dist
