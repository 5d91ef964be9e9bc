// Dense and normalisation kernels: MatMul, Gemm, BatchNormalization, LayerNormalization,
// InstanceNormalization, GroupNormalization, LRN, Dropout, Einsum.
#include <algorithm>
#include <cmath>
#include <map>

#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/backends/cpu/einsum_products.h"
#include "compiler/backends/cpu/vector_math.h"
#include "compiler/backends/cpu/gemm.h"
#include "compiler/backends/cpu/relaid_constant.h"
#include "core/einsum_equation.h"

namespace fsc::cpu {
namespace {

// ---- MatMul --------------------------------------------------------------------------

template <typename T>
void gemmAny(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
             const T* b, int64_t ldb, T* c, int64_t ldc) {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        gemm(ta, tb, m, n, k, T(1), a, lda, b, ldb, T(0), c, ldc);
    } else {
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
                T acc = 0;
                for (int64_t p = 0; p < k; ++p)
                    acc = T(acc + (ta ? a[p * lda + i] : a[i * lda + p]) * (tb ? b[j * ldb + p] : b[p * ldb + j]));
                c[i * ldc + j] = acc;
            }
    }
}

// keptB, when given, keeps a constant float B in the layout sgemm reads fastest.
Status matMulImpl(KernelContext& ctx, const RtTensor* a, const RtTensor* b, const OutputAlloc& alloc,
                  GemmConstant* keptB = nullptr) {
    if (!a || !b || a->dtype != b->dtype) return bad(ctx, "needs two inputs of one dtype");
    if (a->rank() == 0 || b->rank() == 0) return bad(ctx, "inputs must not be scalars");
    // Promote 1-D operands as numpy does, then drop the added dims from the output.
    std::vector<int64_t> ad = a->dims, bd = b->dims;
    const bool aVec = ad.size() == 1, bVec = bd.size() == 1;
    if (aVec) ad.insert(ad.begin(), 1);
    if (bVec) bd.push_back(1);
    const int64_t m = ad[ad.size() - 2], k = ad.back(), n = bd.back();
    if (bd[bd.size() - 2] != k)
        return bad(ctx, "inner dims differ: " + dimsString(a->dims) + " x " + dimsString(b->dims));
    std::vector<int64_t> aBatch(ad.begin(), ad.end() - 2), bBatch(bd.begin(), bd.end() - 2);
    auto batch = broadcastShapes(ctx, {&aBatch, &bBatch});
    if (!batch) return batch.status();
    std::vector<int64_t> outDims = *batch;
    if (!aVec) outDims.push_back(m);
    if (!bVec) outDims.push_back(n);
    auto out = alloc(a->dtype, outDims);
    if (!out) return out.status();
    RtTensor* o = *out;
    return dispatchNumeric(ctx, a->dtype, [&](auto tag) -> Status {
        using T = decltype(tag);
        const T* pa = a->as<T>();
        const T* pb = b->as<T>();
        T* po = o->as<T>();
        const int64_t batchCount = product(*batch);
        // A weight shared by every batch: one product with the batches stacked as rows.
        if (product(bBatch) == 1 && product(aBatch) == batchCount) {
            if constexpr (std::is_same_v<T, float>) {
                if (keptB) {
                    const GemmB stored = keptB->of(*b, k, n, false);
                    gemm(false, stored.transposed, batchCount * m, n, k, 1.0f, pa, k, stored.data, stored.ld, 0.0f, po, n);
                    return Status::ok();
                }
            }
            gemmAny<T>(false, false, batchCount * m, n, k, pa, k, pb, n, po, n);
            return Status::ok();
        }
        const BroadcastRows plan = planBroadcast(*batch, {&aBatch, &bBatch});
        std::vector<int64_t> offs(2);
        for (int64_t r = 0; r < batchCount; ++r) {
            // rowOffsets works in rows of plan.rowLength; walk each element of the batch.
            const int64_t row = r / plan.rowLength, col = r % plan.rowLength;
            rowOffsets(plan, row, offs.data());
            const int64_t ia = offs[0] + col * plan.rowStride[0];
            const int64_t ib = offs[1] + col * plan.rowStride[1];
            gemmAny<T>(false, false, m, n, k, pa + ia * m * k, k, pb + ib * k * n, n, po + r * m * n, n);
        }
        return Status::ok();
    });
}

