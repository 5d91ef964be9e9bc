// ONNX Runtime's com.microsoft ops that its graph optimizer writes into a model saved after
// optimization (SessionOptions.optimized_model_filepath, Optimum's --optimize, its
// transformers optimizer): Gelu, BiasGelu, FastGelu, QuickGelu, SkipLayerNormalization and
// FusedMatMul, as its contrib op documentation defines them. Without them such a model
// stopped at its first node. (Attention and EmbedLayerNormalization, MatMulIntegerToFloat and
// DynamicQuantizeMatMul have their own files; the quantized ops theirs.)
#include <algorithm>
#include <cmath>
#include <cstring>

#include "compiler/backends/cpu/activation.h"
#include "compiler/backends/cpu/contrib_kernels.h"
#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/backends/cpu/vector_math.h"
#include "compiler/runtime/thread_pool.h"
#include "core/fused_matmul_axes.h"

namespace fsc::cpu {
namespace {

// act(x + bias), the bias (optional, input 1) one value per element of the last axis.
KernelFactory biasActivation(Activation act, bool biasRequired) {
    return [=](const KernelInit&) -> Result<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const RtTensor* bias = ctx.input(1);
            if (!x || (biasRequired && !bias)) return bad(ctx, biasRequired ? "needs A and B" : "needs X");
            const int64_t cols = x->rank() ? x->dims.back() : 1;
            if (bias && (bias->numel() != cols || bias->dtype != x->dtype))
                return bad(ctx, "the bias must have one value of X's type per element of X's last axis");
            auto y = ctx.output(0, x->dtype, x->dims);
            if (!y) return y.status();
            return dispatchFloat(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                const T* px = x->as<T>();
                const T* pb = bias ? bias->as<T>() : nullptr;
                T* py = (*y)->template as<T>();
                const int64_t rows = cols ? x->numel() / cols : 0;
                ctx.pool().parallelFor(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(cols, 1)),
                                       [&](int64_t r0, int64_t r1) {
                                           for (int64_t r = r0; r < r1; ++r) {
                                               const T* in = px + r * cols;
                                               T* out = py + r * cols;
                                               for (int64_t c = 0; c < cols; ++c) out[c] = pb ? T(in[c] + pb[c]) : in[c];
                                               act.apply(out, cols);
                                           }
                                       });
                return Status::ok();
            });
        }));
    };
}

// The norms over the last axis, of input + skip + bias where there is a skip:
//   SkipLayerNormalization (input, skip, gamma, beta, bias) -> (output, mean, inv_std_var,
//     input_skip_bias_sum): LayerNormalization;
//   SkipSimplifiedLayerNormalization (input, skip, gamma, bias) -> the same outputs: RMS
//     normalization (no mean taken, no beta; its mean output is 0);
//   SimplifiedLayerNormalization (X, scale) -> (Y, inv_std_var): RMS normalization alone.
struct NormForm {
    bool skip, simplified;
};

class SkipLayerNormalizationKernel : public Kernel {
public:
    SkipLayerNormalizationKernel(float epsilon, NormForm form) : m_epsilon(epsilon), m_form(form) {}

