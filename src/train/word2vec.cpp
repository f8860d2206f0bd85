// word2vec trainer: orchestration (options, tables, segments, threads, progress). The corpus
// scan lives in vocab_build.cpp, the inner loops in w2v_kernels.cpp, checkpoints in
// w2v_checkpoint.cpp.
#include "embedscope/train/word2vec.h"

#include <fcntl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <queue>
#include <span>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <unistd.h>

#include <cerrno>

#include "embedscope/core/error.h"
#include "embedscope/core/paths.h"
#include "embedscope/core/spin_wait.h"
#include "embedscope/core/thread_pool.h"
#include "train/corpus.h"
#include "train/rng.h"
#include "train/vocab_build.h"
#include "train/w2v_checkpoint.h"
#include "train/w2v_kernels.h"
#include "train/w2v_negatives.h"

namespace embedscope {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// A float buffer aligned for SIMD loads, zero-initialised.
struct AlignedFloats {
  std::unique_ptr<float, decltype(&std::free)> p{nullptr, &std::free};
  size_t n = 0;
  void allocate(size_t count) {
    size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
    void* raw = std::aligned_alloc(64, bytes ? bytes : 64);
    if (!raw) throw std::bad_alloc();
    std::memset(raw, 0, bytes);
    p.reset(static_cast<float*>(raw));
    n = count;
  }
  float* data() const { return p.get(); }
};

void fail(const std::string& what, double value, const std::string& limit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", value);
  throw Error(ErrorCode::kInvalidArgument, what + " " + buf + " " + limit);
}

// The initial vector of a row: uniform in [-1, 1) / dim like gensim and fastText, seeded per row
// so that drift statistics can regenerate it. word2vec.c draws from half that range; on Brown
// (skip-gram, the benchmark's settings, 8 seeds paired) the wider start scored WordSim-353
// +0.0056 (sd of the paired difference 0.004) and analogies +0.002.
void init_row(float* row, size_t dim, uint64_t seed, size_t r) {
  SplitMix64 rng(mix_seed(seed, 0x1417, r));
  for (size_t d = 0; d < dim; ++d) row[d] = float(2.0 * rng.uniform() - 1.0) / float(dim);
}

// Huffman tree over the trained rows (word2vec.c CreateBinaryTree): codes and inner-node
// points for each row, flattened.
struct Huffman {
  std::vector<uint32_t> offset, points;
  std::vector<uint8_t> codes;
  size_t n_inner = 0;
};

Huffman build_huffman(const std::vector<uint64_t>& counts, const std::vector<uint8_t>& trained) {
  std::vector<uint32_t> rows;
  for (size_t i = 0; i < counts.size(); ++i)
    if (trained[i]) rows.push_back(uint32_t(i));
  const size_t n = rows.size();
  Huffman h;
  h.offset.assign(counts.size() + 1, 0);
  if (n < 2) {  // a single word: no inner node, nothing to predict
    return h;
  }
  // Leaves 0..n-1, inner nodes n..2n-2; a min-heap on count, ties by node index.
  std::vector<uint64_t> cnt(2 * n - 1);
  std::vector<uint32_t> parent(2 * n - 1, 0);
  std::vector<uint8_t> bit(2 * n - 1, 0);
  using Item = std::pair<uint64_t, uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> pq;
  for (size_t k = 0; k < n; ++k) cnt[k] = counts[rows[k]], pq.push({cnt[k], uint32_t(k)});
  for (size_t k = n; k < 2 * n - 1; ++k) {
    auto a = pq.top();
    pq.pop();
    auto b = pq.top();
    pq.pop();
    cnt[k] = a.first + b.first;
    parent[a.second] = uint32_t(k);
    parent[b.second] = uint32_t(k);
    bit[b.second] = 1;
    pq.push({cnt[k], uint32_t(k)});
  }
  const uint32_t root = uint32_t(2 * n - 2);
  std::vector<std::vector<uint32_t>> path_points(counts.size());
  std::vector<std::vector<uint8_t>> path_codes(counts.size());
  for (size_t k = 0; k < n; ++k) {
    std::vector<uint32_t> pts;
    std::vector<uint8_t> cds;
    for (uint32_t node = uint32_t(k); node != root; node = parent[node]) {
      cds.push_back(bit[node]);
      pts.push_back(parent[node] - uint32_t(n));  // inner node index = syn1 row
    }
    std::reverse(pts.begin(), pts.end());
    std::reverse(cds.begin(), cds.end());
    path_points[rows[k]] = std::move(pts);
    path_codes[rows[k]] = std::move(cds);
  }
  for (size_t r = 0; r < counts.size(); ++r) {
    h.offset[r + 1] = h.offset[r] + uint32_t(path_points[r].size());
    h.points.insert(h.points.end(), path_points[r].begin(), path_points[r].end());
    h.codes.insert(h.codes.end(), path_codes[r].begin(), path_codes[r].end());
  }
  h.n_inner = n - 1;
  return h;
}

constexpr uint64_t kMinSyncsPerEpoch = 32;  // distributed: see sync_every in train()

// Linear decay from lr0 at the start to min(lr0, 1e-4) after the last epoch's last word, like
// gensim (alpha -> min_alpha = 0.0001); word2vec.c decays to lr0 x 1e-4 instead.
float learning_rate(float lr0, double progress) {
  const double end = std::min(double(lr0), 1e-4);
  return float(double(lr0) - (double(lr0) - end) * std::clamp(progress, 0.0, 1.0));
}

// Reads ids [begin, begin + n) of the stream.
void read_ids(int fd, const std::string& path, uint64_t begin, uint64_t n, uint32_t* out) {
  char* p = reinterpret_cast<char*>(out);
  size_t left = size_t(n) * sizeof(uint32_t);
  off_t off = off_t(begin * sizeof(uint32_t));
  while (left > 0) {
    const ssize_t r = ::pread(fd, p, left, off);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0)
      throw Error(ErrorCode::kIo, "reading the temporary id stream " + path + " at offset " +
                                      std::to_string(off) + ": " +
                                      (r < 0 ? std::strerror(errno) : "unexpected end"));
    p += r;
    left -= size_t(r);
    off += r;
  }
}