class MatMulKernel : public Kernel {
public:
    MatMulKernel(const KernelInit&, Status&) {}

    Status compute(KernelContext& ctx) override {
        return matMulImpl(
            ctx, ctx.input(0), ctx.input(1),
            [&](DType t, std::vector<int64_t> d) { return ctx.output(0, t, std::move(d)); },
            ctx.inputConstant(1) ? &m_b : nullptr);
    }

private:
    GemmConstant m_b;
};

}  // namespace

Result<RtTensor*> matMulToOutput(KernelContext& ctx, const RtTensor& a, const RtTensor& b) {
    RtTensor* written = nullptr;
    FSC_RETURN_IF_ERROR(matMulImpl(ctx, &a, &b, [&](DType t, std::vector<int64_t> d) -> Result<RtTensor*> {
        auto out = ctx.output(0, t, std::move(d));
        if (out) written = *out;
        return out;
    }));
    return written;
}

Result<RtTensor> matMulToNew(KernelContext& ctx, const RtTensor& a, const RtTensor& b) {
    RtTensor result;
    Status s = matMulImpl(ctx, &a, &b, [&](DType t, std::vector<int64_t> d) -> Result<RtTensor*> {
        result = allocateTensor(t, std::move(d));
        return &result;
    });
    if (!s.isOk()) return s;
    return result;
}

namespace {

// ---- Gemm ----------------------------------------------------------------------------

// A constant B is multiplied from a GemmConstant: untransposed (transB = 1, as PyTorch
// exports every nn.Linear on 2-D input, costs sgemm time: at M = 49, Swin's windows, 0.19 ->
// 0.13 ms) and with rows not 4 KiB apart. The copy costs its size once, not a transpose per run.
class GemmKernel : public Kernel {
public:
    GemmKernel(bool ta, bool tb, float alpha, float beta) : m_ta(ta), m_tb(tb), m_alpha(alpha), m_beta(beta) {}

    Status compute(KernelContext& ctx) override {
        const RtTensor* a = ctx.input(0);
        const RtTensor* b = ctx.input(1);
        const RtTensor* c = ctx.input(2);
        if (!a || !b || a->rank() != 2 || b->rank() != 2) return bad(ctx, "A and B must be 2-D");
        const int64_t m = m_ta ? a->dims[1] : a->dims[0], k = m_ta ? a->dims[0] : a->dims[1];
        const int64_t kb = m_tb ? b->dims[1] : b->dims[0], n = m_tb ? b->dims[0] : b->dims[1];
        if (k != kb) return bad(ctx, "inner dims differ: " + dimsString(a->dims) + " x " + dimsString(b->dims));
        auto out = ctx.output(0, a->dtype, {m, n});
        if (!out) return out.status();
        RtTensor* y = *out;
        return dispatchNumeric(ctx, a->dtype, [&](auto tag) -> Status {
            using T = decltype(tag);
            T* py = y->as<T>();
            T betaApplied = 0;
            if (c && m_beta != 0.0f) {
                std::vector<int64_t> yd{m, n};
                auto bc = broadcastShapes(ctx, {&yd, &c->dims});
                if (!bc || *bc != yd) return bad(ctx, "C " + dimsString(c->dims) + " does not broadcast to " + dimsString(yd));
                const BroadcastRows plan = planBroadcast(yd, {&yd, &c->dims});
                const T* pc = c->as<T>();
                forEachRow(ctx.pool(), plan, [&](int64_t off, const int64_t* offs) {
                    for (int64_t i = 0; i < plan.rowLength; ++i) py[off + i] = pc[offs[1] + i * plan.rowStride[1]];
                });
                betaApplied = T(m_beta);
            }
            if constexpr (std::is_same_v<T, float>) {
                if (ctx.inputConstant(1)) {
                    const GemmB stored = m_b.of(*b, k, n, m_tb);
                    gemm(m_ta, stored.transposed, m, n, k, m_alpha, a->as<float>(), a->dims[1], stored.data, stored.ld,
                         betaApplied, py, n);
                    return Status::ok();
                }
            }
            if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
                gemm(m_ta, m_tb, m, n, k, T(m_alpha), a->as<T>(), a->dims[1], b->as<T>(), b->dims[1], betaApplied, py, n);
            } else {
                std::vector<T> tmp(size_t(m * n));
                gemmAny<T>(m_ta, m_tb, m, n, k, a->as<T>(), a->dims[1], b->as<T>(), b->dims[1], tmp.data(), n);
                for (int64_t i = 0; i < m * n; ++i) py[i] = T(T(m_alpha) * tmp[size_t(i)] + betaApplied * py[i]);
            }
            return Status::ok();
        });
    }

private:
    bool m_ta, m_tb;
    float m_alpha, m_beta;
    GemmConstant m_b;
};

