// Resize (opset 10+) and Upsample (7-9): nearest, linear and cubic in any number of dims,
// every coordinate transformation mode, nearest rounding modes, exclude_outside and
// tf_crop_and_resize extrapolation. Each output coordinate becomes a short list of
// (input index, weight) taps per dim; the output is the weighted sum over their product.
#include <cmath>

#include "compiler/backends/cpu/cpu_common.h"

namespace fsc::cpu {
namespace {

struct Tap {
    int64_t index;
    double weight;
};

class ResizeKernel : public Kernel {
public:
    ResizeKernel(const KernelInit& init, bool upsample, Status& status) : m_upsample(upsample) {
        m_mode = init.getString("mode", "nearest");
        if (m_mode == "bilinear" || m_mode == "trilinear") m_mode = "linear";
        m_coord = upsample || init.opset() < 11 ? "asymmetric" : init.getString("coordinate_transformation_mode", "half_pixel");
        m_nearest = init.opset() < 11 ? "floor" : init.getString("nearest_mode", "round_prefer_floor");
        if (upsample || init.opset() < 11) m_nearest = m_mode == "nearest" ? "floor" : m_nearest;
        m_cubicA = init.getFloat("cubic_coeff_a", -0.75f);
        m_excludeOutside = init.getInt("exclude_outside", 0) != 0;
        m_extrapolation = init.getFloat("extrapolation_value", 0.0f);
        m_axes = init.getInts("axes");
        m_aspectPolicy = init.getString("keep_aspect_ratio_policy", "stretch");
        m_attrScales = init.getFloats("scales");
        m_opset = init.opset();
        if (init.getInt("antialias", 0)) status = Status(ErrorCode::Unsupported, "node '" + init.node().name + "' (Resize): antialias is not supported");
        if (m_mode != "nearest" && m_mode != "linear" && m_mode != "cubic") status = init.invalid("unknown mode '" + m_mode + "'");
    }

    Status compute(KernelContext& ctx) override {
        const RtTensor* x = ctx.input(0);
        const size_t rank = x->rank();
        std::vector<double> scales(rank, 1.0), roi;
        // Coordinate maths uses the unrounded resized length (input * scale), as ONNX does.
        std::vector<double> resizedLen(x->dims.begin(), x->dims.end());
        std::vector<int64_t> outDims = x->dims;
        // Inputs: opset 10 (X, scales); 11+ (X, roi, scales, sizes); Upsample 9 (X, scales).
        const RtTensor* roiT = nullptr;
        const RtTensor* scalesT = nullptr;
        const RtTensor* sizesT = nullptr;
        if (m_upsample || m_opset < 11) {
            scalesT = ctx.input(1);
        } else {
            roiT = ctx.input(1);
            scalesT = ctx.input(2);
            sizesT = ctx.input(3);
        }
        std::vector<int64_t> axes = m_axes;
        if (axes.empty())
            for (size_t i = 0; i < rank; ++i) axes.push_back(int64_t(i));
        for (int64_t& a : axes) {
            auto n = normAxis(ctx, a, int64_t(rank));
            if (!n) return n.status();
            a = *n;
        }
        if (sizesT && sizesT->numel()) {
            auto sizes = readInts(*sizesT, "sizes");
            if (!sizes) return sizes.status().withContext(ctx.where());
            if (sizes->size() != axes.size()) return bad(ctx, "sizes has the wrong length");
            if (m_aspectPolicy != "stretch") {
                double s = m_aspectPolicy == "not_larger" ? 1e300 : 0;
                for (size_t i = 0; i < axes.size(); ++i) {
                    const double r = double((*sizes)[i]) / double(x->dims[size_t(axes[i])]);
                    s = m_aspectPolicy == "not_larger" ? std::min(s, r) : std::max(s, r);
                }
                for (size_t i = 0; i < axes.size(); ++i) {
                    scales[size_t(axes[i])] = s;
                    outDims[size_t(axes[i])] = int64_t(std::floor(double(x->dims[size_t(axes[i])]) * s + 0.5));
                    resizedLen[size_t(axes[i])] = double(outDims[size_t(axes[i])]);
                }
            } else {
                for (size_t i = 0; i < axes.size(); ++i) {
                    outDims[size_t(axes[i])] = (*sizes)[i];
                    resizedLen[size_t(axes[i])] = double((*sizes)[i]);
                    scales[size_t(axes[i])] = double((*sizes)[i]) / double(x->dims[size_t(axes[i])]);
                }
            }
        } else {
            std::vector<double> given;
            if (scalesT && scalesT->numel())
                for (int64_t i = 0; i < scalesT->numel(); ++i) given.push_back(elementAsDouble(*scalesT, i));
            else
                given.assign(m_attrScales.begin(), m_attrScales.end());
            if (given.size() != axes.size()) return bad(ctx, "needs scales or sizes for every resized axis");
            for (size_t i = 0; i < axes.size(); ++i) {
                if (given[i] <= 0) return bad(ctx, "scales must be positive");
                scales[size_t(axes[i])] = given[i];
                outDims[size_t(axes[i])] = int64_t(std::floor(double(x->dims[size_t(axes[i])]) * given[i]));
                resizedLen[size_t(axes[i])] = double(x->dims[size_t(axes[i])]) * given[i];
            }
        }
        roi.assign(2 * rank, 0.0);
        for (size_t i = 0; i < rank; ++i) roi[rank + i] = 1.0;
        if (roiT && roiT->numel()) {
            if (size_t(roiT->numel()) != 2 * axes.size()) return bad(ctx, "roi has the wrong length");
            for (size_t i = 0; i < axes.size(); ++i) {
                roi[size_t(axes[i])] = elementAsDouble(*roiT, int64_t(i));
                roi[rank + size_t(axes[i])] = elementAsDouble(*roiT, int64_t(axes.size() + i));
            }
        }
        // Taps per dim per output coordinate; an empty list marks extrapolation.
        std::vector<std::vector<std::vector<Tap>>> taps(rank);
        for (size_t d = 0; d < rank; ++d) {
            taps[d].resize(size_t(outDims[d]));
            for (int64_t o = 0; o < outDims[d]; ++o)
                taps[d][size_t(o)] = tapsFor(o, scales[d], resizedLen[d], outDims[d], x->dims[d], roi[d], roi[rank + d]);
        }
        auto out = ctx.output(0, x->dtype, outDims);
        if (!out) return out.status();
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
                        py[i] = T(m_extrapolation);
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
                    if constexpr (std::is_integral_v<T>) acc = std::nearbyint(acc);
                    py[i] = T(acc);
                }
            });
            return Status::ok();
        });
    }

