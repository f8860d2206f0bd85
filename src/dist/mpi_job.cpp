// MPI: the job (init / finalize / abort) and the word2vec trainer's collectives.
#include "embedscope/dist/mpi_job.h"

#include <mpi.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "embedscope/core/error.h"

namespace embedscope::dist {

namespace {

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  throw Error(ErrorCode::kIo, std::string(what) + " failed: " + std::string(msg, size_t(len)));
}

// MPI counts are int: a larger message is an error naming it (never a silent truncation).
int count_of(size_t n, const char* what) {
  if (n > size_t(INT_MAX))
    throw Error(ErrorCode::kUnsupported, std::string(what) + " of " + std::to_string(n) +
                                             " elements exceeds MPI's limit of " +
                                             std::to_string(INT_MAX) + " per message");
  return int(n);
}

// Sums `n` elements in place, in messages of at most 2^28 elements.
template <class T>
void allreduce_sum(T* p, size_t n, MPI_Datatype type, const char* what) {
  constexpr size_t kMax = size_t(1) << 28;
  for (size_t i = 0; i < n; i += kMax)
    check(MPI_Allreduce(MPI_IN_PLACE, p + i, int(std::min(kMax, n - i)), type, MPI_SUM,
                        MPI_COMM_WORLD),
          what);
}

class Collective final : public MpiCollective {
 public:
  Collective(MpiJob& job, const CollectiveOptions& o) : job_(job), o_(o) {}
  size_t rank() const override { return job_.rank(); }
  size_t size() const override { return job_.size(); }
  void sum(std::span<uint64_t> v) override {
    allreduce_sum(v.data(), v.size(), MPI_UINT64_T, "MPI_Allreduce (counts)");
  }
  void sum(std::span<double> v) override {
    allreduce_sum(v.data(), v.size(), MPI_DOUBLE, "MPI_Allreduce (sums)");
  }

  // Every process sends its table (count, length, bytes per word) to every other, and each
  // adds them up: the same sums everywhere. A table is one message, so its bytes must fit an
  // int (about 100M distinct words of 10 bytes).
  void merge_word_counts(std::vector<std::pair<std::string, uint64_t>>& counts) override {
    std::vector<char> mine;
    for (const auto& [w, n] : counts) {
      const uint64_t len = w.size();
      mine.insert(mine.end(), reinterpret_cast<const char*>(&n),
                  reinterpret_cast<const char*>(&n) + 8);
      mine.insert(mine.end(), reinterpret_cast<const char*>(&len),
                  reinterpret_cast<const char*>(&len) + 8);
      mine.insert(mine.end(), w.begin(), w.end());
    }
    const int my_bytes = count_of(mine.size(), "this process's word-count table (bytes)");
    std::vector<int> bytes(size()), displ(size());
    check(MPI_Allgather(&my_bytes, 1, MPI_INT, bytes.data(), 1, MPI_INT, MPI_COMM_WORLD),
          "MPI_Allgather (word-count table sizes)");
    size_t total = 0;
    for (size_t r = 0; r < size(); ++r)
      displ[r] = count_of(total, "the word-count tables (bytes)"), total += size_t(bytes[r]);
    count_of(total, "the word-count tables (bytes)");
    std::vector<char> all(total);
    check(MPI_Allgatherv(mine.data(), my_bytes, MPI_CHAR, all.data(), bytes.data(), displ.data(),
                         MPI_CHAR, MPI_COMM_WORLD),
          "MPI_Allgatherv (word-count tables)");
    std::unordered_map<std::string_view, uint64_t> sum;
    sum.reserve(counts.size() * 2);
    for (size_t p = 0; p < total;) {
      uint64_t n, len;
      std::memcpy(&n, all.data() + p, 8);
      std::memcpy(&len, all.data() + p + 8, 8);
      sum[std::string_view(all.data() + p + 16, len)] += n;
      p += 16 + len;
    }
    counts.clear();
    counts.reserve(sum.size());
    for (const auto& [w, n] : sum) counts.emplace_back(std::string(w), n);
  }

  void begin_sync(std::span<float* const> rows, size_t dim) override {
    rows_.assign(rows.begin(), rows.end());
    dim_ = dim;
    stats_.full_sync_bytes = uint64_t(rows_.size()) * dim * sizeof(float);
    if (o_.policy == SyncPolicy::kSumOfChanges) {
      ref_.resize(rows_.size() * dim);
      for (size_t i = 0; i < rows_.size(); ++i)
        std::memcpy(ref_.data() + i * dim, rows_[i], dim * sizeof(float));
    }
  }

