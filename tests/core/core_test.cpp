#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "embedscope/core/atomic_file.h"
#include "embedscope/core/blas.h"
#include "embedscope/core/dtype.h"
#include "embedscope/core/embedding_table.h"
#include "embedscope/core/error.h"
#include "embedscope/core/mapped_file.h"
#include "embedscope/core/paths.h"
#include "embedscope/core/thread_pool.h"
#include "embedscope/core/vocabulary.h"
#include "test_util.h"

using namespace embedscope;

TEST(Dtype, F16RoundTripsEveryHalfValueExactly) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = f16_to_f32(uint16_t(h));
    if (std::isnan(f)) continue;
    EXPECT_EQ(f32_to_f16(f), h) << h;
  }
}

TEST(Dtype, F16KnownValues) {
  EXPECT_EQ(f16_to_f32(0x3c00), 1.0f);
  EXPECT_EQ(f16_to_f32(0xc000), -2.0f);
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16(1e6f), 0x7c00);
  EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie -> even
}

TEST(Dtype, BF16RoundsToNearestEven) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16_to_f32(0x3f80), 1.0f);
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3f808000u)), 0x3f80);  // tie, even stays
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3f818000u)), 0x3f82);  // tie, odd rounds up
}

TEST(EmbeddingTable, NormsAndRows) {
  auto t = EmbeddingTable::from_f32(3, 2, {3, 4, 0, 0, 1, 1});
  EXPECT_FLOAT_EQ(t.norms()[0], 5.0f);
  EXPECT_FLOAT_EQ(t.norms()[1], 0.0f);
  EXPECT_EQ(t.row(2), (std::vector<float>{1, 1}));
  EXPECT_EQ(t.n_nonfinite(), 0u);
}

// The blocked float-lane sum against a long double one, across the block edges (64) and the
// tail, with values spanning 12 orders of magnitude so that a plain float sum would be off.
TEST(EmbeddingTable, SumOfSquaresIsAccurateAcrossBlockEdges) {
  std::vector<float> x(4100);
  uint64_t state = 12345;
  for (float& v : x) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double u = double(state >> 11) / 9007199254740992.0;  // [0, 1)
    v = float((u - 0.5) * std::pow(10.0, double(state % 13) - 6));
  }
  for (size_t n : {0, 1, 7, 63, 64, 65, 127, 128, 129, 1000, 4100}) {
    long double want = 0;
    for (size_t i = 0; i < n; ++i) want += (long double)x[i] * x[i];
    const double got = sum_of_squares(x.data(), n);
    EXPECT_NEAR(got, double(want), 1e-6 * double(want) + 1e-300) << "n = " << n;
  }
}

TEST(EmbeddingTable, F16TableConvertsRows) {
  auto t = EmbeddingTable::from_u16(1, 2, DType::kF16, {0x3c00, 0xc000});
  EXPECT_EQ(t.row(0), (std::vector<float>{1.0f, -2.0f}));
  EXPECT_EQ(t.to_f32().f32()[1], -2.0f);
}

TEST(Vocabulary, FindKeepsFirstIdAndMissingIsNullopt) {
  Vocabulary v;
  v.add("a");
  v.add("b");
  v.add("a");
  EXPECT_EQ(v.find("a"), 0);
  EXPECT_EQ(v.find("b"), 1);
  EXPECT_FALSE(v.find("zzz").has_value());
  EXPECT_THROW(v.set_counts({1}), Error);
}

TEST(ThreadPool, CoversRangeAndRethrows) {
  ThreadPool pool(2);
  std::atomic<size_t> sum{0};
  pool.parallel_for(1000, [&](size_t b, size_t e, size_t) {
    for (size_t i = b; i < e; ++i) sum += i;
  });
  EXPECT_EQ(sum.load(), 999u * 1000 / 2);
  EXPECT_THROW(pool.parallel_for(10,
                                 [](size_t, size_t, size_t t) {
                                   if (t == 1) throw Error(ErrorCode::kIo, "boom");
                                 }),
               Error);
}

