// Reductions (Reduce*, ArgMax/ArgMin), Softmax/LogSoftmax/Hardmax, TopK and CumSum.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>

#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/backends/cpu/vector_math.h"

namespace fsc::cpu {
namespace {

enum class Red { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare };

class ReduceKernel : public Kernel {
public:
    ReduceKernel(const KernelInit& init, Red kind, Status&) : m_kind(kind) {
        m_keepDims = init.getInt("keepdims", 1) != 0;
        m_noopWithEmptyAxes = init.getInt("noop_with_empty_axes", 0) != 0;
        // ReduceSum takes axes as an input from opset 13, the others from 18.
        const int64_t inputFrom = kind == Red::Sum ? 13 : 18;
        m_axesFromInput = init.opset() >= inputFrom;
        m_attrAxes = init.getInts("axes");
    }
    Status compute(KernelContext& ctx) override {
        const RtTensor* x = ctx.input(0);
        std::vector<int64_t> axes = m_attrAxes;
        if (m_axesFromInput && ctx.input(1)) {
            auto a = readInts(*ctx.input(1), "axes");
            if (!a) return a.status().withContext(ctx.where());
            axes = *a;
        }
        const int64_t rank = int64_t(x->rank());
        std::vector<bool> reduced(size_t(rank), false);
        if (axes.empty()) {
            if (m_noopWithEmptyAxes) {
                auto out = ctx.output(0, x->dtype, x->dims);
                if (!out) return out.status();
                if (x->bytes()) std::memcpy((*out)->data, x->data, x->bytes());
                return Status::ok();
            }
            reduced.assign(size_t(rank), true);
        }
        for (int64_t a : axes) {
            auto n = normAxis(ctx, a, rank);
            if (!n) return n.status();
            reduced[size_t(*n)] = true;
        }
        std::vector<int64_t> outDims, keptDims;
        for (int64_t d = 0; d < rank; ++d) {
            if (reduced[size_t(d)]) {
                if (m_keepDims) outDims.push_back(1);
            } else {
                outDims.push_back(x->dims[size_t(d)]);
            }
            keptDims.push_back(reduced[size_t(d)] ? 1 : x->dims[size_t(d)]);
        }
        auto out = ctx.output(0, x->dtype, outDims);
        if (!out) return out.status();
        return dispatchNumeric(ctx, x->dtype, [&](auto tag) -> Status {
            using T = decltype(tag);
            return reduceTyped<T>(ctx, *x, reduced, keptDims, **out);
        });
    }

private:
    template <typename T>
    Status reduceTyped(KernelContext& ctx, const RtTensor& x, const std::vector<bool>& reduced,
                       const std::vector<int64_t>& keptDims, RtTensor& out) {
        const int64_t outN = product(keptDims);
        const int64_t inN = x.numel();
        const int64_t count = outN ? inN / std::max<int64_t>(outN, 1) : 0;
        // Accumulate in double; the strides map each input to its output slot.
        std::vector<double> acc(size_t(outN), init());
        const auto outStrides = stridesOf(keptDims);
        const T* pi = x.as<T>();
        // Fast path: reducing only trailing dims (softmax-like rows).
        size_t firstReduced = reduced.size();
        for (size_t d = 0; d < reduced.size(); ++d)
            if (reduced[d]) {
                firstReduced = d;
                break;
            }
        bool trailing = true;
        for (size_t d = firstReduced; d < reduced.size(); ++d) trailing = trailing && reduced[d];
        if (trailing && inN) {
            const int64_t inner = inN / outN;
            ctx.pool().parallelFor(outN, std::max<int64_t>(1, 4096 / std::max<int64_t>(inner, 1)), [&](int64_t b, int64_t e) {
                for (int64_t o = b; o < e; ++o) {
                    const T* row = pi + o * inner;
                    if constexpr (std::is_same_v<T, float>) {
                        // PointNet's max over 1,024 points per feature: vector lanes, not one
                        // double at a time.
                        if (m_kind == Red::Max || m_kind == Red::Min || m_kind == Red::Sum || m_kind == Red::Mean) {
                            acc[size_t(o)] = m_kind == Red::Max   ? double(maxOfArray(row, inner))
                                             : m_kind == Red::Min ? double(minOfArray(row, inner))
                                                                  : sumOfArray(row, inner);
                            continue;
                        }
                    }
                    double a = init();
                    for (int64_t i = 0; i < inner; ++i) a = step(a, double(row[i]));
                    acc[size_t(o)] = a;
                }
            });
        } else if (int64_t outer, span, inner; inN && middleBlock(x.dims, reduced, outer, span, inner)) {
            // One block of reduced dims between kept ones ([N, H, W, C] over H and W): whole
            // rows of `inner` accumulate at once, in vector lanes for sums and means.
            const bool sum = m_kind == Red::Sum || m_kind == Red::Mean;
            bool summed = false;
            if constexpr (std::is_same_v<T, float>)
                if (sum) {
                    sumMiddleFloat(ctx.pool(), pi, outer, span, inner, acc.data());
                    summed = true;
                }
            if (!summed) ctx.pool().parallelFor(outer, 1, [&](int64_t b, int64_t e) {
                for (int64_t o = b; o < e; ++o) {
                    double* a = acc.data() + o * inner;
                    for (int64_t r = 0; r < span; ++r) {
                        const T* row = pi + (o * span + r) * inner;
                        if (sum)
                            for (int64_t i = 0; i < inner; ++i) a[i] += double(row[i]);
                        else
                            for (int64_t i = 0; i < inner; ++i) a[i] = step(a[i], double(row[i]));
                    }
                }
            });
        } else {
            const size_t rank = x.dims.size();
            std::vector<int64_t> idx(rank, 0);
            for (int64_t i = 0; i < inN; ++i) {
                int64_t o = 0;
                for (size_t d = 0; d < rank; ++d)
                    if (!reduced[d]) o += idx[d] * outStrides[d];
                acc[size_t(o)] = step(acc[size_t(o)], double(pi[i]));
                for (size_t d = rank; d-- > 0;) {
                    if (++idx[d] < x.dims[d]) break;
                    idx[d] = 0;
                }
            }
        }
        T* po = out.as<T>();
        for (int64_t o = 0; o < outN; ++o) po[o] = T(finish(acc[size_t(o)], count));
        (void)ctx;
        return Status::ok();
    }
    // Sums over the middle of [outer, span, inner] in blocks of 64 rows: each block adds in
    // float vector lanes, blocks add up in double, and the blocks of a wide reduction (a
    // squeeze-and-excitation pool over 112 x 112 pixels) are spread over the threads.
    static void sumMiddleFloat(ThreadPool& pool, const float* x, int64_t outer, int64_t span, int64_t inner,
                               double* acc) {
        constexpr int64_t kBlock = 64;
        const int64_t blocks = (span + kBlock - 1) / kBlock;
        std::vector<double> partial(size_t(outer * blocks * inner));
        pool.parallelFor(outer * blocks, std::max<int64_t>(1, 16384 / (kBlock * inner)), [&](int64_t b, int64_t e) {
            std::vector<float> sum(static_cast<size_t>(inner));
            for (int64_t t = b; t < e; ++t) {
                const int64_t o = t / blocks, r0 = (t % blocks) * kBlock, r1 = std::min(span, r0 + kBlock);
                std::fill(sum.begin(), sum.end(), 0.f);
                for (int64_t r = r0; r < r1; ++r) accumulateArray(x + (o * span + r) * inner, sum.data(), inner);
                std::copy(sum.begin(), sum.end(), partial.begin() + t * inner);
            }
        });
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t blk = 0; blk < blocks; ++blk)
                for (int64_t i = 0; i < inner; ++i) acc[o * inner + i] += partial[size_t((o * blocks + blk) * inner + i)];
    }

