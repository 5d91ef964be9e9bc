// Sequence ops: SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceAt, SequenceErase,
// SequenceLength, ConcatFromSequence, SplitToSequence. PyTorch's exporter writes them for
// Python lists grown in a loop over a dynamic dim (MViT's pooling, per-image post-processing).
// A sequence's elements are tensors with storage of their own, never written again, so a new
// sequence shares its elements with the one it was made from.
#include <cstring>

#include "compiler/backends/cpu/cpu_common.h"

namespace fsc {
namespace {

using cpu::bad;
using cpu::dimsString;
using cpu::product;

const RtTensor* sequenceInput(const KernelContext& ctx, size_t i) {
    const RtTensor* s = ctx.input(i);
    return s && s->isSequence() ? s : nullptr;
}

// A position input (a scalar of int32 or int64) within [-size, size - 1], or [-size, size]
// where the end itself is a position (inserting); negative counts from the end.
Result<int64_t> position(const KernelContext& ctx, size_t input, int64_t size, bool endAllowed, int64_t fallback) {
    const RtTensor* p = ctx.input(input);
    if (!p) return fallback;
    if (p->numel() != 1 || (p->dtype != DType::Int64 && p->dtype != DType::Int32))
        return bad(ctx, "position must be one int32 or int64");
    const int64_t at = elementAsInt(*p, 0);
    const int64_t last = endAllowed ? size : size - 1;
    if (at < -size || at > last)
        return bad(ctx, "position " + std::to_string(at) + " is outside a sequence of " + std::to_string(size));
    return at < 0 ? at + size : at;
}

Status sequenceEmpty(KernelContext& ctx, DType elemType) {
    return ctx.outputSequence(0, elemType, {});
}

Status sequenceConstruct(KernelContext& ctx) {
    std::vector<RtTensor> elements;
    DType type = DType::Undefined;
    for (size_t i = 0; i < ctx.inputCount(); ++i) {
        const RtTensor* t = ctx.input(i);
        if (!t || t->isSequence()) return bad(ctx, "input " + std::to_string(i) + " must be a tensor");
        if (type != DType::Undefined && t->dtype != type) return bad(ctx, "inputs differ in dtype");
        type = t->dtype;
        elements.push_back(cloneTensor(*t));
    }
    if (elements.empty()) return bad(ctx, "needs at least one input");
    return ctx.outputSequence(0, type, std::move(elements));
}

Status sequenceInsert(KernelContext& ctx) {
    const RtTensor* s = sequenceInput(ctx, 0);
    const RtTensor* t = ctx.input(1);
    if (!s || !t || t->isSequence()) return bad(ctx, "needs a sequence and a tensor");
    if (t->dtype != s->dtype)
        return bad(ctx, std::string("the tensor is ") + std::string(dtypeName(t->dtype)) + ", the sequence holds " +
                            std::string(dtypeName(s->dtype)));
    const int64_t size = int64_t(s->sequence->size());
    auto at = position(ctx, 2, size, true, size);
    if (!at) return at.status();
    std::vector<RtTensor> elements = *s->sequence;
    elements.insert(elements.begin() + *at, cloneTensor(*t));
    return ctx.outputSequence(0, s->dtype, std::move(elements));
}

Status sequenceErase(KernelContext& ctx) {
    const RtTensor* s = sequenceInput(ctx, 0);
    if (!s) return bad(ctx, "needs a sequence");
    const int64_t size = int64_t(s->sequence->size());
    if (size == 0) return bad(ctx, "the sequence is empty");
    auto at = position(ctx, 1, size, false, size - 1);
    if (!at) return at.status();
    std::vector<RtTensor> elements = *s->sequence;
    elements.erase(elements.begin() + *at);
    return ctx.outputSequence(0, s->dtype, std::move(elements));
}

Status sequenceAt(KernelContext& ctx) {
    const RtTensor* s = sequenceInput(ctx, 0);
    if (!s) return bad(ctx, "needs a sequence");
    auto at = position(ctx, 1, int64_t(s->sequence->size()), false, 0);
    if (!at) return at.status();
    const RtTensor& element = (*s->sequence)[size_t(*at)];
    auto out = ctx.output(0, element.dtype, element.dims);
    if (!out) return out.status();
    if (element.dtype == DType::String) *(*out)->strings = *element.strings;
    else if (element.bytes()) std::memcpy((*out)->data, element.data, element.bytes());
    return Status::ok();
}

Status sequenceLength(KernelContext& ctx) {
    const RtTensor* s = sequenceInput(ctx, 0);
    if (!s) return bad(ctx, "needs a sequence");
    auto out = ctx.output(0, DType::Int64, {});
    if (!out) return out.status();
    (*out)->as<int64_t>()[0] = int64_t(s->sequence->size());
    return Status::ok();
}

// The elements joined along `axis` (new_axis = 0), or stacked along a new one.
Status concatFromSequence(KernelContext& ctx, int64_t axisAttr, bool newAxis) {
    const RtTensor* s = sequenceInput(ctx, 0);
    if (!s) return bad(ctx, "needs a sequence");
    const std::vector<RtTensor>& parts = *s->sequence;
    if (parts.empty()) return bad(ctx, "the sequence is empty: there is no shape to join");
    if (s->dtype == DType::String) return bad(ctx, "string sequences are not joined");
    const int64_t rank = int64_t(parts[0].rank()) + (newAxis ? 1 : 0);
    auto axis = cpu::normAxis(ctx, axisAttr, rank);
    if (!axis) return axis.status();
    // Each element as the output sees it: with the new axis of 1 in place.
    auto viewed = [&](const RtTensor& t) {
        std::vector<int64_t> dims = t.dims;
        if (newAxis) dims.insert(dims.begin() + *axis, 1);
        return dims;
    };
    std::vector<int64_t> dims = viewed(parts[0]);
    dims[size_t(*axis)] = 0;
    for (const RtTensor& p : parts) {
        const std::vector<int64_t> d = viewed(p);
        for (int64_t k = 0; k < rank; ++k)
            if (k != *axis && (int64_t(d.size()) != rank || d[size_t(k)] != dims[size_t(k)]))
                return bad(ctx, "elements " + dimsString(parts[0].dims) + " and " + dimsString(p.dims) + " do not join");
        dims[size_t(*axis)] += d[size_t(*axis)];
    }
    auto out = ctx.output(0, s->dtype, dims);
    if (!out) return out.status();
    const size_t esize = size_t(dtypeBits(s->dtype) / 8);
    const int64_t outer = product(dims, 0, size_t(*axis)), inner = product(dims, size_t(*axis) + 1);
    const size_t outRow = size_t(dims[size_t(*axis)] * inner) * esize;
    size_t offset = 0;
    for (const RtTensor& p : parts) {
        const size_t row = size_t(viewed(p)[size_t(*axis)] * inner) * esize;
        for (int64_t o = 0; o < outer; ++o)
            if (row) std::memcpy((*out)->as<uint8_t>() + size_t(o) * outRow + offset, p.as<uint8_t>() + size_t(o) * row, row);
        offset += row;
    }
    return Status::ok();
}

// The input cut along `axis`: into pieces of the `split` sizes, into equal pieces of a scalar
// `split` (the last one shorter), or into single slices (keepdims decides whether the axis
// stays) when there is no `split`.
Status splitToSequence(KernelContext& ctx, int64_t axisAttr, bool keepDims) {
    const RtTensor* x = ctx.input(0);
    if (!x || x->isSequence()) return bad(ctx, "needs a tensor");
    if (x->dtype == DType::String) return bad(ctx, "string tensors are not split");
    auto axis = cpu::normAxis(ctx, axisAttr, int64_t(x->rank()));
    if (!axis) return axis.status();
    const int64_t length = x->dims[size_t(*axis)];
    std::vector<int64_t> sizes;
    const RtTensor* split = ctx.input(1);
    if (!split) {
        sizes.assign(size_t(length), 1);
    } else if (split->rank() == 0) {
        const int64_t each = elementAsInt(*split, 0);
        if (each <= 0) return bad(ctx, "split must be positive");
        for (int64_t at = 0; at < length; at += each) sizes.push_back(std::min(each, length - at));
    } else {
        int64_t total = 0;
        for (int64_t i = 0; i < split->numel(); ++i) {
            sizes.push_back(elementAsInt(*split, i));
            if (sizes.back() < 0) return bad(ctx, "split sizes must not be negative");
            total += sizes.back();
        }
        if (total != length)
            return bad(ctx, "split sizes add up to " + std::to_string(total) + ", not the axis' " + std::to_string(length));
    }
    const bool dropAxis = !split && !keepDims;
    const size_t esize = size_t(dtypeBits(x->dtype) / 8);
    const int64_t outer = product(x->dims, 0, size_t(*axis)), inner = product(x->dims, size_t(*axis) + 1);
    std::vector<RtTensor> elements;
    int64_t start = 0;
    for (int64_t size : sizes) {
        std::vector<int64_t> dims = x->dims;
        dims[size_t(*axis)] = size;
        if (dropAxis) dims.erase(dims.begin() + *axis);
        RtTensor piece = allocateTensor(x->dtype, dims);
        const size_t row = size_t(size * inner) * esize;
        for (int64_t o = 0; o < outer; ++o)
            if (row)
                std::memcpy(piece.as<uint8_t>() + size_t(o) * row,
                            x->as<uint8_t>() + (size_t(o * length + start) * size_t(inner)) * esize, row);
        elements.push_back(std::move(piece));
        start += size;
    }
    return ctx.outputSequence(0, x->dtype, std::move(elements));
}

}  // namespace

void registerSequenceKernels(KernelRegistry& r) {
    const KernelDefOptions kHost{.variant = "host", .halfViaFloat = false};
    r.add("SequenceEmpty", [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const auto type = dtypeFromOnnx(int32_t(init.getInt("dtype", 1)));
        if (!type || *type == DType::Undefined) return init.invalid("dtype is not a tensor element type");
        return std::unique_ptr<Kernel>(new FunctionKernel([type = *type](KernelContext& ctx) { return sequenceEmpty(ctx, type); }));
    }, kHost);
    r.add("SequenceConstruct", functionKernel(sequenceConstruct), kHost);
    r.add("SequenceInsert", functionKernel(sequenceInsert), kHost);
    r.add("SequenceErase", functionKernel(sequenceErase), kHost);
    r.add("SequenceAt", functionKernel(sequenceAt), kHost);
    r.add("SequenceLength", functionKernel(sequenceLength), kHost);
    r.add("ConcatFromSequence", [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        if (!init.has("axis")) return init.invalid("ConcatFromSequence needs an axis");
        const int64_t axis = init.getInt("axis", 0);
        const bool newAxis = init.getInt("new_axis", 0) != 0;
        return std::unique_ptr<Kernel>(
            new FunctionKernel([=](KernelContext& ctx) { return concatFromSequence(ctx, axis, newAxis); }));
    }, kHost);
    r.add("SplitToSequence", [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t axis = init.getInt("axis", 0);
        const bool keepDims = init.getInt("keepdims", 1) != 0;
        return std::unique_ptr<Kernel>(
            new FunctionKernel([=](KernelContext& ctx) { return splitToSequence(ctx, axis, keepDims); }));
    }, kHost);
}

}  // namespace fsc