static_assert(kW2vMaxNegative == kMaxNegative && kW2vMaxWindow == kMaxWindow);

constexpr uint64_t kChunk = kCheckpointChunk;  // positions per work item
// Segments: where threads meet and where checkpoints may be taken. One thread meets no one,
// so it keeps short segments (fine-grained checkpoints); with more threads every meeting costs
// the slower thread's tail (up to one chunk), so segments are 4x longer (Brown, 2 threads, when
// meetings also merged per-thread row copies: 1.35-1.39x one thread's speed at 32 chunks,
// 1.52-1.56x at 128). At least kMinSegmentsPerEpoch segments an epoch all the same, so that a
// small corpus still gets progress lines and checkpoint points within an epoch.
constexpr uint64_t kChunksPerSegment = 32;
constexpr uint64_t kChunksPerSegmentThreads = 128;
constexpr uint64_t kMinSegmentsPerEpoch = 8;

// Where the training threads meet between segments. Waiters poll (core/spin_wait.h) instead of
// sleeping in the kernel: on these VMs waking a halted virtual CPU costs about a millisecond,
// paid at every segment (Brown, 2 threads, 32-chunk segments: ~35 an epoch, ~2 ms each
// measured).
class SpinBarrier {
 public:
  explicit SpinBarrier(size_t n) : n_(n) {}
  // Blocks until all n threads have arrived; the last one runs `last` first.
  template <class F>
  void arrive_and_wait(F&& last) {
    const uint64_t g = gen_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_) {
      last();
      arrived_.store(0, std::memory_order_relaxed);
      gen_.store(g + 1, std::memory_order_release);
      return;
    }
    wait_until([&] { return gen_.load(std::memory_order_acquire) != g; });
  }

 private:
  const size_t n_;
  std::atomic<size_t> arrived_{0};
  std::atomic<uint64_t> gen_{0};
};

}  // namespace

