// word2vec trainer: orchestration (options, tables, segments, threads, progress). The corpus
// scan lives in vocab_build.cpp, the inner loops in w2v_kernels.cpp, checkpoints in
// w2v_checkpoint.cpp.
#include "embedscope/train/word2vec.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <queue>
#include <unistd.h>

#include "embedscope/core/error.h"
#include "embedscope/core/mapped_file.h"
#include "embedscope/core/paths.h"
#include "embedscope/core/thread_pool.h"
#include "train/corpus.h"
#include "train/rng.h"
#include "train/vocab_build.h"
#include "train/w2v_checkpoint.h"
#include "train/w2v_kernels.h"

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

// The initial vector of a row: uniform in [-0.5, 0.5) / dim like word2vec.c, seeded per row so
// that drift statistics can regenerate it.
void init_row(float* row, size_t dim, uint64_t seed, size_t r) {
  SplitMix64 rng(mix_seed(seed, 0x1417, r));
  for (size_t d = 0; d < dim; ++d) row[d] = float(rng.uniform() - 0.5) / float(dim);
}

// Unigram^0.75 table over the trained rows (word2vec.c InitUnigramTable), sized to the
// vocabulary instead of a fixed 1e8 entries so it stays small next to the weight matrices.
std::vector<uint32_t> unigram_table(const std::vector<uint64_t>& counts,
                                    const std::vector<uint8_t>& trained) {
  size_t n_trained = size_t(std::count(trained.begin(), trained.end(), 1));
  size_t size = std::clamp<size_t>(n_trained * 100, size_t(1) << 20, size_t(100) << 20);
  double total = 0;
  for (size_t i = 0; i < counts.size(); ++i)
    if (trained[i]) total += std::pow(double(counts[i]), 0.75);
  std::vector<uint32_t> table(size);
  size_t i = 0;
  while (!trained[i]) ++i;
  double cum = std::pow(double(counts[i]), 0.75) / total;
  for (size_t a = 0; a < size; ++a) {
    table[a] = uint32_t(i);
    if (double(a) / double(size) > cum) {
      size_t j = i + 1;
      while (j < counts.size() && !trained[j]) ++j;
      if (j < counts.size()) {
        i = j;
        cum += std::pow(double(counts[i]), 0.75) / total;
      }
    }
  }
  return table;
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

constexpr uint64_t kChunk = 1024;          // positions per work item
constexpr uint64_t kChunksPerSegment = 32;  // threads join (and may checkpoint) per segment

}  // namespace

void validate_word2vec_options(const Word2VecOptions& o) {
  if (o.dim == 0 || o.dim > kMaxDim) fail("dim", double(o.dim), "is out of range [1, " + std::to_string(kMaxDim) + "]");
  if (o.window == 0 || o.window > kMaxWindow)
    fail("window", double(o.window), "is out of range [1, " + std::to_string(kMaxWindow) + "]");
  if (o.negative > kMaxNegative)
    fail("negative", double(o.negative), "is out of range [0, " + std::to_string(kMaxNegative) + "]");
  if (o.negative == 0 && !o.hs)
    throw Error(ErrorCode::kInvalidArgument,
                "negative = 0 and hs off: nothing to train (use negative >= 1 or hs)");
  if (!(o.sample >= 0 && o.sample < 1)) fail("sample", o.sample, "is out of range [0, 1)");
  if (o.epochs == 0 || o.epochs > kMaxEpochs)
    fail("epochs", double(o.epochs), "is out of range [1, " + std::to_string(kMaxEpochs) + "]");
  if (!(o.lr >= 0 && o.lr <= 10)) fail("lr", o.lr, "is out of range [0, 10] (0 = default)");
  if (o.threads == 0 || o.threads > kMaxThreads)
    fail("threads", double(o.threads), "is out of range [1, " + std::to_string(kMaxThreads) + "]");
  if (o.resume && o.checkpoint_path.empty())
    throw Error(ErrorCode::kInvalidArgument, "resume needs a checkpoint path");
}

