// CPU kernels of the ai.fusescope domain: the ops the compiler's fusion passes create.
// Their semantics are documented in docs/fused_ops.md; each equals the ONNX subgraph it
// replaces. Conv, Gemm and MatMul with an epilogue run the standard kernel and then apply
// bias and activation to its output while it is still in cache.
#include <algorithm>
#include <cmath>

#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/backends/cpu/cpu_provider.h"
#include "compiler/backends/cpu/activation.h"
#include "compiler/backends/cpu/average_pool_nhwc.h"
#include "compiler/backends/cpu/fused_kernels.h"
#include "compiler/backends/cpu/vector_math.h"
#include "compiler/runtime/execution_plan.h"
#include "compiler/runtime/first_output_context.h"
#include "compiler/runtime/fused_domain.h"

namespace fsc {
namespace {

using cpu::Activation;
using cpu::bad;

// Conv / Gemm / MatMul followed by an optional per-column bias (FusedMatMul's third
// input) and an activation, applied in place in cache-sized chunks.
class EpilogueKernel : public Kernel {
public:
    EpilogueKernel(std::unique_ptr<Kernel> inner, Activation act, int biasInput)
        : m_inner(std::move(inner)), m_act(act), m_biasInput(biasInput) {}

    Status compute(KernelContext& ctx) override {
        FirstOutputContext capture(ctx);
        FSC_RETURN_IF_ERROR(m_inner->compute(capture));
        RtTensor* out = capture.first();
        if (!out) return bad(ctx, "the inner kernel produced no output");
        const RtTensor* bias = m_biasInput >= 0 ? ctx.input(size_t(m_biasInput)) : nullptr;
        const int64_t cols = out->rank() ? out->dims.back() : 1;
        if (bias && bias->numel() != cols) return bad(ctx, "bias must have one value per output column");
        return cpu::dispatchFloat(ctx, out->dtype, [&](auto tag) -> Status {
            using T = decltype(tag);
            T* y = out->template as<T>();
            const T* b = bias ? bias->template as<T>() : nullptr;
            if (bias && bias->dtype != out->dtype) return bad(ctx, "bias dtype differs from the output's");
            if (!b) {  // the activation alone: long flat chunks, so its loops run full width
                constexpr int64_t kChunk = 16384;
                ctx.pool().parallelFor(out->numel(), kChunk, [&](int64_t i0, int64_t i1) { m_act.apply(y + i0, i1 - i0); });
                return Status::ok();
            }
            const int64_t rows = cols ? out->numel() / cols : 0;
            ctx.pool().parallelFor(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(cols, 1)), [&](int64_t r0, int64_t r1) {
                for (int64_t r = r0; r < r1; ++r) {
                    T* row = y + r * cols;
                    if (b)
                        for (int64_t c = 0; c < cols; ++c) row[c] += b[c];
                    m_act.apply(row, cols);
                }
            });
            return Status::ok();
        });
    }

private:
    std::unique_ptr<Kernel> m_inner;
    Activation m_act;
    int m_biasInput;
};

KernelFactory withEpilogue(const char* innerOp, int biasInput) {
    return [innerOp, biasInput](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        auto act = Activation::fromInit(init);
        if (!act) return act.status();
        const int64_t opset = init.lowering() ? init.lowering()->opsetFor("") : 17;
        const KernelDef* def = cpuKernels().find("", innerOp, opset, Backend::Cpu);
        if (!def) return Status(ErrorCode::Unsupported, std::string("no CPU kernel for ") + innerOp);
        auto inner = def->factory(init);
        if (!inner) return inner.status();
        return std::unique_ptr<Kernel>(new EpilogueKernel(std::move(*inner), *act, biasInput));
    };
}

// y = x / sqrt(mean(x^2 over the last axes) + epsilon) * scale.
KernelFactory rmsNorm() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const float eps = init.getFloat("epsilon", 1e-6f);
        const int64_t axisAttr = init.getInt("axis", -1);
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const RtTensor* scale = ctx.input(1);
            if (!x || !scale) return bad(ctx, "needs X and scale");
            const int64_t rank = int64_t(x->rank());
            const int64_t axis = axisAttr < 0 ? axisAttr + rank : axisAttr;
            if (axis < 0 || axis >= rank) return bad(ctx, "axis out of range");
            int64_t len = 1;
            for (int64_t d = axis; d < rank; ++d) len *= x->dims[size_t(d)];
            if (scale->numel() != len) return bad(ctx, "scale must cover the normalized dims");
            auto out = ctx.output(0, x->dtype, x->dims);
            if (!out) return out.status();
            return cpu::dispatchFloat(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                const T* px = x->as<T>();
                const T* g = scale->as<T>();
                T* py = (*out)->template as<T>();
                const int64_t rows = len ? x->numel() / len : 0;
                ctx.pool().parallelFor(rows, 1, [&](int64_t r0, int64_t r1) {
                    for (int64_t r = r0; r < r1; ++r) {
                        const T* src = px + r * len;
                        if constexpr (std::is_same_v<T, float>) {
                            const float inv = float(1.0 / std::sqrt(cpu::meanSquare(src, len) + double(eps)));
                            cpu::normalizeArray(src, 0.f, inv, g, nullptr, py + r * len, len);
                            continue;
                        }
                        double s = 0;
                        for (int64_t i = 0; i < len; ++i) s += double(src[i]) * double(src[i]);
                        const T inv = T(1.0 / std::sqrt(s / double(len) + double(eps)));
                        for (int64_t i = 0; i < len; ++i) py[r * len + i] = src[i] * inv * g[i];
                    }
                });
                return Status::ok();
            });
        }));
    };
}

