// Ops that move elements without arithmetic: the reshape family (at most one device copy),
// Transpose, Concat, Split, Slice, Expand, Pad and Cast (strided copies), Gather and Where.
#include <algorithm>
#include <functional>
#include <numeric>

#include "compiler/backends/cuda/cuda_kernel_support.h"
#include "compiler/runtime/execution_plan.h"
#include "compiler/runtime/slice_rules.h"

namespace fsc::cudak {
namespace {

// Reshape, Flatten, Squeeze, Unsqueeze, Identity: the new dims, then one device copy, or none
// when the output takes over X's slot.
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
        // The output takes X's slot when nothing reads X later (Kernel::inPlaceInput): no copy.
        if (!x->bytes() || (*out)->data == x->data) return Status::ok();
        return ctx.device()->copyOnDevice((*out)->data, x->data, x->bytes());
    }
    // ViT-B/16 ran five device copies a layer for its Reshapes.
    int inPlaceInput() const override { return 0; }

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

// Reads input i as integers when present (a host input); leaves `v` as it is otherwise.
Status readOptionalInts(KernelContext& ctx, size_t i, std::vector<int64_t>& v, const char* what) {
    if (!ctx.input(i)) return Status::ok();
    auto r = readInts(*ctx.input(i), what);
    if (!r) return r.status().withContext(ctx.where());
    v = *r;
    return Status::ok();
}

Result<int64_t> normalAxis(KernelContext& ctx, int64_t axis, int64_t rank) {
    const int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= std::max<int64_t>(rank, 1)) return bad(ctx, "axis " + std::to_string(axis) + " is out of range");
    return a;
}

KernelFactory splitOp() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t axisAttr = init.getInt("axis", 0);
        const auto splitAttr = init.getInts("split");
        const bool fromInput = init.opset() >= 13;
        const int64_t numOutputs = init.getInt("num_outputs", 0);
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            if (!x) return bad(ctx, "missing input");
            auto axis = normalAxis(ctx, axisAttr, int64_t(x->rank()));
            if (!axis) return axis.status();
            const int64_t total = x->dims[size_t(*axis)];
            std::vector<int64_t> sizes = splitAttr;
            if (fromInput) FSC_RETURN_IF_ERROR(readOptionalInts(ctx, 1, sizes, "split"));
            const int64_t n = int64_t(ctx.outputCount());
            auto split = splitSizes(total, sizes, numOutputs, n);
            if (!split) return split.status().withContext(ctx.where());
            sizes = *split;
            const auto inStrides = contiguousStrides(x->dims);
            int64_t at = 0;
            for (int64_t i = 0; i < n; ++i) {
                std::vector<int64_t> dims = x->dims;
                dims[size_t(*axis)] = sizes[size_t(i)];
                auto out = ctx.output(size_t(i), x->dtype, dims);
                if (!out) return out.status();
                FSC_RETURN_IF_ERROR(launchCopy(ctx, *x, **out, dims, inStrides, at * inStrides[size_t(*axis)],
                                               contiguousStrides(dims), 0));
                at += sizes[size_t(i)];
            }
            return Status::ok();
        }));
    };
}

// Slice-10+: starts, ends, axes and steps are host inputs; a negative step reads backwards
// (a negative stride of the copy).
KernelFactory sliceOp() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        if (init.opset() < 10) return declined("Slice-1 keeps its bounds in attributes");
        return std::unique_ptr<Kernel>(new FunctionKernel([](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            if (!x) return bad(ctx, "missing input");
            std::vector<int64_t> starts, ends, axes, steps;
            FSC_RETURN_IF_ERROR(readOptionalInts(ctx, 1, starts, "starts"));
            FSC_RETURN_IF_ERROR(readOptionalInts(ctx, 2, ends, "ends"));
            FSC_RETURN_IF_ERROR(readOptionalInts(ctx, 3, axes, "axes"));
            FSC_RETURN_IF_ERROR(readOptionalInts(ctx, 4, steps, "steps"));
            auto box = sliceBox(x->dims, starts, ends, axes, steps);
            if (!box) return box.status().withContext(ctx.where());
            const std::vector<int64_t>& dims = box->dims;
            const auto inStrides = contiguousStrides(x->dims);
            std::vector<int64_t> srcStrides = inStrides;
            int64_t offset = 0;
            for (size_t d = 0; d < dims.size(); ++d) {
                srcStrides[d] = inStrides[d] * box->step[d];  // a negative step reads backwards
                if (dims[d]) offset += box->start[d] * inStrides[d];
            }
            auto out = ctx.output(0, x->dtype, dims);
            if (!out) return out.status();
            return launchCopy(ctx, *x, **out, dims, srcStrides, offset, contiguousStrides(dims), 0);
        }));
    };
}