void validate_word2vec_options(const Word2VecOptions& o) {
  if (o.dim == 0 || o.dim > kMaxTrainDim)
    fail("dim", double(o.dim), "is out of range [1, " + std::to_string(kMaxTrainDim) + "]");
  if (o.window == 0 || o.window > kMaxWindow)
    fail("window", double(o.window), "is out of range [1, " + std::to_string(kMaxWindow) + "]");
  if (o.negative > kMaxNegative)
    fail("negative", double(o.negative),
         "is out of range [0, " + std::to_string(kMaxNegative) + "]");
  if (o.negative == 0 && !o.hs)
    throw Error(ErrorCode::kInvalidArgument,
                "negative = 0 and hs off: nothing to train (use negative >= 1 or hs)");
  // shared_negatives changes only skip-gram's negative-sampling loop: anywhere else it would be
  // ignored, and a user asking for it would not get what the file's metadata then claims.
  if (o.shared_negatives &&
      (o.arch != W2vArch::kSkipGram || o.negative == 0 || o.hs || o.classic_skipgram))
    throw Error(
        ErrorCode::kInvalidArgument,
        std::string("shared_negatives applies to skip-gram with negative sampling only, not "
                    "with ") +
            (o.arch != W2vArch::kSkipGram ? "arch = cbow"
             : o.negative == 0            ? "negative = 0"
             : o.hs                       ? "hs"
                                          : "classic_skipgram"));
  if (!(o.sample >= 0 && o.sample < 1)) fail("sample", o.sample, "is out of range [0, 1)");
  if (o.epochs == 0 || o.epochs > kMaxEpochs)
    fail("epochs", double(o.epochs), "is out of range [1, " + std::to_string(kMaxEpochs) + "]");
  if (!(o.lr >= 0 && o.lr <= 10)) fail("lr", o.lr, "is out of range [0, 10] (0 = default)");
  if (o.threads > kMaxThreads)
    fail("threads", double(o.threads),
         "is out of range [0, " + std::to_string(kMaxThreads) + "] (0 = all cores)");
  if (o.resume && o.checkpoint_path.empty())
    throw Error(ErrorCode::kInvalidArgument, "resume needs a checkpoint path");
}

