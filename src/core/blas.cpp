// OpenBLAS opened on first use (see blas.h for why it is not linked).
#include "embedscope/core/blas.h"

#include <dlfcn.h>

#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>

#include "embedscope/core/error.h"

namespace embedscope::blas {

namespace {

using SgemmFn = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, int, int, int, float,
                         const float*, int, const float*, int, float, float*, int);
using SsyrkFn = void (*)(CBLAS_ORDER, CBLAS_UPLO, CBLAS_TRANSPOSE, int, int, float, const float*,
                         int, float, float*, int);
// LAPACK is Fortran: CHARACTER arguments carry hidden lengths after the declared arguments
// (gfortran ABI), passed here as 1 so the callee never reads stack slots we did not push.
using SsyevdFn = void (*)(const char*, const char*, const int*, float*, const int*, float*, float*,
                          const int*, int*, const int*, int*, size_t, size_t);
using DsyevrFn = void (*)(const char*, const char*, const char*, const int*, double*, const int*,
                          const double*, const double*, const int*, const int*, const double*, int*,
                          double*, double*, const int*, int*, double*, const int*, int*, const int*,
                          int*, size_t, size_t, size_t);
using SgesvdFn = void (*)(const char*, const char*, const int*, const int*, float*, const int*,
                          float*, float*, const int*, float*, const int*, float*, const int*, int*,
                          size_t, size_t);
using ThreadsFn = void (*)(int);

struct Api {
  SgemmFn sgemm = nullptr;
  SsyrkFn ssyrk = nullptr;
  SsyevdFn ssyevd = nullptr;
  SgesvdFn sgesvd = nullptr;
  DsyevrFn dsyevr = nullptr;
  ThreadsFn set_threads = nullptr;
  std::string error;  // non-empty when opening failed
};

// The Debian soname first; the unversioned name covers a -dev install without the runtime link.
constexpr const char* kLibraries[] = {"libopenblas.so.0", "libopenblas.so"};

Api open_api() {
  Api api;
  void* h = nullptr;
  std::string why;
  for (const char* name : kLibraries) {
    h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (h) break;
    const char* e = dlerror();
    why += std::string(why.empty() ? "" : "; ") + (e ? e : name);
  }
  if (!h) {
    api.error = "OpenBLAS could not be loaded (" + why +
                "); install Debian's libopenblas0 (scripts/setup.sh does)";
    return api;
  }
  auto sym = [&](const char* name) -> void* {
    void* p = dlsym(h, name);
    if (!p && api.error.empty()) api.error = std::string("OpenBLAS has no symbol '") + name + "'";
    return p;
  };
  api.sgemm = reinterpret_cast<SgemmFn>(sym("cblas_sgemm"));
  api.ssyrk = reinterpret_cast<SsyrkFn>(sym("cblas_ssyrk"));
  api.ssyevd = reinterpret_cast<SsyevdFn>(sym("ssyevd_"));
  api.sgesvd = reinterpret_cast<SgesvdFn>(sym("sgesvd_"));
  api.dsyevr = reinterpret_cast<DsyevrFn>(sym("dsyevr_"));
  api.set_threads = reinterpret_cast<ThreadsFn>(sym("openblas_set_num_threads"));
  return api;  // the handle stays open for the life of the process, as a linked library would
}

std::once_flag g_once;
Api g_api;
std::atomic<bool> g_loaded{false};

const Api& api() {
  std::call_once(g_once, [] {
    g_api = open_api();
    g_loaded = g_api.error.empty();
  });
  if (!g_api.error.empty()) throw Error(ErrorCode::kUnsupported, g_api.error);
  return g_api;
}

}  // namespace

void sgemm(CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k,
           float alpha, const float* a, int lda, const float* b, int ldb, float beta, float* c,
           int ldc) {
  api().sgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void ssyrk(CBLAS_ORDER order, CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, int n, int k, float alpha,
           const float* a, int lda, float beta, float* c, int ldc) {
  api().ssyrk(order, uplo, trans, n, k, alpha, a, lda, beta, c, ldc);
}

int ssyevd(char jobz, char uplo, int n, float* a, int lda, float* w, float* work, int lwork,
           int* iwork, int liwork) {
  int info = 0;
  api().ssyevd(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, &info, 1, 1);
  return info;
}

int sgesvd(char jobu, char jobvt, int m, int n, float* a, int lda, float* s, float* u, int ldu,
           float* vt, int ldvt, float* work, int lwork) {
  int info = 0;
  api().sgesvd(&jobu, &jobvt, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, &info, 1, 1);
  return info;
}

int dsyevr(char jobz, char range, char uplo, int n, double* a, int lda, double vl, double vu,
           int il, int iu, double abstol, int* m, double* w, double* z, int ldz, int* isuppz,
           double* work, int lwork, int* iwork, int liwork) {
  int info = 0;
  api().dsyevr(&jobz, &range, &uplo, &n, a, &lda, &vl, &vu, &il, &iu, &abstol, m, w, z, &ldz,
               isuppz, work, &lwork, iwork, &liwork, &info, 1, 1, 1);
  return info;
}

void set_num_threads(int n) { api().set_threads(n); }

bool loaded() { return g_loaded.load(); }

}  // namespace embedscope::blas
