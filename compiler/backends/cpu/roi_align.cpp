// RoiAlign (opsets 10 and 16): pools each region of interest of a [N, C, H, W] feature map
// into an output_height x output_width grid, as Mask R-CNN and other two-stage detectors
// export it. Each bin averages (or takes the largest of) bilinear samples on a regular grid;
// the sampling, the edge rules and the "max" mode follow ONNX's reference and ONNX Runtime,
// which weigh each of the four neighbours before taking the maximum.
#include <algorithm>
#include <cmath>
#include <vector>

#include "compiler/backends/cpu/cpu_common.h"

namespace fsc::cpu {
namespace {

struct Neighbours {
    int64_t offsets[4] = {0, 0, 0, 0};
    double weights[4] = {0, 0, 0, 0};
};

// The four pixels around (y, x) and their bilinear weights; all weights are zero when the
// point lies more than one pixel outside the map.
Neighbours neighbours(int64_t height, int64_t width, double y, double x) {
    Neighbours n;
    if (y < -1.0 || y > double(height) || x < -1.0 || x > double(width)) return n;
    y = std::max(y, 0.0);
    x = std::max(x, 0.0);
    int64_t yLow = int64_t(y), xLow = int64_t(x), yHigh = yLow + 1, xHigh = xLow + 1;
    if (yLow >= height - 1) {
        yLow = yHigh = height - 1;
        y = double(yLow);
    }
    if (xLow >= width - 1) {
        xLow = xHigh = width - 1;
        x = double(xLow);
    }
    const double ly = y - double(yLow), lx = x - double(xLow), hy = 1 - ly, hx = 1 - lx;
    n.offsets[0] = yLow * width + xLow;
    n.offsets[1] = yLow * width + xHigh;
    n.offsets[2] = yHigh * width + xLow;
    n.offsets[3] = yHigh * width + xHigh;
    n.weights[0] = hy * hx;
    n.weights[1] = hy * lx;
    n.weights[2] = ly * hx;
    n.weights[3] = ly * lx;
    return n;
}

struct RoiAlignAttributes {
    int64_t outputHeight, outputWidth, samplingRatio;
    double spatialScale;
    bool maxMode, halfPixel;
};

KernelFactory roiAlign() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const std::string mode = init.getString("mode", "avg");
        // Opset 16 made half_pixel the default; opset 10 models have no such attribute and
        // meant output_half_pixel.
        const std::string transform =
            init.getString("coordinate_transformation_mode", init.opset() >= 16 ? "half_pixel" : "output_half_pixel");
        const RoiAlignAttributes a{init.getInt("output_height", 1), init.getInt("output_width", 1),
                                   init.getInt("sampling_ratio", 0), double(init.getFloat("spatial_scale", 1.0f)),
                                   mode == "max", transform == "half_pixel"};
        if ((mode != "avg" && mode != "max") || (transform != "half_pixel" && transform != "output_half_pixel"))
            return Status(ErrorCode::Unsupported, "RoiAlign: mode '" + mode + "' with coordinate_transformation_mode '" +
                                                      transform + "'");
        if (a.outputHeight < 1 || a.outputWidth < 1 || a.samplingRatio < 0)
            return init.invalid("output_height and output_width must be positive, sampling_ratio non-negative");
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const RtTensor* rois = ctx.input(1);
            const RtTensor* batchIndices = ctx.input(2);
            if (!x || !rois || !batchIndices || x->rank() != 4 || rois->rank() != 2 || rois->dims[1] != 4 ||
                batchIndices->rank() != 1 || batchIndices->dims[0] != rois->dims[0])
                return bad(ctx, "needs X [N, C, H, W], rois [R, 4] and batch_indices [R]");
            const int64_t n = x->dims[0], c = x->dims[1], h = x->dims[2], w = x->dims[3], r = rois->dims[0];
            auto out = ctx.output(0, x->dtype, {r, c, a.outputHeight, a.outputWidth});
            if (!out) return out.status();
            const double offset = a.halfPixel ? 0.5 : 0.0;
            for (int64_t roi = 0; roi < r; ++roi) {
                const int64_t b = int64_t(elementAsDouble(*batchIndices, roi));
                if (b < 0 || b >= n)
                    return bad(ctx, "batch index " + std::to_string(b) + " of roi " + std::to_string(roi) +
                                        " is outside the batch of " + std::to_string(n));
            }
            const int64_t bins = a.outputHeight * a.outputWidth;
            return dispatchFloat(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                const T* image = x->template as<T>();
                T* y = (*out)->template as<T>();
                // A region at a time (Mask R-CNN pools 1,000 of them from 256 channels): its
                // bins' samples worked out once, then each channel's plane read whole while
                // it is in cache, rather than every channel's plane once per bin.
                ctx.pool().parallelFor(r, 1, [&](int64_t firstRoi, int64_t endRoi) {
                    std::vector<Neighbours> samples;
                    std::vector<int64_t> binStart(size_t(bins) + 1);
                    for (int64_t roi = firstRoi; roi < endRoi; ++roi) {
                        const int64_t b = int64_t(elementAsDouble(*batchIndices, roi));
                        const double x1 = elementAsDouble(*rois, roi * 4) * a.spatialScale - offset;
                        const double y1 = elementAsDouble(*rois, roi * 4 + 1) * a.spatialScale - offset;
                        double roiWidth = elementAsDouble(*rois, roi * 4 + 2) * a.spatialScale - offset - x1;
                        double roiHeight = elementAsDouble(*rois, roi * 4 + 3) * a.spatialScale - offset - y1;
                        if (!a.halfPixel) {
                            roiWidth = std::max(roiWidth, 1.0);
                            roiHeight = std::max(roiHeight, 1.0);
                        }
                        const double binHeight = roiHeight / double(a.outputHeight);
                        const double binWidth = roiWidth / double(a.outputWidth);
                        const int64_t gridH =
                            a.samplingRatio > 0 ? a.samplingRatio : int64_t(std::ceil(roiHeight / double(a.outputHeight)));
                        const int64_t gridW =
                            a.samplingRatio > 0 ? a.samplingRatio : int64_t(std::ceil(roiWidth / double(a.outputWidth)));
                        const double count = double(std::max<int64_t>(gridH * gridW, 1));
                        samples.clear();
                        for (int64_t ph = 0; ph < a.outputHeight; ++ph)
                            for (int64_t pw = 0; pw < a.outputWidth; ++pw) {
                                binStart[size_t(ph * a.outputWidth + pw)] = int64_t(samples.size());
                                for (int64_t iy = 0; iy < gridH; ++iy)
                                    for (int64_t ix = 0; ix < gridW; ++ix)
                                        samples.push_back(neighbours(
                                            h, w, y1 + double(ph) * binHeight + (double(iy) + 0.5) * binHeight / double(gridH),
                                            x1 + double(pw) * binWidth + (double(ix) + 0.5) * binWidth / double(gridW)));
                            }
                        binStart[size_t(bins)] = int64_t(samples.size());
                        for (int64_t ch = 0; ch < c; ++ch) {
                            const T* plane = image + (b * c + ch) * h * w;
                            T* pooled = y + (roi * c + ch) * bins;
                            for (int64_t bin = 0; bin < bins; ++bin) {
                                double value = 0;
                                bool first = true;
                                for (int64_t k = binStart[size_t(bin)]; k < binStart[size_t(bin) + 1]; ++k) {
                                    const Neighbours& s = samples[size_t(k)];
                                    if (a.maxMode) {
                                        for (int q = 0; q < 4; ++q) {
                                            const double v = s.weights[q] * double(plane[s.offsets[q]]);
                                            value = first ? v : std::max(value, v);
                                            first = false;
                                        }
                                    } else {
                                        for (int q = 0; q < 4; ++q) value += s.weights[q] * double(plane[s.offsets[q]]);
                                    }
                                }
                                pooled[bin] = T(a.maxMode ? value : value / count);
                            }
                        }
                    }
                });
                return Status::ok();
            });
        }));
    };
}

}  // namespace
}  // namespace fsc::cpu

namespace fsc {

void registerRoiAlignKernels(KernelRegistry& r) {
    r.add("RoiAlign", cpu::roiAlign());
}

}  // namespace fsc
