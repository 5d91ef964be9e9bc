// The CUDA backend's kernels, host side: each reads the node's attributes once, and per
// call works out shapes, asks the executor for device outputs (arena slots) and describes
// its launches and library calls to the Device (device.h). Nothing here touches device
// memory directly, so the same code drives a GPU and the simulated device. A factory that
// declines a node (an attribute or shape the device kernel does not handle) answers
// Unsupported, and lowering runs that node on the CPU instead.
#include <algorithm>
#include <numeric>

#include "compiler/backends/cuda/device.h"
#include "compiler/backends/cuda/gemm_lowering.h"
#include "compiler/elementwise_program.h"
#include "compiler/runtime/execution_plan.h"
#include "compiler/runtime/kernel_registry.h"

namespace fsc {
namespace {

static_assert(int(dk::EwCode::Cos) == int(EwOp::Cos) && int(dk::EwCode::Relu) == int(EwOp::Relu),
              "dk::EwCode mirrors fsc::EwOp");

Status declined(const std::string& why) { return Status(ErrorCode::Unsupported, why); }
Status bad(const KernelContext& ctx, const std::string& why) {
    return Status(ErrorCode::InvalidModel, ctx.where() + ": " + why);
}

Result<dk::ElemType> elemType(DType t) {
    switch (t) {
        case DType::Float32: return dk::ElemType::F32;
        case DType::Float16: return dk::ElemType::F16;
        case DType::BFloat16: return dk::ElemType::BF16;
        case DType::Float64: return dk::ElemType::F64;
        case DType::Int8: return dk::ElemType::I8;
        case DType::UInt8: return dk::ElemType::U8;
        case DType::Int32: return dk::ElemType::I32;
        case DType::Int64: return dk::ElemType::I64;
        case DType::Bool: return dk::ElemType::Bool;
        default: return Status(ErrorCode::Unsupported, std::string("no device element type for ") + std::string(dtypeName(t)));
    }
}
bool isFloatKind(DType t) { return t == DType::Float32 || t == DType::Float16 || t == DType::BFloat16; }

// The graph's declared dtype of a node's first output, Undefined when unknown.
DType declaredOutputType(const KernelInit& init) {
    const Node& node = init.node();
    if (node.outputs.empty() || !node.outputs[0].valid()) return DType::Undefined;
    return init.graph().value(node.outputs[0]).type.elemType;
}
Status requireFloatKind(const KernelInit& init) {
    const DType t = declaredOutputType(init);
    if (t != DType::Undefined && !isFloatKind(t))
        return declined(init.node().opType + " on the device handles float32, float16 and bfloat16 only, not " +
                        std::string(dtypeName(t)));
    return Status::ok();
}
// The input's rank when the graph knows it, else -1.
int64_t declaredRank(const KernelInit& init, size_t input) {
    const Node& node = init.node();
    if (input >= node.inputs.size() || !node.inputs[input].valid()) return -1;
    const Shape& shape = init.graph().value(node.inputs[input]).type.shape;
    return shape.rankKnown() ? int64_t(shape.rank()) : -1;
}
bool onlyFirstOutputUsed(const KernelInit& init) {
    const Node& node = init.node();
    for (size_t i = 1; i < node.outputs.size(); ++i)
        if (node.outputs[i].valid()) return false;
    return true;
}

Status launch(KernelContext& ctx, const DeviceLaunch& l) {
    Device* device = ctx.device();
    if (!device) return Status(ErrorCode::Internal, ctx.where() + ": a CUDA kernel ran without a device");
    return device->launch(l);
}
DeviceExtent extentOf(const RtTensor& t, bool write, const char* what) { return {t.data, t.bytes(), write, what}; }

std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& dims) {
    std::vector<int64_t> s(dims.size(), 1);
    for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
    return s;
}
int64_t numel(const std::vector<int64_t>& dims) {
    return std::accumulate(dims.begin(), dims.end(), int64_t(1), std::multiplies<>());
}

Result<std::vector<int64_t>> broadcast(const KernelContext& ctx, const std::vector<const RtTensor*>& ins) {
    size_t rank = 0;
    for (const RtTensor* t : ins) rank = std::max(rank, t->rank());
    std::vector<int64_t> out(rank, 1);
    for (const RtTensor* t : ins)
        for (size_t i = 0; i < t->rank(); ++i) {
            int64_t& o = out[rank - t->rank() + i];
            const int64_t d = t->dims[i];
            if (d == o || d == 1) continue;
            if (o != 1) return bad(ctx, "shapes do not broadcast");
            o = d;
        }
    return out;
}

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
Status launchBiasActivation(KernelContext& ctx, const RtTensor& in, RtTensor& out, const RtTensor* bias,
                            const GemmActivation& act) {
    DeviceLaunch l;
    l.kind = DeviceKernelKind::BiasActivation;
    dk::BiasActParams& p = l.biasAct;
    p.in = in.data;
    p.out = out.data;
    p.bias = bias ? bias->data : nullptr;
    p.type = *elemType(out.dtype);
    p.act = act.kind;
    p.alpha = act.alpha;
    p.beta = act.beta;
    p.cols = out.rank() ? std::max<int64_t>(out.dims.back(), 1) : 1;
    p.count = out.numel();
    if (p.count == 0) return Status::ok();
    if (bias && bias->numel() != p.cols) return bad(ctx, "bias must have one value per output column");
    l.extents = {extentOf(in, false, "input"), extentOf(out, true, "output")};
    if (bias) l.extents.push_back(extentOf(*bias, false, "bias"));
    l.geometry = dk::elementGeometry(p.count);
    return launch(ctx, l);
}

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

// ---- GEMM --------------------------------------------------------------------------

// MatMul, Gemm and FusedMatMul: shapes become GemmCalls (gemm_lowering.h); an epilogue
// cuBLASLt cannot fuse runs as a BiasActivation launch after the product.
class GemmKernel : public Kernel {
public:
    enum class Form { MatMul, Gemm, FusedMatMul };
    GemmKernel(Form form, GemmAttributes attrs) : m_form(form), m_attrs(attrs) {}
    Status compute(KernelContext& ctx) override {
        const RtTensor* a = ctx.input(0);
        const RtTensor* b = ctx.input(1);
        if (!a || !b) return bad(ctx, "missing input");
        if (a->dtype != b->dtype) return bad(ctx, "inputs differ in dtype");
        if (!isFloatKind(a->dtype)) return Status(ErrorCode::Unsupported, ctx.where() + ": not a float type");
        const RtTensor* bias = m_form == Form::MatMul ? nullptr : ctx.input(2);
        auto plan = m_form == Form::Gemm ? planGemm(a->dims, b->dims, bias ? &bias->dims : nullptr, m_attrs)
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

Result<GemmActivation> activationFromInit(const KernelInit& init) {
    const std::string name = init.getString("activation", "");
    const std::vector<float> p = init.getFloats("activation_params");
    auto param = [&](size_t i, float fallback) { return i < p.size() ? p[i] : fallback; };
    if (name.empty()) return GemmActivation{dk::Act::None, 0, 0};
    if (name == "Relu") return GemmActivation{dk::Act::Relu, 0, 0};
    if (name == "LeakyRelu") return GemmActivation{dk::Act::LeakyRelu, param(0, 0.01f), 0};
    if (name == "Clip") return GemmActivation{dk::Act::Clip, param(0, -INFINITY), param(1, INFINITY)};
    if (name == "Sigmoid") return GemmActivation{dk::Act::Sigmoid, 0, 0};
    if (name == "Tanh") return GemmActivation{dk::Act::Tanh, 0, 0};
    if (name == "HardSigmoid") return GemmActivation{dk::Act::HardSigmoid, param(0, 0.2f), param(1, 0.5f)};
    if (name == "HardSwish") return GemmActivation{dk::Act::HardSwish, 0, 0};
    if (name == "Gelu") return GemmActivation{dk::Act::Gelu, 0, 0};
    if (name == "GeluTanh") return GemmActivation{dk::Act::GeluTanh, 0, 0};
    return init.invalid("unknown activation '" + name + "'");
}

KernelFactory gemmOp(GemmKernel::Form form) {
    return [form](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        FSC_RETURN_IF_ERROR(requireFloatKind(init));
        GemmAttributes attrs;
        if (form == GemmKernel::Form::Gemm) {
            attrs.transA = init.getInt("transA", 0) != 0;
            attrs.transB = init.getInt("transB", 0) != 0;
            attrs.alpha = init.getFloat("alpha", 1.f);
            attrs.beta = init.getFloat("beta", 1.f);
        }
        if (form == GemmKernel::Form::FusedMatMul) {
            auto act = activationFromInit(init);
            if (!act) return act.status();
            attrs.activation = *act;
        }
        return std::unique_ptr<Kernel>(new GemmKernel(form, attrs));
    };
}

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
        l.kind = DeviceKernelKind::Softmax;
        dk::SoftmaxParams& p = l.softmax;
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

class NormKernel : public Kernel {
public:
    NormKernel(int64_t axis, float epsilon, bool rms) : m_axis(axis), m_epsilon(epsilon), m_rms(rms) {}
    Status compute(KernelContext& ctx) override {
        const RtTensor* x = ctx.input(0);
        const RtTensor* scale = ctx.input(1);
        const RtTensor* bias = m_rms ? nullptr : ctx.input(2);
        if (!x || !scale) return bad(ctx, "missing input");
        if (!isFloatKind(x->dtype) || scale->dtype != x->dtype || (bias && bias->dtype != x->dtype))
            return Status(ErrorCode::Unsupported, ctx.where() + ": the device kernel needs one float type for X, scale and bias");
        const int64_t rank = int64_t(x->rank());
        const int64_t axis = m_axis < 0 ? m_axis + rank : m_axis;
        if (axis < 0 || axis >= std::max<int64_t>(rank, 1)) return bad(ctx, "axis out of range");
        int64_t cols = 1;
        for (int64_t d = axis; d < rank; ++d) cols *= x->dims[size_t(d)];
        if (scale->numel() != cols || (bias && bias->numel() != cols))
            return Status(ErrorCode::Unsupported, ctx.where() + ": the device kernel needs scale and bias of the normalised size");
        auto out = ctx.output(0, x->dtype, x->dims);
        if (!out) return out.status();
        if (x->numel() == 0) return Status::ok();
        DeviceLaunch l;
        l.kind = DeviceKernelKind::Norm;
        dk::NormParams& p = l.norm;
        p.in = x->data;
        p.scale = scale->data;
        p.bias = bias ? bias->data : nullptr;
        p.out = (*out)->data;
        p.type = *elemType(x->dtype);
        p.rms = m_rms;
        p.epsilon = m_epsilon;
        p.cols = cols;
        p.rows = x->numel() / cols;
        l.extents = {extentOf(*x, false, "input"), extentOf(*scale, false, "scale"), extentOf(**out, true, "output")};
        if (bias) l.extents.push_back(extentOf(*bias, false, "bias"));
        l.geometry = dk::rowGeometry(p.rows);
        return launch(ctx, l);
    }

private:
    int64_t m_axis;
    float m_epsilon;
    bool m_rms;
};

KernelFactory normOp(bool rms) {
    return [rms](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        FSC_RETURN_IF_ERROR(requireFloatKind(init));
        if (!onlyFirstOutputUsed(init)) return declined("LayerNormalization's Mean and InvStdDev outputs are read");
        return std::unique_ptr<Kernel>(new NormKernel(init.getInt("axis", -1), init.getFloat("epsilon", 1e-5f), rms));
    };
}

// ---- data movement -----------------------------------------------------------------

Status launchCopy(KernelContext& ctx, const RtTensor& src, RtTensor& dst, const std::vector<int64_t>& box,
                  const std::vector<int64_t>& srcStrides, int64_t srcOffset, const std::vector<int64_t>& dstStrides,
                  int64_t dstOffset) {
    DeviceLaunch l;
    l.kind = DeviceKernelKind::Copy;
    dk::CopyParams& p = l.copy;
    auto st = elemType(src.dtype), dt = elemType(dst.dtype);
    if (!st || !dt) return Status(ErrorCode::Unsupported, ctx.where() + ": " + (st ? dt : st).status().message());
    if (box.size() > size_t(dk::kMaxRank)) return Status(ErrorCode::Unsupported, ctx.where() + ": rank above 8");
    p.src = src.data;
    p.dst = dst.data;
    p.srcType = *st;
    p.dstType = *dt;
    p.rank = int(box.size());
    for (size_t d = 0; d < box.size(); ++d) {
        p.dims[d] = box[d];
        p.srcStrides[d] = srcStrides[d];
        p.dstStrides[d] = dstStrides[d];
    }
    p.srcOffset = srcOffset;
    p.dstOffset = dstOffset;
    p.count = numel(box);
    if (p.count == 0) return Status::ok();
    l.extents = {extentOf(src, false, "input"), extentOf(dst, true, "output")};
    l.geometry = dk::elementGeometry(p.count);
    return launch(ctx, l);
}

// Reshape, Flatten, Squeeze, Unsqueeze, Identity: the new dims, then one device copy.
using DimsRule = std::function<Result<std::vector<int64_t>>(KernelContext&, const RtTensor&)>;

class ReshapeLikeKernel : public Kernel {
public:
    explicit ReshapeLikeKernel(DimsRule rule) : m_rule(std::move(rule)) {}
    Status compute(KernelContext& ctx) override {
        const RtTensor* x = ctx.input(0);
        if (!x) return bad(ctx, "missing input");
        auto dims = m_rule(ctx, *x);
        if (!dims) return dims.status();
        if (numel(*dims) != x->numel()) return bad(ctx, "the new shape holds a different number of elements");
        auto out = ctx.output(0, x->dtype, *dims);
        if (!out) return out.status();
        if (!x->bytes()) return Status::ok();
        return ctx.device()->copyOnDevice((*out)->data, x->data, x->bytes());
    }

private:
    DimsRule m_rule;
};

KernelFactory reshapeLike(const std::string& op) {
    return [op](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        DimsRule rule;
        if (op == "Identity") {
            rule = [](KernelContext&, const RtTensor& x) -> Result<std::vector<int64_t>> { return x.dims; };
        } else if (op == "Reshape") {
            if (init.opset() < 5) return declined("Reshape-1 keeps its shape in an attribute");
            const bool allowZero = init.getInt("allowzero", 0) != 0;
            rule = [allowZero](KernelContext& ctx, const RtTensor& x) -> Result<std::vector<int64_t>> {
                if (!ctx.input(1)) return bad(ctx, "missing shape input");
                auto shape = readInts(*ctx.input(1), "shape");
                if (!shape) return shape.status().withContext(ctx.where());
                int64_t infer = -1, known = 1;
                for (size_t i = 0; i < shape->size(); ++i) {
                    int64_t& d = (*shape)[i];
                    if (d == 0 && !allowZero) {
                        if (i >= x.rank()) return bad(ctx, "shape has 0 at a dim the input lacks");
                        d = x.dims[i];
                    }
                    if (d == -1) {
                        if (infer >= 0) return bad(ctx, "shape has more than one -1");
                        infer = int64_t(i);
                    } else if (d < 0) {
                        return bad(ctx, "shape has a negative dim");
                    } else {
                        known *= d;
                    }
                }
                if (infer >= 0) {
                    if (known == 0 || x.numel() % known) return bad(ctx, "cannot infer the -1 dim");
                    (*shape)[size_t(infer)] = x.numel() / known;
                }
                return *shape;
            };
        } else if (op == "Flatten") {
            const int64_t axis = init.getInt("axis", 1);
            rule = [axis](KernelContext& ctx, const RtTensor& x) -> Result<std::vector<int64_t>> {
                const int64_t rank = int64_t(x.rank());
                const int64_t a = axis < 0 ? axis + rank : axis;
                if (a < 0 || a > rank) return bad(ctx, "axis out of range");
                int64_t outer = 1, inner = 1;
                for (int64_t d = 0; d < rank; ++d) (d < a ? outer : inner) *= x.dims[size_t(d)];
                return std::vector<int64_t>{outer, inner};
            };
        } else {  // Squeeze, Unsqueeze
            const bool unsqueeze = op == "Unsqueeze";
            const bool fromInput = init.opset() >= 13;
            const std::vector<int64_t> attr = init.getInts("axes");
            rule = [=](KernelContext& ctx, const RtTensor& x) -> Result<std::vector<int64_t>> {
                std::vector<int64_t> axes = attr;
                if (fromInput && ctx.input(1)) {
                    auto read = readInts(*ctx.input(1), "axes");
                    if (!read) return read.status().withContext(ctx.where());
                    axes = *read;
                }
                const int64_t outRank = int64_t(x.rank()) + (unsqueeze ? int64_t(axes.size()) : 0);
                const int64_t range = unsqueeze ? outRank : int64_t(x.rank());
                std::vector<bool> marked(size_t(range), false);
                for (int64_t a : axes) {
                    const int64_t n = a < 0 ? a + range : a;
                    if (n < 0 || n >= range || marked[size_t(n)]) return bad(ctx, "axes out of range or repeated");
                    marked[size_t(n)] = true;
                }
                std::vector<int64_t> dims;
                if (unsqueeze) {
                    size_t k = 0;
                    for (int64_t i = 0; i < outRank; ++i) dims.push_back(marked[size_t(i)] ? 1 : x.dims[k++]);
                } else {
                    for (size_t i = 0; i < x.rank(); ++i) {
                        const bool drop = axes.empty() ? x.dims[i] == 1 : marked[i];
                        if (drop && x.dims[i] != 1) return bad(ctx, "cannot squeeze a dim that is not 1");
                        if (!drop) dims.push_back(x.dims[i]);
                    }
                }
                return dims;
            };
        }
        return std::unique_ptr<Kernel>(new ReshapeLikeKernel(std::move(rule)));
    };
}

KernelFactory transposeOp() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const std::vector<int64_t> permAttr = init.getInts("perm");
        return std::unique_ptr<Kernel>(new FunctionKernel([permAttr](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            if (!x) return bad(ctx, "missing input");
            const size_t rank = x->rank();
            std::vector<int64_t> perm = permAttr;
            if (perm.empty())
                for (size_t i = 0; i < rank; ++i) perm.push_back(int64_t(rank - 1 - i));
            if (perm.size() != rank) return bad(ctx, "perm does not match the input's rank");
            std::vector<bool> seen(rank, false);
            for (int64_t& p : perm) {
                if (p < 0) p += int64_t(rank);
                if (p < 0 || p >= int64_t(rank) || seen[size_t(p)]) return bad(ctx, "perm is not a permutation");
                seen[size_t(p)] = true;
            }
            const auto inStrides = contiguousStrides(x->dims);
            std::vector<int64_t> outDims(rank), srcStrides(rank);
            for (size_t i = 0; i < rank; ++i) {
                outDims[i] = x->dims[size_t(perm[i])];
                srcStrides[i] = inStrides[size_t(perm[i])];
            }
            auto out = ctx.output(0, x->dtype, outDims);
            if (!out) return out.status();
            return launchCopy(ctx, *x, **out, outDims, srcStrides, 0, contiguousStrides(outDims), 0);
        }));
    };
}

KernelFactory concatOp() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t axisAttr = init.getInt("axis", 0);
        return std::unique_ptr<Kernel>(new FunctionKernel([axisAttr](KernelContext& ctx) -> Status {
            std::vector<const RtTensor*> ins;
            for (size_t i = 0; i < ctx.inputCount(); ++i)
                if (ctx.input(i)) ins.push_back(ctx.input(i));
            if (ins.empty()) return bad(ctx, "no inputs");
            const int64_t rank = int64_t(ins[0]->rank());
            const int64_t axis = axisAttr < 0 ? axisAttr + rank : axisAttr;
            if (axis < 0 || axis >= rank) return bad(ctx, "axis out of range");
            std::vector<int64_t> outDims = ins[0]->dims;
            outDims[size_t(axis)] = 0;
            for (const RtTensor* t : ins) {
                if (int64_t(t->rank()) != rank || t->dtype != ins[0]->dtype) return bad(ctx, "inputs differ in rank or dtype");
                for (int64_t d = 0; d < rank; ++d)
                    if (d != axis && t->dims[size_t(d)] != ins[0]->dims[size_t(d)]) return bad(ctx, "inputs differ off the axis");
                outDims[size_t(axis)] += t->dims[size_t(axis)];
            }
            auto out = ctx.output(0, ins[0]->dtype, outDims);
            if (!out) return out.status();
            const auto outStrides = contiguousStrides(outDims);
            int64_t at = 0;
            for (const RtTensor* t : ins) {
                FSC_RETURN_IF_ERROR(launchCopy(ctx, *t, **out, t->dims, contiguousStrides(t->dims), 0, outStrides,
                                               at * outStrides[size_t(axis)]));
                at += t->dims[size_t(axis)];
            }
            return Status::ok();
        }));
    };
}

