// Reductions, pools and BatchNormalization on the device (kernels/reduce_kernels.h): one
// thread per output element over its window. The window geometry of pools is the
// runtime's (runtime/window_geometry.h), the one the CPU backend uses, so both agree on pads, ceil mode and dilations.
#include "compiler/runtime/window_geometry.h"
#include "compiler/backends/cuda/cuda_kernel_support.h"
#include "compiler/runtime/execution_plan.h"

namespace fsc::cudak {

Status launchReduce(KernelContext& ctx, const RtTensor& x, const std::vector<bool>& reduced, dk::ReduceOp op,
                    RtTensor& out) {
    DeviceLaunch l;
        dk::ReduceParams& p = l.set<dk::ReduceParams>();
    p.in = x.data;
    p.out = out.data;
    p.type = *elemType(x.dtype);
    p.op = op;
    const auto strides = contiguousStrides(x.dims);
    p.reduceCount = 1;
    for (size_t d = 0; d < x.rank(); ++d) {
        if (reduced[d]) {
            p.reduceDims[p.reduceRank] = x.dims[d];
            p.reduceStrides[p.reduceRank++] = strides[d];
            p.reduceCount *= x.dims[d];
        } else {
            p.dims[p.rank] = x.dims[d];
            p.strides[p.rank++] = strides[d];
        }
    }
    p.count = out.numel();
    if (p.count == 0) return Status::ok();
    l.extents = {extentOf(x, false, "input"), extentOf(out, true, "output")};
    l.geometry = dk::elementGeometry(p.count);
    return launch(ctx, l);
}

namespace {

class ReduceKernel : public Kernel {
public:
    ReduceKernel(const KernelInit& init, dk::ReduceOp op, bool axesFromInput) : m_op(op), m_axesFromInput(axesFromInput) {
        m_keepDims = init.getInt("keepdims", 1) != 0;
        m_noopWithEmptyAxes = init.getInt("noop_with_empty_axes", 0) != 0;
        m_attrAxes = init.getInts("axes");
    }
    Status compute(KernelContext& ctx) override {
        const RtTensor* x = ctx.input(0);
        if (!x) return bad(ctx, "missing input");
        if (!isFloatKind(x->dtype)) return unsupported(ctx, "not a float type");
        std::vector<int64_t> axes = m_attrAxes;
        if (m_axesFromInput && ctx.input(1)) {
            auto a = readInts(*ctx.input(1), "axes");
            if (!a) return a.status().withContext(ctx.where());
            axes = *a;
        }
        const int64_t rank = int64_t(x->rank());
        if (rank > dk::kMaxRank) return unsupported(ctx, "rank above 8");
        std::vector<bool> reduced(size_t(rank), axes.empty() && !m_noopWithEmptyAxes);
        for (int64_t a : axes) {
            const int64_t n = a < 0 ? a + rank : a;
            if (n < 0 || n >= rank) return bad(ctx, "axis " + std::to_string(a) + " is out of range");
            reduced[size_t(n)] = true;
        }
        std::vector<int64_t> outDims;
        for (int64_t d = 0; d < rank; ++d)
            if (!reduced[size_t(d)]) outDims.push_back(x->dims[size_t(d)]);
            else if (m_keepDims) outDims.push_back(1);
        auto out = ctx.output(0, x->dtype, outDims);
        if (!out) return out.status();
        return launchReduce(ctx, *x, reduced, m_op, **out);
    }

private:
    dk::ReduceOp m_op;
    bool m_axesFromInput;
    bool m_keepDims = true, m_noopWithEmptyAxes = false;
    std::vector<int64_t> m_attrAxes;
};

KernelFactory reduceOp(dk::ReduceOp op, int64_t axesInputFrom) {
    return [op, axesInputFrom](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        FSC_RETURN_IF_ERROR(requireFloatKind(init));
        return std::unique_ptr<Kernel>(new ReduceKernel(init, op, init.opset() >= axesInputFrom));
    };
}

KernelFactory globalAveragePoolOp() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        FSC_RETURN_IF_ERROR(requireFloatKind(init));
        return std::unique_ptr<Kernel>(new FunctionKernel([](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            if (!x || x->rank() < 3) return bad(ctx, "X must have rank >= 3");
            if (!isFloatKind(x->dtype)) return unsupported(ctx, "not a float type");
            if (x->rank() > size_t(dk::kMaxRank)) return unsupported(ctx, "rank above 8");
            std::vector<int64_t> outDims{x->dims[0], x->dims[1]};
            outDims.resize(x->rank(), 1);
            auto out = ctx.output(0, x->dtype, outDims);
            if (!out) return out.status();
            std::vector<bool> reduced(x->rank(), true);
            reduced[0] = reduced[1] = false;
            return launchReduce(ctx, *x, reduced, dk::ReduceOp::Mean, **out);
        }));
    };
}

