// Less common ops from ONNX's operator set: the loss functions NegativeLogLikelihoodLoss
// and SoftmaxCrossEntropyLoss, EyeLike, Compress, MeanVarianceNormalization,
// ReverseSequence and Unique (NonMaxSuppression in its own file).
#include <cmath>
#include <map>
#include <numeric>

#include "compiler/backends/cpu/cpu_common.h"

namespace fsc::cpu {
namespace {

// Shared by both losses: `logp` is [N, C, d...] of log-probabilities (as double).
Status nllFromLogProb(KernelContext& ctx, const std::vector<double>& logp, const std::vector<int64_t>& dims,
                      const RtTensor& target, const RtTensor* weight, const std::string& reduction,
                      bool hasIgnore, int64_t ignoreIndex, DType outType) {
    const int64_t n = dims[0], c = dims[1], inner = product(dims, 2);
    if (target.numel() != n * inner) return bad(ctx, "target shape does not match the input");
    std::vector<double> loss(size_t(n * inner), 0.0);
    double weightSum = 0;
    for (int64_t b = 0; b < n; ++b)
        for (int64_t i = 0; i < inner; ++i) {
            const int64_t t = elementAsInt(target, b * inner + i);
            if (hasIgnore && t == ignoreIndex) continue;
            if (t < 0 || t >= c) return bad(ctx, "target class " + std::to_string(t) + " is out of range");
            const double w = weight ? elementAsDouble(*weight, t) : 1.0;
            loss[size_t(b * inner + i)] = -logp[size_t((b * c + t) * inner + i)] * w;
            weightSum += w;
        }
    if (reduction == "none") {
        std::vector<int64_t> outDims{n};
        outDims.insert(outDims.end(), dims.begin() + 2, dims.end());
        auto out = ctx.output(0, outType, outDims);
        if (!out) return out.status();
        return dispatchFloat(ctx, outType, [&](auto tag) -> Status {
            using T = decltype(tag);
            for (size_t i = 0; i < loss.size(); ++i) (*out)->template as<T>()[i] = T(loss[i]);
            return Status::ok();
        });
    }
    double total = std::accumulate(loss.begin(), loss.end(), 0.0);
    if (reduction == "mean") total = weightSum == 0 ? 0.0 : total / weightSum;
    auto out = ctx.output(0, outType, {});
    if (!out) return out.status();
    return dispatchFloat(ctx, outType, [&](auto tag) -> Status {
        using T = decltype(tag);
        (*out)->template as<T>()[0] = T(total);
        return Status::ok();
    });
}

KernelFactory nllLoss(bool softmax) {
    return [softmax](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const std::string reduction = init.getString("reduction", "mean");
        const bool hasIgnore = init.has("ignore_index");
        const int64_t ignore = init.getInt("ignore_index", 0);
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const RtTensor* target = ctx.input(1);
            if (!x || !target || x->rank() < 2) return bad(ctx, "needs input [N, C, ...] and target");
            const int64_t n = x->dims[0], c = x->dims[1], inner = product(x->dims, 2);
            std::vector<double> logp(size_t(x->numel()));
            for (int64_t i = 0; i < x->numel(); ++i) logp[size_t(i)] = elementAsDouble(*x, i);
            if (softmax) {
                for (int64_t b = 0; b < n; ++b)
                    for (int64_t i = 0; i < inner; ++i) {
                        double mx = -INFINITY, sum = 0;
                        for (int64_t k = 0; k < c; ++k) mx = std::max(mx, logp[size_t((b * c + k) * inner + i)]);
                        for (int64_t k = 0; k < c; ++k) sum += std::exp(logp[size_t((b * c + k) * inner + i)] - mx);
                        const double lse = mx + std::log(sum);
                        for (int64_t k = 0; k < c; ++k) logp[size_t((b * c + k) * inner + i)] -= lse;
                    }
                if (ctx.outputWanted(1)) {
                    auto lp = ctx.output(1, x->dtype, x->dims);
                    if (!lp) return lp.status();
                    FSC_RETURN_IF_ERROR(dispatchFloat(ctx, x->dtype, [&](auto tag) -> Status {
                        using T = decltype(tag);
                        for (size_t i = 0; i < logp.size(); ++i) (*lp)->template as<T>()[i] = T(logp[i]);
                        return Status::ok();
                    }));
                }
            }
            return nllFromLogProb(ctx, logp, x->dims, *target, ctx.input(2), reduction, hasIgnore, ignore, x->dtype);
        }));
    };
}

