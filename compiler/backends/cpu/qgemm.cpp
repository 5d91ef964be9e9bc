// com.microsoft.QGemm: Y = alpha (A - a_zero)(B - b_zero) + C, with C in the int32
// accumulator's units, requantized to 8 bits with y_scale and y_zero_point, or as float
// without them. What ONNX Runtime's quantizer and qdq-folding write for a QDQ Gemm (a
// classifier's last layer). The product is the int8 GEMM's (int8_products.h); the
// requantization is QLinearConv's arithmetic, per output column.
#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <vector>

#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/backends/cpu/int8_products.h"
#include "compiler/backends/cpu/requantize.h"

namespace fsc::cpu {
namespace {

// QLinearConv's requantization (requantize.h), each element with its column's scale.
template <typename Q>
void requantizeColumns(const int32_t* acc, const int32_t* bias, int64_t biasRowStride, int64_t m, int64_t n,
                       const std::vector<float>& scale, float yZero, Q* y) {
    const std::vector<int32_t> zeros(bias ? 0 : size_t(n), 0);
    const bool finite = std::all_of(scale.begin(), scale.end(), [](float s) { return std::isfinite(s); });
    for (int64_t i = 0; i < m; ++i)
        requantizeChannels(acc + i * n, y + i * n, n, bias ? bias + i * biasRowStride : zeros.data(), scale.data(), yZero,
                           finite);
}

class QGemmKernel : public Kernel {
public:
    explicit QGemmKernel(const KernelInit& init)
        : m_alpha(init.getFloat("alpha", 1.0f)), m_transA(init.getInt("transA", 0) != 0),
          m_transB(init.getInt("transB", 0) != 0) {}

    Status compute(KernelContext& ctx) override {
        // A, a_scale, a_zero_point, B, b_scale, b_zero_point, C, y_scale, y_zero_point
        const RtTensor *a = ctx.input(0), *as = ctx.input(1), *az = ctx.input(2), *b = ctx.input(3),
                       *bs = ctx.input(4), *bz = ctx.input(5), *c = ctx.input(6), *ys = ctx.input(7),
                       *yz = ctx.input(8);
        if (!a || !as || !b || !bs) return bad(ctx, "needs A, a_scale, B and b_scale");
        if (m_transA) return bad(ctx, "transA = 1 is not supported");
        if (a->rank() != 2 || b->rank() != 2) return bad(ctx, "A and B must be matrices");
        const int64_t m = a->dims[0], k = a->dims[1], n = m_transB ? b->dims[0] : b->dims[1];
        if ((m_transB ? b->dims[1] : b->dims[0]) != k)
            return bad(ctx, "cannot multiply " + dimsString(a->dims) + " by " + dimsString(b->dims));
        if (as->numel() != 1 || (az && az->numel() != 1)) return bad(ctx, "a_scale and a_zero_point must be scalars");
        if ((bs->numel() != 1 && bs->numel() != n) || (bz && bz->numel() != 1 && bz->numel() != n))
            return bad(ctx, "b_scale and b_zero_point must be scalars or one per column");
        std::unique_lock<std::mutex> keep(m_mutex, std::defer_lock);  // a plan may run on several threads
        if (m_transB) keep.lock();
        const RtTensor& bk = m_transB ? transposedB(ctx, *b) : *b;
        if (!fitsInt8Gemm(*a, az, bk, bz, 1)) return bad(ctx, "A and B must be 8-bit with zero points of their type");
        const int32_t* bias = nullptr;
        int64_t biasRowStride = 0;
        if (c) {
            if (c->dtype != DType::Int32) return bad(ctx, "C must be int32");
            if (c->numel() == n && (c->rank() <= 1 || c->dims[0] == 1)) biasRowStride = 0;
            else if (c->rank() == 2 && c->dims[0] == m && c->dims[1] == n) biasRowStride = n;
            else return bad(ctx, "C " + dimsString(c->dims) + " does not fit Y [" + std::to_string(m) + ", " + std::to_string(n) + "]");
            bias = c->as<int32_t>();
        }
        auto acc = int8MatMul(ctx, *a, az, bk, bz);
        if (!acc) return acc.status();
        const float aScale = float(elementAsDouble(*as, 0));
        std::vector<float> scale(static_cast<size_t>(n));
        const float yScale = ys ? float(elementAsDouble(*ys, 0)) : 1.0f;
        for (int64_t j = 0; j < n; ++j)
            scale[size_t(j)] = m_alpha * aScale * float(elementAsDouble(*bs, bs->numel() > 1 ? j : 0)) / yScale;
        const int32_t* pa = acc->as<int32_t>();
        if (!ys) {  // float output
            auto y = ctx.output(0, DType::Float32, {m, n});
            if (!y) return y.status();
            float* py = (*y)->as<float>();
            for (int64_t i = 0; i < m; ++i)
                for (int64_t j = 0; j < n; ++j)
                    py[i * n + j] = float(int32_t(uint32_t(pa[i * n + j]) + uint32_t(bias ? bias[i * biasRowStride + j] : 0))) * scale[size_t(j)];
            return Status::ok();
        }
        const DType outType = yz ? yz->dtype : a->dtype;
        const float yZero = yz ? float(elementAsDouble(*yz, 0)) : 0.0f;
        auto y = ctx.output(0, outType, {m, n});
        if (!y) return y.status();
        if (outType == DType::UInt8) requantizeColumns(pa, bias, biasRowStride, m, n, scale, yZero, (*y)->as<uint8_t>());
        else if (outType == DType::Int8) requantizeColumns(pa, bias, biasRowStride, m, n, scale, yZero, (*y)->as<int8_t>());
        else return unsupportedType(ctx, outType);
        return Status::ok();
    }

private:
    // B [N, K] as [K, N]; a constant one is transposed once and kept.
    const RtTensor& transposedB(KernelContext& ctx, const RtTensor& b) {
        const bool constant = ctx.inputConstant(3);
        if (constant && m_bT.data && m_bSource == b.data) return m_bT;
        const int64_t n = b.dims[0], k = b.dims[1];
        m_bT = allocateTensor(b.dtype, {k, n});
        const auto* src = static_cast<const uint8_t*>(b.data);
        auto* dst = static_cast<uint8_t*>(m_bT.data);
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < k; ++j) dst[j * n + i] = src[i * k + j];
        m_bSource = constant ? b.data : nullptr;
        return m_bT;
    }

    float m_alpha;
    bool m_transA, m_transB;
    std::mutex m_mutex;
    RtTensor m_bT;
    const void* m_bSource = nullptr;
};

}  // namespace
}  // namespace fsc::cpu

namespace fsc {

void registerQGemmKernel(KernelRegistry& r) {
    KernelDef def;
    def.domain = "com.microsoft";
    def.op = "QGemm";
    def.factory = [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(new cpu::QGemmKernel(init));
    };
    r.add(std::move(def));
}

}  // namespace fsc
