// embedscope train: word2vec over words or a tokenizer's token ids (api/train.h).
#include "common.h"
#include "embedscope/api/train.h"
#include "embedscope/dist/job.h"

namespace embedscope::cli {
namespace {

// Flags bind straight to the request (Word2VecOptions inside: one default per option).
struct TrainOpts {
  api::TrainRequest r;
  bool quiet = false, json = false;
};

// Alone, or every rank of an mpirun job trains and rank 0 prints (dist/job.h).
int run_train(TrainOpts& a) {
  std::optional<api::TrainSummary> s = dist::train(a.r, a.quiet ? nullptr : stderr_progress());
  if (!s) return kExitOk;  // not rank 0
  if (!a.quiet) end_stderr_progress();
  return print(a.json, *s);
}

void flags(CLI::App& app, TrainOpts& a) {
  a.r.w.threads = 0;  // the CLI's default: all cores
  app.add_option("CORPUS", a.r.corpus, "Text files or folders of them (one sentence per line)")
      ->required();
  api::describe(Bind{app}, a.r);
  add_threads_flag(app, a.r.w.threads);
  app.add_flag("-q,--quiet", a.quiet, "No progress output");
  add_json_flag(app, a.json, "Print the summary as JSON");
}

Cmd<TrainOpts> reg("train", flags, run_train);

}  // namespace
}  // namespace embedscope::cli