KernelFactory eyeLike() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t k = init.getInt("k", 0);
        const int64_t dtypeAttr = init.getInt("dtype", 0);
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            if (!x || x->rank() != 2) return bad(ctx, "needs a 2-D input");
            const DType type = dtypeAttr ? dtypeFromOnnx(int32_t(dtypeAttr)).value_or(x->dtype) : x->dtype;
            auto out = ctx.output(0, type, x->dims);
            if (!out) return out.status();
            return dispatchAll(ctx, type, [&](auto tag) -> Status {
                using T = decltype(tag);
                T* po = (*out)->template as<T>();
                for (int64_t i = 0; i < x->dims[0]; ++i)
                    for (int64_t j = 0; j < x->dims[1]; ++j) po[i * x->dims[1] + j] = T(j - i == k ? 1 : 0);
                return Status::ok();
            });
        }));
    };
}

KernelFactory compress() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const bool hasAxis = init.has("axis");
        const int64_t axisAttr = init.getInt("axis", 0);
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const RtTensor* cond = ctx.input(1);
            if (!x || !cond) return bad(ctx, "needs input and condition");
            std::vector<int64_t> dims = hasAxis ? x->dims : std::vector<int64_t>{x->numel()};
            int64_t axis = 0;
            if (hasAxis) {
                auto a = normAxis(ctx, axisAttr, int64_t(x->rank()));
                if (!a) return a.status();
                axis = *a;
            }
            const int64_t len = dims[size_t(axis)];
            std::vector<int64_t> keep;
            for (int64_t i = 0; i < std::min(len, cond->numel()); ++i)
                if (elementAsDouble(*cond, i) != 0) keep.push_back(i);
            const int64_t outer = product(dims, 0, size_t(axis)), inner = product(dims, size_t(axis) + 1);
            dims[size_t(axis)] = int64_t(keep.size());
            auto out = ctx.output(0, x->dtype, dims);
            if (!out) return out.status();
            return dispatchBySize(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                T* po = (*out)->template as<T>();
                const T* pi = x->as<T>();
                int64_t o = 0;
                for (int64_t b = 0; b < outer; ++b)
                    for (int64_t k : keep)
                        for (int64_t i = 0; i < inner; ++i) po[o++] = pi[(b * len + k) * inner + i];
                return Status::ok();
            });
        }));
    };
}

KernelFactory meanVarianceNormalization() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        std::vector<int64_t> axes = init.getInts("axes");
        if (axes.empty()) axes = {0, 2, 3};
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const int64_t rank = int64_t(x->rank());
            std::vector<bool> reduced(size_t(rank), false);
            for (int64_t a : axes) {
                auto n = normAxis(ctx, a, rank);
                if (!n) return n.status();
                reduced[size_t(*n)] = true;
            }
            std::vector<int64_t> kept(x->dims);
            for (int64_t d = 0; d < rank; ++d)
                if (reduced[size_t(d)]) kept[size_t(d)] = 1;
            const auto keptStrides = stridesOf(kept);
            const int64_t groups = product(kept);
            std::vector<double> sum(size_t(groups), 0.0), sq(size_t(groups), 0.0), cnt(size_t(groups), 0.0);
            auto groupOf = [&](int64_t i) {
                int64_t g = 0;
                for (int64_t d = rank - 1; d >= 0; --d) {
                    const int64_t idx = i % x->dims[size_t(d)];
                    i /= x->dims[size_t(d)];
                    if (!reduced[size_t(d)]) g += idx * keptStrides[size_t(d)];
                }
                return g;
            };
            for (int64_t i = 0; i < x->numel(); ++i) {
                const double v = elementAsDouble(*x, i);
                const int64_t g = groupOf(i);
                sum[size_t(g)] += v;
                sq[size_t(g)] += v * v;
                cnt[size_t(g)] += 1;
            }
            auto out = ctx.output(0, x->dtype, x->dims);
            if (!out) return out.status();
            return dispatchFloat(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                for (int64_t i = 0; i < x->numel(); ++i) {
                    const int64_t g = groupOf(i);
                    const double mean = sum[size_t(g)] / cnt[size_t(g)];
                    const double var = sq[size_t(g)] / cnt[size_t(g)] - mean * mean;
                    (*out)->template as<T>()[i] = T((elementAsDouble(*x, i) - mean) / (std::sqrt(var) + 1e-9));
                }
                return Status::ok();
            });
        }));
    };
}

KernelFactory reverseSequence() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t batchAxis = init.getInt("batch_axis", 1), timeAxis = init.getInt("time_axis", 0);
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const RtTensor* lens = ctx.input(1);
            if (!x || !lens || x->rank() < 2) return bad(ctx, "needs input and sequence_lens");
            auto out = ctx.output(0, x->dtype, x->dims);
            if (!out) return out.status();
            const auto strides = stridesOf(x->dims);
            return dispatchBySize(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                const T* pi = x->as<T>();
                T* po = (*out)->template as<T>();
                for (int64_t i = 0; i < x->numel(); ++i) {
                    const int64_t b = (i / strides[size_t(batchAxis)]) % x->dims[size_t(batchAxis)];
                    const int64_t t = (i / strides[size_t(timeAxis)]) % x->dims[size_t(timeAxis)];
                    const int64_t len = elementAsInt(*lens, b);
                    const int64_t src = t < len ? i + (len - 1 - 2 * t) * strides[size_t(timeAxis)] : i;
                    po[i] = pi[src];
                }
                return Status::ok();
            });
        }));
    };
}

