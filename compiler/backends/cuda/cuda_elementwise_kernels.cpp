// Element-wise ops on the device: every ONNX element-wise op of the program table and
// FusedElementwise run one program kernel over broadcast inputs; the activations with
// parameters (Gelu, HardSwish, HardSigmoid, Clip) run the bias-activation kernel.
#include "compiler/backends/cuda/cuda_kernel_support.h"
#include "compiler/backends/cuda/gemm_lowering.h"
#include "compiler/elementwise_program.h"

namespace fsc::cudak {
namespace {

static_assert(int(dk::EwCode::Cos) == int(EwOp::Cos) && int(dk::EwCode::Relu) == int(EwOp::Relu),
              "dk::EwCode mirrors fsc::EwOp");

// ---- element-wise ------------------------------------------------------------------

// One program over broadcast inputs: a single ONNX op is a program of one instruction.
class ElementwiseKernel : public Kernel {
public:
    explicit ElementwiseKernel(ElementwiseProgram program) : m_program(std::move(program)) {}
    Status compute(KernelContext& ctx) override {
        std::vector<const RtTensor*> ins;
        for (size_t i = 0; i < ctx.inputCount(); ++i) {
            if (!ctx.input(i)) return bad(ctx, "missing input " + std::to_string(i));
            ins.push_back(ctx.input(i));
        }
        const DType dtype = ins[0]->dtype;
        for (const RtTensor* t : ins)
            if (t->dtype != dtype) return bad(ctx, "inputs differ in dtype");
        if (!isFloatKind(dtype))
            return Status(ErrorCode::Unsupported, ctx.where() + ": the device kernel handles float32, float16 and bfloat16, not " + std::string(dtypeName(dtype)));
        auto dims = broadcast(ctx, ins);
        if (!dims) return dims.status();
        if (dims->size() > size_t(dk::kMaxRank)) return Status(ErrorCode::Unsupported, ctx.where() + ": rank above 8");
        auto out = ctx.output(0, dtype, *dims);
        if (!out) return out.status();
        DeviceLaunch l;
        l.kind = DeviceKernelKind::Elementwise;
        dk::EwParams& p = l.elementwise;
        p.type = *elemType(dtype);
        p.inputs = int(ins.size());
        p.codeLength = int(m_program.code.size());
        for (size_t k = 0; k < m_program.code.size(); ++k) {
            p.op[k] = uint8_t(m_program.code[k].op);
            p.a[k] = int8_t(m_program.code[k].a);
            p.b[k] = int8_t(m_program.code[k].b);
        }
        p.rank = int(dims->size());
        for (size_t d = 0; d < dims->size(); ++d) p.dims[d] = (*dims)[d];
        for (size_t k = 0; k < ins.size(); ++k) {
            p.in[k] = ins[k]->data;
            const auto strides = contiguousStrides(ins[k]->dims);
            const size_t lead = dims->size() - ins[k]->rank();
            for (size_t d = 0; d < dims->size(); ++d)
                p.strides[k][d] = d < lead || ins[k]->dims[d - lead] == 1 ? 0 : strides[d - lead];
            p.sameAsOutput[k] = ins[k]->dims == *dims;
            l.extents.push_back(extentOf(*ins[k], false, "input"));
        }
        p.out = (*out)->data;
        p.count = (*out)->numel();
        if (p.count == 0) return Status::ok();
        l.extents.push_back(extentOf(**out, true, "output"));
        l.geometry = dk::elementGeometry(p.count);
        return launch(ctx, l);
    }

private:
    ElementwiseProgram m_program;
};

KernelFactory elementwiseOp(EwOp op, int arity) {
    return [op, arity](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        FSC_RETURN_IF_ERROR(requireFloatKind(init));
        if (init.inputCount() != size_t(arity))
            return declined(init.node().opType + " with " + std::to_string(init.inputCount()) + " inputs");
        ElementwiseProgram program;
        program.inputs = arity;
        program.code.push_back({op, 0, arity == 2 ? 1 : -1});
        return std::unique_ptr<Kernel>(new ElementwiseKernel(std::move(program)));
    };
}

KernelFactory fusedElementwise() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        FSC_RETURN_IF_ERROR(requireFloatKind(init));
        auto program = ElementwiseProgram::fromAttributes(init.getStrings("ops"), init.getInts("args"),
                                                          int(init.inputCount()));
        if (!program) return program.status();
        if (program->inputs > dk::kEwMaxInputs || program->code.size() > size_t(dk::kEwMaxCode))
            return declined("FusedElementwise with more than 8 inputs or 32 ops");
        return std::unique_ptr<Kernel>(new ElementwiseKernel(std::move(*program)));
    };
}