    // Whether the reduced dims are one run with kept dims on either side: the input is then
    // [outer, count, inner] reduced over its middle.
    static bool middleBlock(const std::vector<int64_t>& dims, const std::vector<bool>& reduced, int64_t& outer,
                            int64_t& count, int64_t& inner) {
        size_t first = reduced.size(), last = 0;
        for (size_t d = 0; d < reduced.size(); ++d)
            if (reduced[d]) {
                first = std::min(first, d);
                last = d;
            }
        if (first == reduced.size()) return false;
        outer = count = inner = 1;
        for (size_t d = 0; d < dims.size(); ++d) {
            if (d >= first && d <= last && !reduced[d]) return false;
            (d < first ? outer : d <= last ? count : inner) *= dims[d];
        }
        return true;
    }
    double init() const {
        switch (m_kind) {
            case Red::Max: return -std::numeric_limits<double>::infinity();
            case Red::Min: return std::numeric_limits<double>::infinity();
            case Red::Prod: return 1.0;
            default: return 0.0;
        }
    }
    double step(double a, double v) const {
        switch (m_kind) {
            case Red::Max: return std::isnan(v) ? v : (v > a ? v : a);
            case Red::Min: return std::isnan(v) ? v : (v < a ? v : a);
            case Red::Prod: return a * v;
            case Red::L1: return a + std::fabs(v);
            case Red::L2:
            case Red::SumSquare: return a + v * v;
            case Red::LogSumExp: return a + std::exp(v);
            default: return a + v;
        }
    }
    double finish(double a, int64_t count) const {
        switch (m_kind) {
            case Red::Mean: return count ? a / double(count) : std::numeric_limits<double>::quiet_NaN();
            case Red::L2: return std::sqrt(a);
            case Red::LogSum:
            case Red::LogSumExp: return std::log(a);
            default: return a;
        }
    }