KernelFactory unique() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const bool sorted = init.getInt("sorted", 1) != 0;
        const bool hasAxis = init.has("axis");
        const int64_t axisAttr = init.getInt("axis", 0);
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            std::vector<int64_t> dims = hasAxis ? x->dims : std::vector<int64_t>{x->numel()};
            int64_t axis = 0;
            if (hasAxis) {
                auto a = normAxis(ctx, axisAttr, int64_t(x->rank()));
                if (!a) return a.status();
                axis = *a;
            }
            const int64_t len = dims[size_t(axis)];
            const int64_t outer = product(dims, 0, size_t(axis)), inner = product(dims, size_t(axis) + 1);
            // Each slice along the axis as a key of doubles.
            std::vector<std::vector<double>> slices(static_cast<size_t>(len));
            for (int64_t k = 0; k < len; ++k)
                for (int64_t b = 0; b < outer; ++b)
                    for (int64_t i = 0; i < inner; ++i) slices[size_t(k)].push_back(elementAsDouble(*x, (b * len + k) * inner + i));
            std::vector<int64_t> firstOf;  // unique slices by first occurrence
            std::map<std::vector<double>, int64_t> seen;
            std::vector<int64_t> inverseFirst(static_cast<size_t>(len));
            for (int64_t k = 0; k < len; ++k) {
                auto [it, inserted] = seen.emplace(slices[size_t(k)], int64_t(firstOf.size()));
                if (inserted) firstOf.push_back(k);
                inverseFirst[size_t(k)] = it->second;
            }
            std::vector<int64_t> order(firstOf.size());
            std::iota(order.begin(), order.end(), 0);
            if (sorted)
                std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return slices[size_t(firstOf[size_t(a)])] < slices[size_t(firstOf[size_t(b)])]; });
            std::vector<int64_t> rank(order.size());
            for (size_t r = 0; r < order.size(); ++r) rank[size_t(order[r])] = int64_t(r);
            const int64_t u = int64_t(order.size());
            std::vector<int64_t> outDims = dims;
            outDims[size_t(axis)] = u;
            auto y = ctx.output(0, x->dtype, outDims);
            if (!y) return y.status();
            FSC_RETURN_IF_ERROR(dispatchBySize(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                const T* pi = x->as<T>();
                T* po = (*y)->template as<T>();
                for (int64_t b = 0; b < outer; ++b)
                    for (int64_t r = 0; r < u; ++r)
                        for (int64_t i = 0; i < inner; ++i)
                            po[(b * u + r) * inner + i] = pi[(b * len + firstOf[size_t(order[size_t(r)])]) * inner + i];
                return Status::ok();
            }));
            auto emitInts = [&](size_t i, std::vector<int64_t> values) -> Status {
                if (!ctx.outputWanted(i)) return Status::ok();
                auto t = ctx.output(i, DType::Int64, {int64_t(values.size())});
                if (!t) return t.status();
                std::copy(values.begin(), values.end(), (*t)->as<int64_t>());
                return Status::ok();
            };
            std::vector<int64_t> indices, inverse(static_cast<size_t>(len)), counts(static_cast<size_t>(u), 0);
            for (int64_t r = 0; r < u; ++r) indices.push_back(firstOf[size_t(order[size_t(r)])]);
            for (int64_t k = 0; k < len; ++k) {
                inverse[size_t(k)] = rank[size_t(inverseFirst[size_t(k)])];
                counts[size_t(inverse[size_t(k)])]++;
            }
            FSC_RETURN_IF_ERROR(emitInts(1, indices));
            FSC_RETURN_IF_ERROR(emitInts(2, inverse));
            return emitInts(3, counts);
        }));
    };
}

}  // namespace
}  // namespace fsc::cpu

namespace fsc {
using namespace cpu;

void registerMiscKernels(KernelRegistry& r) {
    r.add("NegativeLogLikelihoodLoss", nllLoss(false));
    r.add("SoftmaxCrossEntropyLoss", nllLoss(true));
    r.add("EyeLike", eyeLike());
    r.add("Compress", compress(), {.halfViaFloat = false});
    r.add("MeanVarianceNormalization", meanVarianceNormalization());
    r.add("ReverseSequence", reverseSequence(), {.halfViaFloat = false});
    r.add("Unique", unique(), {.halfViaFloat = false});
}

}  // namespace fsc
