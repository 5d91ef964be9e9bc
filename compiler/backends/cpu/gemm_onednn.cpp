#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <vector>

#include "compiler/backends/cpu/gemm.h"
#include "compiler/backends/cpu/gemv.h"
#include "compiler/backends/cpu/onednn_isa.h"

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
    if (m == 1 && !transB) return gemvRowMajor(k, n, alpha, a, transA ? lda : 1, b, ldb, beta, c);
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

// x86 int8 instructions without VNNI (vpmaddubsw) add pairs of products into int16 with
// saturation, so oneDNN's integer kernels are exact only where VNNI is there.
bool oneDnnInt8IsExact() {
#if defined(__x86_64__) || defined(__i386__)
    static const bool exact =
        oneDnnIsaIncludes(dnnl_cpu_isa_avx512_core_vnni) || oneDnnIsaIncludes(dnnl_cpu_isa_avx2_vnni);
    return exact;
#else
    return true;
#endif
}

// The product through oneDNN's u8 x s8 GEMM, exactly without VNNI. Its multiply
// (vpmaddubsw) adds pairs of products into int16 with saturation, which a u8 operand below
// 128 cannot reach (2 x 127 x 128 < 32768). So A, shifted to u8 (ua = a + 128), is split
// into ua = 128 h + l with h in {0, 1} and l below 128: two GEMMs without zero points, and
// the zero points from A's row sums and B's column sums:
//   sum_p (ua - az)(b - bz) = sum_p ua b - bz sum_p ua - az sum_p b + k az bz, az = aZero + 128.
// About half the time of the earlier float route (sgemm in K-chunks short enough for float
// to hold every partial sum exactly); oneDNN's s8s8s32 with zero points is a reference loop
// here, 50x slower (docs/benchmarks.md).
void gemmS8S8BySplitting(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda,
                         int8_t aZero, const int8_t* b, int64_t ldb, int8_t bZero, int32_t* c, int64_t ldc) {
    if (m == 0 || n == 0) return;
    const int64_t az = int64_t(aZero) + 128, bz = bZero;
    std::vector<uint8_t> high(size_t(m * k)), low(size_t(m * k));
    // Per row of C, what the zero points take off: k az bz - bz sum_p ua. The sums below and
    // the corrections are taken modulo 2^32, which gives C exactly (C fits int32).
    std::vector<uint32_t> rowTerms(static_cast<size_t>(m)), columnTerms(static_cast<size_t>(n));
    for (int64_t i = 0; i < m; ++i) {
        int64_t rowSum = 0;
        for (int64_t p = 0; p < k; ++p) {
            const uint8_t ua = uint8_t(int(transA ? a[p * lda + i] : a[i * lda + p]) + 128);
            high[size_t(i * k + p)] = ua >> 7;
            low[size_t(i * k + p)] = ua & 127;
            rowSum += ua;
        }
        rowTerms[size_t(i)] = uint32_t(k * az * bz - bz * rowSum);
    }
    // B is the large side in a convolution (its im2col columns): the passes over it and over
    // C run on the threads oneDNN's GEMM uses, in loops the compiler vectorizes.
    constexpr int64_t kColumns = 256;
#pragma omp parallel for schedule(static)
    for (int64_t j0 = 0; j0 < n; j0 += kColumns) {
        const int64_t j1 = std::min(n, j0 + kColumns);
        int32_t sums[kColumns] = {};
        if (transB) {
            for (int64_t j = j0; j < j1; ++j)
                for (int64_t p = 0; p < k; ++p) sums[j - j0] += b[j * ldb + p];
        } else {
            for (int64_t p = 0; p < k; ++p) {
                const int8_t* row = b + p * ldb + j0;
                for (int64_t j = 0; j < j1 - j0; ++j) sums[j] += row[j];
            }
        }
        for (int64_t j = j0; j < j1; ++j) columnTerms[size_t(j)] = uint32_t(az * int64_t(sums[j - j0]));
    }
    std::vector<int32_t> highProducts(size_t(m * n));
    const int32_t noOffset = 0;
    const char tb = transB ? 'T' : 'N';
    dnnl_gemm_u8s8s32('N', tb, 'F', m, n, k, 1.0f, high.data(), k, 0, b, ldb, 0, 0.0f, highProducts.data(), n, &noOffset);
    dnnl_gemm_u8s8s32('N', tb, 'F', m, n, k, 1.0f, low.data(), k, 0, b, ldb, 0, 0.0f, c, ldc, &noOffset);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < m; ++i) {
        const uint32_t rowTerm = rowTerms[size_t(i)];
        const int32_t* highRow = highProducts.data() + i * n;
        int32_t* out = c + i * ldc;
        for (int64_t j = 0; j < n; ++j)
            out[j] = int32_t(uint32_t(out[j]) + (uint32_t(highRow[j]) << 7) + rowTerm - columnTerms[size_t(j)]);
    }
}