KernelFactory gemmOp() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const bool ta = init.getInt("transA", 0) != 0, tb = init.getInt("transB", 0) != 0;
        return std::unique_ptr<Kernel>(
            new GemmKernel(ta, tb, init.getFloat("alpha", 1.0f), init.getFloat("beta", 1.0f)));
    };
}

// ---- normalisation -------------------------------------------------------------------

KernelFactory batchNorm() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const float eps = init.getFloat("epsilon", 1e-5f);
        const float momentum = init.getFloat("momentum", 0.9f);
        const bool training = init.getInt("training_mode", 0) != 0;
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const RtTensor *scale = ctx.input(1), *bias = ctx.input(2), *mean = ctx.input(3), *var = ctx.input(4);
            if (!x || !scale || !bias || !mean || !var) return bad(ctx, "needs X, scale, B, mean and var");
            if (x->rank() < 2) return bad(ctx, "X must have a channel dim");
            const int64_t n = x->dims[0], c = x->dims[1], spatial = product(x->dims, 2);
            if (scale->numel() != c || bias->numel() != c || mean->numel() != c || var->numel() != c)
                return bad(ctx, "scale, B, mean and var must have " + std::to_string(c) + " elements");
            auto out = ctx.output(0, x->dtype, x->dims);
            if (!out) return out.status();
            return dispatchFloat(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                const T* px = x->as<T>();
                T* py = (*out)->template as<T>();
                std::vector<double> mu(static_cast<size_t>(c)), sigma2(static_cast<size_t>(c));
                for (int64_t ch = 0; ch < c; ++ch) {
                    mu[size_t(ch)] = double(mean->as<T>()[ch]);
                    sigma2[size_t(ch)] = double(var->as<T>()[ch]);
                }
                if (training) {
                    for (int64_t ch = 0; ch < c; ++ch) {
                        double s = 0, s2 = 0;
                        for (int64_t b = 0; b < n; ++b)
                            for (int64_t i = 0; i < spatial; ++i) {
                                const double v = px[(b * c + ch) * spatial + i];
                                s += v;
                                s2 += v * v;
                            }
                        const double cnt = double(n * spatial);
                        mu[size_t(ch)] = s / cnt;
                        sigma2[size_t(ch)] = s2 / cnt - mu[size_t(ch)] * mu[size_t(ch)];
                    }
                    if (ctx.outputWanted(1) && ctx.outputWanted(2)) {
                        auto rm = ctx.output(1, x->dtype, {c});
                        auto rv = ctx.output(2, x->dtype, {c});
                        if (!rm) return rm.status();
                        if (!rv) return rv.status();
                        for (int64_t ch = 0; ch < c; ++ch) {
                            (*rm)->template as<T>()[ch] = T(mean->as<T>()[ch] * momentum + mu[size_t(ch)] * (1 - momentum));
                            (*rv)->template as<T>()[ch] = T(var->as<T>()[ch] * momentum + sigma2[size_t(ch)] * (1 - momentum));
                        }
                    }
                }
                ctx.pool().parallelFor(n * c, std::max<int64_t>(1, 16384 / std::max<int64_t>(spatial, 1)), [&](int64_t b, int64_t e) {
                    for (int64_t r = b; r < e; ++r) {
                        const int64_t ch = r % c;
                        const T s = T(double(scale->as<T>()[ch]) / std::sqrt(sigma2[size_t(ch)] + eps));
                        const T sh = T(double(bias->as<T>()[ch]) - mu[size_t(ch)] * double(s));
                        const T* src = px + r * spatial;
                        T* dst = py + r * spatial;
                        for (int64_t i = 0; i < spatial; ++i) dst[i] = src[i] * s + sh;
                    }
                });
                return Status::ok();
            });
        }));
    };
}

