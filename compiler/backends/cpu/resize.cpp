// Resize (opset 10+) and Upsample (7-9): nearest, linear and cubic in any number of dims,
// every coordinate transformation mode, nearest rounding modes, exclude_outside and
// tf_crop_and_resize extrapolation (geometry and attributes: runtime/resize_rules.h). Each output coordinate becomes a short list of
// (input index, weight) taps per dim; the output is the weighted sum over their product.
#include <cmath>
#include <limits>

#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/runtime/resize_rules.h"

namespace fsc::cpu {
namespace {

struct Tap {
    int64_t index;
    double weight;
};

// One dim's taps flattened for the float path: output o reads index[first[o] .. first[o+1]).
struct FlatTaps {
    std::vector<size_t> first{0};
    std::vector<int64_t> index;
    std::vector<float> weight;
    bool pairs = true;  // every output reads exactly two

    explicit FlatTaps(const std::vector<std::vector<Tap>>& taps) {
        for (const auto& list : taps) {
            pairs = pairs && list.size() == 2;
            for (const Tap& t : list) {
                index.push_back(t.index);
                weight.push_back(float(t.weight));
            }
            first.push_back(index.size());
        }
    }
};

// An interpolated value in T. Integers truncate toward zero, as ONNX's reference
// implementation and ONNX Runtime do (a cast, not a rounding), and saturate where cubic
// weights overshoot the type's range.
template <typename T>
T castInterpolated(double value) {
    if constexpr (std::is_integral_v<T>) {
        using Limits = std::numeric_limits<T>;
        if (value != value) return T(0);
        const double whole = std::trunc(value);
        if (whole <= double(Limits::lowest())) return Limits::lowest();
        if (whole >= double(Limits::max())) return Limits::max();
        return T(whole);
    } else {
        return T(value);
    }
}

// Only the last two dims resized (an image's height and width; batch and channels kept as
// they are) and nothing extrapolated: the separable float path applies.
bool resizesLastTwoDims(const std::vector<std::vector<std::vector<Tap>>>& taps) {
    const size_t rank = taps.size();
    if (rank < 2) return false;
    for (size_t d = 0; d < rank; ++d)
        for (size_t o = 0; o < taps[d].size(); ++o) {
            const auto& list = taps[d][o];
            if (list.empty()) return false;
            if (d + 2 < rank && (list.size() != 1 || list[0].index != int64_t(o) || list[0].weight != 1.0)) return false;
        }
    return true;
}

// Each output row is a weighted sum of input rows, then each output element a weighted sum of
// that row's columns: (taps down) x (input width) + (taps across) x (output width) multiplies a
// row, where the general loop walks every tap product of every element in double (LR-ASPP's
// upsampling of 21 channels from 40 x 40 to 320 x 320 took 112 ms that way). The sums are
// float, so results differ from the general loop's in the last bits.
void resizeRowsThenColumns(ThreadPool& pool, const float* x, float* y, int64_t planes, int64_t inH, int64_t inW,
                           const FlatTaps& down, const FlatTaps& across) {
    const int64_t outH = int64_t(down.first.size()) - 1, outW = int64_t(across.first.size()) - 1;
    pool.parallelFor(planes * outH, 8, [&](int64_t begin, int64_t end) {
        std::vector<float> row(static_cast<size_t>(inW));
        for (int64_t r = begin; r < end; ++r) {
            const int64_t plane = r / outH, oy = r % outH;
            const float* in = x + plane * inH * inW;
            std::fill(row.begin(), row.end(), 0.0f);
            for (size_t t = down.first[size_t(oy)]; t < down.first[size_t(oy) + 1]; ++t) {
                const float w = down.weight[t];
                const float* src = in + down.index[t] * inW;
                for (int64_t i = 0; i < inW; ++i) row[size_t(i)] += w * src[i];
            }
            float* out = y + r * outW;
            if (across.pairs) {  // linear: a fixed two taps, which the compiler vectorizes
                const int64_t* index = across.index.data();
                const float* weight = across.weight.data();
                for (int64_t ox = 0; ox < outW; ++ox)
                    out[ox] = weight[2 * ox] * row[size_t(index[2 * ox])] + weight[2 * ox + 1] * row[size_t(index[2 * ox + 1])];
                continue;
            }
            for (int64_t ox = 0; ox < outW; ++ox) {
                float sum = 0;
                for (size_t t = across.first[size_t(ox)]; t < across.first[size_t(ox) + 1]; ++t)
                    sum += across.weight[t] * row[size_t(across.index[t])];
                out[ox] = sum;
            }
        }
    });
}

class ResizeKernel : public Kernel {
public:
    ResizeKernel(const KernelInit& init, bool upsample, Status& status) {
        auto attrs = readResizeAttributes(init, upsample);
        if (!attrs) status = attrs.status();
        else m_a = std::move(*attrs);
    }