namespace {

// An operand stored as uint8, as int8 (its top bit flipped), for oneDNN's GEMM. Bytes between
// rows (ld past the row's length) are left unwritten: nothing reads them.
std::unique_ptr<int8_t[]> flippedCopy(bool trans, int64_t rows, int64_t columns, const int8_t* x, int64_t ld) {
    const int64_t outer = trans ? columns : rows, inner = trans ? rows : columns;
    auto copy = std::make_unique_for_overwrite<int8_t[]>(size_t(outer * ld));
#pragma omp parallel for schedule(static) if (outer * inner > (1 << 16))
    for (int64_t r = 0; r < outer; ++r)
        for (int64_t i = 0; i < inner; ++i) copy[size_t(r * ld + i)] = int8_t(x[r * ld + i] ^ 0x80);
    return copy;
}

}  // namespace

namespace {

// oneDNN 2.6 runs a reference loop for its GEMM with zero points under AVX-VNNI alone.
bool avxVnniOnly() {
    static const bool only = oneDnnInt8IsExact() && !oneDnnIsaIncludes(dnnl_cpu_isa_avx512_core_vnni);
    return only;
}

}  // namespace

bool int8GemmReadsUint8InPlace() {
#if defined(__x86_64__) || defined(__i386__)
    static const bool inPlace = __builtin_cpu_supports("avx2") &&
                                (!oneDnnInt8IsExact() || (avxVnniOnly() && __builtin_cpu_supports("avxvnni")));
    return inPlace;
#else
    return false;
#endif
}

void gemmS8S8(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda,
              int8_t aZero, const int8_t* b, int64_t ldb, int8_t bZero, int32_t* c, int64_t ldc,
              PackedRowsCache* constantA, Uint8Operands stored) {
    if (m == 0 || n == 0) return;
    if (avxVnniOnly() &&
        gemmS8S8WithAvxVnni(transA, transB, m, n, k, a, lda, aZero, b, ldb, bZero, c, ldc, constantA, stored))
        return;
    if (!oneDnnInt8IsExact()) {
        if (gemmS8S8WithNarrowA(transA, transB, m, n, k, a, lda, aZero, b, ldb, bZero, c, ldc, constantA, stored))
            return;
        if (gemmS8S8ByWidening(transA, transB, m, n, k, a, lda, aZero, b, ldb, bZero, c, ldc, constantA, stored))
            return;
    }
    if (oneDnnInt8IsExact() && !avxVnniOnly() && stored.a && !stored.b) {
        // uint8 A (an NHWC image, a MatMul's activations) by int8 B: oneDNN's u8 x s8 GEMM
        // reads A as it is, where its s8 x s8 one needs the flipped copy and compensates
        // inside (1.26 against 2.08 ms over MobileNetV2's pointwise shapes on Zen 4).
        const int32_t noOffset = 0;
        dnnl_gemm_u8s8s32(transA ? 'T' : 'N', transB ? 'T' : 'N', 'F', m, n, k, 1.0f, reinterpret_cast<const uint8_t*>(a),
                          lda, uint8_t(int(aZero) + 128), b, ldb, bZero, 0.0f, c, ldc, &noOffset);
        return;
    }
    std::unique_ptr<int8_t[]> aCopy, bCopy;
    if (stored.a) a = (aCopy = flippedCopy(transA, m, k, a, lda)).get();
    if (stored.b) b = (bCopy = flippedCopy(transB, k, n, b, ldb)).get();
    if (!oneDnnInt8IsExact())
        return gemmS8S8BySplitting(transA, transB, m, n, k, a, lda, aZero, b, ldb, bZero, c, ldc);
    const int32_t noOffset = 0;
    dnnl_gemm_s8s8s32(transA ? 'T' : 'N', transB ? 'T' : 'N', 'F', m, n, k, 1.0f, a, lda, aZero, b, ldb, bZero, 0.0f,
                      c, ldc, &noOffset);
}

}  // namespace fsc::cpu