// An activation alone (Gelu, HardSwish, HardSigmoid, Clip), or a bias and an activation
// after a GEMM: the BiasActivation kernel.
class ActivationKernel : public Kernel {
public:
    ActivationKernel(GemmActivation act, bool clipFromInputs) : m_act(act), m_clipFromInputs(clipFromInputs) {}
    Status compute(KernelContext& ctx) override {
        const RtTensor* x = ctx.input(0);
        if (!x) return bad(ctx, "missing input");
        if (!isFloatKind(x->dtype)) return Status(ErrorCode::Unsupported, ctx.where() + ": not a float type");
        GemmActivation act = m_act;
        if (m_clipFromInputs) {  // Clip's min and max are host inputs 1 and 2 (opset 11+)
            act.alpha = -INFINITY;
            act.beta = INFINITY;
            if (const RtTensor* lo = ctx.input(1); lo && lo->numel()) act.alpha = float(elementAsDouble(*lo, 0));
            if (const RtTensor* hi = ctx.input(2); hi && hi->numel()) act.beta = float(elementAsDouble(*hi, 0));
        }
        auto out = ctx.output(0, x->dtype, x->dims);
        if (!out) return out.status();
        return launchBiasActivation(ctx, *x, **out, nullptr, act);
    }

private:
    GemmActivation m_act;
    bool m_clipFromInputs;
};

KernelFactory activationOp(dk::Act kind) {
    return [kind](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        FSC_RETURN_IF_ERROR(requireFloatKind(init));
        GemmActivation act{kind, 0.f, 0.f};
        bool clipFromInputs = false;
        if (kind == dk::Act::Gelu && init.getString("approximate", "none") == "tanh") act.kind = dk::Act::GeluTanh;
        if (kind == dk::Act::HardSigmoid) {
            act.alpha = init.getFloat("alpha", 0.2f);
            act.beta = init.getFloat("beta", 0.5f);
        }
        if (kind == dk::Act::Clip) {
            clipFromInputs = init.opset() >= 11;
            act.alpha = init.getFloat("min", -INFINITY);
            act.beta = init.getFloat("max", INFINITY);
        }
        return std::unique_ptr<Kernel>(new ActivationKernel(act, clipFromInputs));
    };
}

}  // namespace

void registerElementwiseKernels(KernelRegistry& r) {
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"})
        addKernel(r, "", op, elementwiseOp(*fsc::elementwiseOp(op, 2), 2), "elementwise");
    for (const char* op : {"Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Neg", "Abs", "Erf", "Reciprocal"})
        addKernel(r, "", op, elementwiseOp(*fsc::elementwiseOp(op, 1), 1), "elementwise");
    addKernel(r, "ai.fusescope", "FusedElementwise", fusedElementwise(), "program");
    addKernel(r, "", "Gelu", activationOp(dk::Act::Gelu), "activation");
    addKernel(r, "ai.fusescope", "Gelu", activationOp(dk::Act::Gelu), "activation");
    addKernel(r, "", "HardSwish", activationOp(dk::Act::HardSwish), "activation");
    addKernel(r, "", "HardSigmoid", activationOp(dk::Act::HardSigmoid), "activation");
    addKernel(r, "", "Clip", activationOp(dk::Act::Clip), "activation", {1, 2});
}

}  // namespace fsc::cudak
