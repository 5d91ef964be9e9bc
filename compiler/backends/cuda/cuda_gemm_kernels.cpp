// MatMul, Gemm, FusedMatMul and FusedGemm on the device through cuBLASLt (gemm_lowering.h).
#include "compiler/backends/cuda/cuda_kernel_support.h"
#include "compiler/backends/cuda/gemm_lowering.h"

namespace fsc::cudak {
namespace {

// ---- GEMM --------------------------------------------------------------------------

// MatMul, Gemm and FusedMatMul: shapes become GemmCalls (gemm_lowering.h); an epilogue
// cuBLASLt cannot fuse runs as a BiasActivation launch after the product.
class GemmKernel : public Kernel {
public:
    enum class Form { MatMul, Gemm, FusedMatMul, FusedGemm };
    GemmKernel(Form form, GemmAttributes attrs) : m_form(form), m_attrs(attrs) {}
    Status compute(KernelContext& ctx) override {
        const RtTensor* a = ctx.input(0);
        const RtTensor* b = ctx.input(1);
        if (!a || !b) return bad(ctx, "missing input");
        if (a->dtype != b->dtype) return bad(ctx, "inputs differ in dtype");
        if (!isFloatKind(a->dtype)) return Status(ErrorCode::Unsupported, ctx.where() + ": not a float type");
        const RtTensor* bias = m_form == Form::MatMul ? nullptr : ctx.input(2);
        const bool gemmForm = m_form == Form::Gemm || m_form == Form::FusedGemm;
        auto plan = gemmForm ? planGemm(a->dims, b->dims, bias ? &bias->dims : nullptr, m_attrs)
                                         : planMatMul(a->dims, b->dims, bias ? &bias->dims : nullptr, m_attrs);
        if (!plan) return plan.status().withContext(ctx.where());
        auto out = ctx.output(0, a->dtype, plan->outputDims);
        if (!out) return out.status();
        RtTensor& y = **out;
        if (y.numel() == 0) return Status::ok();
        Device* device = ctx.device();
        if (!device) return Status(ErrorCode::Internal, ctx.where() + ": a CUDA kernel ran without a device");
        const dk::ElemType type = *elemType(a->dtype);
        if (plan->prefillFromBias) {  // Gemm's C broadcast into Y, then beta * Y
            DeviceLaunch l;
            l.kind = DeviceKernelKind::Copy;
            dk::CopyParams& p = l.copy;
            p.src = bias->data;
            p.dst = y.data;
            p.srcType = p.dstType = type;
            p.rank = 2;
            p.dims[0] = plan->m;
            p.dims[1] = plan->n;
            const int64_t biasRows = bias->rank() == 2 ? bias->dims[0] : 1;
            const int64_t biasCols = bias->rank() ? bias->dims.back() : 1;
            p.srcStrides[0] = biasRows == 1 ? 0 : biasCols;
            p.srcStrides[1] = biasCols == 1 ? 0 : 1;
            p.dstStrides[0] = plan->n;
            p.dstStrides[1] = 1;
            p.srcOffset = p.dstOffset = 0;
            p.count = plan->m * plan->n;
            l.extents = {extentOf(*bias, false, "C"), extentOf(y, true, "output")};
            l.geometry = dk::elementGeometry(p.count);
            FSC_RETURN_IF_ERROR(device->launch(l));
        }
        const int64_t e = dk::elemBytes(type);
        for (const PlannedGemm& planned : plan->calls) {
            GemmCall call = planned.call;
            call.type = type;
            call.a = static_cast<const char*>(a->data) + planned.aOffset * e;
            call.b = static_cast<const char*>(b->data) + planned.bOffset * e;
            call.c = static_cast<char*>(y.data) + planned.cOffset * e;
            if (plan->biasInEpilogue) call.bias = bias->data;
            FSC_RETURN_IF_ERROR(device->gemm(call));
        }
        if (plan->separateEpilogue) return launchBiasActivation(ctx, y, y, nullptr, m_attrs.activation);
        return Status::ok();
    }

private:
    Form m_form;
    GemmAttributes m_attrs;
};

KernelFactory gemmOp(GemmKernel::Form form) {
    return [form](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        FSC_RETURN_IF_ERROR(requireFloatKind(init));
        GemmAttributes attrs;
        if (form == GemmKernel::Form::Gemm || form == GemmKernel::Form::FusedGemm) {
            attrs.transA = init.getInt("transA", 0) != 0;
            attrs.transB = init.getInt("transB", 0) != 0;
            attrs.alpha = init.getFloat("alpha", 1.f);
            attrs.beta = init.getFloat("beta", 1.f);
        }
        if (form == GemmKernel::Form::FusedMatMul || form == GemmKernel::Form::FusedGemm) {
            auto act = activationFromInit(init);
            if (!act) return act.status();
            attrs.activation = *act;
        }
        return std::unique_ptr<Kernel>(new GemmKernel(form, attrs));
    };
}

}  // namespace

void registerGemmKernels(KernelRegistry& r) {
    addKernel(r, "", "MatMul", gemmOp(GemmKernel::Form::MatMul), "cublaslt");
    addKernel(r, "", "Gemm", gemmOp(GemmKernel::Form::Gemm), "cublaslt");
    addKernel(r, "ai.fusescope", "FusedMatMul", gemmOp(GemmKernel::Form::FusedMatMul), "cublaslt");
    addKernel(r, "ai.fusescope", "FusedGemm", gemmOp(GemmKernel::Form::FusedGemm), "cublaslt");
}

}  // namespace fsc::cudak
