// BLAS and LAPACK through OpenBLAS (Debian libopenblas0), loaded on first use.
//
// Why not link it: a process linked with libopenblas pays its initialisation at start (CPU
// probe, a 128 MB buffer reservation and a spinning server thread): about 5 ms of every
// `embedscope` command measured on the 2-core VM, while only batched search, `stats` and
// `compare` call BLAS. So the library is opened with dlopen the first time one of these
// functions runs, and the symbols are resolved once (thread-safe, std::call_once).
//
// The functions take the CBLAS enums and argument order of <cblas.h> (the same header OpenBLAS
// installs), so a call site reads exactly like the CBLAS call it replaces.
//
// Errors: if libopenblas cannot be opened or lacks a symbol, the first call throws
// Error(kUnsupported) naming the library, dlerror()'s text and the package to install.
// LAPACK's `info` result is returned unchanged (0 = success); callers turn it into an Error.
#pragma once

#include <cblas.h>

namespace embedscope::blas {

// C = alpha * op(A) op(B) + beta * C (cblas_sgemm).
void sgemm(CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k,
           float alpha, const float* a, int lda, const float* b, int ldb, float beta, float* c,
           int ldc);

// C = alpha * op(A) op(A)^T + beta * C on one triangle (cblas_ssyrk).
void ssyrk(CBLAS_ORDER order, CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, int n, int k, float alpha,
           const float* a, int lda, float beta, float* c, int ldc);

// Eigenvalues (and optionally vectors) of a symmetric matrix, LAPACK ssyevd (column-major).
// Returns LAPACK's info. A workspace query (lwork = -1) works as in LAPACK.
int ssyevd(char jobz, char uplo, int n, float* a, int lda, float* w, float* work, int lwork,
           int* iwork, int liwork);

// Selected eigenpairs of a symmetric double matrix, LAPACK dsyevr (column-major; the MRRR
// algorithm). range 'I' with il..iu (1-based, ascending order) picks those eigenvalues; `m`
// receives how many were found, z (ldz x m) their eigenvectors, isuppz 2 * max(1, m) ints.
// Returns LAPACK's info; a workspace query (lwork = liwork = -1) works as in LAPACK.
int dsyevr(char jobz, char range, char uplo, int n, double* a, int lda, double vl, double vu,
           int il, int iu, double abstol, int* m, double* w, double* z, int ldz, int* isuppz,
           double* work, int lwork, int* iwork, int liwork);

// Singular value decomposition of a general matrix, LAPACK sgesvd (column-major). Returns info.
int sgesvd(char jobu, char jobvt, int m, int n, float* a, int lda, float* s, float* u, int ldu,
           float* vt, int ldvt, float* work, int lwork);

// Threads OpenBLAS itself may use (openblas_set_num_threads). Our callers run single-threaded
// BLAS inside the shared pool's workers, so they set 1.
void set_num_threads(int n);

// True when OpenBLAS has been opened in this process (for tests and `--timings`).
bool loaded();

}  // namespace embedscope::blas
