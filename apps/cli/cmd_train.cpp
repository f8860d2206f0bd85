// embedscope train: word2vec over words or a tokenizer's token ids (api/train.h).
#include "command.h"
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

int run_train(const TrainOpts& a) {
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

Command reg(
    "train", "Train word2vec embeddings (skip-gram / CBOW) over words or token ids",
    [](CLI::App& app) -> Runner {
      auto a = std::make_shared<TrainOpts>();
      a->r.w.threads = 0;  // the CLI's default: all cores
      app.add_option("CORPUS", a->r.corpus, "Text files or folders of them (one sentence per line)")
          ->required();
      app.add_option("-o,--output", a->r.out, "Output file (.safetensors, .bin, .txt/.vec)")
          ->required();
      app.add_option("--arch", a->r.arch, "skipgram or cbow")->capture_default_str();
      app.add_option("--dim", a->r.w.dim, "Vector size")->capture_default_str();
      app.add_option("--window", a->r.w.window, "Maximum context distance")->capture_default_str();
      app.add_option("--negative", a->r.w.negative, "Negative samples (0: off)")
          ->capture_default_str();
      app.add_flag("--hs", a->r.w.hs, "Hierarchical softmax");
      app.add_flag("--shared-negatives", a->r.w.shared_negatives,
                   "Skip-gram: one draw of negatives per center word for its whole window "
                   "(~1.4x faster, slightly lower quality; default: fresh negatives for every "
                   "(context, center) pair, as word2vec.c/gensim)");
      app.add_flag("--classic-skipgram", a->r.w.classic_skipgram,
                   "Skip-gram: word2vec.c's own per-pair loop, unpipelined (the reference; "
                   "same math as the default, slower)");
      app.add_option("--sample", a->r.w.sample, "Subsampling threshold (0: off)")
          ->capture_default_str();
      app.add_option("--min-count", a->r.w.min_count, "Ignore words rarer than this")
          ->capture_default_str();
      app.add_option("--max-vocab", a->r.w.max_vocab,
                     "Keep at most this many rows trained (0: all)");
      app.add_option("--epochs", a->r.w.epochs, "Passes over the corpus")->capture_default_str();
      app.add_option("--lr", a->r.w.lr,
                     "Starting learning rate (default 0.025 skipgram, 0.05 cbow)");
      add_threads_flag(app, a->r.w.threads);
      app.add_option("--seed", a->r.w.seed, "Random seed (one thread + a seed is reproducible)")
          ->capture_default_str();
      app.add_option("--format", a->r.format,
                     "safetensors, word2vec or word2vec-bin (default: from -o)");
      app.add_option("--tokenizer", a->r.tokenizer,
                     "Train over token ids: gpt2, a tokenizer folder or a tokenizer.json");
      app.add_flag("--row-stats", a->r.w.row_stats,
                   "Also write OUT.row_stats.tsv (updates, drift)");
      app.add_option("--checkpoint-every", a->r.w.checkpoint_every,
                     "Write a checkpoint every N words (atomic; OUT.ckpt)");
      app.add_option("--checkpoint", a->r.checkpoint, "Checkpoint path (default OUT.ckpt)");
      app.add_flag("--resume", a->r.w.resume, "Continue from the checkpoint if it exists");
      app.add_option("--sync-every", a->r.w.sync_every,
                     "MPI: synchronise the most frequent rows every N words of each process "
                     "(0: every segment of 32 chunks)")
          ->capture_default_str();
      app.add_option("--sync-rows", a->r.w.sync_rows,
                     "MPI: how many of the most frequent rows (of each matrix) sync often")
          ->capture_default_str();
      app.add_option("--mpi-sync", a->mpi_sync,
                     "MPI: sum (each row = last sync + every rank's change) or average "
                     "(pWord2Vec)")
          ->check(CLI::IsMember({"sum", "average"}))
          ->capture_default_str();
      app.add_flag("-q,--quiet", a->quiet, "No progress output");
      add_json_flag(app, a->json, "Print the summary as JSON");
      app.footer(
          "Examples:\n  embedscope train corpus.txt -o vectors.safetensors --dim 100 --epochs 5\n"
          "  embedscope train books/ -o gpt2-sg.safetensors --tokenizer gpt2 --threads 2\n  "
          "embedscope train corpus.txt -o v.bin --checkpoint-every 1000000 --resume\n  mpirun "
          "-np 4 embedscope train corpus.txt -o v.safetensors --threads 1\n\nUnder mpirun (or "
          "srun) the processes train one model: each reads its share of the\ncorpus, rows are "
          "synchronised by MPI_Allreduce, rank 0 writes the output and the\ncheckpoints (at "
          "epoch ends; resume on any number of processes). --threads defaults\nto the host's "
          "cores divided by its ranks. docs/distributed.md has the details.\n\nProgress goes to "
          "stderr: one updating line on a terminal, JSON lines otherwise\n(--quiet for none). "
          "Safetensors output stores the vocabulary and per-row counts.");
      return [a] { return run_train(*a); };
    },
    60);

}  // namespace
}  // namespace embedscope::cli
