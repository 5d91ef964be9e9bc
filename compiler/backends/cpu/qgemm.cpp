// com.microsoft.QGemm: Y = alpha (A - a_zero)(B - b_zero) + C, with C in the int32
// accumulator's units, requantized to 8 bits with y_scale and y_zero_point, or as float
// without them. What ONNX Runtime's quantizer and qdq-folding write for a QDQ Gemm (a
// classifier's last layer). The product is the int8 GEMM's (int8_products.h); the
// requantization is QLinearConv's arithmetic, per output column. With uint8 A, constant int8 B
// (zero point 0) and 8-bit output, on a CPU with AVX-512 VNNI, a few rows of A (a classifier
// at batch 1) go through the 1x1 convolution's VNNI kernel instead, requantized in registers,
// its blocks of 16 columns shared by the threads: through the GEMM, MobileNetV2's 1280 -> 1000
// classifier took 0.22 ms at one thread, ONNX Runtime's 0.09.
#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <vector>

#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/backends/cpu/int8_products.h"
#include "compiler/backends/cpu/qlinear_conv_vnni.h"
#include "compiler/backends/cpu/requantize.h"
#include "compiler/runtime/thread_pool.h"

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
        const int32_t* bias = nullptr;
        int64_t biasRowStride = 0;
        if (c) {
            if (c->dtype != DType::Int32) return bad(ctx, "C must be int32");
            if (c->numel() == n && (c->rank() <= 1 || c->dims[0] == 1)) biasRowStride = 0;
            else if (c->rank() == 2 && c->dims[0] == m && c->dims[1] == n) biasRowStride = n;
            else return bad(ctx, "C " + dimsString(c->dims) + " does not fit Y [" + std::to_string(m) + ", " + std::to_string(n) + "]");
            bias = c->as<int32_t>();
        }
        const float aScale = float(elementAsDouble(*as, 0));
        std::vector<float> scale(static_cast<size_t>(n));
        const float yScale = ys ? float(elementAsDouble(*ys, 0)) : 1.0f;
        for (int64_t j = 0; j < n; ++j)
            scale[size_t(j)] = m_alpha * aScale * float(elementAsDouble(*bs, bs->numel() > 1 ? j : 0)) / yScale;
        const DType outType = ys ? (yz ? yz->dtype : a->dtype) : DType::Float32;
        const float yZero = yz ? float(elementAsDouble(*yz, 0)) : 0.0f;
        const bool finite = std::all_of(scale.begin(), scale.end(), [](float v) { return std::isfinite(v); });
        if (ys && (outType == DType::UInt8 || outType == DType::Int8) && biasRowStride == 0 && finite)
            if (const VnniPointwiseWeights* packed = vnniWeights(ctx, *a, az, *b, bz, m, k, n)) {
                auto y = ctx.output(0, outType, {m, n});
                if (!y) return y.status();
                Requantization rq;
                rq.scale = std::move(scale);
                rq.bias = bias ? std::vector<int32_t>(bias, bias + n) : std::vector<int32_t>(size_t(n), 0);
                rq.yZero = yZero;
                rq.outType = outType;
                rq.finite = true;
                const int32_t aZero = az ? int32_t(elementAsInt(*az, 0)) : 0;
                ctx.pool().parallelFor(vnniBlocks(*packed), 4, [&](int64_t first, int64_t last) {
                    vnniPointwiseBlocks(a->as<uint8_t>(), m, aZero, *packed, rq, outType == DType::Int8, (*y)->data, first, last);
                });
                return Status::ok();
            }
        std::unique_lock<std::mutex> keep(m_mutex, std::defer_lock);  // a plan may run on several threads
        if (m_transB) keep.lock();
        const RtTensor& bk = m_transB ? transposedB(ctx, *b) : *b;
        if (!fitsInt8Gemm(*a, az, bk, bz, 1)) return bad(ctx, "A and B must be 8-bit with zero points of their type");
        auto acc = int8MatMul(ctx, *a, az, bk, bz);
        if (!acc) return acc.status();
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
        auto y = ctx.output(0, outType, {m, n});
        if (!y) return y.status();
        if (outType == DType::UInt8) requantizeColumns(pa, bias, biasRowStride, m, n, scale, yZero, (*y)->as<uint8_t>());
        else if (outType == DType::Int8) requantizeColumns(pa, bias, biasRowStride, m, n, scale, yZero, (*y)->as<int8_t>());
        else return unsupportedType(ctx, outType);
        return Status::ok();
    }

private:
    // Rows of A that the VNNI kernel takes: each of its tiles reads a block of B's columns
    // once for five rows, where the GEMM's blocking reuses B more.
    static constexpr int64_t kMaxVnniRows = 16;

    // B packed for vnniPointwise, where the kernel takes this product (see the file's top),
    // packed once.
    const VnniPointwiseWeights* vnniWeights(KernelContext& ctx, const RtTensor& a, const RtTensor* az,
                                            const RtTensor& b, const RtTensor* bz, int64_t m, int64_t k, int64_t n) {
        if (m > kMaxVnniRows || k % 4 || a.dtype != DType::UInt8 || b.dtype != DType::Int8 || !ctx.inputConstant(3) ||
            !vnniPointwiseAvailable())
            return nullptr;
        if (az && az->dtype != DType::UInt8) return nullptr;
        for (int64_t j = 0; bz && j < bz->numel(); ++j)
            if (elementAsInt(*bz, j) != 0) return nullptr;
        std::lock_guard<std::mutex> keep(m_mutex);
        if (m_vnniSource != b.data) {
            std::vector<int8_t> rows(size_t(n * k));  // [N, K]
            const auto* from = b.as<int8_t>();
            for (int64_t j = 0; j < n; ++j)
                for (int64_t p = 0; p < k; ++p) rows[size_t(j * k + p)] = m_transB ? from[j * k + p] : from[p * n + j];
            m_vnni = packVnniPointwise(rows.data(), n, k);
            m_vnniSource = b.data;
        }
        return &m_vnni;
    }

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
    VnniPointwiseWeights m_vnni;
    const void* m_vnniSource = nullptr;
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