private:
    double original(int64_t o, double scale, double outLen, int64_t inLen, double roiStart, double roiEnd) const {
        const double x = double(o);
        if (m_coord == "half_pixel") return (x + 0.5) / scale - 0.5;
        if (m_coord == "half_pixel_symmetric") {
            const double adj = double(outLen) / (scale * double(inLen));
            const double center = double(inLen) / 2.0;
            const double offset = center * (1 - adj);
            return offset + (x + 0.5) / scale - 0.5;
        }
        if (m_coord == "pytorch_half_pixel") return outLen > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
        if (m_coord == "align_corners") return outLen == 1 ? 0.0 : x * double(inLen - 1) / (outLen - 1);
        if (m_coord == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
        if (m_coord == "tf_crop_and_resize")
            return outLen > 1 ? roiStart * double(inLen - 1) + x * (roiEnd - roiStart) * double(inLen - 1) / (outLen - 1)
                              : 0.5 * (roiStart + roiEnd) * double(inLen - 1);
        return x / scale;  // asymmetric
    }

    std::vector<Tap> tapsFor(int64_t o, double scale, double resized, int64_t outLen, int64_t inLen, double roiStart, double roiEnd) const {
        if (outLen == inLen && scale == 1.0 && m_coord != "tf_crop_and_resize") return {{o, 1.0}};
        const double x = original(o, scale, resized, inLen, roiStart, roiEnd);
        if (m_coord == "tf_crop_and_resize" && (x < 0 || x > double(inLen - 1))) return {};
        auto clampIndex = [&](int64_t i) { return std::clamp<int64_t>(i, 0, inLen - 1); };
        if (m_mode == "nearest") {
            int64_t i;
            if (m_nearest == "floor") i = int64_t(std::floor(x));
            else if (m_nearest == "ceil") i = int64_t(std::ceil(x));
            else if (m_nearest == "round_prefer_ceil") i = int64_t(std::floor(x + 0.5));
            else i = (x - std::floor(x) == 0.5) ? int64_t(std::floor(x)) : int64_t(std::round(x));
            return {{clampIndex(i), 1.0}};
        }
        if (m_mode == "linear") {
            const double xc = std::clamp(x, 0.0, double(inLen - 1));
            const int64_t i0 = int64_t(std::floor(xc));
            const double r = xc - double(i0);
            return {{clampIndex(i0), 1 - r}, {clampIndex(i0 + 1), r}};
        }
        // cubic
        const int64_t i0 = int64_t(std::floor(x));
        const double r = x - double(i0);
        const double a = m_cubicA;
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
            if (m_excludeOutside && (i < 0 || i >= inLen)) w = 0;
            sum += w;
            taps.push_back({clampIndex(i), w});
        }
        if (m_excludeOutside && sum != 0)
            for (Tap& t : taps) t.weight /= sum;
        return taps;
    }

    bool m_upsample;
    std::string m_mode, m_coord, m_nearest, m_aspectPolicy;
    float m_cubicA = -0.75f;
    bool m_excludeOutside = false;
    float m_extrapolation = 0;
    std::vector<int64_t> m_axes;
    std::vector<float> m_attrScales;
    int64_t m_opset = 0;
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
