#include "compiler/backends/cuda/cuda_kernel_support.h"

#include <algorithm>
#include <numeric>

#include "compiler/runtime/execution_plan.h"

namespace fsc::cudak {

Status declined(const std::string& why) { return Status(ErrorCode::Unsupported, why); }
Status bad(const KernelContext& ctx, const std::string& why) {
    return Status(ErrorCode::InvalidModel, ctx.where() + ": " + why);
}
Status unsupported(const KernelContext& ctx, const std::string& why) {
    return Status(ErrorCode::Unsupported, ctx.where() + ": " + why);
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
// A CUDA kernel runs only in a lowering by the CUDA provider, whose device is a CudaDevice
// (makeCudaProvider takes nothing else), so the runtime's Device is one here.
CudaDevice* loweringDevice(const KernelInit& init) {
    return init.lowering() ? static_cast<CudaDevice*>(init.lowering()->device.get()) : nullptr;
}

Result<CudaDevice*> deviceOf(KernelContext& ctx) {
    CudaDevice* device = static_cast<CudaDevice*>(ctx.device());
    if (!device) return Status(ErrorCode::Internal, ctx.where() + ": a CUDA kernel ran without a device");
    return device;
}
Status launch(KernelContext& ctx, const DeviceLaunch& l) {
    auto device = deviceOf(ctx);
    if (!device) return device.status();
    // The two generic kernels index through up to 8 dims: fewer, in 32 bits, run several
    // times faster on a GPU (ViT's element-wise ops and head transposes, measured on an H100).
    if (!std::holds_alternative<dk::EwParams>(l.params) && !std::holds_alternative<dk::CopyParams>(l.params))
        return (*device)->launch(l);
    DeviceLaunch simpler = l;
    if (auto* ew = std::get_if<dk::EwParams>(&simpler.params)) dk::simplifyElementwise(*ew);
    if (auto* copy = std::get_if<dk::CopyParams>(&simpler.params)) dk::simplifyCopy(*copy);
    return (*device)->launch(simpler);
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

std::vector<int64_t> broadcastStrides(const RtTensor& t, const std::vector<int64_t>& outDims) {
    const auto strides = contiguousStrides(t.dims);
    const size_t lead = outDims.size() - t.rank();
    std::vector<int64_t> s(outDims.size(), 0);
    for (size_t d = lead; d < outDims.size(); ++d) s[d] = t.dims[d - lead] == 1 ? 0 : strides[d - lead];
    return s;
}

Status launchCopy(KernelContext& ctx, const RtTensor& src, RtTensor& dst, const std::vector<int64_t>& box,
                  const std::vector<int64_t>& srcStrides, int64_t srcOffset, const std::vector<int64_t>& dstStrides,
                  int64_t dstOffset) {
    DeviceLaunch l;
        dk::CopyParams& p = l.set<dk::CopyParams>();
    auto st = elemType(src.dtype), dt = elemType(dst.dtype);
    if (!st || !dt) return unsupported(ctx, (st ? dt : st).status().message());
    if (box.size() > size_t(dk::kMaxRank)) return unsupported(ctx, "rank above 8");
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

Status launchBiasActivation(KernelContext& ctx, const RtTensor& in, RtTensor& out, const RtTensor* bias,
                            const GemmActivation& act, int64_t biasInner, const RtTensor* residual) {
    DeviceLaunch l;
        dk::BiasActParams& p = l.set<dk::BiasActParams>();
    p.in = in.data;
    p.out = out.data;
    p.bias = bias ? bias->data : nullptr;
    p.residual = residual ? residual->data : nullptr;
    p.type = *elemType(out.dtype);
    p.act = act.kind;
    p.alpha = act.alpha;
    p.beta = act.beta;
    p.biasInner = std::max<int64_t>(biasInner, 1);
    p.cols = bias ? std::max<int64_t>(bias->numel(), 1) : 1;
    p.count = out.numel();
    if (p.count == 0) return Status::ok();
    if (bias && out.numel() % (p.cols * p.biasInner)) return bad(ctx, "the bias does not match the output");
    if (residual && (residual->numel() != out.numel() || residual->dtype != out.dtype))
        return bad(ctx, "Z must have as many elements as the output, and its dtype");
    l.extents = {extentOf(in, false, "input"), extentOf(out, true, "output")};
    if (bias) l.extents.push_back(extentOf(*bias, false, "bias"));
    if (residual) l.extents.push_back(extentOf(*residual, false, "residual"));
    p.vector = dk::biasActVector(p);
    l.geometry = dk::elementGeometry(dk::biasActSteps(p));
    return launch(ctx, l);
}

void addKernel(KernelRegistry& r, const std::string& domain, const std::string& op, KernelFactory factory,
               const std::string& variant, std::vector<int> hostInputs) {
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
    if (name == "Swish") return GemmActivation{dk::Act::Swish, param(0, 1.f), 0};
    return init.invalid("unknown activation '" + name + "'");
}

}  // namespace fsc::cudak
