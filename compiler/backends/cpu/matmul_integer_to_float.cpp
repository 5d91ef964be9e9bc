// com.microsoft.MatMulIntegerToFloat: Y = float((A - a_zero)(B - b_zero)) x (a_scale x
// b_scale) + bias, what ONNX Runtime's quantize_dynamic writes out as MatMulInteger, Cast, Mul
// and Add (integer-matmul-fusion folds them together). The product is exact in int32, then a
// multiply and an add in float32, as the unfused nodes round them: outputs equal theirs to the
// bit. With uint8 A, a constant int8 B with zero point 0 and K a multiple of 4, on a CPU with
// AVX-512 VNNI, tiles of A's rows by 64 columns run in the VNNI kernel with B packed once, the
// scaling done on the registers; the tiles are shared by our pool's threads, which keep going
// when a core is taken. Elsewhere the int8 GEMM writes the sums, which are then scaled into Y.
// com.microsoft.DynamicQuantizeMatMul (what ONNX Runtime's optimizer makes of the chain with
// its DynamicQuantizeLinear) quantizes A first and runs the same product.
#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/backends/cpu/dynamic_quantize.h"
#include "compiler/backends/cpu/int8_products.h"
#include "compiler/backends/cpu/integer_product_to_float.h"
#include "compiler/runtime/thread_pool.h"

