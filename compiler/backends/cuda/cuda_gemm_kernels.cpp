// MatMul, Gemm, FusedMatMul, FusedGemm and MatMulInteger on the device through cuBLASLt
// (gemm_lowering.h).
#include <algorithm>

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
        if (!isFloatKind(a->dtype))
            return Status(ErrorCode::Unsupported, ctx.where() + ": not a float type");
        const RtTensor* bias = m_form == Form::MatMul ? nullptr : ctx.input(2);
        const bool gemmForm = m_form == Form::Gemm || m_form == Form::FusedGemm;
        auto plan = gemmForm ? planGemm(a->dims, b->dims, bias ? &bias->dims : nullptr, m_attrs)
                             : planMatMul(a->dims, b->dims, bias ? &bias->dims : nullptr, m_attrs);
        if (!plan) return plan.status().withContext(ctx.where());
        auto out = ctx.output(0, a->dtype, plan->outputDims);
        if (!out) return out.status();
        RtTensor& y = **out;
        if (y.numel() == 0) return Status::ok();
        auto found = deviceOf(ctx);
        if (!found) return found.status();
        CudaDevice* device = *found;
        const dk::ElemType type = *elemType(a->dtype);
        if (plan->prefillFromBias) {  // Gemm's C broadcast into Y, then beta * Y
            DeviceLaunch l;
                        dk::CopyParams& p = l.set<dk::CopyParams>();
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
            call.tf32 = ctx.tf32();
            FSC_RETURN_IF_ERROR(device->gemm(call));
        }
        if (plan->separateEpilogue)
            return launchBiasActivation(ctx, y, y, nullptr, m_attrs.activation);
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

// ---- INT8 GEMM ---------------------------------------------------------------------

// MatMulInteger as `--quantize int8 --symmetric-activations` leaves it: int8 activations
// [..., M, K] times a constant int8 weight [K, N], both zero points zero, into int32,
// through cuBLASLt's integer GEMM. That GEMM wants the weight as N x K, so the weight is
// transposed into the device's workspace first. Anything else (uint8, non-zero zero
// points, K or N not a multiple of 4) declines at lowering and runs on the CPU.
class MatMulIntegerKernel : public Kernel {
public:
    Status compute(KernelContext& ctx) override {
        const RtTensor* a = ctx.input(0);
        const RtTensor* b = ctx.input(1);
        if (!a || !b || a->rank() < 2 || b->rank() != 2)
            return bad(ctx, "wants A of rank 2 or more and a 2-D B");
        if (a->dtype != DType::Int8 || b->dtype != DType::Int8)
            return unsupported(ctx, "the device takes int8 inputs only");
        const int64_t k = b->dims[0], n = b->dims[1];
        if (a->dims.back() != k) return bad(ctx, "A's last dim differs from B's first");
        std::vector<int64_t> outDims = a->dims;
        outDims.back() = n;
        auto out = ctx.output(0, DType::Int32, outDims);
        if (!out) return out.status();
        RtTensor& y = **out;
        if (y.numel() == 0) return Status::ok();
        auto found = deviceOf(ctx);
        if (!found) return found.status();
        CudaDevice* device = *found;
        auto transposed = device->workspace(size_t(k * n));
        if (!transposed) return transposed.status().withContext(ctx.where());
        DeviceLaunch l;
                dk::CopyParams& p = l.set<dk::CopyParams>();
        p.src = b->data;
        p.dst = *transposed;
        p.srcType = p.dstType = dk::ElemType::I8;
        p.rank = 2;
        p.dims[0] = n;  // walk B^T's rows: element (j, kk) of B^T is B[kk, j]
        p.dims[1] = k;
        p.srcStrides[0] = 1;
        p.srcStrides[1] = n;
        p.dstStrides[0] = k;
        p.dstStrides[1] = 1;
        p.srcOffset = p.dstOffset = 0;
        p.count = k * n;
        l.extents = {extentOf(*b, false, "B"),
                     {*transposed, size_t(k * n), true, "B transposed (workspace)"}};
        l.geometry = dk::elementGeometry(p.count);
        if (k > 0) FSC_RETURN_IF_ERROR(device->launch(l));  // an empty grid is no launch on a GPU
        const int64_t ld = std::max<int64_t>(k, 4);  // cuBLASLt wants leading dims >= 1, in fours
        GemmCall call;
        call.type = dk::ElemType::I8;
        call.m = y.numel() / n;  // A's rows; n > 0 here, while k may be 0
        call.n = n;
        call.k = k;
        call.a = a->data;
        call.lda = ld;
        call.transB = true;
        call.b = *transposed;
        call.ldb = ld;
        call.c = y.data;
        call.ldc = n;
        return device->gemm(call).withContext(ctx.where());
    }
};

// Declines, with the reason graph-break analysis shows, what the integer GEMM cannot take.
Result<std::unique_ptr<Kernel>> matMulIntegerOp(const KernelInit& init) {
    const Graph& g = init.graph();
    const Node& node = init.node();
    for (size_t i = 0; i < 2; ++i)
        if (!init.inputPresent(i) || g.value(node.inputs[i]).type.elemType != DType::Int8)
            return declined(
                "MatMulInteger on the device takes int8 A and B (cuBLASLt has no uint8 GEMM); this "
                "one runs on the CPU");
    for (size_t i = 2; i < 4; ++i) {
        if (!init.inputPresent(i)) continue;
        const Tensor* zero = init.constantInput(i);
        bool allZero = zero != nullptr;
        for (int64_t e = 0; zero && e < zero->numElements(); ++e)
            allZero = allZero && zero->data()[e] == 0;
        if (!allZero)
            return declined(
                "MatMulInteger on the device takes zero points of 0 only (symmetric int8)");
    }
    const Tensor* weight = init.constantInput(1);
    if (!weight || weight->dims().size() != 2)
        return declined("MatMulInteger on the device wants B to be a constant 2-D weight");
    if (weight->dims()[0] % 4 || weight->dims()[1] % 4)
        return declined(
            "MatMulInteger on the device wants K and N to be multiples of 4 (cuBLASLt's integer "
            "GEMM); B is " +
            std::to_string(weight->dims()[0]) + "x" + std::to_string(weight->dims()[1]));
    if (declaredRank(init, 0) >= 0 && declaredRank(init, 0) < 2)
        return declined("MatMulInteger on the device wants A of rank 2 or more");
    return std::unique_ptr<Kernel>(new MatMulIntegerKernel);
}

}  // namespace

void registerGemmKernels(KernelRegistry& r) {
    addKernel(r, "", "MatMulInteger", matMulIntegerOp, "cublaslt.int8");
    addKernel(r, "", "MatMul", gemmOp(GemmKernel::Form::MatMul), "cublaslt");
    addKernel(r, "", "Gemm", gemmOp(GemmKernel::Form::Gemm), "cublaslt");
    addKernel(r, "ai.fusescope", "FusedMatMul", gemmOp(GemmKernel::Form::FusedMatMul), "cublaslt");
    addKernel(r, "ai.fusescope", "FusedGemm", gemmOp(GemmKernel::Form::FusedGemm), "cublaslt");
}

}  // namespace fsc::cudak
