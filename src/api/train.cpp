#include "embedscope/api/train.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "embedscope/core/atomic_file.h"
#include "embedscope/core/error.h"
#include "embedscope/core/thread_pool.h"

namespace embedscope::api {

std::optional<TrainSummary> train(const TrainRequest& a, const TrainJob& job, ProgressFn progress) {
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
  if (rank0) o.progress = std::move(progress);  // one progress line for the job
  Word2VecResult r = train_word2vec(a.corpus, o);
  if (!rank0) return std::nullopt;
  save_word2vec(a.out, r, o, fmt);
  TrainSummary s;
  if (o.row_stats) {
    s.row_stats = a.out + ".row_stats.tsv";
    save_row_stats(s.row_stats, r);
  }
  // The finished table supersedes the checkpoint.
  if (o.checkpoint_every) std::filesystem::remove(o.checkpoint_path);
  for (uint8_t t : r.trained) s.rows_trained += t;
  s.output = a.out;
  s.format = fmt;
  s.rows = r.table.n_rows();
  s.dim = r.table.dim();
  s.threads = o.threads;
  s.processes = job.size;
  s.negative_sets = r.negative_sets;
  s.corpus_words = r.corpus_words;
  s.trained_words = r.trained_words;
  s.resumed_words = r.resumed_words;
  s.seconds = r.seconds;
  s.scan_seconds = r.scan_seconds;
  s.words_per_second = r.words_per_second;
  s.final_loss = r.final_loss;
  s.simd = r.simd_target;
  if (job.sync_stats) s.sync = job.sync_stats();
  return s;
}

json to_json(const TrainSummary& s) {
  json j = {{"output", s.output},
            {"format", std::string(format_name(s.format))},
            {"rows", s.rows},
            {"rows_trained", s.rows_trained},
            {"dim", s.dim},
            {"corpus_words", s.corpus_words},
            {"seconds", s.seconds},
            {"scan_seconds", s.scan_seconds},
            {"words_per_second", s.words_per_second},
            {"final_loss", finite_or_null(s.final_loss)},
            {"threads", s.threads},
            {"negative_sets", s.negative_sets},
            {"simd", s.simd},
            {"processes", s.processes},
            {"trained_words", s.trained_words},
            {"resumed_words", s.resumed_words}};
  if (!s.sync.is_null()) j["sync"] = s.sync;
  if (!s.row_stats.empty()) j["row_stats"] = s.row_stats;
  return j;
}

std::string to_text(const TrainSummary& s) {
  char b[512];
  std::snprintf(b, sizeof b,
                "wrote %s: %zu rows (%zu trained) x %zu, %llu corpus words, %.1f s, %.0f words/s, "
                "loss %.4f (%s, %zu threads)\n",
                s.output.c_str(), s.rows, s.rows_trained, s.dim,
                static_cast<unsigned long long>(s.corpus_words), s.seconds, s.words_per_second,
                s.final_loss, s.simd.c_str(), s.threads);
  std::string t = b;
  if (s.processes > 1) {
    std::snprintf(b, sizeof b, "%zu processes x %zu threads (MPI); words/s is the whole job's\n",
                  s.processes, s.threads);
    t += b;
  }
  if (!s.row_stats.empty()) t += "row statistics: " + s.row_stats + "\n";
  return t;
}

}  // namespace embedscope::api
