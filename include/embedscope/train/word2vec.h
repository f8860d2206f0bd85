// word2vec training (Mikolov et al. 2013): skip-gram or CBOW, negative sampling and/or
// hierarchical softmax, over words or over a tokenizer's token ids.
//
// Pipeline (the corpus is streamed, never held in memory whole):
//  1. scan: the input files (or every regular file under an input folder, in sorted path order)
//     are read in 1 MiB blocks. Word mode splits on ASCII whitespace; a line is a sentence.
//     Token mode runs the tokenizer on each line (lines longer than 1 MiB are cut at a
//     whitespace boundary first) and counts token ids.
//  2. vocabulary: word mode keeps words with count >= min_count, most frequent first (ties by
//     bytes), at most max_vocab of them. Token mode keeps one row per tokenizer id (the shape of
//     the model's input embedding): ids under min_count (or beyond max_vocab by count) keep
//     their row and count but are not trained; never-seen ids have count 0.
//  3. the corpus is re-read once and written as a stream of uint32 row ids (sentence ends marked)
//     into a temporary file in work_dir (unlinked at once), which training reads chunk by chunk.
//  4. training: each epoch is cut into chunks of 1024 stream positions, 32 chunks to a segment
//     (128 with threads > 1: threads meet between segments, see word2vec.cpp).
//     Threads take chunks from a shared counter; a chunk's random generator is seeded from
//     (seed, epoch, chunk) and its learning rate from its position (linear decay from lr to
//     min(lr, 1e-4) over all epochs, like gensim),
//     so a run restarted from a checkpoint (taken between segments) continues bit-identically
//     in one-thread mode, and no result depends on which thread ran which chunk.
//
// Text policy: words are byte strings. Invalid UTF-8 is kept verbatim (never rejected, never
// replaced) so that every byte sequence the corpus contains can be looked up again; words longer
// than kMaxWordBytes are cut to that length; sentences longer than kMaxSentence ids are split.
//
// Skip-gram updates: by default word2vec.c's fresh negatives for every (context, center) pair
// in a pipelined loop; shared_negatives draws once per center word for its whole window (Ji et al.
// 2016), faster and slightly less accurate; classic_skipgram is word2vec.c's unpipelined loop.
// bench/RESULTS.md "## training" has the current speed and quality against gensim.
//
// Concurrency: with threads > 1 the workers update the shared weight matrices without locks
// ("Hogwild", Recht et al. 2011), exactly like word2vec.c, fastText and gensim. This is the one
// deliberate data race in embedscope: two threads may read-modify-write the same float at the
// same moment and one update is lost. With row counts in the thousands and updates that are
// small, such collisions are rare and only add noise comparable to SGD's own; all other shared
// state (progress counters, losses) is per-thread and merged after each segment. Two threads
// train as well as one on real corpora. Not on a toy vocabulary (a few dozen rows): every row is
// then written by both threads all the time and the races can erase what one thread learns, so
// train such corpora on one thread.
// Threads: training runs on a private pool of exactly `threads` threads, not on the process
// pool (core/thread_pool.h): the workers meet at a spin barrier between segments, so all of
// them must run at once, and a shared pool whose threads may be busy with other callers' tasks
// cannot promise that.
// Negatives by thread: with negative sampling and several threads (at least 1024 trained rows a
// thread), the trained rows are split into one set per thread of equal count^0.75 mass, each
// set's output rows in one block; in epoch e chunk c of the corpus draws its negatives from set
// (c + e) mod threads, and thread t trains the chunks of class t first. So each thread writes
// its own negatives' rows and two threads scale even when the host places the two vCPUs far
// apart (src/train/w2v_negatives.h). Each word is still a negative at its count^0.75 rate.
// One thread with a fixed seed is bit-reproducible.
//
// Memory: the weight matrices (rows padded to 16 floats), the vocabulary, 12 bytes per trained
// row for negative sampling (plus 4 for the output-row layout with several threads) and two rows
// of scratch per thread.
//
// Errors (all thrown before any training starts): Error(kNotFound) for a missing input,
// Error(kInvalidArgument) for options out of range (naming the option, value and limit) and for
// an empty vocabulary ("... lower min_count"), Error(kIo) for unreadable input or an unwritable
// work_dir / checkpoint; Error(kCorrupt) for a damaged checkpoint on resume.
//
//   Word2VecOptions o;
//   o.dim = 100; o.threads = 2; o.seed = 1;
//   Word2VecResult r = train_word2vec({"corpus.txt"}, o);
//   save_embeddings("vectors.safetensors", r.table, &r.vocab);   // vocab carries the counts
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "embedscope/core/embedding_table.h"
#include "embedscope/core/progress.h"
#include "embedscope/core/vocabulary.h"
#include "embedscope/formats/embeddings_file.h"