KernelFactory layerNorm() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t axisAttr = init.getInt("axis", -1);
        const float eps = init.getFloat("epsilon", 1e-5f);
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const RtTensor* scale = ctx.input(1);
            const RtTensor* bias = ctx.input(2);
            auto axis = normAxis(ctx, axisAttr, int64_t(x->rank()));
            if (!axis) return axis.status();
            const int64_t rows = product(x->dims, 0, size_t(*axis));
            const int64_t len = product(x->dims, size_t(*axis));
            std::vector<int64_t> normDims(x->dims.begin() + *axis, x->dims.end());
            auto out = ctx.output(0, x->dtype, x->dims);
            if (!out) return out.status();
            std::vector<int64_t> statDims = x->dims;
            for (size_t d = size_t(*axis); d < statDims.size(); ++d) statDims[d] = 1;
            RtTensor* meanOut = nullptr;
            RtTensor* invOut = nullptr;
            if (ctx.outputWanted(1)) {
                auto m = ctx.output(1, DType::Float32, statDims);
                if (!m) return m.status();
                meanOut = *m;
            }
            if (ctx.outputWanted(2)) {
                auto v = ctx.output(2, DType::Float32, statDims);
                if (!v) return v.status();
                invOut = *v;
            }
            // Scale and bias broadcast over the normalised dims.
            auto expand = [&](const RtTensor* t, std::vector<double>& dst, double fallback) -> Status {
                dst.assign(size_t(len), fallback);
                if (!t) return Status::ok();
                auto bc = broadcastShapes(ctx, {&normDims, &t->dims});
                if (!bc || *bc != normDims) return bad(ctx, "scale/bias do not broadcast to the normalised dims");
                const BroadcastRows plan = planBroadcast(normDims, {&normDims, &t->dims});
                for (int64_t r = 0; r < plan.rows; ++r) {
                    int64_t offs[2];
                    rowOffsets(plan, r, offs);
                    for (int64_t i = 0; i < plan.rowLength; ++i)
                        dst[size_t(r * plan.rowLength + i)] = elementAsDouble(*t, offs[1] + i * plan.rowStride[1]);
                }
                return Status::ok();
            };
            std::vector<double> g, be;
            FSC_RETURN_IF_ERROR(expand(scale, g, 1.0));
            FSC_RETURN_IF_ERROR(expand(bias, be, 0.0));
            return dispatchFloat(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                const T* px = x->as<T>();
                T* py = (*out)->template as<T>();
                std::vector<T> gt(g.begin(), g.end()), bt(be.begin(), be.end());
                ctx.pool().parallelFor(rows, std::max<int64_t>(1, 8192 / std::max<int64_t>(len, 1)), [&](int64_t b, int64_t e) {
                    for (int64_t r = b; r < e; ++r) {
                        const T* src = px + r * len;
                        T* dst = py + r * len;
                        double mu = 0, variance = 0;
                        if constexpr (std::is_same_v<T, float>) {
                            meanVariance(src, len, mu, variance);  // in vector lanes
                        } else {
                            for (int64_t i = 0; i < len; ++i) mu += src[i];
                            mu /= double(len);
                            for (int64_t i = 0; i < len; ++i) variance += (src[i] - mu) * (src[i] - mu);
                            variance /= double(len);
                        }
                        const double inv = 1.0 / std::sqrt(variance + eps);
                        const T m = T(mu), iv = T(inv);
                        if constexpr (std::is_same_v<T, float>)
                            normalizeArray(src, m, iv, gt.data(), bt.data(), dst, len);
                        else
                            for (int64_t i = 0; i < len; ++i) dst[i] = (src[i] - m) * iv * gt[size_t(i)] + bt[size_t(i)];
                        if (meanOut) meanOut->as<float>()[r] = float(mu);
                        if (invOut) invOut->as<float>()[r] = float(inv);
                    }
                });
                return Status::ok();
            });
        }));
    };
}

