#include <cblas.h>

#include "compiler/backends/cpu/gemm.h"

namespace fsc::cpu {

namespace {
// An empty inner dimension leaves beta*C (BLAS rejects lda = 0).
template <typename T>
void scaleOnly(int64_t m, int64_t n, T beta, T* c, int64_t ldc) {
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : c[i * ldc + j] * beta;
}
}  // namespace

void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
          const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
          int64_t ldc) {
    if (m == 0 || n == 0) return;
    if (k == 0) return scaleOnly(m, n, beta, c, ldc);
    cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
                transB ? CblasTrans : CblasNoTrans, blasint(m), blasint(n), blasint(k), alpha, a,
                blasint(lda), b, blasint(ldb), beta, c, blasint(ldc));
}

void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, double alpha,
          const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
          int64_t ldc) {
    if (m == 0 || n == 0) return;
    if (k == 0) return scaleOnly(m, n, beta, c, ldc);
    cblas_dgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
                transB ? CblasTrans : CblasNoTrans, blasint(m), blasint(n), blasint(k), alpha, a,
                blasint(lda), b, blasint(ldb), beta, c, blasint(ldc));
}

void setBlasThreads(int threads) { openblas_set_num_threads(threads); }

}  // namespace fsc::cpu
