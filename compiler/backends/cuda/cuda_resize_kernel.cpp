// Resize and Upsample on the device: the host works out the output geometry from the
// scales or sizes it holds (runtime/resize_rules.h, the CPU kernel's rules), and one launch
// computes every output element (kernels/resize_kernel.h).
#include "compiler/backends/cuda/cuda_kernel_support.h"
#include "compiler/runtime/resize_rules.h"

namespace fsc::cudak {
namespace {

Result<dk::ResizeCoord> coordinateMode(const std::string& name) {
    if (name == "half_pixel") return dk::ResizeCoord::HalfPixel;
    if (name == "half_pixel_symmetric") return dk::ResizeCoord::HalfPixelSymmetric;
    if (name == "pytorch_half_pixel") return dk::ResizeCoord::PytorchHalfPixel;
    if (name == "align_corners") return dk::ResizeCoord::AlignCorners;
    if (name == "asymmetric") return dk::ResizeCoord::Asymmetric;
    if (name == "tf_half_pixel_for_nn") return dk::ResizeCoord::TfHalfPixelForNn;
    if (name == "tf_crop_and_resize") return dk::ResizeCoord::TfCropAndResize;
    return declined("Resize's coordinate_transformation_mode '" + name + "' is not on the device");
}

Result<dk::NearestRounding> nearestRounding(const std::string& name) {
    if (name == "round_prefer_floor") return dk::NearestRounding::RoundPreferFloor;
    if (name == "round_prefer_ceil") return dk::NearestRounding::RoundPreferCeil;
    if (name == "floor") return dk::NearestRounding::Floor;
    if (name == "ceil") return dk::NearestRounding::Ceil;
    return declined("Resize's nearest_mode '" + name + "' is not on the device");
}

class ResizeKernel : public Kernel {
public:
    ResizeKernel(ResizeAttributes a, dk::ResizeCoord coord, dk::NearestRounding nearest)
        : m_a(std::move(a)), m_coord(coord), m_nearest(nearest) {}

    Status compute(KernelContext& ctx) override {
        const RtTensor* x = ctx.input(0);
        if (!x) return bad(ctx, "missing input");
        if (x->rank() < 1 || x->rank() > size_t(dk::kMaxRank)) return unsupported(ctx, "rank 1 to 8 only");
        const bool old = m_a.upsample || m_a.opset < 11;
        auto g = resizeGeometry(m_a, x->dims, old ? nullptr : ctx.input(1), ctx.input(old ? 1 : 2), old ? nullptr : ctx.input(3));
        if (!g) return g.status().withContext(ctx.where());
        auto type = elemType(x->dtype);
        if (!type) return unsupported(ctx, "no device element type for " + std::string(dtypeName(x->dtype)));
        auto out = ctx.output(0, x->dtype, g->outDims);
        if (!out) return out.status();
        RtTensor& y = **out;
        if (y.numel() == 0) return Status::ok();
        DeviceLaunch l;
                dk::ResizeParams& p = l.set<dk::ResizeParams>();
        p.in = x->data;
        p.out = y.data;
        p.type = *type;
        p.mode = m_a.mode == "nearest" ? dk::ResizeMode::Nearest : m_a.mode == "linear" ? dk::ResizeMode::Linear : dk::ResizeMode::Cubic;
        p.coord = m_coord;
        p.nearest = m_nearest;
        p.excludeOutside = m_a.excludeOutside;
        p.cubicA = m_a.cubicA;
        p.extrapolation = m_a.extrapolation;
        p.rank = int(x->rank());
        for (size_t d = 0; d < x->rank(); ++d) {
            p.inDims[d] = x->dims[d];
            p.outDims[d] = g->outDims[d];
            p.scales[d] = g->scales[d];
            p.roiStart[d] = g->roiStart[d];
            p.roiEnd[d] = g->roiEnd[d];
        }
        p.count = y.numel();
        l.extents = {extentOf(*x, false, "input"), extentOf(y, true, "output")};
        l.geometry = dk::elementGeometry(p.count);
        return launch(ctx, l);
    }

private:
    ResizeAttributes m_a;
    dk::ResizeCoord m_coord;
    dk::NearestRounding m_nearest;
};

KernelFactory resizeOp(bool upsample) {
    return [upsample](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        auto a = readResizeAttributes(init, upsample);
        if (!a) return declined(a.status().message());
        auto coord = coordinateMode(a->coord);
        if (!coord) return coord.status();
        auto nearest = nearestRounding(a->nearest);
        if (!nearest) return nearest.status();
        return std::unique_ptr<Kernel>(new ResizeKernel(std::move(*a), *coord, *nearest));
    };
}

}  // namespace

void registerResizeKernels(KernelRegistry& r) {
    // Scales, sizes and the region of interest are shapes the host must hold.
    addKernel(r, "", "Resize", resizeOp(false), "taps", {1, 2, 3});
    addKernel(r, "", "Upsample", resizeOp(true), "taps", {1});
}

}  // namespace fsc::cudak