// One group of `length` floats, `channels` channels of equal length, normalized with the
// threads sharing the work: chunk statistics in double, combined as Chan et al. combine
// partial means and sums of squared deviations, then the chunks normalized.
void normalizeGroupSplit(ThreadPool& pool, const float* src, float* dst, int64_t length, int64_t group, int64_t channels,
                         bool perGroupAffine, const float* scale, const float* bias, float eps) {
    const int64_t chunks = std::min<int64_t>(4 * int64_t(pool.size()), length / 4096);
    const int64_t chunk = (length + chunks - 1) / chunks;
    std::vector<double> means(static_cast<size_t>(chunks)), variances(static_cast<size_t>(chunks));
    pool.parallelFor(chunks, 1, [&](int64_t b, int64_t e) {
        for (int64_t k = b; k < e; ++k) {
            const int64_t from = k * chunk, count = std::min(length, from + chunk) - from;
            meanVariance(src + from, count, means[size_t(k)], variances[size_t(k)]);
        }
    });
    double mean = 0;
    for (int64_t k = 0; k < chunks; ++k) mean += means[size_t(k)] * double(std::min(length, (k + 1) * chunk) - k * chunk);
    mean /= double(length);
    double squares = 0;
    for (int64_t k = 0; k < chunks; ++k) {
        const double count = double(std::min(length, (k + 1) * chunk) - k * chunk), d = means[size_t(k)] - mean;
        squares += count * (variances[size_t(k)] + d * d);
    }
    const double inv = 1.0 / std::sqrt(squares / double(length) + eps);
    const int64_t channelLength = length / channels;
    pool.parallelFor(chunks, 1, [&](int64_t b, int64_t e) {
        for (int64_t k = b; k < e; ++k) {
            // Chunk k, cut where channels change so each piece has one scale and shift.
            for (int64_t at = k * chunk, end = std::min(length, (k + 1) * chunk); at < end;) {
                const int64_t k0 = at / channelLength, stop = std::min(end, (k0 + 1) * channelLength);
                const int64_t ch = perGroupAffine ? group : group * channels + k0;
                normalizeChannel(src + at, float(mean), float(inv * scale[ch]), bias[ch], dst + at, stop - at);
                at = stop;
            }
        }
    });
}

// Instance and group normalisation: statistics per (n, group) over the rest.
KernelFactory groupNorm(bool instance) {
    return [instance](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const float eps = init.getFloat("epsilon", 1e-5f);
        const int64_t groupsAttr = init.getInt("num_groups", 1);
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const RtTensor* scale = ctx.input(1);
            const RtTensor* bias = ctx.input(2);
            if (!x || !scale || !bias || x->rank() < 2) return bad(ctx, "needs X (N,C,...), scale and B");
            const int64_t n = x->dims[0], c = x->dims[1], spatial = product(x->dims, 2);
            const int64_t groups = instance ? c : groupsAttr;
            if (groups <= 0 || c % groups) return bad(ctx, "channels not divisible by num_groups");
            const bool perGroupAffine = !instance && scale->numel() == groups && groups != c;
            auto out = ctx.output(0, x->dtype, x->dims);
            if (!out) return out.status();
            return dispatchFloat(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                const T* px = x->as<T>();
                T* py = (*out)->template as<T>();
                const int64_t perGroup = c / groups * spatial;
                if constexpr (std::is_same_v<T, float>) {
                    // Fewer groups than threads over long rows (GroupNorm with one group, as
                    // PoolFormer exports it: InstanceNormalization of one instance of 200,704
                    // values): each group's statistics and normalization split over the threads.
                    if (n * groups < int64_t(ctx.pool().size()) && perGroup >= 65536) {
                        for (int64_t r = 0; r < n * groups; ++r)
                            normalizeGroupSplit(ctx.pool(), px + r * perGroup, py + r * perGroup, perGroup, r % groups,
                                                perGroupAffine ? 1 : c / groups, perGroupAffine, scale->as<float>(),
                                                bias->as<float>(), eps);
                        return Status::ok();
                    }
                }
                ctx.pool().parallelFor(n * groups, 1, [&](int64_t b, int64_t e) {
                    for (int64_t r = b; r < e; ++r) {
                        const int64_t grp = r % groups;
                        const T* src = px + r * perGroup;
                        T* dst = py + r * perGroup;
                        if constexpr (std::is_same_v<T, float>) {  // in vector lanes (vector_math.h)
                            double mean = 0, variance = 0;
                            meanVariance(src, perGroup, mean, variance);
                            const double inv = 1.0 / std::sqrt(variance + eps);
                            const int64_t channels = perGroupAffine ? 1 : c / groups, length = perGroup / channels;
                            for (int64_t k = 0; k < channels; ++k) {
                                const int64_t ch = perGroupAffine ? grp : grp * (c / groups) + k;
                                normalizeChannel(src + k * length, float(mean), float(inv * scale->as<float>()[ch]),
                                                 bias->as<float>()[ch], dst + k * length, length);
                            }
                            continue;
                        }
                        double s = 0, s2 = 0;
                        for (int64_t i = 0; i < perGroup; ++i) s += src[i];
                        const double mu = s / double(perGroup);
                        for (int64_t i = 0; i < perGroup; ++i) s2 += (src[i] - mu) * (src[i] - mu);
                        const double inv = 1.0 / std::sqrt(s2 / double(perGroup) + eps);
                        for (int64_t i = 0; i < perGroup; ++i) {
                            const int64_t ch = perGroupAffine ? grp : grp * (c / groups) + i / spatial;
                            dst[i] = T((src[i] - mu) * inv * double(scale->as<T>()[ch]) + double(bias->as<T>()[ch]));
                        }
                    }
                });
                return Status::ok();
            });
        }));
    };
}

