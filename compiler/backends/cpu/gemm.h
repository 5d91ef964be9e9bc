#pragma once
// Row-major matrix products: C = alpha*op(A)*op(B) + beta*C. float goes through oneDNN's
// sgemm (about twice OpenBLAS 0.3.21's speed here; docs/benchmarks.md has the
// measurement); double, which only conformance data uses, through a plain loop.
#include <cstdint>

namespace fsc::cpu {

void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
          const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
          int64_t ldc);
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, double alpha,
          const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
          int64_t ldc);

}  // namespace fsc::cpu

namespace fsc::cpu {

class PackedRowsCache;  // packed_rows_cache.h

// Which operands of an int8 GEMM are stored as uint8 (ONNX's uint8 tensors): each such byte
// less 128 (its top bit flipped) is the int8 value multiplied, and the zero point passed is
// the uint8 one less 128 too. Our own kernels read such an operand in place, flipping as they
// pack it; oneDNN's GEMM gets a flipped copy.
struct Uint8Operands {
    bool a = false, b = false;
};

// C[m,n] = (op(A) - aZero) * (op(B) - bZero) in exact int32, row-major: oneDNN's integer
// GEMM where the CPU has AVX-512 VNNI (AMX machines included); with AVX-VNNI alone, where
// oneDNN's GEMM with zero points is a reference loop, our own kernel of vpdpbusd. Elsewhere
// x86 int8 instructions saturate pairs of products: with AVX2, A within 7 bits of its zero
// point (7-bit weights) is multiplied as bytes, which cannot saturate then, and any other A
// with both operands widened to int16 (our own kernels); without AVX2, A is split into 7-bit
// halves that cannot saturate (two u8 x s8 GEMMs).
// tst_quantization checks every route against the exact reference. With `constantA`, our
// own kernels keep A's packed rows there for the next call with the same A (whose bytes must
// not change while the cache lives: a convolution's constant weights).
void gemmS8S8(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda,
              int8_t aZero, const int8_t* b, int64_t ldb, int8_t bZero, int32_t* c, int64_t ldc,
              PackedRowsCache* constantA = nullptr, Uint8Operands stored = {});
// Whether gemmS8S8 reads uint8 operands in place here (our own kernels); elsewhere it gives
// oneDNN a flipped copy of each, which a caller may rather make once of a smaller tensor (a
// convolution's image, not its im2col columns, up to kernel-size times larger).
bool int8GemmReadsUint8InPlace();
// Whether oneDNN's int8 kernels (its GEMM, its convolution primitive) are exact here: on x86
// only with VNNI (AVX-512 VNNI or AVX-VNNI, and so AMX machines), else they saturate.
bool oneDnnInt8IsExact();
// Whether int8 weights within 64 of their zero point (`--reduce-range`) take a faster route
// here than 8-bit ones: x86 with AVX2 but no VNNI (multiplied as bytes, not widened).
bool sevenBitWeightsAreFaster();
// The routes gemmS8S8 takes without AVX-512 VNNI, callable on any machine for their tests
// and benchmark. Each returns false, doing nothing, where the CPU lacks AVX2; AVX-VNNI's
// also where the CPU lacks that, the narrow route where some element of A less aZero lies
// outside [-64, 64].
bool gemmS8S8WithAvxVnni(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda,
                         int8_t aZero, const int8_t* b, int64_t ldb, int8_t bZero, int32_t* c, int64_t ldc,
                         PackedRowsCache* constantA = nullptr, Uint8Operands stored = {});
bool gemmS8S8WithNarrowA(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda,
                         int8_t aZero, const int8_t* b, int64_t ldb, int8_t bZero, int32_t* c, int64_t ldc,
                         PackedRowsCache* constantA = nullptr, Uint8Operands stored = {});
bool gemmS8S8ByWidening(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda,
                        int8_t aZero, const int8_t* b, int64_t ldb, int8_t bZero, int32_t* c, int64_t ldc,
                        PackedRowsCache* constantA = nullptr, Uint8Operands stored = {});
void gemmS8S8BySplitting(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda,
                         int8_t aZero, const int8_t* b, int64_t ldb, int8_t bZero, int32_t* c, int64_t ldc);

}  // namespace fsc::cpu
