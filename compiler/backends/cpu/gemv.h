#pragma once
// One row times a row-major matrix, y = alpha x B + beta y (a classifier's Linear at batch 1,
// any MatMul or Gemm with one row, a squeeze-excite layer's 1x1 convolution): B streamed
// once, in its own order, each thread its own stretch of rows into partial sums.
#include <cstdint>

namespace fsc::cpu {

// x: k floats, incx apart; B: k rows of n, ldb apart; y: n floats. Threads: OpenMP's count on
// the calling thread (the run's pool sets it), over stretches of rows.
void gemvRowMajor(int64_t k, int64_t n, float alpha, const float* x, int64_t incx, const float* b,
                  int64_t ldb, float beta, float* y);

// y = A x for a row-major A (rows of cols floats, lda apart): each row dotted with x, the
// rows split over OpenMP's threads on the calling thread (a recurrent layer's R times the
// hidden state, every step). Where A is given as [n, k] this reads it as stored.
void matrixTimesVector(int64_t rows, int64_t cols, const float* a, int64_t lda, const float* x,
                       float* y);

}  // namespace fsc::cpu