Word2VecResult train_word2vec(const std::vector<std::string>& inputs, const Word2VecOptions& o) {
  validate_word2vec_options(o);
  if (!o.checkpoint_path.empty()) remove_stale_temp_files(o.checkpoint_path);
  const auto t_scan = Clock::now();
  std::vector<std::string> files = list_corpus_files(inputs);
  std::string work_dir = o.work_dir;
  if (work_dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    work_dir = tmp && *tmp ? tmp : "/tmp";
  }
  ScannedCorpus corpus = scan_corpus(files, o, work_dir);
  // Map the id stream, then unlink it: the mapping keeps the data, nothing is left on disk.
  std::shared_ptr<const MappedFile> stream_file;
  try {
    stream_file = MappedFile::open(corpus.stream_path);
  } catch (...) {
    ::unlink(corpus.stream_path.c_str());
    throw;
  }
  ::unlink(corpus.stream_path.c_str());
  const uint32_t* stream = reinterpret_cast<const uint32_t*>(stream_file->data());
  const uint64_t N = corpus.stream_len;

  Word2VecResult res;
  res.scan_seconds = seconds_since(t_scan);
  res.corpus_words = corpus.corpus_words;
  const size_t n_rows = corpus.vocab.size(), dim = o.dim;
  const size_t stride = (dim + kStrideAlign - 1) / kStrideAlign * kStrideAlign;
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
  std::vector<uint32_t> neg_table;
  if (o.negative > 0) neg_table = unigram_table(counts, trained);
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
  shared.syn1 = o.hs && huff.n_inner > 0 ? syn1.data() : nullptr;
  shared.cbow = o.arch == W2vArch::kCbow;
  shared.window = o.window;
  shared.negative = o.negative;
  shared.neg_table = neg_table.data();
  shared.neg_table_size = neg_table.size();
  shared.hs_offset = huff.offset.data();
  shared.hs_points = huff.points.data();
  shared.hs_codes = huff.codes.data();
  shared.row_updates = o.row_stats ? row_updates.data() : nullptr;

  // Training state (what a checkpoint holds besides the weights).
  CheckpointState st;
  CheckpointFingerprint fp = make_fingerprint(o, lr0, corpus.vocab, N);
  CheckpointArrays arrays{dim, stride, n_rows, syn0.data(),
                          shared.syn1neg, shared.syn1 ? huff.n_inner : 0, shared.syn1,
                          o.row_stats ? row_updates.data() : nullptr};
  if (o.resume && file_exists(o.checkpoint_path))
    st = load_checkpoint(o.checkpoint_path, fp, arrays);

  const uint64_t n_chunks = (N + kChunk - 1) / kChunk;
  const double total_positions = double(N) * double(o.epochs);
  struct alignas(64) ThreadStats {
    double loss = 0;
    uint64_t n_loss = 0, words = 0;
    AlignedFloats neu1, neu1e;
    std::vector<uint32_t> sent;
  };
  ThreadPool pool(o.threads);
  std::vector<ThreadStats> ts(o.threads);
  for (auto& t : ts) {
    t.neu1.allocate(stride);
    t.neu1e.allocate(stride);
    t.sent.reserve(kMaxSentence);
  }

  auto process_chunk = [&](uint64_t epoch, uint64_t chunk, ThreadStats& t) {
    W2vThread th;
    th.rng = mix_seed(o.seed, epoch, chunk);
    th.neu1 = t.neu1.data();
    th.neu1e = t.neu1e.data();
    uint64_t pos = chunk * kChunk;
    const uint64_t end = std::min(pos + kChunk, N);
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
      float alpha = lr0 * float(std::max(1e-4, 1.0 - progress));
      w2v_train_sentence(shared, t.sent.data(), t.sent.size(), alpha, th);
    }
    t.loss += th.loss;
    t.n_loss += th.n_loss;
  };

  const auto t_train = Clock::now();
  auto last_report = t_train;
  const uint64_t positions_at_start = st.epoch * N + std::min(st.next_chunk * kChunk, N);
  uint64_t next_checkpoint =
      o.checkpoint_every ? (st.words_done / o.checkpoint_every + 1) * o.checkpoint_every : 0;
  uint64_t segments = 0;
  double window_loss = 0;
  uint64_t window_n = 0;
  for (uint64_t epoch = st.epoch; epoch < o.epochs; ++epoch) {
    for (uint64_t seg = (epoch == st.epoch ? st.next_chunk : 0); seg < n_chunks;
         seg += kChunksPerSegment) {
      const uint64_t seg_end = std::min(seg + kChunksPerSegment, n_chunks);
      std::atomic<uint64_t> next{seg};
      pool.run_on_all([&](size_t thread) {
        for (uint64_t c; (c = next.fetch_add(1)) < seg_end;) process_chunk(epoch, c, ts[thread]);
      });
      for (auto& t : ts) {
        st.words_done += t.words;
        st.epoch_loss += t.loss;
        st.epoch_loss_n += t.n_loss;
        window_loss += t.loss;
        window_n += t.n_loss;
        t.words = 0, t.loss = 0, t.n_loss = 0;
      }
      ++segments;
      const bool epoch_done = seg_end == n_chunks;
      st.epoch = epoch_done ? epoch + 1 : epoch;
      st.next_chunk = epoch_done ? 0 : seg_end;
      if (epoch_done) {
        st.last_epoch_loss = st.epoch_loss_n ? st.epoch_loss / double(st.epoch_loss_n) : 0;
        st.epoch_loss = 0;
        st.epoch_loss_n = 0;
      }
      if (o.checkpoint_every && st.words_done >= next_checkpoint &&
          !(epoch_done && epoch + 1 == o.epochs)) {
        save_checkpoint(o.checkpoint_path, fp, st, arrays);
        next_checkpoint = (st.words_done / o.checkpoint_every + 1) * o.checkpoint_every;
      }
      if (o.stop_after_segments && segments >= o.stop_after_segments &&
          !(epoch_done && epoch + 1 == o.epochs)) {
        res.completed = false;
        break;
      }
      if (o.progress && seconds_since(last_report) >= o.progress_interval) {
        last_report = Clock::now();
        const double el = seconds_since(t_train);
        const double done = double(st.epoch * N + st.next_chunk * kChunk);
        ProgressInfo p;
        p.what = "training";
        p.done = std::min(done, total_positions);
        p.total = total_positions;
        p.unit = "words";
        p.rate = el > 0 ? (p.done - double(positions_at_start)) / el : 0;
        p.eta_seconds = p.rate > 0 ? (p.total - p.done) / p.rate : 0;
        double cur_lr = lr0 * std::max(1e-4, 1.0 - p.done / total_positions);
        char extra[96];
        std::snprintf(extra, sizeof extra, "loss %.4f lr %.6f epoch %llu/%zu",
                      window_n ? window_loss / double(window_n) : 0.0, cur_lr,
                      (unsigned long long)std::min<uint64_t>(st.epoch + 1, o.epochs), o.epochs);
        p.extra = extra;
        window_loss = 0;
        window_n = 0;
        o.progress(p);
      }
    }
    if (!res.completed) break;
  }
  res.seconds = seconds_since(t_train);
  const double positions_done = double(st.epoch * N + std::min(st.next_chunk * kChunk, N)) -
                                double(positions_at_start);
  res.words_per_second = res.seconds > 0 ? positions_done / res.seconds : 0;
  res.trained_words = st.words_done;
  res.final_loss = st.last_epoch_loss;
  res.simd_target = w2v_simd_target();

  std::vector<float> out(n_rows * dim);
  for (size_t r = 0; r < n_rows; ++r)
    std::memcpy(out.data() + r * dim, syn0.data() + r * stride, dim * sizeof(float));
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
  res.table = EmbeddingTable::from_f32(n_rows, dim, std::move(out));
  res.trained = corpus.trained;
  res.vocab = std::move(corpus.vocab);
  if (o.progress) {
    ProgressInfo p;
    p.what = "training";
    p.done = p.total = total_positions;
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