namespace fsc::cpu {

Status IntegerProductToFloat::multiply(KernelContext& ctx, const RtTensor& a, const RtTensor* az,
                                       float aScale, const RtTensor& b, const RtTensor* bz,
                                       const RtTensor& bs, const RtTensor* bias, size_t bInput,
                                       const FloatAlloc& output) {
    if (a.rank() < 1 || b.rank() != 2 || a.dims.back() != b.dims[0])
        return bad(ctx, "cannot multiply " + dimsString(a.dims) + " by " + dimsString(b.dims) +
                            " (B must be a matrix)");
    const int64_t k = b.dims[0], n = b.dims[1], rows = k ? a.numel() / k : 0;
    if (bs.dtype != DType::Float32 || (bs.numel() != 1 && bs.numel() != n))
        return bad(ctx, "b_scale must be float32, one or one per column of B");
    if (bias && (bias->dtype != DType::Float32 || bias->numel() != n))
        return bad(ctx, "bias must be float32, one per column of B");
    if (!fitsInt8Gemm(a, az, b, bz, 1))
        return bad(ctx,
                   "A and B must be 8-bit, A with one zero point and B with one or one per column");
    std::vector<float> scale(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j)
        scale[size_t(j)] = aScale * bs.as<float>()[bs.numel() > 1 ? j : 0];
    std::vector<int64_t> dims = a.dims;
    if (dims.size() == 1)
        dims = {n};
    else
        dims.back() = n;
    auto y = output(dims);
    if (!y) return y.status();
    float* py = *y;
    const float* pbias = bias ? bias->as<float>() : nullptr;
    if (const VnniPointwiseWeights* packed = vnniWeights(ctx, a, b, bz, bInput)) {
        const int32_t aZero = az ? int32_t(elementAsInt(*az, 0)) : 0;
        const VnniFloatTerms terms = vnniFloatTerms(*packed, aZero, scale.data(), pbias);
        // Pieces of 40 rows by 4 blocks (64 columns): a piece's B (K x 64 bytes) stays in
        // L1/L2 across its rows' tiles, and a 128-token layer gives its threads dozens of
        // pieces to share.
        constexpr int64_t kRows = 40, kBlocks = 4;
        const int64_t panels = (rows + kRows - 1) / kRows,
                      groups = (vnniBlocks(*packed) + kBlocks - 1) / kBlocks;
        const auto* pa = a.as<uint8_t>();
        ctx.pool().parallelFor(panels * groups, 1, [&](int64_t first, int64_t last) {
            for (int64_t piece = first; piece < last; ++piece) {
                const int64_t group = piece / panels, r0 = piece % panels * kRows;
                const int64_t b0 = group * kBlocks,
                              b1 = std::min(vnniBlocks(*packed), b0 + kBlocks);
                vnniRowsToFloat(pa + r0 * k, std::min(kRows, rows - r0), *packed, terms,
                                py + r0 * n, b0, b1);
            }
        });
        return Status::ok();
    }
    auto acc = int8MatMul(ctx, a, az, b, bz);
    if (!acc) return acc.status();
    const int32_t* pacc = acc->as<int32_t>();
    ctx.pool().parallelFor(rows, 8, [&](int64_t first, int64_t last) {
        for (int64_t i = first; i < last; ++i) {
            const int32_t* __restrict in = pacc + i * n;
            float* __restrict out = py + i * n;
            for (int64_t j = 0; j < n; ++j) out[j] = float(in[j]) * scale[size_t(j)];
            if (pbias)
                for (int64_t j = 0; j < n; ++j) out[j] += pbias[j];
        }
    });
    return Status::ok();
}

const VnniPointwiseWeights* IntegerProductToFloat::vnniWeights(KernelContext& ctx,
                                                               const RtTensor& a, const RtTensor& b,
                                                               const RtTensor* bz, size_t bInput) {
    const int64_t k = b.dims[0], n = b.dims[1];
    if (k % 4 || a.dtype != DType::UInt8 || b.dtype != DType::Int8 || !ctx.inputConstant(bInput) ||
        !vnniPointwiseAvailable())
        return nullptr;
    for (int64_t j = 0; bz && j < bz->numel(); ++j)
        if (elementAsInt(*bz, j) != 0) return nullptr;
    std::lock_guard<std::mutex> keep(m_mutex);  // a plan may run on several threads
    if (m_source != b.data) {
        std::vector<int8_t> columns(size_t(n * k));  // B^T [N, K]
        const auto* from = b.as<int8_t>();
        for (int64_t p = 0; p < k; ++p)
            for (int64_t j = 0; j < n; ++j) columns[size_t(j * k + p)] = from[p * n + j];
        m_packed = packVnniPointwise(columns.data(), n, k);
        m_source = b.data;
    }
    return &m_packed;
}

namespace {

// The product into the kernel's output 0.
FloatAlloc firstOutput(KernelContext& ctx) {
    return [&ctx](const std::vector<int64_t>& dims) -> Result<float*> {
        auto y = ctx.output(0, DType::Float32, dims);
        if (!y) return y.status();
        return (*y)->as<float>();
    };
}

// A, B, a_scale, b_scale, a_zero_point, b_zero_point, bias
class MatMulIntegerToFloatKernel : public Kernel {
public:
    Status compute(KernelContext& ctx) override {
        const RtTensor *a = ctx.input(0), *b = ctx.input(1), *as = ctx.input(2), *bs = ctx.input(3);
        if (!a || !b || !as || !bs) return bad(ctx, "needs A, B, a_scale and b_scale");
        if (as->numel() != 1 || as->dtype != DType::Float32)
            return bad(ctx, "a_scale must be one float32");
        return m_product.multiply(ctx, *a, ctx.input(4), as->as<float>()[0], *b, ctx.input(5), *bs,
                                  ctx.input(6), 1, firstOutput(ctx));
    }

private:
    IntegerProductToFloat m_product;
};

// com.microsoft.DynamicQuantizeMatMul (A, B, b_scale, b_zero_point, bias): float A quantized
// as DynamicQuantizeLinear does, then the same product. ONNX Runtime's graph optimizer writes
// it for quantize_dynamic's chains; a model saved after its optimization holds it.
class DynamicQuantizeMatMulKernel : public Kernel {
public:
    Status compute(KernelContext& ctx) override {
        const RtTensor *a = ctx.input(0), *b = ctx.input(1), *bs = ctx.input(2);
        if (!a || !b || !bs) return bad(ctx, "needs A, B and b_scale");
        if (a->dtype != DType::Float32) return bad(ctx, "A must be float32");
        RtTensor quantized = allocateTensor(DType::UInt8, a->dims),
                 zero = allocateTensor(DType::UInt8, {});
        const DynamicQuantization q =
            dynamicQuantizeUint8(ctx.pool(), a->as<float>(), a->numel(), quantized.as<uint8_t>());
        zero.as<uint8_t>()[0] = q.zero;
        return m_product.multiply(ctx, quantized, &zero, q.scale, *b, ctx.input(3), *bs,
                                  ctx.input(4), 1, firstOutput(ctx));
    }

private:
    IntegerProductToFloat m_product;
};

}  // namespace
}  // namespace fsc::cpu

namespace fsc {

void registerMatMulIntegerToFloatKernel(KernelRegistry& r) {
    KernelDef def;
    def.domain = "com.microsoft";
    def.op = "MatMulIntegerToFloat";
    def.factory = [](const KernelInit&) -> Result<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(new cpu::MatMulIntegerToFloatKernel());
    };
    r.add(std::move(def));
    KernelDef dynamic;
    dynamic.domain = "com.microsoft";
    dynamic.op = "DynamicQuantizeMatMul";
    dynamic.factory = [](const KernelInit&) -> Result<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(new cpu::DynamicQuantizeMatMulKernel());
    };
    r.add(std::move(dynamic));
}

}  // namespace fsc