KernelFactory expandOp() {
    return [](const KernelInit&) -> Result<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(new FunctionKernel([](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            if (!x || !ctx.input(1)) return bad(ctx, "needs an input and a shape");
            auto shape = readInts(*ctx.input(1), "shape");
            if (!shape) return shape.status().withContext(ctx.where());
            RtTensor target;
            target.dims = *shape;
            auto dims = broadcast(ctx, {x, &target});
            if (!dims) return dims.status();
            auto out = ctx.output(0, x->dtype, *dims);
            if (!out) return out.status();
            return launchCopy(ctx, *x, **out, *dims, broadcastStrides(*x, *dims), 0, contiguousStrides(*dims), 0);
        }));
    };
}

// Pad-11+ in constant mode: the border filled (a memset when the value is 0), then the
// input copied into its box. Negative pads crop.
KernelFactory padOp() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        if (init.opset() < 11) return declined("Pad-2 keeps its pads in attributes");
        const std::string mode = init.getString("mode", "constant");
        if (mode != "constant") return declined("Pad in " + mode + " mode");
        return std::unique_ptr<Kernel>(new FunctionKernel([](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            if (!x || !ctx.input(1)) return bad(ctx, "needs an input and pads");
            auto pads = readInts(*ctx.input(1), "pads");
            if (!pads) return pads.status().withContext(ctx.where());
            const int64_t rank = int64_t(x->rank());
            std::vector<int64_t> axes;
            FSC_RETURN_IF_ERROR(readOptionalInts(ctx, 3, axes, "axes"));
            if (axes.empty())
                for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
            if (pads->size() != 2 * axes.size()) return bad(ctx, "pads must hold two values per padded axis");
            std::vector<int64_t> begin(size_t(rank), 0), end(size_t(rank), 0);
            for (size_t i = 0; i < axes.size(); ++i) {
                auto a = normalAxis(ctx, axes[i], rank);
                if (!a) return a.status();
                begin[size_t(*a)] = (*pads)[i];
                end[size_t(*a)] = (*pads)[i + axes.size()];
            }
            double value = 0;
            if (const RtTensor* v = ctx.input(2); v && v->numel()) value = elementAsDouble(*v, 0);
            std::vector<int64_t> dims(x->rank()), box(x->rank());
            int64_t srcOffset = 0, dstOffset = 0;
            for (int64_t d = 0; d < rank; ++d) {
                dims[size_t(d)] = x->dims[size_t(d)] + begin[size_t(d)] + end[size_t(d)];
                if (dims[size_t(d)] < 0) return bad(ctx, "pads crop more than the input holds");
            }
            const auto inStrides = contiguousStrides(x->dims), outStrides = contiguousStrides(dims);
            for (int64_t d = 0; d < rank; ++d) {
                const int64_t srcStart = std::max<int64_t>(0, -begin[size_t(d)]);
                const int64_t dstStart = std::max<int64_t>(0, begin[size_t(d)]);
                box[size_t(d)] = std::max<int64_t>(0, std::min(x->dims[size_t(d)] - srcStart, dims[size_t(d)] - dstStart));
                srcOffset += srcStart * inStrides[size_t(d)];
                dstOffset += dstStart * outStrides[size_t(d)];
            }
            auto out = ctx.output(0, x->dtype, dims);
            if (!out) return out.status();
            RtTensor& y = **out;
            if (y.numel() && numel(box) != y.numel()) {
                if (value == 0) {
                    FSC_RETURN_IF_ERROR(ctx.device()->fill(y.data, 0, y.bytes()));
                } else {
                    DeviceLaunch l;
                    auto type = elemType(y.dtype);
                    if (!type) return unsupported(ctx, type.status().message());
                    l.set<dk::FillParams>() = {y.data, *type, value, y.numel()};
                    l.extents = {extentOf(y, true, "output")};
                    l.geometry = dk::elementGeometry(y.numel());
                    FSC_RETURN_IF_ERROR(launch(ctx, l));
                }
            }
            return launchCopy(ctx, *x, y, box, inStrides, srcOffset, outStrides, dstOffset);
        }));
    };
}