KernelFactory lrn() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const float alpha = init.getFloat("alpha", 1e-4f), beta = init.getFloat("beta", 0.75f), bias = init.getFloat("bias", 1.0f);
        const int64_t size = init.getInt("size", 1);
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const int64_t n = x->dims[0], c = x->dims[1], spatial = product(x->dims, 2);
            auto out = ctx.output(0, x->dtype, x->dims);
            if (!out) return out.status();
            return dispatchFloat(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                const T* px = x->as<T>();
                T* py = (*out)->template as<T>();
                const int64_t lo = (size - 1) / 2, hi = (size - 1) - lo;
                for (int64_t b = 0; b < n; ++b)
                    for (int64_t ch = 0; ch < c; ++ch)
                        for (int64_t i = 0; i < spatial; ++i) {
                            double sq = 0;
                            for (int64_t k = std::max<int64_t>(0, ch - lo); k <= std::min(c - 1, ch + hi); ++k) {
                                const double v = px[(b * c + k) * spatial + i];
                                sq += v * v;
                            }
                            const int64_t at = (b * c + ch) * spatial + i;
                            py[at] = T(px[at] / std::pow(bias + alpha / double(size) * sq, double(beta)));
                        }
                return Status::ok();
            });
        }));
    };
}

Status dropout(KernelContext& ctx) {
    const RtTensor* x = ctx.input(0);
    auto out = ctx.output(0, x->dtype, x->dims);
    if (!out) return out.status();
    if (x->bytes()) std::memcpy((*out)->data, x->data, x->bytes());
    if (ctx.outputWanted(1)) {
        auto mask = ctx.output(1, DType::Bool, x->dims);
        if (!mask) return mask.status();
        std::fill((*mask)->as<bool>(), (*mask)->as<bool>() + x->numel(), true);
    }
    return Status::ok();
}

// ---- Einsum: matrix products where it is one (einsum_products), else explicit loops over
// every index (correct for any equation) ----------------------------------------------