class PoolKernel : public Kernel {
public:
    PoolKernel(const KernelInit& init, bool max, bool channelsLast) : m_max(max), m_channelsLast(channelsLast) {
        m_attrs = readWindowAttrs(init);
        m_ceil = init.getInt("ceil_mode", 0) != 0;
        m_countIncludePad = init.getInt("count_include_pad", 0) != 0;
    }
    Status compute(KernelContext& ctx) override {
        const RtTensor* x = ctx.input(0);
        if (!x || x->rank() < 3) return bad(ctx, "X must have rank >= 3");
        if (!isFloatKind(x->dtype)) return unsupported(ctx, "not a float type");
        const size_t nd = x->rank() - 2;
        if (nd > 3) return unsupported(ctx, "more than 3 spatial dims");
        if (m_channelsLast && nd != 2) return bad(ctx, "a channels-last pool needs X [N, H, W, C]");
        const size_t firstSpatial = m_channelsLast ? 1 : 2;
        std::vector<int64_t> spatial(x->dims.begin() + firstSpatial, x->dims.begin() + firstSpatial + nd);
        if (m_attrs.kernelShape.size() != nd) return bad(ctx, "kernel_shape does not match the input rank");
        auto geo = convGeometry(ctx, m_attrs, spatial, m_attrs.kernelShape, m_ceil);
        if (!geo) return geo.status();
        std::vector<int64_t> outDims{x->dims[0], x->dims[1]};
        outDims.insert(outDims.end(), geo->out.begin(), geo->out.end());
        if (m_channelsLast) outDims = {x->dims[0], geo->out[0], geo->out[1], x->dims[3]};
        auto out = ctx.output(0, x->dtype, outDims);
        if (!out) return out.status();
        DeviceLaunch l;
                dk::PoolParams& p = l.set<dk::PoolParams>();
        p.in = x->data;
        p.out = (*out)->data;
        p.type = *elemType(x->dtype);
        p.max = m_max;
        p.countIncludePad = m_countIncludePad;
        p.channelsLast = m_channelsLast;
        p.channels = m_channelsLast ? x->dims[3] : x->dims[1];
        p.spatial = int(nd);
        p.inPlane = numel(spatial);
        p.outPlane = numel(geo->out);
        for (size_t d = 0; d < nd; ++d) {
            p.inDims[d] = spatial[d];
            p.outDims[d] = geo->out[d];
            p.kernel[d] = geo->kernel[d];
            p.strides[d] = geo->strides[d];
            p.dilations[d] = geo->dilations[d];
            p.padBegin[d] = geo->padBegin[d];
            // count_include_pad counts the explicit pads only (as the CPU backend does).
            p.padEnd[d] = !m_attrs.pads.empty() && m_attrs.autoPad == "NOTSET" ? m_attrs.pads[d + nd] : 0;
        }
        p.count = (*out)->numel();
        if (p.count == 0) return Status::ok();
        p.narrowIndex = std::max(p.count, x->numel()) < (int64_t(1) << 31);
        l.extents = {extentOf(*x, false, "input"), extentOf(**out, true, "output")};
        l.geometry = dk::elementGeometry(p.count);
        return launch(ctx, l);
    }

private:
    bool m_max;
    bool m_channelsLast;  // ai.fusescope.MaxPool and AveragePool: X and Y NHWC
    WindowAttrs m_attrs;
    bool m_ceil = false, m_countIncludePad = false;
};