KernelFactory castOp() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const DType to = DType(init.getInt("to", 0));
        if (!elemType(to)) return declined(std::string("Cast to ") + std::string(dtypeName(to)));
        return std::unique_ptr<Kernel>(new FunctionKernel([to](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            if (!x) return bad(ctx, "missing input");
            auto out = ctx.output(0, to, x->dims);
            if (!out) return out.status();
            const auto strides = contiguousStrides(x->dims);
            return launchCopy(ctx, *x, **out, x->dims, strides, 0, strides, 0);
        }));
    };
}

void add(KernelRegistry& r, const std::string& domain, const std::string& op, KernelFactory factory,
         const std::string& variant, std::vector<int> hostInputs = {}) {
    KernelDef def;
    def.domain = domain;
    def.op = op;
    def.backend = Backend::Cuda;
    def.variant = variant;
    def.halfViaFloat = false;
    def.hostInputs = std::move(hostInputs);
    def.factory = std::move(factory);
    r.add(std::move(def));
}

}  // namespace

void registerCudaKernels(KernelRegistry& r) {
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"})
        add(r, "", op, elementwiseOp(*elementwiseOp(op, 2), 2), "elementwise");
    for (const char* op : {"Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Neg", "Abs", "Erf", "Reciprocal"})
        add(r, "", op, elementwiseOp(*elementwiseOp(op, 1), 1), "elementwise");
    add(r, "ai.fusescope", "FusedElementwise", fusedElementwise(), "program");
    add(r, "", "Gelu", activationOp(dk::Act::Gelu), "activation");
    add(r, "ai.fusescope", "Gelu", activationOp(dk::Act::Gelu), "activation");
    add(r, "", "HardSwish", activationOp(dk::Act::HardSwish), "activation");
    add(r, "", "HardSigmoid", activationOp(dk::Act::HardSigmoid), "activation");
    add(r, "", "Clip", activationOp(dk::Act::Clip), "activation", {1, 2});
    add(r, "", "MatMul", gemmOp(GemmKernel::Form::MatMul), "cublaslt");
    add(r, "", "Gemm", gemmOp(GemmKernel::Form::Gemm), "cublaslt");
    add(r, "ai.fusescope", "FusedMatMul", gemmOp(GemmKernel::Form::FusedMatMul), "cublaslt");
    add(r, "", "Softmax", softmaxOp(false), "warp_rows");
    add(r, "", "LogSoftmax", softmaxOp(true), "warp_rows");
    add(r, "", "LayerNormalization", normOp(false), "warp_rows");
    add(r, "ai.fusescope", "LayerNormalization", normOp(false), "warp_rows");
    add(r, "ai.fusescope", "RmsNorm", normOp(true), "warp_rows");
    add(r, "", "Transpose", transposeOp(), "strided_copy");
    add(r, "", "Concat", concatOp(), "strided_copy");
    add(r, "", "Cast", castOp(), "strided_copy");
    for (const char* op : {"Reshape", "Squeeze", "Unsqueeze"}) add(r, "", op, reshapeLike(op), "copy", {1});
    for (const char* op : {"Flatten", "Identity"}) add(r, "", op, reshapeLike(op), "copy");
}

}  // namespace fsc
