// Softmax, LogSoftmax, LayerNormalization and RMSNorm: one warp per row (kernels/row_kernels.h).
#include "compiler/backends/cuda/cuda_kernel_support.h"

namespace fsc::cudak {
namespace {

// ---- rows: Softmax, LogSoftmax, LayerNormalization, RmsNorm ---------------------------

class SoftmaxKernel : public Kernel {
public:
    SoftmaxKernel(int64_t axis, bool coerce2d, bool log) : m_axis(axis), m_coerce2d(coerce2d), m_log(log) {}
    Status compute(KernelContext& ctx) override {
        const RtTensor* x = ctx.input(0);
        if (!x) return bad(ctx, "missing input");
        if (!isFloatKind(x->dtype)) return Status(ErrorCode::Unsupported, ctx.where() + ": not a float type");
        const int64_t rank = int64_t(x->rank());
        const int64_t axis = m_axis < 0 ? m_axis + rank : m_axis;
        if (axis < 0 || axis >= std::max<int64_t>(rank, 1)) return bad(ctx, "axis out of range");
        if (!m_coerce2d && rank && axis != rank - 1)
            return Status(ErrorCode::Internal, ctx.where() + ": the device softmax reduces the last axis only");
        auto out = ctx.output(0, x->dtype, x->dims);
        if (!out) return out.status();
        DeviceLaunch l;
                dk::SoftmaxParams& p = l.set<dk::SoftmaxParams>();
        p.in = x->data;
        p.out = (*out)->data;
        p.type = *elemType(x->dtype);
        p.logSoftmax = m_log;
        p.cols = 1;
        for (int64_t d = axis; d < rank; ++d) p.cols *= x->dims[size_t(d)];
        if (x->numel() == 0) return Status::ok();
        p.rows = x->numel() / p.cols;
        l.extents = {extentOf(*x, false, "input"), extentOf(**out, true, "output")};
        l.geometry = dk::rowGeometry(p.rows);
        return launch(ctx, l);
    }

private:
    int64_t m_axis;
    bool m_coerce2d, m_log;
};

KernelFactory softmaxOp(bool log) {
    return [log](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        FSC_RETURN_IF_ERROR(requireFloatKind(init));
        const bool coerce2d = init.opset() < 13;
        const int64_t axis = init.getInt("axis", coerce2d ? 1 : -1);
        if (!coerce2d) {
            const int64_t rank = declaredRank(init, 0);
            if (rank < 0) return declined("Softmax of unknown rank");
            if ((axis < 0 ? axis + rank : axis) != rank - 1) return declined("Softmax over an axis that is not the last");
        }
        return std::unique_ptr<Kernel>(new SoftmaxKernel(axis, coerce2d, log));
    };
}

// LayerNormalization, RMSNorm and SkipLayerNorm (input + skip, optionally stored as the
// second output) over the trailing dims from `axis`.
class NormKernel : public Kernel {
public:
    enum class Form { Layer, Rms, Skip };
    NormKernel(int64_t axis, float epsilon, Form form) : m_axis(axis), m_epsilon(epsilon), m_form(form) {}
    Status compute(KernelContext& ctx) override {
        const bool skip = m_form == Form::Skip;
        const RtTensor* x = ctx.input(0);
        const RtTensor* skipIn = skip ? ctx.input(1) : nullptr;
        const RtTensor* scale = ctx.input(skip ? 2 : 1);
        const RtTensor* bias = m_form == Form::Rms ? nullptr : ctx.input(skip ? 3 : 2);
        if (!x || !scale || (skip && !skipIn)) return bad(ctx, "missing input");
        if (!isFloatKind(x->dtype) || scale->dtype != x->dtype || (bias && bias->dtype != x->dtype) ||
            (skipIn && skipIn->dtype != x->dtype))
            return unsupported(ctx, "the device kernel needs one float type for X, skip, scale and bias");
        if (skipIn && skipIn->dims != x->dims) return bad(ctx, "skip must have the input's shape");
        const int64_t rank = int64_t(x->rank());
        const int64_t axis = m_axis < 0 ? m_axis + rank : m_axis;
        if (axis < 0 || axis >= std::max<int64_t>(rank, 1)) return bad(ctx, "axis out of range");
        int64_t cols = 1;
        for (int64_t d = axis; d < rank; ++d) cols *= x->dims[size_t(d)];
        if (scale->numel() != cols || (bias && bias->numel() != cols))
            return unsupported(ctx, "the device kernel needs scale and bias of the normalised size");
        auto out = ctx.output(0, x->dtype, x->dims);
        if (!out) return out.status();
        RtTensor* sum = nullptr;
        if (skip && ctx.outputWanted(1)) {
            auto s = ctx.output(1, x->dtype, x->dims);
            if (!s) return s.status();
            sum = *s;
        }
        if (x->numel() == 0) return Status::ok();
        DeviceLaunch l;
                dk::NormParams& p = l.set<dk::NormParams>();
        p.in = x->data;
        p.skip = skipIn ? skipIn->data : nullptr;
        p.sumOut = sum ? sum->data : nullptr;
        p.scale = scale->data;
        p.bias = bias ? bias->data : nullptr;
        p.out = (*out)->data;
        p.type = *elemType(x->dtype);
        p.rms = m_form == Form::Rms;
        p.epsilon = m_epsilon;
        p.cols = cols;
        p.rows = x->numel() / cols;
        l.extents = {extentOf(*x, false, "input"), extentOf(*scale, false, "scale"), extentOf(**out, true, "output")};
        if (bias) l.extents.push_back(extentOf(*bias, false, "bias"));
        if (skipIn) l.extents.push_back(extentOf(*skipIn, false, "skip"));
        if (sum) l.extents.push_back(extentOf(*sum, true, "sum"));
        l.geometry = dk::rowGeometry(p.rows);
        return launch(ctx, l);
    }

private:
    int64_t m_axis;
    float m_epsilon;
    Form m_form;
};

KernelFactory normOp(NormKernel::Form form) {
    return [form](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        FSC_RETURN_IF_ERROR(requireFloatKind(init));
        if (form != NormKernel::Form::Skip && !onlyFirstOutputUsed(init))
            return declined("LayerNormalization's Mean and InvStdDev outputs are read");
        const int64_t axis = form == NormKernel::Form::Skip ? -1 : init.getInt("axis", -1);
        return std::unique_ptr<Kernel>(new NormKernel(axis, init.getFloat("epsilon", 1e-5f), form));
    };
}

}  // namespace

void registerRowKernels(KernelRegistry& r) {
    addKernel(r, "", "Softmax", softmaxOp(false), "warp_rows");
    addKernel(r, "", "LogSoftmax", softmaxOp(true), "warp_rows");
    addKernel(r, "", "LayerNormalization", normOp(NormKernel::Form::Layer), "warp_rows");
    addKernel(r, "ai.fusescope", "LayerNormalization", normOp(NormKernel::Form::Layer), "warp_rows");
    addKernel(r, "ai.fusescope", "RmsNorm", normOp(NormKernel::Form::Rms), "warp_rows");
    addKernel(r, "ai.fusescope", "SkipLayerNorm", normOp(NormKernel::Form::Skip), "warp_rows");
}

}  // namespace fsc::cudak