namespace embedscope {

class BpeTokenizer;

enum class W2vArch { kSkipGram, kCbow };

// What a distributed driver (src/dist: MPI) provides to train one model over several processes.
// The trainer itself knows no MPI: it calls these at fixed points, the same on every process.
// Every method is collective: all processes call it in the same order with the same sizes, and
// it returns when all have called it. A method throws Error on failure (the driver may also end
// the whole job instead: a lost process cannot be waited for).
//
// What the trainer does with it (Word2VecOptions::collective set, size() > 1):
//  - reads only its byte range of the corpus (corpus_range_* or, when those are unset, the
//    rank-th of size() equal byte ranges of the input files concatenated in order), a line
//    belonging to the range its first byte lies in;
//  - sums the counts before the vocabulary is cut (word mode: merge_word_counts; token mode: sum
//    over the count array) and the corpus size, so every process cuts the same vocabulary as
//    one process reading everything would;
//  - cuts each epoch into the same number of segments on every process (each process's share
//    proportional to its part of the corpus), so the fraction of the epoch done, and with it the
//    learning rate, follows the global word count at every barrier;
//  - at segment ends calls sync(n_hot) every sync_every global words, and sync(all rows) at each
//    epoch end, after which all processes hold the same model;
//  - writes checkpoints at epoch ends only (on rank 0; all processes hold the same weights
//    there), so a run resumes on any number of processes.
class W2vCollective {
 public:
  virtual ~W2vCollective() = default;
  virtual size_t rank() const = 0;  // 0 .. size() - 1
  virtual size_t size() const = 0;
  // Element-wise sum over all processes, in place.
  virtual void sum(std::span<uint64_t> values) = 0;
  virtual void sum(std::span<double> values) = 0;
  // Word mode: replaces this process's (word, count) pairs (any order, each word once) by the
  // sum over all processes (any order).
  virtual void merge_word_counts(std::vector<std::pair<std::string, uint64_t>>& counts) = 0;
  // Called once before training: every weight row the trainer updates (input rows, output rows,
  // hierarchical-softmax nodes), hottest first, each `dim` floats. They hold the same values on
  // every process at this call (the same seed, or the same checkpoint). The pointers stay valid
  // until training returns.
  virtual void begin_sync(std::span<float* const> rows, size_t dim) = 0;
  // Makes rows[0, n) of begin_sync's list identical on every process (the driver's policy:
  // e.g. the sum of every process's changes since the last sync, or their average).
  virtual void sync(size_t n) = 0;
};

inline constexpr size_t kMaxWordBytes = 1000;
inline constexpr size_t kMaxSentence = 10000;
// Upper bounds accepted for options (far above any useful value; they keep allocations sane).
inline constexpr size_t kMaxTrainDim = 10000;
inline constexpr size_t kMaxWindow = 1000;
inline constexpr size_t kMaxNegative = 1000;
inline constexpr size_t kMaxEpochs = 100000;
inline constexpr size_t kMaxThreads = 1024;

struct Word2VecOptions {
  W2vArch arch = W2vArch::kSkipGram;
  size_t dim = 100;
  size_t window = 5;    // maximum distance; each center draws its window in [1, window]
  size_t negative = 5;  // negative samples per positive; 0 disables negative sampling
  bool hs = false;      // hierarchical softmax (Huffman tree over the trained rows)
  // Skip-gram with negative sampling (and no hs) draws fresh negatives for every (context,
  // center) pair, as word2vec.c, gensim and fastText do, in a software-pipelined loop that draws
  // and prefetches the next window's rows while the current one trains (w2v_kernels.cpp).
  // shared_negatives: one draw of negatives per center word serves every context of its window
  // (Ji et al. 2016; rows still updated after each context): faster, slightly below fresh draws
  // in quality (bench/RESULTS.md "## training").
  // classic_skipgram: word2vec.c's own per-pair loop, unpipelined (the reference: the default's
  // math, slower).
  // shared_negatives with CBOW, negative = 0, hs or classic_skipgram is an invalid argument.
  bool shared_negatives = false;
  bool classic_skipgram = false;
  double sample = 1e-3;  // subsampling threshold t; 0 disables
  uint64_t min_count = 5;
  size_t max_vocab = 0;  // 0: unlimited
  size_t epochs = 5;
  float lr = 0;        // starting learning rate; 0: 0.025 (skip-gram) or 0.05 (CBOW)
  size_t threads = 1;  // 0: process_threads() (all cores unless the front end set it)
  uint64_t seed = 1;
  const BpeTokenizer* tokenizer = nullptr;  // token mode when set (not owned)
  std::string tokenizer_name;               // recorded in checkpoints ("gpt2")
  std::string work_dir;                     // temporary id stream; default $TMPDIR or /tmp
  std::string checkpoint_path;  // written atomically every checkpoint_every words (if > 0)
  uint64_t checkpoint_every = 0;
  bool resume = false;     // continue from checkpoint_path if it exists
  bool row_stats = false;  // count updates per row and measure drift from the initial value
  ProgressFn progress;     // called about every progress_interval seconds
  double progress_interval = 1.0;
  // Test hook: stop (as if killed) after this many segments; 0 = never.
  uint64_t stop_after_segments = 0;