// Idle workers spin ~1 ms, then sleep on the condition variable (thread_pool.h). Jobs back to
// back take the spinning path; a 20 ms pause forces the sleeping one. Either way every thread
// runs every job once, and its plain (non-atomic) writes are visible to the caller afterwards.
TEST(ThreadPool, RunsEveryJobOnEveryThreadWhetherWorkersSpinOrSleep) {
  ThreadPool pool(3);
  std::vector<size_t> runs(3, 0);
  for (size_t job = 0; job < 200; ++job) {
    if (job % 50 == 49) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    pool.run_on_all([&](size_t t) { ++runs[t]; });
    for (size_t t = 0; t < 3; ++t) ASSERT_EQ(runs[t], job + 1) << "thread " << t;
  }
}

// Workers start on distinct CPUs but are not pinned (thread_pool.h): each ends up allowed
// every CPU its creator may use. With a creator allowed one CPU there is no placement to make,
// and the workers keep that one.
TEST(ThreadPool, WorkersKeepTheCreatorsCpuMask) {
  auto mask_of_tasks = [](size_t n) {
    ThreadPool pool(n);
    std::vector<cpu_set_t> masks(n);
    std::atomic<size_t> arrived{0};
    pool.run_on_all([&](size_t t) {
      ++arrived;  // every task on its own thread: each waits for all to have started
      while (arrived.load() < n) std::this_thread::yield();
      CPU_ZERO(&masks[t]);
      EXPECT_EQ(sched_getaffinity(0, sizeof masks[t], &masks[t]), 0);
    });
    return masks;
  };
  cpu_set_t mine;
  CPU_ZERO(&mine);
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  for (const cpu_set_t& m : mask_of_tasks(3)) EXPECT_TRUE(CPU_EQUAL(&m, &mine));

  std::thread one_cpu([&] {
    cpu_set_t only;
    CPU_ZERO(&only);
    CPU_SET(sched_getcpu(), &only);
    ASSERT_EQ(sched_setaffinity(0, sizeof only, &only), 0);
    for (const cpu_set_t& m : mask_of_tasks(2)) EXPECT_TRUE(CPU_EQUAL(&m, &only));
  });
  one_cpu.join();
}

// The process pool serves many callers at once (the server's request threads) and tasks that
// call it again (a search inside a parallel evaluation). Each caller's sums must come out
// whole, and the run must finish: a pool whose callers wait on a queue would deadlock here,
// since every worker is inside an outer task waiting for its inner call.
TEST(ThreadPool, ConcurrentAndNestedCallersAllFinishWithTheirOwnResults) {
  ThreadPool pool(3);
  constexpr size_t kCallers = 6, kRounds = 40, kItems = 1000;
  std::vector<std::thread> callers;
  std::vector<uint64_t> totals(kCallers, 0);
  for (size_t c = 0; c < kCallers; ++c)
    callers.emplace_back([&, c] {
      for (size_t r = 0; r < kRounds; ++r) {
        std::vector<uint64_t> outer(pool.size(), 0);
        pool.parallel_for(8, [&](size_t b, size_t e, size_t t) {
          for (size_t i = b; i < e; ++i) {
            std::vector<uint64_t> inner(pool.size(), 0);
            pool.parallel_for(kItems, [&](size_t ib, size_t ie, size_t it) {
              for (size_t j = ib; j < ie; ++j) inner[it] += j + c;
            });
            for (uint64_t v : inner) outer[t] += v;
          }
        });
        for (uint64_t v : outer) totals[c] += v;
      }
    });
  for (auto& t : callers) t.join();
  for (size_t c = 0; c < kCallers; ++c)
    EXPECT_EQ(totals[c], kRounds * 8 * (kItems * (kItems - 1) / 2 + kItems * c)) << "caller " << c;
}

// Chunks depend on the task count alone, never on which thread ran them; task 0 is the
// caller's; more tasks than threads is fine.
TEST(ThreadPool, SplitsByTaskCountAndRunsTaskZeroOnTheCaller) {
  ThreadPool pool(2);
  std::vector<std::pair<size_t, size_t>> chunks(5);
  std::thread::id task0;
  pool.parallel_for(
      10,
      [&](size_t b, size_t e, size_t t) {
        chunks[t] = {b, e};
        if (t == 0) task0 = std::this_thread::get_id();
      },
      5);
  EXPECT_EQ(chunks,
            (std::vector<std::pair<size_t, size_t>>{{0, 2}, {2, 4}, {4, 6}, {6, 8}, {8, 10}}));
  EXPECT_EQ(task0, std::this_thread::get_id());
  // The lowest task's exception is the one rethrown, after all tasks ran.
  std::atomic<int> ran{0};
  try {
    pool.run_on_all(
        [&](size_t t) {
          ++ran;
          if (t >= 2) throw Error(ErrorCode::kIo, "task " + std::to_string(t));
        },
        4);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "task 2");
  }
  EXPECT_EQ(ran.load(), 4);
}

