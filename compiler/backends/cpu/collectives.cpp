// The ai.fusescope collectives on one device: a partitioned program whose shards all run
// here computes its collectives locally, so it gives the unpartitioned graph's numbers.
// (With several GPUs the same nodes map onto NCCL calls.) AllReduce sums its N inputs,
// AllGather concatenates them along `axis`, ReduceScatter sums and hands slice d to output
// d, Send/Recv pass their input through.
#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/runtime/fused_domain.h"

namespace fsc {
namespace {

using namespace cpu;

Status allReduce(KernelContext& ctx) {
    const RtTensor* first = ctx.input(0);
    if (!first || first->dtype != DType::Float32) return bad(ctx, "needs float32 inputs");
    auto out = ctx.output(0, first->dtype, first->dims);
    if (!out) return out.status();
    float* y = (*out)->as<float>();
    std::fill(y, y + first->numel(), 0.0f);
    for (size_t i = 0; i < ctx.inputCount(); ++i) {
        const RtTensor* x = ctx.input(i);
        if (!x || x->dims != first->dims || x->dtype != first->dtype)
            return bad(ctx, "input " + std::to_string(i) + " differs from input 0 in shape or type");
        const float* px = x->as<float>();
        for (int64_t e = 0; e < x->numel(); ++e) y[e] += px[e];
    }
    return Status::ok();
}

KernelFactory allGather() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t axisAttr = init.getInt("axis", -1);
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* first = ctx.input(0);
            if (!first) return bad(ctx, "needs inputs");
            auto axis = normAxis(ctx, axisAttr, int64_t(first->rank()));
            if (!axis) return axis.status();
            std::vector<int64_t> dims = first->dims;
            dims[size_t(*axis)] = 0;
            for (size_t i = 0; i < ctx.inputCount(); ++i) dims[size_t(*axis)] += ctx.input(i)->dims[size_t(*axis)];
            auto out = ctx.output(0, first->dtype, dims);
            if (!out) return out.status();
            const int64_t outer = product(dims, 0, size_t(*axis)), elem = int64_t(dtypeBits(first->dtype) / 8);
            auto* y = static_cast<char*>((*out)->data);
            int64_t offset = 0;
            const int64_t rowOut = product(dims, size_t(*axis)) * elem;
            for (size_t i = 0; i < ctx.inputCount(); ++i) {
                const RtTensor* x = ctx.input(i);
                const int64_t row = product(x->dims, size_t(*axis)) * elem;
                for (int64_t o = 0; o < outer; ++o)
                    std::memcpy(y + o * rowOut + offset, static_cast<const char*>(x->data) + o * row, size_t(row));
                offset += row;
            }
            return Status::ok();
        }));
    };
}

Status passThrough(KernelContext& ctx) {
    const RtTensor* x = ctx.input(0);
    if (!x) return bad(ctx, "needs an input");
    if (x->isSequence()) return ctx.outputSequence(0, x->dtype, *x->sequence);  // a list crossing a stage
    auto out = ctx.output(0, x->dtype, x->dims);
    if (!out) return out.status();
    if (x->dtype == DType::String) *(*out)->strings = *x->strings;
    else if (x->bytes()) std::memcpy((*out)->data, x->data, x->bytes());
    return Status::ok();
}

void addCollective(KernelRegistry& r, const char* op, KernelFactory factory) {
    KernelDef def;
    def.domain = kFusescopeDomain;
    def.op = op;
    def.variant = "local";
    def.factory = std::move(factory);
    r.add(std::move(def));
}

}  // namespace

void registerCollectiveKernels(KernelRegistry& registry) {
    addCollective(registry, "AllReduce", functionKernel(allReduce));
    addCollective(registry, "AllGather", allGather());
    addCollective(registry, "Send", functionKernel(passThrough));
    addCollective(registry, "Recv", functionKernel(passThrough));
}

}  // namespace fsc
