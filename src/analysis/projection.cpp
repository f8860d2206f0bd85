// Exact PCA (see projection.h for the passes and the sign convention).
#include "embedscope/analysis/projection.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <string>

#include "embedscope/core/blas.h"
#include "embedscope/core/error.h"
#include "embedscope/core/thread_pool.h"

namespace embedscope {

namespace {

using Clock = std::chrono::steady_clock;

// Progress shared by the pool's threads: workers count rows, only thread 0 (the caller) reports,
// so the callback never runs on a worker and may throw to cancel.
class PassProgress {
 public:
  PassProgress(const ProgressFn& fn, double total) : fn_(fn), total_(total) {}
  void add(size_t rows, size_t thread) {
    done_.fetch_add(rows, std::memory_order_relaxed);
    if (thread == 0) report(false);
  }
  void report(bool force) {
    if (!fn_) return;
    auto now = Clock::now();
    if (!force && now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    ProgressInfo p;
    p.what = "pca";
    p.unit = "rows";
    p.total = total_;
    p.done = double(done_.load(std::memory_order_relaxed));
    double secs = std::chrono::duration<double>(now - start_).count();
    p.rate = secs > 0 ? p.done / secs : 0;
    p.eta_seconds = p.rate > 0 ? (p.total - p.done) / p.rate : 0;
    fn_(p);
  }

 private:
  const ProgressFn& fn_;
  double total_;
  std::atomic<size_t> done_{0};
  Clock::time_point start_ = Clock::now(), last_ = Clock::now();
};

[[noreturn]] void not_finite(size_t row, size_t col, float v) {
  throw Error(ErrorCode::kInvalidArgument, "pca: row " + std::to_string(row) + " column " +
                                               std::to_string(col) + " holds " + std::to_string(v) +
                                               ": every value must be finite");
}

}  // namespace

Projection pca(const EmbeddingTable& table, const PcaOptions& options) {
  const size_t n = table.n_rows(), d = table.dim(), k = options.dims;
  if (n == 0) throw Error(ErrorCode::kInvalidArgument, "pca: the table has no rows");
  if (k == 0 || k > d)
    throw Error(ErrorCode::kInvalidArgument, "pca: dims " + std::to_string(k) +
                                                 " must be from 1 to the table's width " +
                                                 std::to_string(d));
  if (d > size_t(1) << 15)  // the d x d covariance in double, per thread
    throw Error(ErrorCode::kInvalidArgument,
                "pca: width " + std::to_string(d) + " exceeds the limit of 32768 columns");
  ThreadPool& pool = process_pool();
  const size_t n_threads = options.n_threads ? options.n_threads : pool.size();
  PassProgress progress(options.progress, 3.0 * double(n));

  // Pass 1: column means; rejects non-finite values before they reach LAPACK.
  std::vector<std::vector<double>> part(n_threads, std::vector<double>(d, 0.0));
  pool.parallel_for(
      n,
      [&](size_t begin, size_t end, size_t t) {
        std::vector<float> row(d);
        std::vector<double>& s = part[t];
        for (size_t i = begin; i < end; ++i) {
          table.row_f32(i, row.data());
          for (size_t j = 0; j < d; ++j) {
            if (!std::isfinite(row[j])) not_finite(i, j, row[j]);
            s[j] += row[j];
          }
          if ((i - begin) % 1024 == 1023) progress.add(1024, t);
        }
        progress.add((end - begin) % 1024, t);
      },
      n_threads);
  std::vector<double> mean(d, 0.0);
  for (const auto& s : part)
    for (size_t j = 0; j < d; ++j) mean[j] += s[j];
  for (double& m : mean) m /= double(n);
  std::vector<float> mean_f(mean.begin(), mean.end());

  // Pass 2: covariance (lower triangle, row-major) by blocks of centred rows.
  std::vector<std::vector<double>> cov_part(n_threads);
  blas::set_num_threads(1);
  pool.parallel_for(
      n,
      [&](size_t begin, size_t end, size_t t) {
        std::vector<double>& acc = cov_part[t];
        acc.assign(d * d, 0.0);
        std::vector<float> block(kPcaBlockRows * d), gram(d * d);
        for (size_t b0 = begin; b0 < end; b0 += kPcaBlockRows) {
          size_t rows = std::min(kPcaBlockRows, end - b0);
          for (size_t r = 0; r < rows; ++r) {
            float* x = block.data() + r * d;
            table.row_f32(b0 + r, x);
            for (size_t j = 0; j < d; ++j) x[j] -= mean_f[j];
          }
          blas::ssyrk(CblasRowMajor, CblasLower, CblasTrans, int(d), int(rows), 1.0f, block.data(),
                      int(d), 0.0f, gram.data(), int(d));
          for (size_t i = 0; i < d; ++i)
            for (size_t j = 0; j <= i; ++j) acc[i * d + j] += gram[i * d + j];
          progress.add(rows, t);
        }
      },
      n_threads);
  std::vector<double> cov(d * d, 0.0);
  for (const auto& a : cov_part)
    if (!a.empty())
      for (size_t i = 0; i < d; ++i)
        for (size_t j = 0; j <= i; ++j) cov[i * d + j] += a[i * d + j];
  cov_part.clear();
  const double denom = n > 1 ? double(n - 1) : 1.0;
  double trace = 0;
  for (size_t i = 0; i < d; ++i) {
    for (size_t j = 0; j <= i; ++j) {
      cov[i * d + j] /= denom;
      cov[j * d + i] = cov[i * d + j];  // symmetric: row- and column-major agree
    }
    trace += cov[i * d + i];
  }

  // The top k eigenpairs (dsyevr returns them in ascending order).
  const int dn = int(d), il = int(d - k + 1), iu = int(d);
  int m = 0;
  std::vector<double> w(d), z(d * k);
  std::vector<int> isuppz(2 * k);
  double wq = 0;
  int iwq = 0;
  int info = blas::dsyevr('V', 'I', 'L', dn, cov.data(), dn, 0, 0, il, iu, 0.0, &m, w.data(),
                          z.data(), dn, isuppz.data(), &wq, -1, &iwq, -1);
  if (info == 0) {
    std::vector<double> work(size_t(std::max(1.0, wq)));
    std::vector<int> iwork(size_t(std::max(1, iwq)));
    info = blas::dsyevr('V', 'I', 'L', dn, cov.data(), dn, 0, 0, il, iu, 0.0, &m, w.data(),
                        z.data(), dn, isuppz.data(), work.data(), int(work.size()), iwork.data(),
                        int(iwork.size()));
  }
  if (info != 0 || m != int(k))
    throw Error(ErrorCode::kCorrupt, "pca: LAPACK dsyevr failed on the " + std::to_string(d) +
                                         " x " + std::to_string(d) + " covariance (info " +
                                         std::to_string(info) + ", " + std::to_string(m) + " of " +
                                         std::to_string(k) + " eigenpairs)");

  Projection out;
  out.n_rows = n;
  out.dims = k;
  out.total_variance = trace;
  // Component c (descending) is column k-1-c of z (column-major, leading dimension d).
  std::vector<double> comp(k * d);
  for (size_t c = 0; c < k; ++c) {
    const double* v = z.data() + (k - 1 - c) * d;
    size_t arg = 0;
    for (size_t j = 1; j < d; ++j)
      if (std::fabs(v[j]) > std::fabs(v[arg])) arg = j;
    double sign = v[arg] < 0 ? -1.0 : 1.0;
    for (size_t j = 0; j < d; ++j) comp[c * d + j] = sign * v[j];
    out.variance.push_back(std::max(0.0, w[k - 1 - c]));
  }

  // Pass 3: coordinates.
  out.coords.resize(n * k);
  pool.parallel_for(
      n,
      [&](size_t begin, size_t end, size_t t) {
        std::vector<float> row(d);
        for (size_t i = begin; i < end; ++i) {
          table.row_f32(i, row.data());
          for (size_t c = 0; c < k; ++c) {
            const double* v = comp.data() + c * d;
            double s = 0;
            for (size_t j = 0; j < d; ++j) s += (double(row[j]) - mean[j]) * v[j];
            out.coords[i * k + c] = float(s);
          }
          if ((i - begin) % 1024 == 1023) progress.add(1024, t);
        }
        progress.add((end - begin) % 1024, t);
      },
      n_threads);
  progress.report(true);
  return out;
}

}  // namespace embedscope
