// api::train: `embedscope train` as one call: word2vec over a corpus (train/word2vec.h), the
// table written atomically in the chosen format, the optional row statistics, and the summary
// document (the CLI's `train --json`).
//
// The request holds the trainer's own options (Word2VecOptions: one default per option, there)
// plus what only this operation has: the corpus, the output, the architecture and format names,
// the tokenizer reference and the checkpoint path.
//
// Errors: Error(kInvalidArgument) for an unknown --arch / --format or invalid trainer options,
// Error(kNotFound) for a tokenizer reference that names nothing, what train_word2vec and
// save_word2vec throw. The output folder is checked for writability before training.
//
// Jobs: alone, or one rank of an MPI job (dist::train in dist/job.h fills TrainJob): every rank
// trains, rank 0 alone writes the output and the checkpoints; train() returns nullopt on other
// ranks.
//
//   api::TrainRequest r;
//   r.corpus = {"corpus.txt"};
//   r.out = "v.safetensors";
//   api::TrainSummary s = *api::train(r);
//   std::puts(api::to_text(s).c_str());
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "embedscope/api/common.h"
#include "embedscope/formats/embeddings_file.h"
#include "embedscope/tokenizer/bpe.h"
#include "embedscope/train/word2vec.h"

namespace embedscope::api {

struct TrainRequest {
  Word2VecOptions w;  // threads = 0: process_threads() shared by the host's ranks
  std::vector<std::string> corpus;
  std::string out;
  std::string arch = "skipgram";  // skipgram (sg) or cbow
  std::string format;             // safetensors, word2vec, word2vec-bin; "" = from out's name
  std::string tokenizer;          // "" = words; gpt2, a tokenizer folder or a tokenizer.json
  std::string checkpoint;         // "" = out + ".ckpt"
  std::string mpi_sync = "sum";   // under mpirun: dist::SyncPolicy "sum" or "average"
};

// The process's place in its job: defaults are one process alone.
struct TrainJob {
  size_t rank = 0, size = 1;
  size_t local_size = 1;                // ranks on this host (they share its cores)
  W2vCollective* collective = nullptr;  // set under MPI
  std::function<json()> sync_stats;     // what the collective moved (the summary's "sync")
};

struct TrainSummary {
  std::string output;
  FileFormat format = FileFormat::kUnknown;
  size_t rows = 0, rows_trained = 0, dim = 0, threads = 0, processes = 1, negative_sets = 0;
  uint64_t corpus_words = 0, trained_words = 0, resumed_words = 0;
  double seconds = 0, scan_seconds = 0, words_per_second = 0, final_loss = 0;
  std::string simd;
  std::string row_stats;  // the .row_stats.tsv written ("" = none)
  json sync;              // null alone
};

// progress: called on rank 0 only (null = silent). nullopt on ranks other than 0.
std::optional<TrainSummary> train(const TrainRequest& r, const TrainJob& job = {},
                                  ProgressFn progress = nullptr);

// {output, format, rows, rows_trained, dim, corpus_words, seconds, scan_seconds,
//  words_per_second, final_loss, threads, negative_sets, simd, processes, trained_words,
//  resumed_words, sync?, row_stats?}
json to_json(const TrainSummary& s);
// "wrote OUT: R rows (T trained) x D, ..." (+ the MPI line and the row-statistics path).
std::string to_text(const TrainSummary& s);

}  // namespace embedscope::api