    Red m_kind;
    bool m_keepDims = true;
    bool m_noopWithEmptyAxes = false;
    bool m_axesFromInput = false;
    std::vector<int64_t> m_attrAxes;
};

KernelFactory argReduce(bool isMax) {
    return [isMax](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t axisAttr = init.getInt("axis", 0);
        const bool keep = init.getInt("keepdims", 1) != 0;
        const bool last = init.getInt("select_last_index", 0) != 0;
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            auto axis = normAxis(ctx, axisAttr, int64_t(x->rank()));
            if (!axis) return axis.status();
            std::vector<int64_t> dims = x->dims;
            if (keep) dims[size_t(*axis)] = 1;
            else dims.erase(dims.begin() + *axis);
            auto out = ctx.output(0, DType::Int64, dims);
            if (!out) return out.status();
            const int64_t outer = product(x->dims, 0, size_t(*axis));
            const int64_t len = x->dims[size_t(*axis)];
            const int64_t inner = product(x->dims, size_t(*axis) + 1);
            return dispatchNumeric(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                const T* pi = x->as<T>();
                int64_t* po = (*out)->as<int64_t>();
                for (int64_t o = 0; o < outer; ++o)
                    for (int64_t i = 0; i < inner; ++i) {
                        int64_t best = 0;
                        T bv = pi[o * len * inner + i];
                        for (int64_t k = 1; k < len; ++k) {
                            const T v = pi[(o * len + k) * inner + i];
                            const bool better = isMax ? (last ? v >= bv : v > bv) : (last ? v <= bv : v < bv);
                            if (better) {
                                bv = v;
                                best = k;
                            }
                        }
                        po[o * inner + i] = best;
                    }
                return Status::ok();
            });
        }));
    };
}

enum class SoftKind { Softmax, LogSoftmax, Hardmax };

