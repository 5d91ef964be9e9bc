#include <oneapi/dnnl/dnnl.h>

#include <vector>

#include "compiler/backends/cpu/gemm.h"

namespace fsc::cpu {

namespace {
template <typename T>
void scale(int64_t m, int64_t n, T beta, T* c, int64_t ldc) {
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : c[i * ldc + j] * beta;
}
}  // namespace

void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
          const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
          int64_t ldc) {
    if (m == 0 || n == 0) return;
    if (k == 0) return scale(m, n, beta, c, ldc);
    dnnl_sgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c,
               ldc);
}

void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, double alpha,
          const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
          int64_t ldc) {
    if (m == 0 || n == 0) return;
    scale(m, n, beta, c, ldc);
    if (k == 0) return;
    // i-p-j order keeps the inner loop contiguous in B and C.
    std::vector<double> row(static_cast<size_t>(k));
    for (int64_t i = 0; i < m; ++i) {
        for (int64_t p = 0; p < k; ++p) row[size_t(p)] = alpha * (transA ? a[p * lda + i] : a[i * lda + p]);
        double* ci = c + i * ldc;
        for (int64_t p = 0; p < k; ++p) {
            const double ap = row[size_t(p)];
            if (transB)
                for (int64_t j = 0; j < n; ++j) ci[j] += ap * b[j * ldb + p];
            else
                for (int64_t j = 0; j < n; ++j) ci[j] += ap * b[p * ldb + j];
        }
    }
}

}  // namespace fsc::cpu

namespace fsc::cpu {

void gemmS8S8(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda,
              int8_t aZero, const int8_t* b, int64_t ldb, int8_t bZero, int32_t* c, int64_t ldc) {
    if (m == 0 || n == 0) return;
    const int32_t noOffset = 0;
    dnnl_gemm_s8s8s32(transA ? 'T' : 'N', transB ? 'T' : 'N', 'F', m, n, k, 1.0f, a, lda, aZero, b, ldb, bZero, 0.0f,
                      c, ldc, &noOffset);
}

}  // namespace fsc::cpu
