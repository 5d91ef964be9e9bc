#pragma once
// Row-major matrix products through the BLAS chosen for the CPU backend (OpenBLAS; see
// docs/benchmarks.md for the measurement behind the choice). C = alpha*op(A)*op(B) + beta*C.
#include <cstdint>

namespace fsc::cpu {

void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
          const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
          int64_t ldc);
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, double alpha,
          const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
          int64_t ldc);
// Threads the BLAS library may use (process-wide).
void setBlasThreads(int threads);

}  // namespace fsc::cpu
