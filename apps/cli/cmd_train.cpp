// embedscope train: word2vec over words or a tokenizer's token ids (api/train.h).
#include "common.h"
#include "embedscope/api/train.h"
#include "embedscope/dist/launch.h"
#if ES_HAVE_MPI
#include "embedscope/dist/mpi_job.h"
#endif

namespace embedscope::cli {
namespace {

// Flags bind straight to the request (Word2VecOptions inside: one default per option).
struct TrainOpts {
  api::TrainRequest r;
  std::string mpi_sync = "sum";
  bool quiet = false, json = false;
};

int train_in_job(const TrainOpts& a, const api::TrainJob& job) {
  std::optional<api::TrainSummary> s = api::train(a.r, job, progress_printer(a.quiet));
  if (!s) return kExitOk;  // not rank 0
  end_progress(a.quiet);
  a.json ? print_json(api::to_json(*s)) : print_text(api::to_text(*s));
  return kExitOk;
}

int run_train(TrainOpts& a) {
  if (dist::launched_process_count() <= 1) return train_in_job(a, {});
#if ES_HAVE_MPI
  dist::MpiJob mpi;
  auto coll = dist::make_w2v_collective(
      mpi, dist::collective_options_from_env({.policy = dist::parse_sync_policy(a.mpi_sync)}));
  api::TrainJob job{.rank = mpi.rank(),
                    .size = mpi.size(),
                    .local_size = dist::local_process_count(),
                    .collective = coll.get(),
                    .sync_stats = [&] { return dist::to_json(coll->stats(), a.mpi_sync); }};
  // Rank 0 writes the output only after training, atomically, so nothing half-written stays.
  return dist::run_rank(
      mpi, [&] { return train_in_job(a, job); },
      [](const std::exception& e) { return exit_code_for(e); });
#else
  throw Error(ErrorCode::kUnsupported, dist::mpi_missing_message());
#endif
}

void flags(CLI::App& app, TrainOpts& a) {
  a.r.w.threads = 0;  // the CLI's default: all cores
  app.add_option("CORPUS", a.r.corpus, "Text files or folders of them (one sentence per line)")
      ->required();
  api::describe(Bind{app}, a.r);
  add_threads_flag(app, a.r.w.threads);
  app.add_option("--mpi-sync", a.mpi_sync,
                 "MPI: sum (each row = last sync + every rank's change) or average "
                 "(pWord2Vec)")
      ->check(CLI::IsMember({"sum", "average"}))
      ->capture_default_str();
  app.add_flag("-q,--quiet", a.quiet, "No progress output");
  add_json_flag(app, a.json, "Print the summary as JSON");
}

Cmd<TrainOpts> reg("train", flags, run_train);

}  // namespace
}  // namespace embedscope::cli
