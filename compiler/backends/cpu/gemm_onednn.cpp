#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cstdlib>
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

namespace {

// x86 int8 instructions without VNNI (vpmaddubsw) add pairs of products into int16 with
// saturation, so oneDNN's integer GEMM is exact only where VNNI is there.
bool int8GemmIsExact() {
#if defined(__x86_64__) || defined(__i386__)
    static const bool exact = [] {
        const unsigned isa = unsigned(dnnl_get_effective_cpu_isa());
        const unsigned vnni = unsigned(dnnl_cpu_isa_avx512_core_vnni) & ~unsigned(dnnl_cpu_isa_avx512_core);
        const unsigned avxVnni = unsigned(dnnl_cpu_isa_avx2_vnni) & ~unsigned(dnnl_cpu_isa_avx2);
        return (isa & vnni) == vnni || (isa & avxVnni) == avxVnni;
    }();
    return exact;
#else
    return true;
#endif
}

}  // namespace

// The product through oneDNN's float GEMM, exactly: the operands are small integers and
// K is cut into chunks short enough that every partial sum, in any order, stays an integer
// below 2^24, which float holds without rounding. Columns go in blocks to bound the copies.
void gemmS8S8ThroughFloat(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda,
                          int8_t aZero, const int8_t* b, int64_t ldb, int8_t bZero, int32_t* c, int64_t ldc) {
    if (m == 0 || n == 0) return;
    std::vector<float> af(size_t(m * k));
    int maxA = 1;
    for (int64_t i = 0; i < m; ++i)
        for (int64_t p = 0; p < k; ++p) {
            const int v = int(transA ? a[p * lda + i] : a[i * lda + p]) - aZero;
            af[size_t(i * k + p)] = float(v);
            maxA = std::max(maxA, std::abs(v));
        }
    constexpr int64_t kBlock = 1024;
    const int64_t nb = std::min(n, kBlock);
    std::vector<float> bf(size_t(k * nb)), part(size_t(m * nb));
    for (int64_t j0 = 0; j0 < n; j0 += nb) {
        const int64_t cols = std::min(nb, n - j0);
        int maxB = 1;
        for (int64_t p = 0; p < k; ++p)
            for (int64_t j = 0; j < cols; ++j) {
                const int v = int(transB ? b[(j0 + j) * ldb + p] : b[p * ldb + j0 + j]) - bZero;
                bf[size_t(p * cols + j)] = float(v);
                maxB = std::max(maxB, std::abs(v));
            }
        const int64_t chunk = std::max<int64_t>(1, (int64_t(1) << 24) / (int64_t(maxA) * maxB));
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < cols; ++j) c[i * ldc + j0 + j] = 0;
        for (int64_t p0 = 0; p0 < k; p0 += chunk) {
            const int64_t depth = std::min(chunk, k - p0);
            dnnl_sgemm('N', 'N', m, cols, depth, 1.0f, af.data() + p0, k, bf.data() + p0 * cols, cols, 0.0f, part.data(),
                       cols);
            for (int64_t i = 0; i < m; ++i)
                for (int64_t j = 0; j < cols; ++j) c[i * ldc + j0 + j] += int32_t(part[size_t(i * cols + j)]);
        }
    }
}

void gemmS8S8(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda,
              int8_t aZero, const int8_t* b, int64_t ldb, int8_t bZero, int32_t* c, int64_t ldc) {
    if (m == 0 || n == 0) return;
    if (!int8GemmIsExact())
        return gemmS8S8ThroughFloat(transA, transB, m, n, k, a, lda, aZero, b, ldb, bZero, c, ldc);
    const int32_t noOffset = 0;
    dnnl_gemm_s8s8s32(transA ? 'T' : 'N', transB ? 'T' : 'N', 'F', m, n, k, 1.0f, a, lda, aZero, b, ldb, bZero, 0.0f,
                      c, ldc, &noOffset);
}

}  // namespace fsc::cpu