// Softmax family. Before opset 13 the input is flattened to 2-D at `axis` (default 1);
// from 13 it works along one axis (default -1).
KernelFactory softmax(SoftKind kind) {
    return [kind](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const bool legacy = init.opset() < 13;
        const int64_t axisAttr = init.getInt("axis", legacy ? 1 : -1);
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            if (!x) return bad(ctx, "missing input");
            auto axis = normAxis(ctx, axisAttr, int64_t(x->rank()));
            if (!axis) return axis.status();
            int64_t outer, len, inner;
            if (legacy) {
                outer = product(x->dims, 0, size_t(*axis));
                len = product(x->dims, size_t(*axis));
                inner = 1;
            } else {
                outer = product(x->dims, 0, size_t(*axis));
                len = x->dims[size_t(*axis)];
                inner = product(x->dims, size_t(*axis) + 1);
            }
            auto out = ctx.output(0, x->dtype, x->dims);
            if (!out) return out.status();
            return dispatchFloat(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                const T* pi = x->as<T>();
                T* po = (*out)->template as<T>();
                ctx.pool().parallelFor(outer * inner, std::max<int64_t>(1, 4096 / std::max<int64_t>(len, 1)), [&](int64_t b, int64_t e) {
                    for (int64_t r = b; r < e; ++r) {
                        const int64_t o = r / inner, i = r % inner;
                        const T* src = pi + o * len * inner + i;
                        T* dst = po + o * len * inner + i;
                        if constexpr (std::is_same_v<T, float>) {
                            if (kind == SoftKind::Softmax && inner == 1) {  // the last axis: vectorized
                                softmaxArray(src, dst, len);
                                continue;
                            }
                        }
                        T mx = src[0];
                        int64_t arg = 0;
                        for (int64_t k = 1; k < len; ++k)
                            if (src[k * inner] > mx) {
                                mx = src[k * inner];
                                arg = k;
                            }
                        if (kind == SoftKind::Hardmax) {
                            for (int64_t k = 0; k < len; ++k) dst[k * inner] = T(k == arg ? 1 : 0);
                            continue;
                        }
                        T sum = 0;
                        for (int64_t k = 0; k < len; ++k) {
                            const T ev = std::exp(src[k * inner] - mx);
                            if (kind == SoftKind::Softmax) dst[k * inner] = ev;
                            sum += ev;
                        }
                        if (kind == SoftKind::Softmax) {
                            const T inv = T(1) / sum;
                            for (int64_t k = 0; k < len; ++k) dst[k * inner] *= inv;
                        } else {
                            const T lse = std::log(sum);
                            for (int64_t k = 0; k < len; ++k) dst[k * inner] = src[k * inner] - mx - lse;
                        }
                    }
                });
                return Status::ok();
            });
        }));
    };
}

// TopK's order: larger first (smaller first for largest=0), equal values by index, NaN
// beyond every number (as PyTorch's topk ranks it). A strict total order, so selection need
// not be stable.
template <typename T>
struct TopKOrder {
    const T* values;
    bool largest;
    bool operator()(int64_t a, int64_t b) const {  // a comes before b
        const T x = values[a], y = values[b];
        if constexpr (std::is_floating_point_v<T>) {
            const bool nx = std::isnan(x), ny = std::isnan(y);
            if (nx || ny) return nx != ny ? (largest ? nx : ny) : a < b;
        }
        if (x != y) return largest ? x > y : x < y;
        return a < b;
    }
};

// The first k of one slice in TopKOrder, into order[0, k). A small k keeps the k best in a heap
// while one pass reads the slice, most values failing a single comparison against the heap's
// worst (RetinaNet's TopK of 1,000 over 1.3 million scores: a stable sort of all of them took
// 217 ms); a large one selects with nth_element.
template <typename T>
void firstK(const T* values, int64_t len, int64_t k, bool largest, std::vector<int64_t>& order) {
    const TopKOrder<T> before{values, largest};
    order.clear();
    if (k * 8 < len) {
        for (int64_t j = 0; j < len; ++j) {
            if (int64_t(order.size()) < k) {
                order.push_back(j);
                std::push_heap(order.begin(), order.end(), before);  // the worst kept on top
            } else if (k > 0 && before(j, order.front())) {
                std::pop_heap(order.begin(), order.end(), before);
                order.back() = j;
                std::push_heap(order.begin(), order.end(), before);
            }
        }
    } else {
        order.resize(size_t(len));
        std::iota(order.begin(), order.end(), 0);
        std::nth_element(order.begin(), order.begin() + k, order.end(), before);
        order.resize(size_t(k));
    }
    std::sort(order.begin(), order.end(), before);
}