KernelFactory gatherOp() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t axisAttr = init.getInt("axis", 0);
        return std::unique_ptr<Kernel>(new FunctionKernel([axisAttr](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const RtTensor* idx = ctx.input(1);
            if (!x || !idx) return bad(ctx, "needs data and indices");
            if (idx->dtype != DType::Int64 && idx->dtype != DType::Int32) return bad(ctx, "indices must be int32 or int64");
            auto axis = normalAxis(ctx, axisAttr, int64_t(x->rank()));
            if (!axis) return axis.status();
            const size_t a = size_t(*axis);
            std::vector<int64_t> dims(x->dims.begin(), x->dims.begin() + std::ptrdiff_t(a));
            dims.insert(dims.end(), idx->dims.begin(), idx->dims.end());
            dims.insert(dims.end(), x->dims.begin() + std::ptrdiff_t(a) + 1, x->dims.end());
            auto out = ctx.output(0, x->dtype, dims);
            if (!out) return out.status();
            auto type = elemType(x->dtype);
            if (!type) return unsupported(ctx, type.status().message());
            DeviceLaunch l;
                        dk::GatherParams& p = l.set<dk::GatherParams>();
            p.data = x->data;
            p.indices = idx->data;
            p.out = (*out)->data;
            p.type = *type;
            p.indexType = idx->dtype == DType::Int32 ? dk::ElemType::I32 : dk::ElemType::I64;
            p.outer = numel({x->dims.begin(), x->dims.begin() + std::ptrdiff_t(a)});
            p.axisDim = x->dims[a];
            p.indexCount = idx->numel();
            p.inner = numel({x->dims.begin() + std::ptrdiff_t(a) + 1, x->dims.end()});
            p.count = (*out)->numel();
            if (p.count == 0) return Status::ok();
            l.extents = {extentOf(*x, false, "data"), extentOf(*idx, false, "indices"), extentOf(**out, true, "output")};
            l.geometry = dk::elementGeometry(p.count);
            return launch(ctx, l);
        }));
    };
}

KernelFactory whereOp() {
    return [](const KernelInit&) -> Result<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(new FunctionKernel([](KernelContext& ctx) -> Status {
            const RtTensor *c = ctx.input(0), *x = ctx.input(1), *y = ctx.input(2);
            if (!c || !x || !y) return bad(ctx, "needs a condition and two inputs");
            if (c->dtype != DType::Bool || x->dtype != y->dtype) return bad(ctx, "needs a bool condition and two inputs of one dtype");
            auto dims = broadcast(ctx, {c, x, y});
            if (!dims) return dims.status();
            if (dims->size() > size_t(dk::kMaxRank)) return unsupported(ctx, "rank above 8");
            auto out = ctx.output(0, x->dtype, *dims);
            if (!out) return out.status();
            auto type = elemType(x->dtype);
            if (!type) return unsupported(ctx, type.status().message());
            DeviceLaunch l;
                        dk::WhereParams& p = l.set<dk::WhereParams>();
            p.cond = c->data;
            p.x = x->data;
            p.y = y->data;
            p.out = (*out)->data;
            p.type = *type;
            p.rank = int(dims->size());
            const RtTensor* ins[] = {c, x, y};
            for (int k = 0; k < 3; ++k) {
                const auto strides = broadcastStrides(*ins[k], *dims);
                for (size_t d = 0; d < dims->size(); ++d) p.strides[k][d] = strides[d];
            }
            for (size_t d = 0; d < dims->size(); ++d) p.dims[d] = (*dims)[d];
            p.count = (*out)->numel();
            if (p.count == 0) return Status::ok();
            l.extents = {extentOf(*c, false, "condition"), extentOf(*x, false, "X"), extentOf(*y, false, "Y"),
                         extentOf(**out, true, "output")};
            l.geometry = dk::elementGeometry(p.count);
            return launch(ctx, l);
        }));
    };
}

}  // namespace

void registerMovementKernels(KernelRegistry& r) {
    addKernel(r, "", "Transpose", transposeOp(), "strided_copy");
    addKernel(r, "", "Concat", concatOp(), "strided_copy");
    addKernel(r, "", "Cast", castOp(), "strided_copy");
    for (const char* op : {"Reshape", "Squeeze", "Unsqueeze"}) addKernel(r, "", op, reshapeLike(op), "copy", {1});
    for (const char* op : {"Flatten", "Identity"}) addKernel(r, "", op, reshapeLike(op), "copy");
    addKernel(r, "", "Split", splitOp(), "strided_copy", {1});
    addKernel(r, "", "Slice", sliceOp(), "strided_copy", {1, 2, 3, 4});
    addKernel(r, "", "Expand", expandOp(), "strided_copy", {1});
    addKernel(r, "", "Pad", padOp(), "strided_copy", {1, 2, 3});
    addKernel(r, "", "Gather", gatherOp(), "gather");
    addKernel(r, "", "Where", whereOp(), "where");
}

}  // namespace fsc::cudak