    Status compute(KernelContext& ctx) override {
        const bool skipped = m_form.skip, simplified = m_form.simplified;
        const RtTensor* x = ctx.input(0);
        const RtTensor* skip = skipped ? ctx.input(1) : nullptr;
        const RtTensor* gamma = ctx.input(skipped ? 2 : 1);
        const RtTensor* beta = simplified ? nullptr : ctx.input(3);
        const RtTensor* bias = skipped ? ctx.input(simplified ? 3 : 4) : nullptr;
        if (!x || (skipped && !skip) || !gamma || x->rank() == 0)
            return bad(ctx, skipped ? "needs input, skip and gamma" : "needs X and scale");
        if (!skipped) skip = x;  // checked like a skip, never added
        if (x->dtype != DType::Float32) return unsupportedType(ctx, x->dtype);
        const int64_t len = x->dims.back(), rows = len ? x->numel() / len : 0;
        // skip is input's shape, or [.., seq, hidden] broadcast over the batch.
        if (skip->numel() == 0 || x->numel() % skip->numel() || skip->dims.back() != len)
            return bad(ctx, "skip " + dimsString(skip->dims) + " does not fit input " + dimsString(x->dims));
        for (const RtTensor* v : {gamma, beta, bias})
            if (v && (v->numel() != len || v->dtype != x->dtype))
                return bad(ctx, "gamma, beta and bias must be float32 with one value per element of the last axis");
        auto y = ctx.output(0, DType::Float32, x->dims);
        if (!y) return y.status();
        std::vector<int64_t> statDims = x->dims;
        statDims.back() = 1;
        float *mean = nullptr, *invStd = nullptr, *sumOut = nullptr;
        auto optional = [&](size_t i, const std::vector<int64_t>& dims, float*& to) -> Status {
            if (!ctx.outputWanted(i)) return Status::ok();
            auto out = ctx.output(i, DType::Float32, dims);
            if (!out) return out.status();
            to = (*out)->as<float>();
            return Status::ok();
        };
        if (skipped) {
            FSC_RETURN_IF_ERROR(optional(1, statDims, mean));
            FSC_RETURN_IF_ERROR(optional(2, statDims, invStd));
            FSC_RETURN_IF_ERROR(optional(3, x->dims, sumOut));
        } else {
            FSC_RETURN_IF_ERROR(optional(1, statDims, invStd));
        }
        const float *px = x->as<float>(), *ps = skip->as<float>(), *g = gamma->as<float>();
        const float* b = beta ? beta->as<float>() : nullptr;
        const float* pbias = bias ? bias->as<float>() : nullptr;
        const int64_t skipRows = skip->numel() / len;
        float* py = (*y)->as<float>();
        ctx.pool().parallelFor(rows, std::max<int64_t>(1, 8192 / std::max<int64_t>(len, 1)), [&](int64_t r0, int64_t r1) {
            std::vector<float> scratch(sumOut ? 0 : static_cast<size_t>(len));
            for (int64_t r = r0; r < r1; ++r) {
                float* sum = sumOut ? sumOut + r * len : scratch.data();
                if (skipped) addArrays(px + r * len, ps + (r % skipRows) * len, sum, len);
                else std::memcpy(sum, px + r * len, size_t(len) * sizeof(float));
                if (pbias) addArrays(sum, pbias, sum, len);
                double mu = 0, variance = 0;
                if (simplified) variance = meanSquare(sum, len);
                else meanVariance(sum, len, mu, variance);
                const float inv = float(1.0 / std::sqrt(variance + double(m_epsilon)));
                normalizeArray(sum, float(mu), inv, g, b, py + r * len, len);
                if (mean) mean[r] = float(mu);
                if (invStd) invStd[r] = inv;
            }
        });
        return Status::ok();
    }

private:
    float m_epsilon;
    NormForm m_form;
};

// FusedMatMul (A, B): alpha x op(A) op(B) (ONNX Runtime's MatMul, Transposes and Mul folded
// together), op reading each operand's axes in fusedMatMulAxes' order.
class FusedMatMulKernel : public Kernel {
public:
    FusedMatMulKernel(float alpha, bool transA, bool transB, bool transBatchA, bool transBatchB)
        : m_alpha(alpha), m_trans{transA, transB}, m_transBatch{transBatchA, transBatchB} {}

    Status compute(KernelContext& ctx) override {
        const RtTensor* in[2] = {ctx.input(0), ctx.input(1)};
        if (!in[0] || !in[1]) return bad(ctx, "needs A and B");
        RtTensor moved[2];
        for (int i = 0; i < 2; ++i) {
            const size_t rank = in[i]->rank();
            if (m_transBatch[i] && (rank < 3 || in[0]->rank() != in[1]->rank()))
                return bad(ctx, "transBatchA / transBatchB need A and B of one rank, 3 or more");
            const std::vector<int64_t> perm = fusedMatMulAxes(int64_t(rank), m_trans[i], m_transBatch[i]);
            bool identity = true;
            for (size_t d = 0; d < rank; ++d) identity &= perm[d] == int64_t(d);
            if (!identity) in[i] = &(moved[i] = permuted(*in[i], perm));
        }
        auto y = matMulToOutput(ctx, *in[0], *in[1]);
        if (!y) return y.status();
        if (m_alpha == 1.0f) return Status::ok();
        return dispatchFloat(ctx, (*y)->dtype, [&](auto tag) -> Status {
            using T = decltype(tag);
            T* p = (*y)->template as<T>();
            for (int64_t i = 0; i < (*y)->numel(); ++i) p[i] = T(p[i] * T(m_alpha));
            return Status::ok();
        });
    }

private:
    // out's axis d is x's axis perm[d].
    static RtTensor permuted(const RtTensor& x, const std::vector<int64_t>& perm) {
        const size_t rank = perm.size();
        std::vector<int64_t> dims(rank), inStrides(rank, 1);
        for (size_t d = rank; d-- > 1;) inStrides[d - 1] = inStrides[d] * x.dims[d];
        for (size_t d = 0; d < rank; ++d) dims[d] = x.dims[size_t(perm[d])];
        RtTensor out = allocateTensor(x.dtype, dims);
        const size_t size = x.numel() ? x.bytes() / size_t(x.numel()) : 1;
        const auto* src = static_cast<const char*>(x.data);
        auto* dst = static_cast<char*>(out.data);
        std::vector<int64_t> index(rank, 0);
        for (int64_t o = 0; o < out.numel(); ++o) {
            int64_t from = 0;
            for (size_t d = 0; d < rank; ++d) from += index[d] * inStrides[size_t(perm[d])];
            std::memcpy(dst + size_t(o) * size, src + size_t(from) * size, size);
            for (size_t d = rank; d-- > 0;) {  // the next output index
                if (++index[d] < dims[d]) break;
                index[d] = 0;
            }
        }
        return out;
    }

