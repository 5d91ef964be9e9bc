#include "compiler/runtime/window_geometry.h"

#include <algorithm>

namespace fsc {
namespace {

Status windowError(const KernelContext& ctx, const std::string& message) {
    return Status(ErrorCode::InvalidModel, ctx.where() + ": " + message);
}

}  // namespace

Result<ConvGeometry> convGeometry(const KernelContext& ctx, const WindowAttrs& attrs,
                                  const std::vector<int64_t>& inSpatial,
                                  const std::vector<int64_t>& kernel, bool ceilMode) {
    const size_t nd = inSpatial.size();
    ConvGeometry g;
    g.in = inSpatial;
    g.kernel = kernel;
    g.strides = attrs.strides.empty() ? std::vector<int64_t>(nd, 1) : attrs.strides;
    g.dilations = attrs.dilations.empty() ? std::vector<int64_t>(nd, 1) : attrs.dilations;
    std::vector<int64_t> pads = attrs.pads.empty() ? std::vector<int64_t>(2 * nd, 0) : attrs.pads;
    if (kernel.size() != nd || g.strides.size() != nd || g.dilations.size() != nd || pads.size() != 2 * nd)
        return windowError(ctx, "kernel, strides, dilations or pads do not match " + std::to_string(nd) + " spatial dims");
    g.padBegin.resize(nd);
    g.out.resize(nd);
    for (size_t i = 0; i < nd; ++i) {
        if (g.strides[i] <= 0 || g.dilations[i] <= 0 || kernel[i] <= 0) return windowError(ctx, "kernel, strides and dilations must be positive");
        const int64_t dk = (kernel[i] - 1) * g.dilations[i] + 1;
        if (attrs.autoPad == "SAME_UPPER" || attrs.autoPad == "SAME_LOWER") {
            g.out[i] = (inSpatial[i] + g.strides[i] - 1) / g.strides[i];
            const int64_t total = std::max<int64_t>(0, (g.out[i] - 1) * g.strides[i] + dk - inSpatial[i]);
            g.padBegin[i] = attrs.autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
        } else {
            int64_t pb = pads[i], pe = pads[i + nd];
            if (attrs.autoPad == "VALID") pb = pe = 0;
            g.padBegin[i] = pb;
            const int64_t span = inSpatial[i] + pb + pe - dk;
            if (span < 0) return windowError(ctx, "kernel is larger than the padded input");
            g.out[i] = (ceilMode ? (span + g.strides[i] - 1) / g.strides[i] : span / g.strides[i]) + 1;
            // The last window must start inside the input or its left padding.
            if (ceilMode && (g.out[i] - 1) * g.strides[i] >= inSpatial[i] + pb) --g.out[i];
        }
    }
    return g;
}

WindowAttrs readWindowAttrs(const KernelInit& init) {
    WindowAttrs a;
    a.strides = init.getInts("strides");
    a.dilations = init.getInts("dilations");
    a.pads = init.getInts("pads");
    a.autoPad = init.getString("auto_pad", "NOTSET");
    a.kernelShape = init.getInts("kernel_shape");
    return a;
}

}  // namespace fsc