KernelFactory poolOp(bool max, bool channelsLast = false) {
    return [max, channelsLast](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        FSC_RETURN_IF_ERROR(requireFloatKind(init));
        if (max && !onlyFirstOutputUsed(init)) return declined("MaxPool's Indices output is read");
        if (max && init.getInt("storage_order", 0) != 0) return declined("MaxPool with storage_order 1");
        return std::unique_ptr<Kernel>(new PoolKernel(init, max, channelsLast));
    };
}

KernelFactory batchNormOp() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        FSC_RETURN_IF_ERROR(requireFloatKind(init));
        if (init.getInt("training_mode", 0) != 0 || !onlyFirstOutputUsed(init))
            return declined("BatchNormalization in training mode");
        const float epsilon = init.getFloat("epsilon", 1e-5f);
        return std::unique_ptr<Kernel>(new FunctionKernel([epsilon](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const RtTensor *scale = ctx.input(1), *bias = ctx.input(2), *mean = ctx.input(3), *var = ctx.input(4);
            if (!x || !scale || !bias || !mean || !var) return bad(ctx, "needs X, scale, B, mean and var");
            if (x->rank() < 2) return bad(ctx, "X must have a channel dim");
            for (const RtTensor* t : {scale, bias, mean, var})
                if (t->dtype != x->dtype) return unsupported(ctx, "the device kernel needs one dtype for X and the statistics");
            const int64_t c = x->dims[1];
            if (scale->numel() != c || bias->numel() != c || mean->numel() != c || var->numel() != c)
                return bad(ctx, "scale, B, mean and var must have " + std::to_string(c) + " elements");
            auto out = ctx.output(0, x->dtype, x->dims);
            if (!out) return out.status();
            DeviceLaunch l;
                        dk::ChannelAffineParams& p = l.set<dk::ChannelAffineParams>();
            p.in = x->data;
            p.scale = scale->data;
            p.bias = bias->data;
            p.mean = mean->data;
            p.var = var->data;
            p.out = (*out)->data;
            p.type = *elemType(x->dtype);
            p.epsilon = epsilon;
            p.channels = c;
            p.inner = numel({x->dims.begin() + 2, x->dims.end()});
            p.count = x->numel();
            if (p.count == 0) return Status::ok();
            l.extents = {extentOf(*x, false, "X"), extentOf(*scale, false, "scale"), extentOf(*bias, false, "B"),
                         extentOf(*mean, false, "mean"), extentOf(*var, false, "var"), extentOf(**out, true, "output")};
            l.geometry = dk::elementGeometry(p.count);
            return launch(ctx, l);
        }));
    };
}

}  // namespace

void registerReduceKernels(KernelRegistry& r) {
    // ReduceSum takes its axes as an input from opset 13, the others from 18.
    addKernel(r, "", "ReduceSum", reduceOp(dk::ReduceOp::Sum, 13), "reduce", {1});
    addKernel(r, "", "ReduceMean", reduceOp(dk::ReduceOp::Mean, 18), "reduce", {1});
    addKernel(r, "", "ReduceMax", reduceOp(dk::ReduceOp::Max, 18), "reduce", {1});
    addKernel(r, "", "GlobalAveragePool", globalAveragePoolOp(), "reduce");
    addKernel(r, "", "MaxPool", poolOp(true), "pool");
    addKernel(r, "ai.fusescope", "MaxPool", poolOp(true, true), "pool");
    addKernel(r, "", "AveragePool", poolOp(false), "pool");
    addKernel(r, "ai.fusescope", "AveragePool", poolOp(false, true), "pool");
    addKernel(r, "", "BatchNormalization", batchNormOp(), "channel_affine");
}

}  // namespace fsc::cudak