class EinsumKernel : public Kernel {
public:
    EinsumKernel(const KernelInit& init, Status& status) {
        const std::string text = init.getString("equation", "");
        if (auto parsed = parseEinsumEquation(text)) m_equation = std::move(*parsed);
        else status = init.invalid("equation '" + text + "' is not an Einsum equation");
    }
    Status compute(KernelContext& ctx) override {
        std::vector<size_t> ranks;
        for (size_t i = 0; i < m_equation.inputs.size(); ++i) {
            if (!ctx.input(i)) return bad(ctx, "missing input");
            ranks.push_back(ctx.input(i)->rank());
        }
        const auto labels = labelEinsum(m_equation, ranks);
        if (!labels) return bad(ctx, "the equation's terms do not fit the inputs' ranks, or its output leaves out the dims '...' stands for");
        const std::vector<std::string>& terms = labels->inputs;
        const std::string& outTerm = labels->output;
        std::map<char, int64_t> sizes;
        for (size_t i = 0; i < terms.size(); ++i)
            for (size_t d = 0; d < terms[i].size(); ++d) {
                const int64_t s = ctx.input(i)->dims[d];
                auto [it, inserted] = sizes.emplace(terms[i][d], s);
                if (!inserted && it->second != s) {
                    if (it->second == 1) it->second = s;
                    else if (s != 1) return bad(ctx, "dim sizes for '" + std::string(1, terms[i][d]) + "' differ");
                }
            }
        std::vector<char> letters;
        for (auto& [ch, s] : sizes) letters.push_back(ch);
        std::vector<int64_t> outDims;
        for (char ch : outTerm) outDims.push_back(sizes[ch]);
        const DType type = ctx.input(0)->dtype;
        auto out = ctx.output(0, type, outDims);
        if (!out) return out.status();
        if (terms.size() == 2 && einsumByProducts(terms[0], terms[1], outTerm, *ctx.input(0), *ctx.input(1), **out))
            return Status::ok();
        const size_t L = letters.size();
        std::vector<int64_t> letterSize(L);
        std::map<char, size_t> letterIndex;
        for (size_t l = 0; l < L; ++l) {
            letterSize[l] = sizes[letters[l]];
            letterIndex[letters[l]] = l;
        }
        // Strides of each letter in each input (0 for size-1 broadcast) and in the output.
        std::vector<std::vector<int64_t>> inStride(terms.size(), std::vector<int64_t>(L, 0));
        for (size_t i = 0; i < terms.size(); ++i) {
            const auto st = stridesOf(ctx.input(i)->dims);
            for (size_t d = 0; d < terms[i].size(); ++d)
                if (ctx.input(i)->dims[d] != 1) inStride[i][letterIndex[terms[i][d]]] += st[d];
        }
        std::vector<int64_t> outStride(L, 0);
        const auto ost = stridesOf(outDims);
        for (size_t d = 0; d < outTerm.size(); ++d) outStride[letterIndex[outTerm[d]]] = ost[d];
        return dispatchNumeric(ctx, type, [&](auto tag) -> Status {
            using T = decltype(tag);
            T* po = (*out)->template as<T>();
            std::fill(po, po + (*out)->numel(), T(0));
            int64_t total = 1;
            for (int64_t s : letterSize) total *= s;
            std::vector<int64_t> idx(L, 0);
            for (int64_t it = 0; it < total; ++it) {
                T v = T(1);
                for (size_t i = 0; i < terms.size(); ++i) {
                    int64_t off = 0;
                    for (size_t l = 0; l < L; ++l) off += idx[l] * inStride[i][l];
                    v = T(v * ctx.input(i)->template as<T>()[off]);
                }
                int64_t o = 0;
                for (size_t l = 0; l < L; ++l) o += idx[l] * outStride[l];
                po[o] = T(po[o] + v);
                for (size_t l = L; l-- > 0;) {
                    if (++idx[l] < letterSize[l]) break;
                    idx[l] = 0;
                }
            }
            return Status::ok();
        });
    }

private:
    EinsumEquation m_equation;
};

}  // namespace
}  // namespace fsc::cpu

namespace fsc {
using namespace cpu;

void registerNnKernels(KernelRegistry& r) {
    r.add("MatMul", factoryOf<MatMulKernel>(), {.variant = "onednn"});
    r.add("Gemm", gemmOp(), {.variant = "onednn"});
    r.add("BatchNormalization", batchNorm());
    r.add("LayerNormalization", layerNorm());
    r.add("InstanceNormalization", groupNorm(true));
    r.add("GroupNormalization", groupNorm(false));
    r.add("LRN", lrn());
    r.add("Dropout", functionKernel(dropout));
    r.add("Einsum", factoryOf<EinsumKernel>());
}

}  // namespace fsc