KernelFactory topK() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t axisAttr = init.getInt("axis", -1);
        const bool largest = init.getInt("largest", 1) != 0;
        const bool sorted = init.getInt("sorted", 1) != 0;
        const bool kFromInput = init.opset() >= 10;
        const int64_t kAttr = init.getInt("k", 0);
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const int64_t k = kFromInput ? elementAsInt(*ctx.input(1), 0) : kAttr;
            auto axis = normAxis(ctx, axisAttr, int64_t(x->rank()));
            if (!axis) return axis.status();
            const int64_t len = x->dims[size_t(*axis)];
            if (k < 0 || k > len) return bad(ctx, "k=" + std::to_string(k) + " is out of range for an axis of " + std::to_string(len));
            std::vector<int64_t> dims = x->dims;
            dims[size_t(*axis)] = k;
            auto values = ctx.output(0, x->dtype, dims);
            if (!values) return values.status();
            auto indices = ctx.output(1, DType::Int64, dims);
            if (!indices) return indices.status();
            const int64_t outer = product(x->dims, 0, size_t(*axis));
            const int64_t inner = product(x->dims, size_t(*axis) + 1);
            (void)sorted;  // always sorted: a valid order for sorted=0 too
            return dispatchNumeric(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                const T* pi = x->as<T>();
                T* pv = (*values)->template as<T>();
                int64_t* px = (*indices)->as<int64_t>();
                std::vector<int64_t> order;
                std::vector<T> slice(static_cast<size_t>(inner == 1 ? 0 : len));
                for (int64_t o = 0; o < outer; ++o)
                    for (int64_t i = 0; i < inner; ++i) {
                        const T* values = pi + o * len * inner + i;
                        if (inner != 1) {  // read the strided slice once, in order
                            for (int64_t j = 0; j < len; ++j) slice[size_t(j)] = values[j * inner];
                            values = slice.data();
                        }
                        firstK(values, len, k, largest, order);
                        for (int64_t j = 0; j < k; ++j) {
                            pv[(o * k + j) * inner + i] = values[order[size_t(j)]];
                            px[(o * k + j) * inner + i] = order[size_t(j)];
                        }
                    }
                return Status::ok();
            });
        }));
    };
}

KernelFactory cumSum() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const bool exclusive = init.getInt("exclusive", 0) != 0;
        const bool reverse = init.getInt("reverse", 0) != 0;
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            auto axis = normAxis(ctx, elementAsInt(*ctx.input(1), 0), int64_t(x->rank()));
            if (!axis) return axis.status();
            auto out = ctx.output(0, x->dtype, x->dims);
            if (!out) return out.status();
            const int64_t outer = product(x->dims, 0, size_t(*axis));
            const int64_t len = x->dims[size_t(*axis)];
            const int64_t inner = product(x->dims, size_t(*axis) + 1);
            return dispatchNumeric(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                const T* pi = x->as<T>();
                T* po = (*out)->template as<T>();
                for (int64_t o = 0; o < outer; ++o)
                    for (int64_t i = 0; i < inner; ++i) {
                        T acc = 0;
                        for (int64_t s = 0; s < len; ++s) {
                            const int64_t k = reverse ? len - 1 - s : s;
                            const int64_t at = (o * len + k) * inner + i;
                            if (exclusive) {
                                po[at] = acc;
                                acc = T(acc + pi[at]);
                            } else {
                                acc = T(acc + pi[at]);
                                po[at] = acc;
                            }
                        }
                    }
                return Status::ok();
            });
        }));
    };
}

}  // namespace
}  // namespace fsc::cpu

namespace fsc {
using namespace cpu;

void registerReductionKernels(KernelRegistry& r) {
    r.add("ReduceSum", factoryOf<ReduceKernel>(Red::Sum));
    r.add("ReduceMean", factoryOf<ReduceKernel>(Red::Mean));
    r.add("ReduceMax", factoryOf<ReduceKernel>(Red::Max));
    r.add("ReduceMin", factoryOf<ReduceKernel>(Red::Min));
    r.add("ReduceProd", factoryOf<ReduceKernel>(Red::Prod));
    r.add("ReduceL1", factoryOf<ReduceKernel>(Red::L1));
    r.add("ReduceL2", factoryOf<ReduceKernel>(Red::L2));
    r.add("ReduceLogSum", factoryOf<ReduceKernel>(Red::LogSum));
    r.add("ReduceLogSumExp", factoryOf<ReduceKernel>(Red::LogSumExp));
    r.add("ReduceSumSquare", factoryOf<ReduceKernel>(Red::SumSquare));
    r.add("ArgMax", argReduce(true));
    r.add("ArgMin", argReduce(false));
    r.add("Softmax", softmax(SoftKind::Softmax));
    r.add("LogSoftmax", softmax(SoftKind::LogSoftmax));
    r.add("Hardmax", softmax(SoftKind::Hardmax));
    r.add("TopK", topK());
    r.add("CumSum", cumSum());
}

}  // namespace fsc