// The process pool is sized once: the same count again is a no-op, another is refused with
// both counts named, and the pool keeps working.
TEST(ThreadPool, ProcessPoolRefusesANewSizeOnceStarted) {
  ThreadPool& p = process_pool();
  EXPECT_EQ(&p, &process_pool());
  EXPECT_EQ(p.size(), process_threads());
  EXPECT_NO_THROW(set_process_threads(p.size()));
  try {
    set_process_threads(p.size() + 3);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("already runs " + std::to_string(p.size()) + " threads"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find(std::to_string(p.size() + 3)), std::string::npos);
  }
  EXPECT_EQ(process_threads(), p.size());
  std::atomic<size_t> sum{0};
  p.parallel_for(100, [&](size_t b, size_t e, size_t) {
    for (size_t i = b; i < e; ++i) sum += i;
  });
  EXPECT_EQ(sum.load(), 4950u);
}

TEST(AtomicFile, ReplacesContentAndLeavesNoTempOnAbort) {
  test::TempDir d;
  std::string p = d.file("x.txt");
  write_file_atomic(p, "old");
  {
    AtomicFile f(p);
    f.write("new content");
    // no commit: destructor removes the temp file
  }
  EXPECT_EQ(test::read_file(p), "old");
  size_t n = 0;
  for (auto& e : std::filesystem::directory_iterator(d.path())) (void)e, ++n;
  EXPECT_EQ(n, 1u);
  write_file_atomic(p, "new");
  EXPECT_EQ(test::read_file(p), "new");
}

TEST(AtomicFile, UnwritableFolderIsIoError) {
  try {
    AtomicFile f("/proc/embedscope-no-such/x");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_NE(std::string(e.what()).find("/proc/embedscope-no-such/x"), std::string::npos);
  }
}

// read_head (how a format is recognised before the file is mapped): the first n bytes, the
// whole file when it is shorter, and open()'s errors.
TEST(MappedFile, ReadHeadReadsThePrefixWithOpensErrors) {
  test::TempDir d;
  const std::string p = d.file("f.bin");
  std::string bytes(10000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = char(i * 7 + 3);
  test::write_file(p, bytes);
  EXPECT_EQ(MappedFile::read_head(p, 4096), bytes.substr(0, 4096));
  EXPECT_EQ(MappedFile::read_head(p, 1 << 20), bytes);
  EXPECT_EQ(MappedFile::read_head(p, 0), "");
  test::write_file(d.file("empty"), "");
  EXPECT_EQ(MappedFile::read_head(d.file("empty"), 4096), "");
  try {
    MappedFile::read_head(d.file("missing"), 8);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find(d.file("missing") + ": cannot open: No such file"),
              std::string::npos)
        << e.what();
  }
  try {
    MappedFile::read_head(d.path(), 8);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_NE(std::string(e.what()).find(d.path() + ": not a regular file"), std::string::npos)
        << e.what();
  }
}

// The CLI finds embedscope-serve and its -mpi twin beside itself through these.
TEST(Paths, ExecutablePathIsThisTestBinary) {
  const std::string self = executable_path();
  EXPECT_EQ(std::filesystem::path(self).filename(), "core_test") << self;
  EXPECT_TRUE(std::filesystem::equivalent(self, "/proc/self/exe")) << self;
  EXPECT_EQ(beside_executable("x"), std::filesystem::path(self).parent_path().string() + "/x");
}

TEST(MappedFile, MissingFileIsNotFound) {
  try {
    MappedFile::open("/nonexistent/file.bin");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
  }
}

