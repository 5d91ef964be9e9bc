// Element-wise ops on the device: every ONNX element-wise op of the program table runs one
// program kernel over broadcast inputs; FusedElementwise runs the kernel generated for its
// program (elementwise_codegen, compiled by NVRTC once per dtype), or the program kernel when
// NVRTC cannot be loaded; the activations with parameters (Gelu, HardSwish, HardSigmoid,
// Clip) run the bias-activation kernel.
#include <map>
#include <memory>

#include "compiler/backends/cuda/cuda_kernel_support.h"
#include "compiler/backends/cuda/elementwise_codegen.h"
#include "compiler/backends/cuda/gemm_lowering.h"
#include "compiler/backends/cuda/nvrtc_compiler.h"
#include "compiler/runtime/elementwise_program.h"

namespace fsc::cudak {
namespace {

// Launches pass an EwOp as its dk::EwCode number; the generated kernels name the code.
#define FSC_SAME_CODE(op) static_assert(int(dk::EwCode::op) == int(EwOp::op), "dk::EwCode mirrors fsc::EwOp")
FSC_SAME_CODE(Add);
FSC_SAME_CODE(Sub);
FSC_SAME_CODE(Mul);
FSC_SAME_CODE(Div);
FSC_SAME_CODE(Pow);
FSC_SAME_CODE(Max);
FSC_SAME_CODE(Min);
FSC_SAME_CODE(Relu);
FSC_SAME_CODE(Sigmoid);
FSC_SAME_CODE(Tanh);
FSC_SAME_CODE(Exp);
FSC_SAME_CODE(Log);
FSC_SAME_CODE(Sqrt);
FSC_SAME_CODE(Neg);
FSC_SAME_CODE(Abs);
FSC_SAME_CODE(Erf);
FSC_SAME_CODE(Reciprocal);
FSC_SAME_CODE(Floor);
FSC_SAME_CODE(Ceil);
FSC_SAME_CODE(Sin);
FSC_SAME_CODE(Cos);
#undef FSC_SAME_CODE

// ---- element-wise ------------------------------------------------------------------

static_assert(kCudaElementwiseMaxRank == dk::kMaxRank, "generated kernels take the twin's broadcast");

// One program over broadcast inputs: a single ONNX op is a program of one instruction.
// `generate`: run the NVRTC kernel generated for the program when NVRTC is here.
class ElementwiseKernel : public Kernel {
public:
    ElementwiseKernel(ElementwiseProgram program, bool generate) : m_program(std::move(program)), m_generate(generate) {}
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
                dk::EwParams& p = l.set<dk::EwParams>();
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
        if (m_generate) {
            auto generated = generatedKernel(ctx, dtype);
            if (!generated) return generated.status();
            if (*generated) {
                GeneratedLaunch g;
                g.name = (*generated)->name;
                g.ptx = (*generated)->ptx;
                g.params = p;
                g.geometry = l.geometry;
                g.extents = std::move(l.extents);
                return (*deviceOf(ctx))->launchGenerated(g);
            }
        }
        return launch(ctx, l);
    }

private:
    struct Compiled {
        std::string name;
        std::shared_ptr<const std::string> ptx;
    };
    // The program's kernel for `dtype`, compiled on first use (PTX cached on disk); null when
    // NVRTC is not on this machine, so the program kernel runs the same maths instead.
    Result<const Compiled*> generatedKernel(KernelContext& ctx, DType dtype) {
        auto known = m_compiled.find(dtype);
        if (known != m_compiled.end()) return known->second.get();
        if (!NvrtcCompiler::available()) return m_compiled.emplace(dtype, nullptr).first->second.get();
        auto source = elementwiseCudaKernel(m_program, dtype);
        if (!source) return source.status().withContext(ctx.where());
        const int cc = (*deviceOf(ctx))->computeCapability();
        auto ptx = NvrtcCompiler().compile(source->name, source->source, "compute_" + std::to_string(cc));
        if (!ptx) return Status(ErrorCode::Internal, ctx.where() + ": the generated kernel did not compile: " + ptx.status().message());
        auto compiled = std::make_unique<Compiled>(Compiled{source->name, std::make_shared<const std::string>(std::move(ptx->ptx))});
        return m_compiled.emplace(dtype, std::move(compiled)).first->second.get();
    }

    ElementwiseProgram m_program;
    bool m_generate;
    std::map<DType, std::unique_ptr<Compiled>> m_compiled;
};

KernelFactory elementwiseOp(EwOp op, int arity) {
    return [op, arity](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        FSC_RETURN_IF_ERROR(requireFloatKind(init));
        if (init.inputCount() != size_t(arity))
            return declined(init.node().opType + " with " + std::to_string(init.inputCount()) + " inputs");
        ElementwiseProgram program;
        program.inputs = arity;
        program.code.push_back({op, 0, arity == 2 ? 1 : -1});
        return std::unique_ptr<Kernel>(new ElementwiseKernel(std::move(program), false));
    };
}

KernelFactory fusedElementwise() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        FSC_RETURN_IF_ERROR(requireFloatKind(init));
        // The generated kernel reads every input as the output's type; an int32 input (a
        // Cast elementwise-fusion took in, after an integer convolution, itself on the CPU)
        // stays on the CPU with it.
        for (ValueId in : init.node().inputs)
            if (in.valid() && init.graph().value(in).type.elemType == DType::Int32)
                return declined("FusedElementwise reading int32 inputs (a Cast to float taken in)");
        auto program = ElementwiseProgram::fromAttributes(init.getStrings("ops"), init.getInts("args"),
                                                          int(init.inputCount()));
        if (!program) return program.status();
        if (program->inputs > dk::kEwMaxInputs || program->code.size() > size_t(dk::kEwMaxCode))
            return declined("FusedElementwise with more than 8 inputs or 32 ops");
        return std::unique_ptr<Kernel>(new ElementwiseKernel(std::move(*program), true));
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
    addKernel(r, "ai.fusescope", "FusedElementwise", fusedElementwise(), "nvrtc");
    addKernel(r, "", "Gelu", activationOp(dk::Act::Gelu), "activation");
    addKernel(r, "ai.fusescope", "Gelu", activationOp(dk::Act::Gelu), "activation");
    addKernel(r, "", "HardSwish", activationOp(dk::Act::HardSwish), "activation");
    addKernel(r, "", "HardSigmoid", activationOp(dk::Act::HardSigmoid), "activation");
    addKernel(r, "", "Clip", activationOp(dk::Act::Clip), "activation", {1, 2});
}

}  // namespace fsc::cudak
