#pragma once
// One row times a row-major matrix, y = alpha x B + beta y (a classifier's Linear at batch 1,
// any MatMul or Gemm with one row): B streamed once, row after row, into accumulators held
// in registers for a block of columns. oneDNN's sgemm with one row read MobileNetV3's two
// classifier weights (10 MB) at 41 GB/s where ONNX Runtime read them at 52-55.
#include <cstdint>

namespace fsc::cpu {

// x: k floats, incx apart; B: k rows of n, ldb apart; y: n floats. Threads: OpenMP's count on
// the calling thread (the run's pool sets it), over blocks of columns.
void gemvRowMajor(int64_t k, int64_t n, float alpha, const float* x, int64_t incx, const float* b, int64_t ldb,
                  float beta, float* y);

}  // namespace fsc::cpu
