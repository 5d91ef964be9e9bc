#include "compiler/runtime/resize_rules.h"

#include <algorithm>
#include <cmath>

namespace fsc {

Result<ResizeAttributes> readResizeAttributes(const KernelInit& init, bool upsample) {
    ResizeAttributes a;
    a.upsample = upsample;
    a.opset = init.opset();
    a.mode = init.getString("mode", "nearest");
    if (a.mode == "bilinear" || a.mode == "trilinear") a.mode = "linear";
    const bool old = upsample || init.opset() < 11;
    a.coord = old ? "asymmetric" : init.getString("coordinate_transformation_mode", "half_pixel");
    a.nearest = init.opset() < 11 ? "floor" : init.getString("nearest_mode", "round_prefer_floor");
    if (old) a.nearest = a.mode == "nearest" ? "floor" : a.nearest;
    a.cubicA = init.getFloat("cubic_coeff_a", -0.75f);
    a.excludeOutside = init.getInt("exclude_outside", 0) != 0;
    a.extrapolation = init.getFloat("extrapolation_value", 0.0f);
    a.axes = init.getInts("axes");
    a.aspectPolicy = init.getString("keep_aspect_ratio_policy", "stretch");
    a.attrScales = init.getFloats("scales");
    if (init.getInt("antialias", 0))
        return Status(ErrorCode::Unsupported, "node '" + init.node().name + "' (Resize): antialias is not supported");
    if (a.mode != "nearest" && a.mode != "linear" && a.mode != "cubic") return init.invalid("unknown mode '" + a.mode + "'");
    return a;
}

Result<ResizeGeometry> resizeGeometry(const ResizeAttributes& a, const std::vector<int64_t>& inDims, const RtTensor* roiT,
                                      const RtTensor* scalesT, const RtTensor* sizesT) {
    const size_t rank = inDims.size();
    ResizeGeometry g;
    g.scales.assign(rank, 1.0);
    g.outDims = inDims;
    std::vector<int64_t> axes = a.axes;
    if (axes.empty())
        for (size_t i = 0; i < rank; ++i) axes.push_back(int64_t(i));
    for (int64_t& axis : axes) {
        if (axis < -int64_t(rank) || axis >= int64_t(rank))
            return Status(ErrorCode::InvalidModel, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
        if (axis < 0) axis += int64_t(rank);
    }
    if (sizesT && sizesT->numel()) {
        auto sizes = readInts(*sizesT, "sizes");
        if (!sizes) return sizes.status();
        if (sizes->size() != axes.size()) return Status(ErrorCode::InvalidModel, "sizes has the wrong length");
        if (a.aspectPolicy != "stretch") {
            const bool notLarger = a.aspectPolicy == "not_larger";
            double s = notLarger ? 1e300 : 0;
            for (size_t i = 0; i < axes.size(); ++i) {
                const double r = double((*sizes)[i]) / double(inDims[size_t(axes[i])]);
                s = notLarger ? std::min(s, r) : std::max(s, r);
            }
            for (int64_t axis : axes) {
                g.scales[size_t(axis)] = s;
                g.outDims[size_t(axis)] = int64_t(std::floor(double(inDims[size_t(axis)]) * s + 0.5));
            }
        } else {
            for (size_t i = 0; i < axes.size(); ++i) {
                const size_t d = size_t(axes[i]);
                g.outDims[d] = (*sizes)[i];
                g.scales[d] = double((*sizes)[i]) / double(inDims[d]);
            }
        }
    } else {
        std::vector<double> given;
        if (scalesT && scalesT->numel())
            for (int64_t i = 0; i < scalesT->numel(); ++i) given.push_back(elementAsDouble(*scalesT, i));
        else
            given.assign(a.attrScales.begin(), a.attrScales.end());
        if (given.size() != axes.size()) return Status(ErrorCode::InvalidModel, "needs scales or sizes for every resized axis");
        for (size_t i = 0; i < axes.size(); ++i) {
            if (given[i] <= 0) return Status(ErrorCode::InvalidModel, "scales must be positive");
            const size_t d = size_t(axes[i]);
            g.scales[d] = given[i];
            g.outDims[d] = int64_t(std::floor(double(inDims[d]) * given[i]));
        }
    }
    g.roiStart.assign(rank, 0.0);
    g.roiEnd.assign(rank, 1.0);
    if (roiT && roiT->numel()) {
        if (size_t(roiT->numel()) != 2 * axes.size()) return Status(ErrorCode::InvalidModel, "roi has the wrong length");
        for (size_t i = 0; i < axes.size(); ++i) {
            g.roiStart[size_t(axes[i])] = elementAsDouble(*roiT, int64_t(i));
            g.roiEnd[size_t(axes[i])] = elementAsDouble(*roiT, int64_t(axes.size() + i));
        }
    }
    return g;
}

}  // namespace fsc