    Status compute(KernelContext& ctx) override {
        const RtTensor* x = ctx.input(0);
        const size_t rank = x->rank();
        // Inputs: opset 10 (X, scales); 11+ (X, roi, scales, sizes); Upsample 9 (X, scales).
        const bool old = m_a.upsample || m_a.opset < 11;
        auto geometry = resizeGeometry(m_a, x->dims, old ? nullptr : ctx.input(1), ctx.input(old ? 1 : 2),
                                       old ? nullptr : ctx.input(3));
        if (!geometry) return geometry.status().withContext(ctx.where());
        const std::vector<int64_t>& outDims = geometry->outDims;
        // Taps per dim per output coordinate; an empty list marks extrapolation.
        std::vector<std::vector<std::vector<Tap>>> taps(rank);
        for (size_t d = 0; d < rank; ++d) {
            taps[d].resize(size_t(outDims[d]));
            for (int64_t o = 0; o < outDims[d]; ++o)
                taps[d][size_t(o)] = tapsFor(o, geometry->scales[d], outDims[d], x->dims[d],
                                             geometry->roiStart[d], geometry->roiEnd[d]);
        }
        auto out = ctx.output(0, x->dtype, outDims);
        if (!out) return out.status();
        if (x->dtype == DType::Float32 && resizesLastTwoDims(taps)) {
            const int64_t planes = product(std::vector<int64_t>(x->dims.begin(), x->dims.end() - 2));
            resizeRowsThenColumns(ctx.pool(), x->as<float>(), (*out)->as<float>(), planes, x->dims[rank - 2],
                                  x->dims[rank - 1], FlatTaps(taps[rank - 2]), FlatTaps(taps[rank - 1]));
            return Status::ok();
        }
        const auto inStrides = stridesOf(x->dims);
        const int64_t n = product(outDims);
        return dispatchNumeric(ctx, x->dtype, [&](auto tag) -> Status {
            using T = decltype(tag);
            const T* px = x->as<T>();
            T* py = (*out)->template as<T>();
            ctx.pool().parallelFor(n, 1024, [&](int64_t b, int64_t e) {
                std::vector<int64_t> idx(rank), tapIdx(rank);
                for (int64_t i = b; i < e; ++i) {
                    int64_t rem = i;
                    bool extrapolate = false;
                    for (size_t d = rank; d-- > 0;) {
                        idx[d] = rem % outDims[d];
                        rem /= outDims[d];
                        if (taps[d][size_t(idx[d])].empty()) extrapolate = true;
                    }
                    if (extrapolate) {
                        py[i] = T(m_a.extrapolation);
                        continue;
                    }
                    double acc = 0;
                    std::fill(tapIdx.begin(), tapIdx.end(), 0);
                    while (true) {
                        double w = 1;
                        int64_t off = 0;
                        for (size_t d = 0; d < rank; ++d) {
                            const Tap& t = taps[d][size_t(idx[d])][size_t(tapIdx[d])];
                            w *= t.weight;
                            off += t.index * inStrides[d];
                        }
                        if (w != 0) acc += w * double(px[off]);
                        size_t d = rank;
                        while (d-- > 0) {
                            if (++tapIdx[d] < int64_t(taps[d][size_t(idx[d])].size())) break;
                            tapIdx[d] = 0;
                        }
                        if (d == size_t(-1)) break;
                    }
                    py[i] = castInterpolated<T>(acc);
                }
            });
            return Status::ok();
        });
    }

private:
    double original(int64_t o, double scale, double outLen, int64_t inLen, double roiStart, double roiEnd) const {
        const double x = double(o);
        if (m_a.coord == "half_pixel") return (x + 0.5) / scale - 0.5;
        if (m_a.coord == "half_pixel_symmetric") {
            const double adj = double(outLen) / (scale * double(inLen));
            const double center = double(inLen) / 2.0;
            const double offset = center * (1 - adj);
            return offset + (x + 0.5) / scale - 0.5;
        }
        if (m_a.coord == "pytorch_half_pixel") return outLen > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
        if (m_a.coord == "align_corners") return outLen == 1 ? 0.0 : x * double(inLen - 1) / (outLen - 1);
        if (m_a.coord == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
        if (m_a.coord == "tf_crop_and_resize")
            return outLen > 1 ? roiStart * double(inLen - 1) + x * (roiEnd - roiStart) * double(inLen - 1) / (outLen - 1)
                              : 0.5 * (roiStart + roiEnd) * double(inLen - 1);
        return x / scale;  // asymmetric
    }

    std::vector<Tap> tapsFor(int64_t o, double scale, int64_t outLen, int64_t inLen, double roiStart, double roiEnd) const {
        if (outLen == inLen && scale == 1.0 && m_a.coord != "tf_crop_and_resize") return {{o, 1.0}};
        const double x = original(o, scale, double(outLen), inLen, roiStart, roiEnd);
        if (m_a.coord == "tf_crop_and_resize" && (x < 0 || x > double(inLen - 1))) return {};
        auto clampIndex = [&](int64_t i) { return std::clamp<int64_t>(i, 0, inLen - 1); };
        if (m_a.mode == "nearest") {
            int64_t i;
            if (m_a.nearest == "floor") i = int64_t(std::floor(x));
            else if (m_a.nearest == "ceil") i = int64_t(std::ceil(x));
            else if (m_a.nearest == "round_prefer_ceil") i = int64_t(std::floor(x + 0.5));
            else i = (x - std::floor(x) == 0.5) ? int64_t(std::floor(x)) : int64_t(std::round(x));
            return {{clampIndex(i), 1.0}};
        }
        if (m_a.mode == "linear") {
            const double xc = std::clamp(x, 0.0, double(inLen - 1));
            const int64_t i0 = int64_t(std::floor(xc));
            const double r = xc - double(i0);
            return {{clampIndex(i0), 1 - r}, {clampIndex(i0 + 1), r}};
        }
        // cubic
        const int64_t i0 = int64_t(std::floor(x));
        const double r = x - double(i0);
        const double a = m_a.cubicA;
        auto coeff = [a](double t) {
            t = std::fabs(t);
            if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
            if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
            return 0.0;
        };
        std::vector<Tap> taps;
        double sum = 0;
        for (int64_t k = -1; k <= 2; ++k) {
            const int64_t i = i0 + k;
            double w = coeff(r - double(k));
            if (m_a.excludeOutside && (i < 0 || i >= inLen)) w = 0;
            sum += w;
            taps.push_back({clampIndex(i), w});
        }
        if (m_a.excludeOutside && sum != 0)
            for (Tap& t : taps) t.weight /= sum;
        return taps;
    }

    ResizeAttributes m_a;
};

}  // namespace
}  // namespace fsc::cpu

namespace fsc {
using namespace cpu;

void registerResizeKernels(KernelRegistry& r) {
    r.add("Resize", factoryOf<ResizeKernel>(false));
    r.add("Upsample", factoryOf<ResizeKernel>(true));
}

}  // namespace fsc