    float m_alpha;
    bool m_trans[2], m_transBatch[2];
};

void addContrib(KernelRegistry& r, const char* op, KernelFactory factory) {
    KernelDef def;
    def.domain = "com.microsoft";
    def.op = op;
    def.factory = std::move(factory);
    r.add(std::move(def));
}

}  // namespace
}  // namespace fsc::cpu

namespace fsc {

void registerContribKernels(KernelRegistry& r) {
    using cpu::Activation;
    cpu::addContrib(r, "Gelu", cpu::biasActivation({Activation::Kind::Gelu, 0, 0}, false));
    cpu::addContrib(r, "BiasGelu", cpu::biasActivation({Activation::Kind::Gelu, 0, 0}, true));
    cpu::addContrib(r, "FastGelu", cpu::biasActivation({Activation::Kind::GeluTanh, 0, 0}, false));
    cpu::addContrib(r, "QuickGelu", [](const KernelInit& init) {  // x * Sigmoid(alpha x)
        return cpu::biasActivation({Activation::Kind::Swish, init.getFloat("alpha", 1.702f), 0}, false)(init);
    });
    cpu::addContrib(r, "SkipLayerNormalization", [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(new cpu::SkipLayerNormalizationKernel(init.getFloat("epsilon", 1e-12f), {true, false}));
    });
    cpu::addContrib(r, "SkipSimplifiedLayerNormalization", [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(new cpu::SkipLayerNormalizationKernel(init.getFloat("epsilon", 1e-12f), {true, true}));
    });
    // ONNX Runtime registers SimplifiedLayerNormalization in the ONNX domain; some writers use its own.
    auto simplified = [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t axis = init.getInt("axis", -1);
        if (axis != -1) return init.invalid("SimplifiedLayerNormalization over axes other than the last (axis " + std::to_string(axis) + ") is not supported");
        return std::unique_ptr<Kernel>(new cpu::SkipLayerNormalizationKernel(init.getFloat("epsilon", 1e-5f), {false, true}));
    };
    cpu::addContrib(r, "SimplifiedLayerNormalization", simplified);
    r.add("SimplifiedLayerNormalization", simplified);
    cpu::addContrib(r, "RotaryEmbedding", cpu::rotaryEmbedding());
    cpu::addContrib(r, "GroupQueryAttention", cpu::groupQueryAttention());
    cpu::addContrib(r, "FusedMatMul", [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(new cpu::FusedMatMulKernel(
            init.getFloat("alpha", 1.0f), init.getInt("transA", 0) != 0, init.getInt("transB", 0) != 0,
            init.getInt("transBatchA", 0) != 0, init.getInt("transBatchB", 0) != 0));
    });
    cpu::addContrib(r, "Attention", cpu::contribAttention());
    cpu::addContrib(r, "EmbedLayerNormalization", cpu::embedLayerNormalization());
    cpu::addContrib(r, "MultiHeadAttention", cpu::multiHeadAttention());
    cpu::addContrib(r, "QAttention", cpu::quantizedAttention());
    cpu::addContrib(r, "QEmbedLayerNormalization", cpu::quantizedEmbedLayerNormalization());
    cpu::addContrib(r, "MatMulNBits", cpu::matMulNBits());
}

}  // namespace fsc
