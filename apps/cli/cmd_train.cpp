// embedscope train: word2vec over words or a tokenizer's token ids (train/word2vec.h).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <thread>

#include "command.h"
#include "common.h"
#include "embedscope/core/atomic_file.h"
#include "embedscope/core/error.h"
#include "embedscope/core/progress.h"
#include "embedscope/core/thread_pool.h"
#include "embedscope/dist/launch.h"
#if ES_HAVE_MPI
#include "embedscope/dist/mpi_job.h"
#endif
#include "embedscope/handle/model_handle.h"
#include "embedscope/tokenizer/bpe.h"
#include "embedscope/tokenizer/tokenizer.h"
#include "embedscope/train/word2vec.h"

namespace embedscope::cli {
namespace {

// Flags bind straight to Word2VecOptions (one default per option, in word2vec.h); only what
// the library has no field for lives here.
struct TrainOpts {
  Word2VecOptions w;
  std::vector<std::string> corpus;
  std::string out, arch = "skipgram", format, tokenizer, checkpoint, mpi_sync = "sum";
  bool quiet = false, json = false;
};

// The job this process belongs to: one process, or one rank of an MPI job (ES_HAVE_MPI).
struct Job {
  size_t rank = 0, size = 1, local_size = 1;
  std::string host;
  W2vCollective* collective = nullptr;
  std::function<json()> stats;               // what the collective moved
  std::function<void(int exit_code)> abort;  // ends every rank (a rank's failure)
};

int train_in_job(const TrainOpts& a, const Job& job) {
  Word2VecOptions o = a.w;
  const bool rank0 = job.rank == 0;
  if (a.arch == "skipgram" || a.arch == "sg")
    o.arch = W2vArch::kSkipGram;
  else if (a.arch == "cbow")
    o.arch = W2vArch::kCbow;
  else
    throw Error(ErrorCode::kInvalidArgument, "--arch " + a.arch + ": expected skipgram or cbow");
  FileFormat fmt = FileFormat::kUnknown;
  if (!a.format.empty()) {
    fmt = parse_format_name(a.format);
    if (fmt != FileFormat::kSafetensors && fmt != FileFormat::kWord2VecText &&
        fmt != FileFormat::kWord2VecBinary)
      throw Error(ErrorCode::kInvalidArgument,
                  "--format " + a.format + ": expected safetensors, word2vec or word2vec-bin");
  } else {
    fmt = output_format_for_path(a.out);
  }
  // Reported in the summary. Ranks on one host share its cores.
  if (o.threads == 0) o.threads = std::max<size_t>(1, process_threads() / job.local_size);
  o.checkpoint_path = a.checkpoint.empty() ? a.out + ".ckpt" : a.checkpoint;
  validate_word2vec_options(o);
  if (rank0) {                       // rank 0 owns the output and the checkpoint
    remove_stale_temp_files(a.out);  // left by a run killed while writing
    // Fail on an unwritable output folder now, not after training.
    { AtomicFile probe(a.out); }
    if (o.checkpoint_every || o.resume) {
      AtomicFile probe(o.checkpoint_path);
    }
  }
  o.collective = job.collective;

  std::shared_ptr<const Tokenizer> tok;
  if (!a.tokenizer.empty()) {
    tok = open_tokenizer(a.tokenizer);
    // The trainer's token mode reads GPT-2-family tokenizers (BpeTokenizer) only.
    if (!tok->bpe())
      throw Error(ErrorCode::kUnsupported,
                  "--tokenizer " + a.tokenizer + " is " + tok->describe() +
                      "; training in token mode needs a byte-level BPE tokenizer");
    o.tokenizer = tok->bpe();
    o.tokenizer_name =
        a.tokenizer == "gpt2" ? "gpt2" : std::filesystem::absolute(a.tokenizer).string();
  }
  const bool tty = ::isatty(2);
  if (!a.quiet && rank0)  // one progress line for the job, with its global rate
    o.progress = [tty](const ProgressInfo& p) {
      if (tty) {
        std::fprintf(stderr, "\r%s\033[K", format_progress(p).c_str());
      } else {
        json j = {{"event", "progress"}, {"done", p.done}, {"total", p.total},
                  {"unit", p.unit},      {"rate", p.rate}, {"eta_seconds", p.eta_seconds},
                  {"extra", p.extra}};
        std::fprintf(stderr, "%s\n", j.dump().c_str());
      }
    };
  Word2VecResult r = train_word2vec(a.corpus, o);
  if (!rank0) return kExitOk;
  if (!a.quiet && tty) std::fprintf(stderr, "\n");
  save_word2vec(a.out, r, o, fmt);
  std::string stats_path;
  if (o.row_stats) {
    stats_path = a.out + ".row_stats.tsv";
    save_row_stats(stats_path, r);
  }
  // The finished table supersedes the checkpoint.
  if (o.checkpoint_every) std::filesystem::remove(o.checkpoint_path);
  size_t trained = 0;
  for (uint8_t t : r.trained) trained += t;
  if (a.json) {
    json j = {{"output", a.out},
              {"format", std::string(format_name(fmt))},
              {"rows", r.table.n_rows()},
              {"rows_trained", trained},
              {"dim", r.table.dim()},
              {"corpus_words", r.corpus_words},
              {"seconds", r.seconds},
              {"scan_seconds", r.scan_seconds},
              {"words_per_second", r.words_per_second},
              {"final_loss", finite_or_null(r.final_loss)},
              {"threads", o.threads},
              {"negative_sets", r.negative_sets},
              {"simd", r.simd_target},
              {"processes", job.size},
              {"trained_words", r.trained_words},
              {"resumed_words", r.resumed_words}};
    if (job.stats) j["sync"] = job.stats();
    if (!stats_path.empty()) j["row_stats"] = stats_path;
    print_json(j);
  } else {
    std::printf(
        "wrote %s: %zu rows (%zu trained) x %zu, %llu corpus words, %.1f s, %.0f words/s, "
        "loss %.4f (%s, %zu threads)\n",
        a.out.c_str(), r.table.n_rows(), trained, r.table.dim(), (unsigned long long)r.corpus_words,
        r.seconds, r.words_per_second, r.final_loss, r.simd_target.c_str(), o.threads);
    if (job.size > 1)
      std::printf("%zu processes x %zu threads (MPI); words/s is the whole job's\n", job.size,
                  o.threads);
    if (!stats_path.empty()) std::printf("row statistics: %s\n", stats_path.c_str());
  }
  return kExitOk;
}

int run_train(const TrainOpts& a) {
  if (a.mpi_sync != "sum" && a.mpi_sync != "average")
    throw Error(ErrorCode::kInvalidArgument,
                "--mpi-sync " + a.mpi_sync + ": expected sum or average");
  if (dist::launched_process_count() <= 1) return train_in_job(a, Job{});
#if ES_HAVE_MPI
  dist::MpiJob mpi;
  Job job;
  job.rank = mpi.rank();
  job.size = mpi.size();
  job.host = mpi.host();
  if (const char* v = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE"))
    job.local_size = std::max<size_t>(1, std::strtoull(v, nullptr, 10));
  dist::CollectiveOptions co;
  co.policy =
      a.mpi_sync == "average" ? dist::SyncPolicy::kAverage : dist::SyncPolicy::kSumOfChanges;
  auto coll = dist::make_w2v_collective(mpi, dist::collective_options_from_env(co));
  job.collective = coll.get();
  job.stats = [&] {
    const dist::CollectiveStats s = coll->stats();
    return json{{"policy", a.mpi_sync},
                {"syncs", s.syncs},
                {"rows_synced", s.rows_synced},
                {"bytes_per_process", s.bytes_reduced},
                {"full_sync_bytes", s.full_sync_bytes},
                {"seconds", s.seconds}};
  };
  // A rank that fails ends the whole job: the others wait in a collective for it otherwise.
  // Rank 0 writes the output only after training, atomically, so nothing half-written stays.
  auto fail = [&](const char* what, int code) {
    std::fprintf(stderr, "error: rank %zu of %zu (host %s) failed: %s\n", job.rank, job.size,
                 job.host.c_str(), what);
    std::fflush(stderr);
    mpi.abort(code);
  };
  try {
    return train_in_job(a, job);
  } catch (const Error& e) {
    fail(e.what(), exit_code_for(e.code()));
  } catch (const std::exception& e) {
    fail(e.what(), kExitInternal);
  }
  return kExitInternal;  // not reached: fail() ends the job
#else
  throw Error(ErrorCode::kUnsupported, dist::mpi_missing_message());
#endif
}

Command reg(
    "train", "Train word2vec embeddings (skip-gram / CBOW) over words or token ids",
    [](CLI::App& app) -> Runner {
      auto a = std::make_shared<TrainOpts>();
      a->w.threads = 0;  // the CLI's default: all cores
      app.add_option("CORPUS", a->corpus, "Text files or folders of them (one sentence per line)")
          ->required();
      app.add_option("-o,--output", a->out, "Output file (.safetensors, .bin, .txt/.vec)")
          ->required();
      app.add_option("--arch", a->arch, "skipgram or cbow")->capture_default_str();
      app.add_option("--dim", a->w.dim, "Vector size")->capture_default_str();
      app.add_option("--window", a->w.window, "Maximum context distance")->capture_default_str();
      app.add_option("--negative", a->w.negative, "Negative samples (0: off)")
          ->capture_default_str();
      app.add_flag("--hs", a->w.hs, "Hierarchical softmax");
      app.add_flag("--shared-negatives", a->w.shared_negatives,
                   "Skip-gram: one draw of negatives per center word for its whole window "
                   "(~1.4x faster, slightly lower quality; default: fresh negatives for every "
                   "(context, center) pair, as word2vec.c/gensim)");
      app.add_flag("--classic-skipgram", a->w.classic_skipgram,
                   "Skip-gram: word2vec.c's own per-pair loop, unpipelined (the reference; "
                   "same math as the default, slower)");
      app.add_option("--sample", a->w.sample, "Subsampling threshold (0: off)")
          ->capture_default_str();
      app.add_option("--min-count", a->w.min_count, "Ignore words rarer than this")
          ->capture_default_str();
      app.add_option("--max-vocab", a->w.max_vocab, "Keep at most this many rows trained (0: all)");
      app.add_option("--epochs", a->w.epochs, "Passes over the corpus")->capture_default_str();
      app.add_option("--lr", a->w.lr, "Starting learning rate (default 0.025 skipgram, 0.05 cbow)");
      app.add_option("--threads", a->w.threads, "Worker threads (default: all cores)");
      app.add_option("--seed", a->w.seed, "Random seed (one thread + a seed is reproducible)")
          ->capture_default_str();
      app.add_option("--format", a->format,
                     "safetensors, word2vec or word2vec-bin (default: from -o)");
      app.add_option("--tokenizer", a->tokenizer,
                     "Train over token ids: gpt2, a tokenizer folder or a tokenizer.json");
      app.add_flag("--row-stats", a->w.row_stats, "Also write OUT.row_stats.tsv (updates, drift)");
      app.add_option("--checkpoint-every", a->w.checkpoint_every,
                     "Write a checkpoint every N words (atomic; OUT.ckpt)");
      app.add_option("--checkpoint", a->checkpoint, "Checkpoint path (default OUT.ckpt)");
      app.add_flag("--resume", a->w.resume, "Continue from the checkpoint if it exists");
      app.add_option("--sync-every", a->w.sync_every,
                     "MPI: synchronise the most frequent rows every N words of each process "
                     "(0: every segment of 32 chunks)")
          ->capture_default_str();
      app.add_option("--sync-rows", a->w.sync_rows,
                     "MPI: how many of the most frequent rows (of each matrix) sync often")
          ->capture_default_str();
      app.add_option("--mpi-sync", a->mpi_sync,
                     "MPI: sum (each row = last sync + every rank's change) or average "
                     "(pWord2Vec)")
          ->capture_default_str();
      app.add_flag("-q,--quiet", a->quiet, "No progress output");
      app.add_flag("--json", a->json, "Print the summary as JSON");
      app.footer(
          "Examples:\n"
          "  embedscope train corpus.txt -o vectors.safetensors --dim 100 --epochs 5\n"
          "  embedscope train books/ -o gpt2-sg.safetensors --tokenizer gpt2 --threads 2\n"
          "  embedscope train corpus.txt -o v.bin --checkpoint-every 1000000 --resume\n"
          "  mpirun -np 4 embedscope train corpus.txt -o v.safetensors --threads 1\n\n"
          "Under mpirun (or srun) the processes train one model: each reads its share of the\n"
          "corpus, rows are synchronised by MPI_Allreduce, rank 0 writes the output and the\n"
          "checkpoints (at epoch ends; resume on any number of processes). --threads defaults\n"
          "to the host's cores divided by its ranks. docs/distributed.md has the details.\n\n"
          "Progress goes to stderr: one updating line on a terminal, JSON lines otherwise\n"
          "(--quiet for none). Safetensors output stores the vocabulary and per-row counts.");
      return [a] { return run_train(*a); };
    },
    60);

}  // namespace
}  // namespace embedscope::cli