  // Distributed training (see W2vCollective; all unset: one process, everything unchanged).
  W2vCollective* collective = nullptr;  // not owned
  // The byte range of the corpus (the input files concatenated in order) this process reads:
  // the lines whose first byte lies in [corpus_range_begin, corpus_range_end). Defaults: all
  // of it, or with a collective of size() > 1 the rank's equal share.
  uint64_t corpus_range_begin = 0;
  uint64_t corpus_range_end = std::numeric_limits<uint64_t>::max();
  // With a collective: the hottest sync_rows rows (by count) of each matrix are synchronised
  // every sync_every corpus positions of each process (the job's period is size() times that;
  // segments shrink to it, down to one 1024-position chunk of the largest share; 0: at every
  // segment end, about every 32 chunks per process); every row at each epoch end. Counted in
  // words, never in seconds, so a run is reproducible. A corpus too small for 32 syncs an epoch
  // at this period syncs 32 times an epoch (every 4096 words at the least). On Brown x5 with 2
  // processes (3 seeds), every 32768 words with sync_tiers trained as well as one process with 2
  // threads; without tiers, rows below the hottest stay stale for an epoch and WordSim-353 dropped
  // by 0.02-0.03 at any period from 4096 to 32768 (docs/distributed.md).
  uint64_t sync_every = 32768;
  size_t sync_rows = 1024;
  // With a collective: widen some syncs in tiers, so that rows below the hottest are not stale
  // for a whole epoch: every 8th sync covers the 8 x sync_rows hottest rows, every 64th the
  // 64 x sync_rows hottest, and so on, the widest tier being every row. About sync_rows x the
  // number of tiers rows per sync on average, instead of sync_rows.
  bool sync_tiers = true;
};

struct Word2VecResult {
  Vocabulary vocab;              // one entry per row, with counts (token mode: decoded token bytes)
  EmbeddingTable table;          // (vocab.size() x dim) float32: the input vectors (syn0)
  std::vector<uint8_t> trained;  // 1 where the row took part in training
  std::vector<uint64_t> row_updates;  // with row_stats: times the row was updated
  std::vector<float> row_drift;       // with row_stats: L2 distance from its initial vector
  uint64_t corpus_words = 0;          // words / tokens in the corpus (before min_count)
  uint64_t trained_words = 0;  // words processed by training over all epochs (after subsampling)
  uint64_t resumed_words = 0;  // of those, done before the checkpoint this run resumed from
  double seconds = 0;          // training time (excluding the corpus scan)
  double scan_seconds = 0;
  double words_per_second = 0;  // corpus positions processed per second of training
  double final_loss = 0;        // mean loss per prediction over the last epoch
  bool completed = true;        // false when stop_after_segments stopped it
  std::string simd_target;      // the instruction set the inner loop ran on ("AVX3", "AVX2")
  // Tables the negatives were drawn from: 1, or `threads` with negatives by thread (see
  // "Concurrency" above; a vocabulary too small or too skewed to split keeps 1); 0 without
  // negative sampling.
  size_t negative_sets = 0;
};

// inputs: files and/or folders. See the file comment for errors.
Word2VecResult train_word2vec(const std::vector<std::string>& inputs,
                              const Word2VecOptions& options);

// Checks options without touching the corpus (what train_word2vec checks first).
void validate_word2vec_options(const Word2VecOptions& options);

// The metadata stored with a trained table (safetensors __metadata__):
//   "embedscope.tokenizer"   options.tokenizer_name ("gpt2") in token mode: readers must
//                            tokenize text with it to find rows (absent in word mode)
//   "embedscope.train.*"     arch, dim, window, negative, hs, classic_skipgram, shared_negatives,
//                            sample, min_count, epochs, lr, seed,
//                            corpus_words, rows_trained, seconds
std::map<std::string, std::string> word2vec_metadata(const Word2VecResult& result,
                                                     const Word2VecOptions& options);

// Writes the table with its vocabulary and per-row counts (save_embeddings, atomically).
// format: kSafetensors (vocabulary, counts and metadata included), kWord2VecText or
// kWord2VecBinary (vocabulary only); kUnknown picks from the extension.
void save_word2vec(const std::string& path, const Word2VecResult& result,
                   const Word2VecOptions& options, FileFormat format = FileFormat::kUnknown);

// Removes "<path>.tmp-XXXXXX" files beside `path`: what an AtomicFile writer killed mid-write
// (SIGKILL, power loss) leaves behind. train_word2vec calls it for its checkpoint path; call it
// for an output path before writing it. Returns how many were removed.
size_t remove_stale_temp_files(const std::string& path);

// Per-row statistics as TSV (atomically): id, token (escaped), count, trained, updates, drift.
// Needs a result trained with row_stats (Error(kInvalidArgument) otherwise).
void save_row_stats(const std::string& path, const Word2VecResult& result);

}  // namespace embedscope