Word2VecResult train_word2vec(const std::vector<std::string>& inputs,
                              const Word2VecOptions& options) {
  validate_word2vec_options(options);
  Word2VecOptions o = options;
  if (o.threads == 0) o.threads = process_threads();
  // Distributed: several processes train one model (W2vCollective); rank 0 owns the files.
  W2vCollective* const coll = o.collective && o.collective->size() > 1 ? o.collective : nullptr;
  o.collective = coll;
  const size_t n_procs = coll ? coll->size() : 1, my_rank = coll ? coll->rank() : 0;
  if (!o.checkpoint_path.empty() && my_rank == 0) remove_stale_temp_files(o.checkpoint_path);
  const auto t_scan = Clock::now();
  std::vector<std::string> files = list_corpus_files(inputs);
  if (coll && o.corpus_range_begin == 0 &&
      o.corpus_range_end == std::numeric_limits<uint64_t>::max()) {
    const uint64_t total = corpus_bytes(files);
    auto share = [&](uint64_t r) {  // floor(total * r / n_procs) without overflow
      return total / n_procs * r + total % n_procs * r / n_procs;
    };
    o.corpus_range_begin = share(my_rank);
    o.corpus_range_end = share(my_rank + 1);
  }
  std::string work_dir = o.work_dir;
  if (work_dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    work_dir = tmp && *tmp ? tmp : "/tmp";
  }
  ScannedCorpus corpus = scan_corpus(files, o, work_dir);
#ifdef __GLIBC__
  // The scan's word-count hash map (every distinct word of the corpus) is freed now, but glibc
  // keeps freed heap pages mapped; hand them back before the weights are allocated so they do
  // not add to the peak resident size.
  ::malloc_trim(0);
#endif
  // Open the id stream, then unlink it: the descriptor keeps the data, nothing is left on disk.
  // Chunks are read with pread into per-thread buffers rather than mapped: mapped pages would
  // stay resident (4 bytes per corpus word) while page-cache pages are the kernel's to drop.
  const int stream_fd = ::open(corpus.stream_path.c_str(), O_RDONLY | O_CLOEXEC);
  const int open_errno = errno;
  ::unlink(corpus.stream_path.c_str());
  if (stream_fd < 0)
    throw Error(ErrorCode::kIo, "cannot reopen the temporary id stream " + corpus.stream_path +
                                    ": " + std::strerror(open_errno));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } stream_closer{stream_fd};
  const uint64_t N = corpus.stream_len;  // this process's positions per epoch
  // Distributed: every process's chunk count (so each knows its chunks' global numbers, which
  // seed their random generators) and the whole job's stream length.
  uint64_t chunk_offset = 0, N_global = N, max_chunks = (N + kChunk - 1) / kChunk;
  if (coll) {
    std::vector<uint64_t> v(n_procs + 1, 0);
    v[my_rank] = (N + kChunk - 1) / kChunk;
    v[n_procs] = N;
    coll->sum(std::span<uint64_t>(v));
    for (size_t r = 0; r < my_rank; ++r) chunk_offset += v[r];
    N_global = v[n_procs];
    max_chunks = *std::max_element(v.begin(), v.end() - 1);
  }

  Word2VecResult res;
  res.scan_seconds = seconds_since(t_scan);
  res.corpus_words = corpus.corpus_words;
  const size_t n_rows = corpus.vocab.size(), dim = o.dim;
  const size_t stride = (dim + kStrideAlign - 1) / kStrideAlign * kStrideAlign;
  // The result is an EmbeddingTable, and row ids travel as uint32 (kMaxTableRows = 2^31 - 1).
  if (n_rows > kMaxTableRows)
    throw Error(ErrorCode::kInvalidArgument,
                "vocabulary of " + std::to_string(n_rows) + " rows exceeds the table limit of " +
                    std::to_string(kMaxTableRows) + " rows (use max_vocab)");
  const auto& counts = corpus.vocab.counts();
  const std::vector<uint8_t>& trained = corpus.trained;
  const float lr0 = o.lr > 0 ? o.lr : (o.arch == W2vArch::kCbow ? 0.05f : 0.025f);

  // Weights.
  AlignedFloats syn0, syn1neg, syn1;
  syn0.allocate(n_rows * stride);
  for (size_t r = 0; r < n_rows; ++r) init_row(syn0.data() + r * stride, dim, o.seed, r);
  if (o.negative > 0) syn1neg.allocate(n_rows * stride);
  Huffman huff;
  if (o.hs) {
    huff = build_huffman(counts, trained);
    syn1.allocate(std::max<size_t>(huff.n_inner, 1) * stride);
  }
  // One table over every trained row, or with several threads one per set of rows, each set in
  // its own block of syn1neg; chunk c of epoch e draws from table (c + e) mod threads
  // (w2v_negatives.h).
  NegativeSampling neg;
  if (o.negative > 0) neg = negative_sampling(counts, trained, o.threads);
  std::vector<uint64_t> row_updates(o.row_stats ? n_rows : 0, 0);

  // Subsampling: word2vec.c keeps a word with probability (sqrt(f / (t T)) + 1) (t T) / f.
  uint64_t train_total = 0;
  for (size_t r = 0; r < n_rows; ++r)
    if (trained[r]) train_total += counts[r];
  std::vector<uint64_t> keep(n_rows, uint64_t(1) << 32);
  if (o.sample > 0)
    for (size_t r = 0; r < n_rows; ++r) {
      if (!trained[r] || counts[r] == 0) continue;
      double f = double(counts[r]), st = o.sample * double(train_total);
      double p = (std::sqrt(f / st) + 1) * st / f;
      if (p < 1) keep[r] = uint64_t(p * 4294967296.0);
    }

  W2vShared shared;
  shared.stride = stride;
  shared.syn0 = syn0.data();
  shared.syn1neg = o.negative > 0 ? syn1neg.data() : nullptr;
  shared.out_slot = neg.slot.empty() ? nullptr : neg.slot.data();
  shared.syn1 = o.hs && huff.n_inner > 0 ? syn1.data() : nullptr;
  shared.cbow = o.arch == W2vArch::kCbow;
  shared.window = o.window;
  shared.negative = o.negative;
  shared.hs_offset = huff.offset.data();
  shared.hs_points = huff.points.data();
  shared.hs_codes = huff.codes.data();
  shared.row_updates = o.row_stats ? row_updates.data() : nullptr;
  // The pipelined loop plans a window's targets in fixed arrays (w2v_kernels.h); fresh draws
  // for a very wide window or very many negatives take word2vec.c's loop instead (same math).
  shared.pipelined_skipgram = !o.classic_skipgram && o.arch == W2vArch::kSkipGram &&
                              o.negative > 0 && !(o.hs && huff.n_inner > 0) &&
                              (o.shared_negatives || w2v_fresh_plan_fits(o.window, o.negative));
  shared.shared_negatives = o.shared_negatives;

  // Training state (what a checkpoint holds besides the weights).
  CheckpointState st;
  CheckpointFingerprint fp = make_fingerprint(o, lr0, corpus.vocab, N_global);
  CheckpointArrays arrays{dim,
                          stride,
                          n_rows,
                          syn0.data(),
                          shared.syn1neg,
                          shared.syn1 ? huff.n_inner : 0,
                          shared.syn1,
                          o.row_stats ? row_updates.data() : nullptr,
                          shared.out_slot};
  uint64_t resumed_words = 0;
  if (o.resume && file_exists(o.checkpoint_path)) {
    st = load_checkpoint(o.checkpoint_path, fp, arrays);
    resumed_words = st.words_done;
    // A distributed run splits each epoch by its own plan; a position inside an epoch (a
    // one-process checkpoint) has no place in it.
    if (coll && st.next_chunk != 0)
      throw Error(ErrorCode::kInvalidArgument,
                  "checkpoint " + o.checkpoint_path + " was taken inside epoch " +
                      std::to_string(st.epoch + 1) + " (chunk " + std::to_string(st.next_chunk) +
                      ") by one process; a distributed run resumes from epoch ends only: resume "
                      "it with one process, or start over");
  }

  const uint64_t n_chunks = (N + kChunk - 1) / kChunk;
  const double total_positions = double(N) * double(o.epochs);
  struct alignas(64) ThreadStats {
    double loss = 0;
    uint64_t n_loss = 0, words = 0;
    AlignedFloats neu1, neu1e;
    std::vector<uint32_t> sent;
    std::vector<uint32_t> ids;  // the chunk's slice of the id stream
  };
  // No per-thread copies of any row: every thread reads and writes the shared matrices (Hogwild,
  // word2vec.h). Until this build the 1024 most frequent rows were private copies per thread,
  // merged between segments (row += sum over threads of (copy - row)), because sharing their
  // cache lines had made two threads slower than one (per-pair updates, before PREFETCHW really
  // was one). With the pipelined loops below, copies cost more than they saved, and they cost
  // quality: two threads' deltas from the same stale row added up past where either alone would
  // go. Brown, 2 threads, copies vs none: skip-gram 1.10 vs 1.01 s, CBOW 0.86 vs 0.76 s, classic
  // skip-gram 2.65 vs 2.29 s; final loss with copies 0.353 vs 0.347 (Brown x5, skip-gram; one
  // thread 0.347), CBOW 0.364 vs 0.354 (one thread 0.355); Brown x5 WordSim 0.401 vs 0.415.
  ThreadPool pool(o.threads);
  std::vector<ThreadStats> ts(o.threads);
  for (auto& t : ts) {
    t.neu1.allocate(stride);
    t.neu1e.allocate(stride);
    t.sent.reserve(kMaxSentence);
    t.ids.resize(kChunk);
  }
  auto process_chunk = [&](uint64_t epoch, uint64_t chunk, ThreadStats& t) {
    W2vThread th;
    th.rng = mix_seed(o.seed, epoch, chunk + chunk_offset);
    if (!neg.tables.empty()) {
      const auto& table = neg.tables[(chunk + chunk_offset + epoch) % neg.tables.size()];
      th.neg_alias = table.data();
      th.neg_alias_size = table.size();
    }
    th.neu1 = t.neu1.data();
    th.neu1e = t.neu1e.data();
    const uint64_t begin = chunk * kChunk;
    const uint64_t end = std::min(begin + kChunk, N);
    read_ids(stream_fd, corpus.stream_path, begin, end - begin, t.ids.data());
    const uint32_t* stream = t.ids.data() - begin;  // indexed by stream position
    uint64_t pos = begin;
    while (pos < end) {
      t.sent.clear();
      const uint64_t sent_start = pos;
      while (pos < end) {
        const uint32_t id = stream[pos++];
        if (id == kSentenceEnd) break;
        if (id >= n_rows || !trained[id]) continue;
        ++t.words;
        th.rng = th.rng * 25214903917ull + 11;
        if ((th.rng >> 16 & 0xFFFFFFFFull) >= keep[id]) continue;
        t.sent.push_back(id);
      }
      if (t.sent.size() < 2) continue;
      double progress = (double(epoch) * double(N) + double(sent_start)) / total_positions;
      float alpha = learning_rate(lr0, progress);
      w2v_train_sentence(shared, t.sent.data(), t.sent.size(), alpha, th);
    }
    t.loss += th.loss;
    t.n_loss += th.n_loss;
  };

  const auto t_train = Clock::now();
  auto last_report = t_train;
  const uint64_t positions_at_start =
      coll ? st.epoch * N_global : st.epoch * N + std::min(st.next_chunk * kChunk, N);
  uint64_t next_checkpoint =
      o.checkpoint_every ? (st.words_done / o.checkpoint_every + 1) * o.checkpoint_every : 0;
  uint64_t segments = 0;
  double window_loss = 0;
  uint64_t window_n = 0;
  // The segment being trained: chunks [seg, seg_end) of `epoch`. Only the step between segments
  // (run by the last thread to arrive at the barrier) changes these; the barrier orders that
  // step before every thread's next read.
  const uint64_t seg_chunks =
      o.threads > 1
          ? std::clamp<uint64_t>(max_chunks / kMinSegmentsPerEpoch, 1, kChunksPerSegmentThreads)
          : kChunksPerSegment;
  // Distributed: every process cuts each epoch into the same number of segments (those of the
  // largest share), its own chunks spread over them in proportion, and meets the others at each
  // segment end. The hot rows are synchronised every hot_every segments, all rows at epoch ends.
  // A sync period shorter than a segment shortens the segments (down to a chunk of the largest
  // share).
  // At least kMinSyncsPerEpoch syncs an epoch (but no more often than every 4096 words of a
  // process): a small corpus would otherwise sync a few times an epoch and train on stale rows
  // (2 processes, 125k words each, every 32768 words: POS score 0.252 against 0.275).
  const uint64_t sync_every =
      o.sync_every == 0 ? 0
                        : std::min(o.sync_every, std::max<uint64_t>(
                                                     4096, N_global / n_procs / kMinSyncsPerEpoch));
  const uint64_t sync_period = sync_every * n_procs;  // the job's words between syncs
  uint64_t dist_segments = std::max<uint64_t>(1, (max_chunks + seg_chunks - 1) / seg_chunks);
  if (coll && sync_period > 0)
    dist_segments = std::clamp<uint64_t>((N_global + sync_period - 1) / sync_period, dist_segments,
                                         std::max<uint64_t>(max_chunks, 1));
  const double positions_per_segment = double(N_global) / double(dist_segments);
  const uint64_t hot_every =
      sync_period == 0
          ? 1
          : std::max<uint64_t>(1,
                               uint64_t(std::llround(double(sync_period) / positions_per_segment)));
  const double total_global = double(N_global) * double(o.epochs);
  uint64_t words_global = st.words_done;  // st.words_done as of the last epoch end (all ranks)
  std::vector<float*> sync_list;          // every trained row of every matrix, hottest first
  // Sync tiers, as prefixes of sync_list: tier t holds the sync_rows * 8^t hottest rows and is
  // synced at every 8^t-th sync of the epoch, the last tier being every row (without
  // sync_tiers: one tier, the sync_rows hottest).
  std::vector<size_t> tier_end;
  if (coll) {
    uint64_t tier_rows = o.sync_rows;
    std::vector<uint32_t> order;
    for (size_t r = 0; r < n_rows; ++r)
      if (trained[r]) order.push_back(uint32_t(r));
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return counts[a] > counts[b]; });
    const size_t n_inner = shared.syn1 ? huff.n_inner : 0;
    for (size_t k = 0; k < order.size(); ++k) {
      const uint32_t r = order[k];
      sync_list.push_back(syn0.data() + size_t(r) * stride);
      if (shared.syn1neg)
        sync_list.push_back(shared.syn1neg +
                            size_t(shared.out_slot ? shared.out_slot[r] : r) * stride);
      if (k < n_inner) sync_list.push_back(shared.syn1 + (n_inner - 1 - k) * stride);  // root first
      if (tier_rows && k + 1 == std::min<uint64_t>(tier_rows, order.size())) {
        tier_end.push_back(sync_list.size());
        tier_rows = o.sync_tiers && tier_rows < order.size() ? tier_rows * 8 : 0;
      }
    }
    for (size_t k = order.size(); k < n_inner; ++k)
      sync_list.push_back(shared.syn1 + (n_inner - 1 - k) * stride);
    if (o.sync_tiers && !tier_end.empty() && tier_end.back() < sync_list.size())
      tier_end.back() = sync_list.size();  // the widest tier takes the inner nodes left over
    coll->begin_sync(std::span<float* const>(sync_list), dim);
  }
  uint64_t epoch = 0, seg_begin = 0, seg_end = 0, seg_index = 0;
  bool finished = false;
  // In epoch e chunk c belongs to class (c + e) mod threads, and thread t takes the chunks of
  // class t first, in order, then helps with the other classes once its own is done. With
  // negatives by thread (w2v_negatives.h) the class is the chunk's negative set, so each thread
  // writes its own set's rows and they stay in its core's cache; the epoch term moves every
  // stretch of the corpus to the next set each epoch. One counter per class, a cache line each.
  struct alignas(64) ClassCounter {
    std::atomic<uint64_t> taken{0};
  };
  std::vector<ClassCounter> taken(o.threads);
  // s: the first chunk (one process) or the segment's index in the epoch (distributed).
  auto start_segment = [&](uint64_t e, uint64_t s) {
    while (e < o.epochs && s >= (coll ? dist_segments : n_chunks)) ++e, s = 0;
    if (e >= o.epochs) {
      finished = true;
      return;
    }
    epoch = e;
    if (coll) {
      seg_index = s;
      seg_begin = n_chunks * s / dist_segments;
      seg_end = n_chunks * (s + 1) / dist_segments;
    } else {
      seg_begin = s;
      seg_end = std::min(s + seg_chunks, n_chunks);
    }
    for (auto& k : taken) k.taken.store(0, std::memory_order_relaxed);
  };
  auto end_segment = [&] {
    for (auto& t : ts) {
      st.words_done += t.words;
      st.epoch_loss += t.loss;
      st.epoch_loss_n += t.n_loss;
      window_loss += t.loss;
      window_n += t.n_loss;
      t.words = 0, t.loss = 0, t.n_loss = 0;
    }
    ++segments;
    const bool epoch_done = coll ? seg_index + 1 == dist_segments : seg_end == n_chunks;
    const bool last = epoch_done && epoch + 1 == o.epochs;
    st.epoch = epoch_done ? epoch + 1 : epoch;
    st.next_chunk = epoch_done ? 0 : coll ? seg_index + 1 : seg_end;
    if (coll && epoch_done) {
      // Every row, then the epoch's words and loss summed over the job: all processes now hold
      // the same model and state.
      coll->sync(sync_list.size());
      uint64_t w[2] = {st.words_done - words_global, st.epoch_loss_n};
      double l = st.epoch_loss;
      coll->sum(std::span<uint64_t>(w, 2));
      coll->sum(std::span<double>(&l, 1));
      words_global += w[0];
      st.words_done = words_global;
      st.epoch_loss_n = w[1];
      st.epoch_loss = l;
    } else if (coll && (seg_index + 1) % hot_every == 0) {
      // Counted within the epoch, so a run resumed from an epoch-end checkpoint syncs alike.
      const uint64_t nth = (seg_index + 1) / hot_every;
      size_t t = 0;
      for (uint64_t p = 8; t + 1 < tier_end.size() && nth % p == 0; p *= 8) ++t;
      coll->sync(tier_end.empty() ? 0 : tier_end[t]);
    }
    if (epoch_done) {
      st.last_epoch_loss = st.epoch_loss_n ? st.epoch_loss / double(st.epoch_loss_n) : 0;
      st.epoch_loss = 0;
      st.epoch_loss_n = 0;
    }
    // Distributed: at epoch ends only (the one point every process agrees on), by rank 0.
    if (o.checkpoint_every && st.words_done >= next_checkpoint && !last && (!coll || epoch_done)) {
      if (my_rank == 0) save_checkpoint(o.checkpoint_path, fp, st, arrays);
      if (coll) {
        // No process moves on before the checkpoint is complete: a rank lost from here on
        // cannot take it down with rank 0 while it is being written.
        uint64_t done = 1;
        coll->sum(std::span<uint64_t>(&done, 1));
      }
      next_checkpoint = (st.words_done / o.checkpoint_every + 1) * o.checkpoint_every;
    }
    if (o.stop_after_segments && segments >= o.stop_after_segments && !last) {
      res.completed = false;
      finished = true;
      return;
    }
    if (o.progress && seconds_since(last_report) >= o.progress_interval) {
      last_report = Clock::now();
      const double el = seconds_since(t_train);
      // Distributed: the job's positions (each process has done the same fraction of its share).
      const double done = coll
                              ? (double(st.epoch) + double(st.next_chunk) / double(dist_segments)) *
                                    double(N_global)
                              : double(st.epoch * N + st.next_chunk * kChunk);
      ProgressInfo p;
      p.what = "training";
      p.done = std::min(done, coll ? total_global : total_positions);
      p.total = coll ? total_global : total_positions;
      p.unit = "words";
      p.rate = el > 0 ? (p.done - double(positions_at_start)) / el : 0;
      p.eta_seconds = p.rate > 0 ? (p.total - p.done) / p.rate : 0;
      double cur_lr = learning_rate(lr0, p.done / p.total);
      char extra[96];
      std::snprintf(extra, sizeof extra, "loss %.4f lr %.6f epoch %llu/%zu",
                    window_n ? window_loss / double(window_n) : 0.0, cur_lr,
                    (unsigned long long)std::min<uint64_t>(st.epoch + 1, o.epochs), o.epochs);
      p.extra = extra;
      window_loss = 0;
      window_n = 0;
      o.progress(p);
    }
    start_segment(st.epoch, st.next_chunk);
  };
  start_segment(st.epoch, st.next_chunk);
  // One pool job for the whole run: the threads train a segment, meet at the barrier, and the
  // last to arrive runs end_segment. A failure (an unreadable stream, a full disk at a
  // checkpoint) still arrives at the barrier, so no thread waits forever; it is rethrown here.
  SpinBarrier barrier(o.threads);
  std::mutex failure_mu;
  std::exception_ptr failure;
  std::atomic<bool> failed{false};
  auto record_failure = [&] {
    std::lock_guard<std::mutex> lock(failure_mu);
    if (!failure) failure = std::current_exception();
    failed.store(true, std::memory_order_relaxed);
  };
  pool.run_on_all([&](size_t thread) {
    while (!finished) {
      try {
        const uint64_t T = o.threads;
        for (uint64_t i = 0; i < T; ++i) {
          const uint64_t k = (thread + i) % T;
          // Class k's first chunk in the segment.
          const uint64_t first = seg_begin + (k + T - (seg_begin + epoch) % T) % T;
          for (uint64_t c;
               !failed.load(std::memory_order_relaxed) &&
               (c = first + T * taken[k].taken.fetch_add(1, std::memory_order_relaxed)) < seg_end;)
            process_chunk(epoch, c, ts[thread]);
        }
      } catch (...) {
        record_failure();
      }
      barrier.arrive_and_wait([&] {
        if (failed.load(std::memory_order_relaxed)) {
          finished = true;
          return;
        }
        try {
          end_segment();
        } catch (...) {
          record_failure();
          finished = true;
        }
      });
    }
  });
  if (failure) std::rethrow_exception(failure);
  res.seconds = seconds_since(t_train);
  const double positions_done =
      coll
          ? (double(st.epoch) + double(st.next_chunk) / double(dist_segments)) * double(N_global) -
                double(positions_at_start)
          : double(st.epoch * N + std::min(st.next_chunk * kChunk, N)) - double(positions_at_start);
  res.words_per_second = res.seconds > 0 ? positions_done / res.seconds : 0;
  res.trained_words = st.words_done;
  res.resumed_words = resumed_words;
  res.final_loss = st.last_epoch_loss;
  res.simd_target = w2v_simd_target();
  res.negative_sets = neg.tables.size();

  // The output table is syn0 itself, its rows moved together in place (row r moves down from
  // r * stride to r * dim, so a forward pass never overwrites a row not yet moved): no second
  // n_rows x dim copy at the end, and the output-side weights are freed first.
  syn1neg = AlignedFloats();
  syn1 = AlignedFloats();
  neg = {};
  huff = Huffman();
  float* out = syn0.data();
  for (size_t r = 1; r < n_rows && dim != stride; ++r)
    std::memmove(out + r * dim, out + r * stride, dim * sizeof(float));
  std::shared_ptr<const void> owner(syn0.p.release(), &std::free);
  if (o.row_stats) {
    res.row_updates = row_updates;
    res.row_drift.resize(n_rows);
    std::vector<float> init(dim);
    for (size_t r = 0; r < n_rows; ++r) {
      init_row(init.data(), dim, o.seed, r);
      double s = 0;
      for (size_t d = 0; d < dim; ++d) {
        double x = double(out[r * dim + d]) - init[d];
        s += x * x;
      }
      res.row_drift[r] = float(std::sqrt(s));
    }
  }
  res.table = EmbeddingTable::view(owner, reinterpret_cast<const std::byte*>(out), n_rows, dim,
                                   DType::kF32, false);
  res.trained = corpus.trained;
  res.vocab = std::move(corpus.vocab);
  if (o.progress) {
    ProgressInfo p;
    p.what = "training";
    p.done = p.total = coll ? total_global : total_positions;
    p.unit = "words";
    p.rate = res.words_per_second;
    char extra[64];
    std::snprintf(extra, sizeof extra, "loss %.4f done", res.final_loss);
    p.extra = extra;
    o.progress(p);
  }
  return res;
}

}  // namespace embedscope