  void sync(size_t n) override {
    const auto t0 = std::chrono::steady_clock::now();
    ++stats_.syncs;
    if (o_.fail_after_syncs && rank() == o_.fail_rank && stats_.syncs == o_.fail_after_syncs) {
      if (o_.kill) ::raise(SIGKILL);
      throw Error(ErrorCode::kIo, "test failure injected at sync " + std::to_string(stats_.syncs) +
                                      " (EMBEDSCOPE_TEST_FAIL_RANK)");
    }
    n = std::min(n, rows_.size());
    // Rows go in blocks of about 4 MiB: bounded extra memory, and messages large enough to run
    // at the link's bandwidth.
    const size_t block = std::max<size_t>(1, (size_t(4) << 20) / (dim_ * sizeof(float)));
    buf_.resize(std::min(block, std::max<size_t>(n, 1)) * dim_);
    const float inv = 1.0f / float(size());
    for (size_t b = 0; b < n; b += block) {
      const size_t m = std::min(block, n - b);
      float* out = buf_.data();
      if (o_.policy == SyncPolicy::kSumOfChanges) {
        for (size_t i = 0; i < m; ++i) {
          const float* row = rows_[b + i];
          const float* ref = ref_.data() + (b + i) * dim_;
          for (size_t d = 0; d < dim_; ++d) out[i * dim_ + d] = row[d] - ref[d];
        }
      } else {
        for (size_t i = 0; i < m; ++i)
          std::memcpy(out + i * dim_, rows_[b + i], dim_ * sizeof(float));
      }
      allreduce_sum(out, m * dim_, MPI_FLOAT, "MPI_Allreduce (weights)");
      for (size_t i = 0; i < m; ++i) {
        float* row = rows_[b + i];
        if (o_.policy == SyncPolicy::kSumOfChanges) {
          float* ref = ref_.data() + (b + i) * dim_;
          for (size_t d = 0; d < dim_; ++d) row[d] = ref[d] = ref[d] + out[i * dim_ + d];
        } else {
          for (size_t d = 0; d < dim_; ++d) row[d] = out[i * dim_ + d] * inv;
        }
      }
    }
    stats_.rows_synced += n;
    stats_.bytes_reduced += uint64_t(n) * dim_ * sizeof(float);
    stats_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  CollectiveStats stats() const override { return stats_; }

 private:
  MpiJob& job_;
  CollectiveOptions o_;
  std::vector<float*> rows_;
  size_t dim_ = 0;
  std::vector<float> ref_, buf_;
  CollectiveStats stats_;
};

}  // namespace

MpiJob::MpiJob() {
  int provided = 0;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
  if (provided < MPI_THREAD_SERIALIZED) {
    MPI_Finalize();
    throw Error(ErrorCode::kUnsupported, "the MPI library provides thread level " +
                                             std::to_string(provided) +
                                             ", below MPI_THREAD_SERIALIZED, which training needs");
  }
  int r = 0, s = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  rank_ = size_t(r);
  size_ = size_t(s);
}

MpiJob::~MpiJob() { MPI_Finalize(); }

std::string MpiJob::host() const {
  char name[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  MPI_Get_processor_name(name, &len);
  return std::string(name, size_t(len));
}

void MpiJob::barrier() { check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

void MpiJob::abort(int exit_code) {
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);  // MPI_Abort does not return; this keeps [[noreturn]] honest
}

std::unique_ptr<MpiCollective> make_w2v_collective(MpiJob& job, const CollectiveOptions& options) {
  return std::make_unique<Collective>(job, options);
}

std::vector<std::vector<Neighbor>> sharded_search_batch(
    MpiJob& job, const Searcher& full, std::span<const float> queries, size_t n_queries,
    const SearchOptions& options, const std::vector<std::vector<TokenId>>* exclude_per_query) {
  if (full.centered() || options.csls_k > 0 || options.mode != SearchMode::kExact)
    throw Error(ErrorCode::kUnsupported,
                "batch search over MPI processes: centering, CSLS and fast mode need every row "
                "in one process; run without mpirun for them");
  const EmbeddingTable& t = full.table();
  const size_t rows =
      options.n_rows_limit ? std::min(options.n_rows_limit, t.n_rows()) : t.n_rows();
  const size_t P = job.size(), r = job.rank(), k = options.k;
  const size_t b = rows / P * r + rows % P * r / P, e = rows / P * (r + 1) + rows % P * (r + 1) / P;
  // This process's answers, k slots per query: (score, global id), id -1 where empty.
  struct Slot {
    float score;
    int32_t id;
  };
  static_assert(sizeof(Slot) == 8);
  std::vector<Slot> mine(n_queries * k, Slot{0, -1});
  if (e > b) {
    auto keep = std::make_shared<EmbeddingTable>(t);  // shares the storage (the mapping)
    EmbeddingTable shard =
        EmbeddingTable::view(keep, keep->row_data(b), e - b, t.dim(), t.dtype(), true);
    Searcher local(shard, {.n_threads = full.n_threads()});
    SearchOptions so = options;
    so.n_rows_limit = 0;
    so.exclude.clear();
    for (TokenId id : options.exclude)
      if (id >= 0 && size_t(id) >= b && size_t(id) < e)
        so.exclude.push_back(TokenId(size_t(id) - b));
    std::vector<uint8_t> allow;
    if (options.allow) {
      allow.assign(options.allow->begin() + std::ptrdiff_t(std::min(b, options.allow->size())),
                   options.allow->begin() + std::ptrdiff_t(std::min(e, options.allow->size())));
      allow.resize(e - b, 0);
      so.allow = &allow;
    }
    std::vector<std::vector<TokenId>> excl;
    if (exclude_per_query) {
      excl.resize(exclude_per_query->size());
      for (size_t q = 0; q < excl.size(); ++q)
        for (TokenId id : (*exclude_per_query)[q])
          if (id >= 0 && size_t(id) >= b && size_t(id) < e)
            excl[q].push_back(TokenId(size_t(id) - b));
    }
    auto out = local.search_batch(queries, n_queries, so, exclude_per_query ? &excl : nullptr);
    for (size_t q = 0; q < n_queries; ++q)
      for (size_t i = 0; i < out[q].size() && i < k; ++i)
        mine[q * k + i] = Slot{out[q][i].score, int32_t(size_t(out[q][i].id) + b)};
  }
  const int bytes = count_of(mine.size() * sizeof(Slot), "a shard's answers (bytes)");
  std::vector<Slot> all(r == 0 ? mine.size() * P : 0);
  count_of(mine.size() * sizeof(Slot) * P, "the gathered answers (bytes)");
  check(MPI_Gather(mine.data(), bytes, MPI_BYTE, all.data(), bytes, MPI_BYTE, 0, MPI_COMM_WORLD),
        "MPI_Gather (search answers)");
  std::vector<std::vector<Neighbor>> res(n_queries);  // empty lists on ranks other than 0
  for (size_t q = 0; q < (r == 0 ? n_queries : 0); ++q) {
    std::vector<Neighbor>& nn = res[q];
    for (size_t p = 0; p < P; ++p)
      for (size_t i = 0; i < k; ++i) {
        const Slot& s = all[(p * n_queries + q) * k + i];
        if (s.id >= 0) nn.push_back(Neighbor{TokenId(s.id), s.score});
      }
    std::sort(nn.begin(), nn.end(), [](const Neighbor& x, const Neighbor& y) {
      return x.score != y.score ? x.score > y.score : x.id < y.id;
    });
    if (nn.size() > k) nn.resize(k);
  }
  return res;
}

CollectiveOptions collective_options_from_env(CollectiveOptions base) {
  const char* v = std::getenv("EMBEDSCOPE_TEST_FAIL_RANK");
  if (!v || !*v) return base;
  unsigned long long rank = 0, syncs = 0;
  char mode[16] = {0};
  const int got = std::sscanf(v, "%llu:%llu:%15s", &rank, &syncs, mode);
  if (got < 2)
    throw Error(ErrorCode::kInvalidArgument,
                std::string("EMBEDSCOPE_TEST_FAIL_RANK=") + v + ": expected RANK:SYNCS[:throw]");
  base.fail_rank = size_t(rank);
  base.fail_after_syncs = syncs;
  base.kill = !(got == 3 && std::string_view(mode) == "throw");
  return base;
}

}  // namespace embedscope::dist