// RSS of this process in bytes, from /proc/self/statm (resident pages).
static size_t resident_bytes() {
  std::string s = test::read_file("/proc/self/statm");
  size_t pages = std::stoull(s.substr(s.find(' ') + 1));
  return pages * size_t(sysconf(_SC_PAGESIZE));
}

TEST(MappedFile, DropResidentForgetsMappedPagesButKeepsTheirContent) {
  test::TempDir d;
  std::string p = d.file("big.bin");
  const size_t n = size_t(32) << 20;  // 32 MB of a known pattern
  std::string bytes(n, '\0');
  for (size_t i = 0; i < n; ++i) bytes[i] = char(i * 2654435761u >> 24);
  test::write_file(p, bytes);
  auto f = MappedFile::open(p);
  uint64_t sum = 0, expect = 0;
  for (size_t i = 0; i < n; i += 64) sum += uint8_t(f->data()[i]), expect += uint8_t(bytes[i]);
  ASSERT_EQ(sum, expect);
  const size_t before = resident_bytes();
  const size_t dropped = MappedFile::drop_resident(f->data(), n);
  const size_t after = resident_bytes();
  EXPECT_EQ(dropped, n);  // page-aligned start, whole pages
  EXPECT_GE(before - after, n / 2) << "before " << before << " after " << after;
  // The content comes back from the page cache on the next read.
  sum = 0;
  for (size_t i = 0; i < n; i += 64) sum += uint8_t(f->data()[i]);
  EXPECT_EQ(sum, expect);
  // A part range drops only its whole pages.
  EXPECT_EQ(MappedFile::drop_resident(f->data() + 1, 3 * 4096), size_t(2 * 4096));
  // Memory that is not a live mapping is never touched (MADV_DONTNEED would zero it).
  std::vector<std::byte> heap(size_t(1) << 20, std::byte{7});
  EXPECT_EQ(MappedFile::drop_resident(heap.data(), heap.size()), 0u);
  EXPECT_EQ(heap[4096 * 3], std::byte{7});
  // Nor a range running past the end of a mapping.
  EXPECT_EQ(MappedFile::drop_resident(f->data() + n - 4096, 8192), 0u);
}

TEST(Blas, OpensOpenBlasOnFirstUseAndComputes) {
  // [[1,2],[3,4]] x [[5,6],[7,8]] = [[19,22],[43,50]] (worked by hand).
  const float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
  float c[4] = {0, 0, 0, 0};
  blas::sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2);
  EXPECT_TRUE(blas::loaded());
  EXPECT_EQ(std::vector<float>(c, c + 4), (std::vector<float>{19, 22, 43, 50}));
  // Eigenvalues of [[2,1],[1,2]] are 1 and 3 (ascending, as LAPACK returns them).
  float m[4] = {2, 1, 1, 2}, w[2] = {0, 0}, work[64];
  int iwork[16];
  EXPECT_EQ(blas::ssyevd('N', 'L', 2, m, 2, w, work, 64, iwork, 16), 0);
  EXPECT_NEAR(w[0], 1.0f, 1e-6);
  EXPECT_NEAR(w[1], 3.0f, 1e-6);
}

TEST(EmbeddingTable, RefusesRowsWiderThanTheLimit) {
  EXPECT_NO_THROW(EmbeddingTable::from_f32(0, kMaxTableDim, {}));
  try {
    EmbeddingTable::from_f32(0, kMaxTableDim + 1, {});
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("1048577 values exceed the limit of 1048576"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(EmbeddingTable::copy_of(nullptr, 0, kMaxTableDim + 1, DType::kF16), Error);
  // With no columns the file's size bounds nothing: the row count has its own limit.
  EXPECT_NO_THROW(EmbeddingTable::from_f32(kMaxTableDim, 0, {}));
  try {
    EmbeddingTable::from_f32(kMaxTableDim + 1, 0, {});
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "1048577 rows exceed the limit of 1048576 for a matrix with no columns"),
              std::string::npos)
        << e.what();
  }
}

TEST(EmbeddingTable, ZeroDimRowsAreEmptyNotUndefined) {
  auto t = EmbeddingTable::view(nullptr, nullptr, 2, 0, DType::kF32, false);
  EXPECT_TRUE(t.row(1).empty());
  EXPECT_EQ(t.norms(), (std::vector<float>{0.0f, 0.0f}));
}