// (input, skip, gamma, beta) -> (LayerNorm(input + skip) over the last axis, input + skip).
KernelFactory skipLayerNorm() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const float eps = init.getFloat("epsilon", 1e-5f);
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const RtTensor* skip = ctx.input(1);
            const RtTensor* gamma = ctx.input(2);
            const RtTensor* beta = ctx.input(3);
            if (!x || !skip || !gamma || x->rank() == 0) return bad(ctx, "needs input, skip and gamma");
            if (skip->dims != x->dims) return bad(ctx, "skip must have the input's shape");
            const int64_t len = x->dims.back();
            if (gamma->numel() != len || (beta && beta->numel() != len))
                return bad(ctx, "gamma and beta must have one value per element of the last axis");
            auto out = ctx.output(0, x->dtype, x->dims);
            if (!out) return out.status();
            RtTensor* sumOut = nullptr;
            if (ctx.outputWanted(1)) {
                auto s = ctx.output(1, x->dtype, x->dims);
                if (!s) return s.status();
                sumOut = *s;
            }
            return cpu::dispatchFloat(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                const T *px = x->as<T>(), *ps = skip->as<T>(), *g = gamma->as<T>();
                const T* b = beta ? beta->as<T>() : nullptr;
                T* py = (*out)->template as<T>();
                T* psum = sumOut ? sumOut->template as<T>() : nullptr;
                const int64_t rows = len ? x->numel() / len : 0;
                ctx.pool().parallelFor(rows, std::max<int64_t>(1, 8192 / len), [&](int64_t r0, int64_t r1) {
                    std::vector<T> scratch(psum ? 0 : static_cast<size_t>(len));
                    for (int64_t r = r0; r < r1; ++r) {
                        // The sum goes straight to the second output when it is wanted.
                        T* sum = psum ? psum + r * len : scratch.data();
                        const T* xr = px + r * len;
                        const T* sr = ps + r * len;
                        T* yr = py + r * len;
                        double mu = 0, variance = 0;
                        if constexpr (std::is_same_v<T, float>) {  // in vector lanes
                            cpu::addArrays(xr, sr, sum, len);
                            cpu::meanVariance(sum, len, mu, variance);
                            cpu::normalizeArray(sum, float(mu), float(1.0 / std::sqrt(variance + double(eps))), g, b, yr, len);
                        } else {
                            for (int64_t i = 0; i < len; ++i) sum[i] = xr[i] + sr[i];
                            for (int64_t i = 0; i < len; ++i) mu += sum[i];
                            mu /= double(len);
                            for (int64_t i = 0; i < len; ++i) variance += (sum[i] - mu) * (sum[i] - mu);
                            variance /= double(len);
                            const T inv = T(1.0 / std::sqrt(variance + double(eps)));
                            const T m = T(mu);
                            for (int64_t i = 0; i < len; ++i) yr[i] = (sum[i] - m) * inv * g[i] + (b ? b[i] : T(0));
                        }
                    }
                });
                return Status::ok();
            });
        }));
    };
}

// Reuses a standard op's kernel under the fused domain (same semantics, any opset).
KernelFactory sameAs(const char* op) {
    return [op](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const KernelDef* def = cpuKernels().find("", op, 17, Backend::Cpu);
        if (!def) return Status(ErrorCode::Unsupported, std::string("no CPU kernel for ") + op);
        return def->factory(init);
    };
}

void addFused(KernelRegistry& r, const char* op, KernelFactory factory, const char* variant) {
    KernelDef def;
    def.domain = kFusescopeDomain;
    def.op = op;
    def.variant = variant;
    def.factory = std::move(factory);
    r.add(std::move(def));
}

}  // namespace

void registerFusedKernels(KernelRegistry& registry) {
    addFused(registry, "FusedConv", cpu::fusedConv(), "epilogue");
    addFused(registry, "MaxPool", cpu::channelsLastMaxPool(), "channels_last");
    addFused(registry, "AveragePool", cpu::channelsLastAveragePool(), "channels_last");
    addFused(registry, "FusedGemm", withEpilogue("Gemm", -1), "epilogue");
    addFused(registry, "FusedMatMul", withEpilogue("MatMul", 2), "epilogue");
    addFused(registry, "Gelu", sameAs("Gelu"), "ref");
    addFused(registry, "LayerNormalization", sameAs("LayerNormalization"), "ref");
    addFused(registry, "RmsNorm", rmsNorm(), "ref");
    addFused(registry, "SkipLayerNorm", skipLayerNorm(), "ref");
    addFused(registry, "Attention", cpu::attention(), "rowwise");
    addFused(registry, "FusedElementwise", cpu::fusedElementwise(), "program");
}

}  // namespace fsc
