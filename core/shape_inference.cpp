#include "core/shape_inference.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <set>

#include "core/einsum_equation.h"
#include "core/fused_matmul_axes.h"
#include "core/shape_values.h"
#include "core/window_shapes.h"

namespace fsc {
namespace {

// Ops (any domain) whose first output has exactly the type of their first input. ONNX
// covers its own domain; these entries matter for com.microsoft and ai.fusescope ops.
const std::set<std::string>& passThroughOps() {
    static const std::set<std::string> ops = {
        "Identity", "Relu", "Gelu", "FastGelu", "QuickGelu", "BiasGelu", "Sigmoid", "Tanh",
        "Erf", "HardSwish", "Swish", "Softmax", "Dropout", "LayerNormalization",
        "SkipLayerNormalization", "SimplifiedLayerNormalization",
        "SkipSimplifiedLayerNormalization", "RMSNormalization", "RotaryEmbedding", "BiasDropout", "Neg", "Abs",
        "Sqrt", "Exp", "Log", "Clip", "LeakyRelu", "HardSigmoid", "Softplus",
    };
    return ops;
}

// Element-wise ops with multidirectional (numpy) broadcasting of all inputs.
const std::set<std::string>& broadcastOps() {
    static const std::set<std::string> ops = {"Add", "Sub", "Mul", "Div", "Pow", "BiasAdd",
                                              "Max", "Min", "Sum", "Mean"};
    return ops;
}

std::optional<Shape> broadcast(const std::vector<const ValueType*>& inputs) {
    size_t rank = 0;
    for (const ValueType* t : inputs) {
        if (!t || t->kind != ValueType::Kind::Tensor || !t->shape.rankKnown()) return std::nullopt;
        rank = std::max(rank, t->shape.rank());
    }
    std::vector<Dim> dims(rank, Dim::known(1));
    for (const ValueType* t : inputs) {
        const auto& in = t->shape.dims();
        const size_t offset = rank - in.size();
        for (size_t i = 0; i < in.size(); ++i) {
            Dim& out = dims[offset + i];
            const Dim& d = in[i];
            if (d.isKnown() && d.size() == 1) continue;
            if (out.isKnown() && out.size() == 1) out = d;
            else if (!(out == d)) out = Dim();
        }
    }
    return Shape(std::move(dims));
}


std::optional<Shape> transposed(const ValueType& in, const Attribute* perm) {
    if (in.kind != ValueType::Kind::Tensor || !in.shape.rankKnown()) return std::nullopt;
    const size_t rank = in.shape.rank();
    std::vector<Dim> dims;
    for (size_t i = 0; i < rank; ++i) {
        const int64_t axis = perm ? (i < perm->ints.size() ? perm->ints[i] : -1) : int64_t(rank - 1 - i);
        if (axis < 0 || axis >= int64_t(rank) || (perm && perm->ints.size() != rank)) return std::nullopt;
        dims.push_back(in.shape[size_t(axis)]);
    }
    return Shape(std::move(dims));
}

// Concat along `axis`: sizes add up there; elsewhere the inputs agree (or stay unknown).
std::optional<Shape> concatenated(const std::vector<const ValueType*>& inputs, int64_t axis) {
    if (inputs.empty()) return std::nullopt;
    for (const ValueType* t : inputs)
        if (!t || t->kind != ValueType::Kind::Tensor || !t->shape.rankKnown() ||
            t->shape.rank() != inputs[0]->shape.rank())
            return std::nullopt;
    const auto rank = int64_t(inputs[0]->shape.rank());
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return std::nullopt;
    std::vector<Dim> dims = inputs[0]->shape.dims();
    int64_t total = 0;
    for (const ValueType* t : inputs) {
        const Dim& d = t->shape[size_t(axis)];
        if (total >= 0 && d.isKnown() && !__builtin_add_overflow(total, d.size(), &total)) continue;
        total = -1;
    }
    dims[size_t(axis)] = total >= 0 ? Dim::known(total) : Dim();
    for (size_t i = 0; i < dims.size(); ++i) {
        if (int64_t(i) == axis) continue;
        for (const ValueType* t : inputs)
            if (dims[i].isUnknown()) dims[i] = t->shape[i];
    }
    return Shape(std::move(dims));
}

// numpy matmul: batch dims broadcast, [m, k] x [k, n] -> [m, n]; 1-D operands drop m or n.
std::optional<Shape> matmulResult(const ValueType& a, const ValueType& b) {
    if (a.kind != ValueType::Kind::Tensor || b.kind != ValueType::Kind::Tensor ||
        !a.shape.rankKnown() || !b.shape.rankKnown() || a.shape.rank() == 0 || b.shape.rank() == 0)
        return std::nullopt;
    std::vector<Dim> da = a.shape.dims(), db = b.shape.dims();
    const bool aVector = da.size() == 1, bVector = db.size() == 1;
    if (aVector) da.insert(da.begin(), Dim::known(1));
    if (bVector) db.push_back(Dim::known(1));
    ValueType batchA = ValueType::tensor(a.elemType, Shape(std::vector<Dim>(da.begin(), da.end() - 2)));
    ValueType batchB = ValueType::tensor(b.elemType, Shape(std::vector<Dim>(db.begin(), db.end() - 2)));
    auto batch = broadcast({&batchA, &batchB});
    if (!batch) return std::nullopt;
    std::vector<Dim> dims = batch->dims();
    if (!aVector) dims.push_back(da[da.size() - 2]);
    if (!bVector) dims.push_back(db.back());
    return Shape(std::move(dims));
}

}  // namespace

void mergeType(ValueType& type, const ValueType& inferred) {
    if (!inferred.isKnown()) return;
    if (!type.isKnown()) {
        type = inferred;
        return;
    }
    if (type.kind != inferred.kind) return;
    if (type.elemType == DType::Undefined) type.elemType = inferred.elemType;
    if (type.kind != ValueType::Kind::Tensor && type.kind != ValueType::Kind::SparseTensor) {
        if (!type.element && inferred.element) type.element = inferred.element;
        return;
    }
    if (!type.shape.rankKnown()) {
        type.shape = inferred.shape;
        return;
    }
    if (!inferred.shape.rankKnown() || inferred.shape.rank() != type.shape.rank()) return;
    std::vector<Dim> dims = type.shape.dims();
    for (size_t i = 0; i < dims.size(); ++i)
        if (dims[i].isUnknown() || (isInventedSymbol(dims[i]) && dimRank(inferred.shape[i]) > dimRank(dims[i])))
            dims[i] = inferred.shape[i];
    type.shape = Shape(std::move(dims));
}

bool isInventedSymbol(const Dim& d) { return d.isSymbolic() && d.symbol().rfind("unk__", 0) == 0; }

int dimRank(const Dim& d) { return d.isUnknown() ? 0 : isInventedSymbol(d) ? 1 : 2; }

namespace {

// Pads computed at run time from shapes (windowed attention pads to a multiple).
std::optional<Shape> paddedShape(const Shape& in, const ShapeValue& pads) {
    const size_t rank = in.rank();
    if (!in.rankKnown() || pads.size() != 2 * rank) return std::nullopt;
    std::vector<Dim> dims;
    for (size_t i = 0; i < rank; ++i) {
        const Dim& before = pads[i];
        const Dim& after = pads[rank + i];
        int64_t padded = 0;
        if (before.isKnown() && after.isKnown() && in[i].isKnown() &&
            !__builtin_add_overflow(in[i].size(), before.size(), &padded) &&
            !__builtin_add_overflow(padded, after.size(), &padded) && padded >= 0)
            dims.push_back(Dim::known(padded));
        else if (before.isKnown() && after.isKnown() && before.size() == 0 && after.size() == 0)
            dims.push_back(in[i]);
        else
            dims.push_back(Dim());
    }
    return Shape(std::move(dims));
}

const std::set<std::string>& reductionOps() {
    static const std::set<std::string> ops = {"ReduceL1",  "ReduceL2",        "ReduceLogSum", "ReduceLogSumExp",
                                              "ReduceMax", "ReduceMean",      "ReduceMin",    "ReduceProd",
                                              "ReduceSum", "ReduceSumSquare"};
    return ops;
}

// A Reduce* node's output: its axes from the `axes` input (opset 18; ReduceSum from 13) or
// attribute, `keepdims` and `noop_with_empty_axes` as ONNX defines them. ONNX's own rule
// covers these too, but a libonnx older than the model's opset does not know the input form.
std::optional<Shape> reducedShape(const Node& node, const Shape& in, const ShapeValue* axesInput) {
    const int64_t rank = int64_t(in.rank());
    std::vector<int64_t> axes;
    if (node.inputs.size() > 1 && node.inputs[1].valid()) {
        if (!axesInput) return std::nullopt;
        for (const Dim& d : *axesInput) {
            if (!d.isKnown()) return std::nullopt;
            axes.push_back(d.size());
        }
    } else if (const Attribute* a = node.attribute("axes")) {
        axes = a->ints;
    }
    const Attribute* keep = node.attribute("keepdims");
    const Attribute* noop = node.attribute("noop_with_empty_axes");
    if (axes.empty() && noop && noop->i) return in;
    std::vector<bool> reduced(size_t(rank), axes.empty());
    for (int64_t a : axes) {
        if (a < -rank || a >= rank) return std::nullopt;
        reduced[size_t(a < 0 ? a + rank : a)] = true;
    }
    std::vector<Dim> dims;
    for (int64_t d = 0; d < rank; ++d) {
        if (!reduced[size_t(d)]) dims.push_back(in[size_t(d)]);
        else if (!keep || keep->i) dims.push_back(Dim::known(1));
    }
    return Shape(std::move(dims));
}

// The elements of a float32 initializer or Constant, for inputs that are numbers rather
// than shapes (Resize's scales).
std::optional<std::vector<float>> constantFloats(const Graph& graph, ValueId id) {
    const Value& v = graph.value(id);
    const Tensor* t = v.initializer.get();
    if (!t && v.producer.valid()) {
        const Node& producer = graph.node(v.producer);
        const Attribute* value = producer.opType == "Constant" && producer.domain.empty() ? producer.attribute("value") : nullptr;
        if (value && value->type == Attribute::Type::Tensor) t = &value->t;
    }
    if (!t || t->dtype() != DType::Float32 || t->numElements() < 0 || (t->numElements() > 0 && !t->data()))
        return std::nullopt;
    return std::vector<float>(t->dataAs<float>(), t->dataAs<float>() + t->numElements());
}

// A float Range's bound: a float constant, or a shape number cast to float
// (torch.arange(h, dtype=torch.float32) over a feature map's height for sine positions).
std::optional<double> floatRangeBound(const Graph& graph, ValueId id, ShapeValueTable& values) {
    if (auto constant = constantFloats(graph, id); constant && constant->size() == 1) return double((*constant)[0]);
    const Value& v = graph.value(id);
    if (!v.producer.valid()) return std::nullopt;
    const Node& producer = graph.node(v.producer);
    if (producer.opType != "Cast" || !producer.domain.empty() || producer.inputs.empty()) return std::nullopt;
    auto number = knownInts(values.find(producer.inputs[0]));
    if (!number || number->size() != 1) return std::nullopt;
    return double((*number)[0]);
}

// Elements of a float32 Range whose bounds floatRangeBound reads: ceil((limit - start) / delta).
std::optional<int64_t> floatRangeLength(const Graph& graph, const Node& range, ShapeValueTable& values) {
    for (ValueId input : range.inputs)
        if (!input.valid()) return std::nullopt;
    if (graph.value(range.inputs[0]).type.elemType != DType::Float32) return std::nullopt;
    auto start = floatRangeBound(graph, range.inputs[0], values), limit = floatRangeBound(graph, range.inputs[1], values),
         delta = floatRangeBound(graph, range.inputs[2], values);
    if (!start || !limit || !delta || *delta == 0) return std::nullopt;
    const double count = std::ceil((float(*limit) - float(*start)) / float(*delta));
    if (!(count < double(int64_t(1) << 40))) return std::nullopt;
    return std::max<int64_t>(int64_t(count), 0);
}

// Resize by constant scales: floor(size x scale) per axis; a symbolic dim survives a scale of 1
// (the batch of an upsampling), which ONNX's rule renames to a dim of its own.
std::optional<Shape> scaledShape(const Shape& in, const std::vector<float>& scales) {
    if (!in.rankKnown() || scales.size() != in.rank()) return std::nullopt;
    std::vector<Dim> dims;
    for (size_t i = 0; i < scales.size(); ++i) {
        const double scaled = in[i].isKnown() ? std::floor(double(in[i].size()) * scales[i]) : 0;
        if (scales[i] == 1.0f) dims.push_back(in[i]);
        else if (in[i].isKnown() && scales[i] > 0 && scaled < 9.0e18) dims.push_back(Dim::known(int64_t(scaled)));
        else dims.push_back(Dim());
    }
    return Shape(std::move(dims));
}

// GroupQueryAttention's head size: from key (kv_num_heads heads), or from a packed query.
std::optional<int64_t> gqaHeadSize(const Graph& graph, const Node& node) {
    const Attribute *heads = node.attribute("num_heads"), *kvHeads = node.attribute("kv_num_heads");
    if (!heads || !kvHeads || heads->i <= 0 || kvHeads->i <= 0) return std::nullopt;
    const bool packed = node.inputs.size() < 2 || !node.inputs[1].valid();
    const Shape& from = graph.value(node.inputs[packed ? 0 : 1]).type.shape;
    if (!from.rankKnown() || from.rank() != 3 || !from.dims()[2].isKnown()) return std::nullopt;
    const int64_t parts = packed ? heads->i + 2 * kvHeads->i : kvHeads->i;
    return from.dims()[2].size() / parts;
}

// MultiHeadAttention's value width (heads x V's head size): from value (batch, keys, hidden)
// or (batch, heads, keys, size), or from the query or key that packs it (.., heads, parts, size).
std::optional<Dim> mhaValueWidth(const Graph& graph, const Node& node) {
    const Attribute* heads = node.attribute("num_heads");
    auto shape = [&](size_t i) -> const Shape* {
        if (i >= node.inputs.size() || !node.inputs[i].valid()) return nullptr;
        const Shape& s = graph.value(node.inputs[i]).type.shape;
        return s.rankKnown() ? &s : nullptr;
    };
    const Shape *q = shape(0), *k = shape(1), *v = shape(2);
    if (!heads || !q) return std::nullopt;
    const Shape* packed = q->rank() == 5 ? q : (k && k->rank() == 5 ? k : nullptr);
    if (packed) {
        if (!packed->dims()[4].isKnown()) return Dim();
        return Dim::known(heads->i * packed->dims()[4].size());
    }
    if (q->rank() != 3 || !v) return std::nullopt;
    if (v->rank() == 3) return v->dims()[2];
    if (v->rank() == 4 && v->dims()[3].isKnown()) return Dim::known(v->dims()[3].size() * heads->i);
    return std::nullopt;
}

// com.microsoft.DynamicQuantizeLSTM's Y, Y_h and Y_c, as LSTM's; its R is [dirs, hidden, 4 x hidden].
std::optional<std::array<Shape, 3>> quantizedLstmShapes(const Graph& graph, const Node& node) {
    if (node.inputs.size() < 3 || !node.inputs[0].valid() || !node.inputs[2].valid()) return std::nullopt;
    const Shape &x = graph.value(node.inputs[0]).type.shape, &r = graph.value(node.inputs[2]).type.shape;
    if (!x.rankKnown() || x.rank() != 3 || !r.rankKnown() || r.rank() != 3) return std::nullopt;
    const Attribute *hidden = node.attribute("hidden_size"), *direction = node.attribute("direction"),
                    *layout = node.attribute("layout");
    const Dim h = hidden ? Dim::known(hidden->i) : r.dims()[1];
    const Dim dirs = Dim::known(direction && direction->s == "bidirectional" ? 2 : 1);
    const bool batchFirst = layout && layout->i == 1;
    const Dim seq = x.dims()[batchFirst ? 1 : 0], batch = x.dims()[batchFirst ? 0 : 1];
    const Shape state = batchFirst ? Shape({batch, dirs, h}) : Shape({dirs, batch, h});
    return std::array<Shape, 3>{batchFirst ? Shape({batch, seq, dirs, h}) : Shape({seq, dirs, batch, h}), state, state};
}

// The type our rules give a node's first output, or nothing when no rule applies.
std::optional<ValueType> inferByRule(const Graph& graph, const Node& node, ShapeValueTable& values) {
    auto inputType = [&](size_t i) -> const ValueType* {
        if (i >= node.inputs.size() || !node.inputs[i].valid()) return nullptr;
        return &graph.value(node.inputs[i]).type;
    };
    auto allInputs = [&] {
        std::vector<const ValueType*> inputs;
        for (size_t i = 0; i < node.inputs.size(); ++i) inputs.push_back(inputType(i));
        return inputs;
    };
    auto shapeValue = [&](size_t i) -> const ShapeValue* {
        return i < node.inputs.size() ? values.find(node.inputs[i]) : nullptr;
    };
    const ValueType* first = inputType(0);
    if (!first) return std::nullopt;
    auto like = [&](std::optional<Shape> shape) -> std::optional<ValueType> {
        if (!shape) return std::nullopt;
        return ValueType::tensor(first->elemType, std::move(*shape));
    };
    const std::string& op = node.opType;
    if (passThroughOps().count(op)) return *first;
    if (broadcastOps().count(op)) return like(broadcast(allInputs()));
    if (node.domain == "com.microsoft") {  // ONNX Runtime's quantized ops
        if (op == "QLinearAdd" || op == "QLinearMul") return like(broadcast({first, inputType(3)}));  // A, scale, zero point, B, ...
        if (op == "QLinearSigmoid" || op == "QLinearLeakyRelu" || op == "QLinearSoftmax") return *first;
        if (op == "DynamicQuantizeLSTM") {
            auto shapes = quantizedLstmShapes(graph, node);
            if (!shapes) return std::nullopt;
            return ValueType::tensor(DType::Float32, (*shapes)[0]);
        }
        if (op == "QLinearConcat" && inputType(1)) {  // Y_scale, Y_zero_point, then (X, scale, zero point) each
            std::vector<const ValueType*> data;
            for (size_t i = 2; i < node.inputs.size(); i += 3) data.push_back(inputType(i));
            const Attribute* axis = node.attribute("axis");
            auto shape = concatenated(data, axis ? axis->i : 0);
            if (!shape) return std::nullopt;
            return ValueType::tensor(inputType(1)->elemType, std::move(*shape));
        }
        if (op == "QLinearGlobalAveragePool" && first->shape.rankKnown()) {
            std::vector<Dim> dims(first->shape.rank(), Dim::known(1));
            const Attribute* last = node.attribute("channels_last");
            const size_t channel = last && last->i ? dims.size() - 1 : 1;
            dims[0] = first->shape.dims()[0];
            dims[channel] = first->shape.dims()[channel];
            return like(Shape(std::move(dims)));
        }
        // What ONNX Runtime's optimizer writes: products of float results.
        if ((op == "MatMulIntegerToFloat" || op == "DynamicQuantizeMatMul") && inputType(1)) {
            auto shape = matmulResult(*first, *inputType(1));
            if (!shape) return std::nullopt;
            return ValueType::tensor(DType::Float32, std::move(*shape));
        }
        if (op == "GroupQueryAttention" && first->shape.rankKnown() && first->shape.rank() == 3) {
            if (auto size = gqaHeadSize(graph, node)) {
                const Attribute* heads = node.attribute("num_heads");
                return like(Shape({first->shape.dims()[0], first->shape.dims()[1], Dim::known(heads->i * *size)}));
            }
        }
        if (op == "MatMulNBits" && first->shape.rankKnown() && first->shape.rank() >= 1 && node.attribute("N")) {
            std::vector<Dim> dims = first->shape.dims();
            dims.back() = Dim::known(node.attribute("N")->i);
            return like(Shape(std::move(dims)));
        }
        if (op == "FusedMatMul" && inputType(1)) {
            // op(X): axis 0 behind the other batch axes (transBatch), then the last two swapped (trans).
            auto moved = [&](const ValueType& t, const char* trans, const char* batch) -> std::optional<ValueType> {
                if (!t.shape.rankKnown() || t.shape.rank() < 2) return t;
                const Attribute *b = node.attribute(batch), *tr = node.attribute(trans);
                if (b && b->i && t.shape.rank() < 3) return std::nullopt;
                std::vector<Dim> dims;
                for (int64_t axis : fusedMatMulAxes(int64_t(t.shape.rank()), tr && tr->i, b && b->i))
                    dims.push_back(t.shape.dims()[size_t(axis)]);
                return ValueType::tensor(t.elemType, Shape(std::move(dims)));
            };
            auto a = moved(*first, "transA", "transBatchA"), b = moved(*inputType(1), "transB", "transBatchB");
            if (!a || !b) return std::nullopt;
            return like(matmulResult(*a, *b));
        }
        // Its transformers optimizer's BERT ops.
        // QAttention: the same with 8-bit input and weights, a float output.
        if ((op == "Attention" || op == "QAttention") && inputType(1) && first->shape.rankKnown() && first->shape.rank() == 3) {
            const Attribute* sizes = node.attribute("qkv_hidden_sizes");
            Dim hv;
            if (sizes && sizes->ints.size() == 3) hv = Dim::known(sizes->ints[2]);
            else if (inputType(1)->shape.rankKnown() && inputType(1)->shape.rank() == 2 && inputType(1)->shape.dims()[1].isKnown())
                hv = Dim::known(inputType(1)->shape.dims()[1].size() / 3);
            return ValueType::tensor(DType::Float32, Shape({first->shape.dims()[0], first->shape.dims()[1], hv}));
        }
        if (op == "MultiHeadAttention" && first->shape.rankKnown() && node.attribute("num_heads")) {
            const Shape& q = first->shape;
            if (auto width = mhaValueWidth(graph, node)) return like(Shape({q.dims()[0], q.dims()[1], *width}));
        }
        if ((op == "EmbedLayerNormalization" || op == "QEmbedLayerNormalization") && inputType(2) && first->shape.rankKnown() && first->shape.rank() == 2) {
            const Shape& words = inputType(2)->shape;
            const Dim hidden = words.rankKnown() && words.rank() == 2 ? words.dims()[1] : Dim();
            return ValueType::tensor(DType::Float32, Shape({first->shape.dims()[0], first->shape.dims()[1], hidden}));
        }
        if (op == "QGemm" && inputType(3) && first->shape.rank() == 2 && inputType(3)->shape.rankKnown() &&
            inputType(3)->shape.rank() == 2) {
            const Attribute* transB = node.attribute("transB");
            const Dim n = inputType(3)->shape.dims()[transB && transB->i ? 0 : 1];
            const ValueType* yZero = inputType(8);
            const DType type = inputType(7) ? (yZero ? yZero->elemType : first->elemType) : DType::Float32;
            return ValueType::tensor(type, Shape({first->shape.dims()[0], n}));
        }
    }
    if (node.domain == "ai.fusescope" && op == "QuantizedLookup" && inputType(1))  // X, Table
        return ValueType::tensor(inputType(1)->elemType, first->shape);
    if (!node.domain.empty() && node.domain != "ai.onnx") return std::nullopt;

    // ONNX covers the ops below too; ours also read shape values it cannot compute, and
    // carry what they learn forward within one pass, so fewer ONNX rounds are needed.
    if (op == "Transpose") return like(transposed(*first, node.attribute("perm")));
    if (op == "MatMul" && inputType(1)) return like(matmulResult(*first, *inputType(1)));
    // quantize_dynamic's chains: without these, each round of ONNX's inference carried the
    // types one com.microsoft op further, and a 12-layer encoder ran out of rounds at layer 7.
    if (op == "MatMulInteger" && inputType(1)) {
        auto shape = matmulResult(*first, *inputType(1));
        if (!shape) return std::nullopt;
        return ValueType::tensor(DType::Int32, std::move(*shape));
    }
    if (op == "DynamicQuantizeLinear") return ValueType::tensor(DType::UInt8, first->shape);
    if (op == "Cast" && node.attribute("to") && first->kind == ValueType::Kind::Tensor) {
        if (auto to = dtypeFromOnnx(int32_t(node.attribute("to")->i))) return ValueType::tensor(*to, first->shape);
    }
    if (op == "Concat") {
        const Attribute* axis = node.attribute("axis");
        return like(concatenated(allInputs(), axis ? axis->i : 0));
    }
    if (op == "Reshape" && shapeValue(1)) {
        const Attribute* allowZero = node.attribute("allowzero");
        return like(reshapeResult(first->shape, *shapeValue(1), allowZero && allowZero->i));
    }
    if (op == "Expand" && shapeValue(1)) {
        const ValueType target = ValueType::tensor(first->elemType, Shape(*shapeValue(1)));
        return like(broadcast({first, &target}));
    }
    if (op == "Pad" && shapeValue(1) && node.inputs.size() < 4)
        return like(paddedShape(first->shape, *shapeValue(1)));
    if (op == "Slice" && node.inputs.size() >= 3 && first->shape.rankKnown())
        return like(sliceResult(node, graph, values));
    if (reductionOps().count(op) && first->shape.rankKnown()) return like(reducedShape(node, first->shape, shapeValue(1)));
    if (op == "Range" && node.inputs.size() == 3) {
        auto start = knownInts(shapeValue(0)), limit = knownInts(shapeValue(1)),
             delta = knownInts(shapeValue(2));
        if (start && limit && delta && start->size() == 1 && limit->size() == 1 &&
            delta->size() == 1 && (*delta)[0] != 0)
            return like(Shape::ofSizes({rangeLength((*start)[0], (*limit)[0], (*delta)[0])}));
        if (auto length = floatRangeLength(graph, node, values)) return like(Shape::ofSizes({*length}));
        // Positions 0 .. sequence - 1 (torch.arange(seq_len) for a position embedding).
        const ShapeValue* symbolicLimit = shapeValue(1);
        if (start == std::vector<int64_t>{0} && delta == std::vector<int64_t>{1} && symbolicLimit &&
            symbolicLimit->size() == 1 && (*symbolicLimit)[0].isSymbolic())
            return like(Shape({(*symbolicLimit)[0]}));
    }
    if (op == "Einsum") {
        // ONNX 1.12 gives Einsum's output a rank only when the equation has spaces.
        const Attribute* text = node.attribute("equation");
        auto equation = text ? parseEinsumEquation(text->s) : std::nullopt;
        std::vector<const Shape*> shapes;
        std::vector<size_t> ranks;
        for (const ValueType* t : allInputs()) {
            if (!t || !t->shape.rankKnown()) return std::nullopt;
            shapes.push_back(&t->shape);
            ranks.push_back(t->shape.rank());
        }
        auto labels = equation ? labelEinsum(*equation, ranks) : std::nullopt;
        return labels ? like(einsumShape(*labels, shapes)) : std::nullopt;
    }
    // Resize to `sizes` computed from shapes (torchvision's segmentation heads resize to the
    // input's height and width), which ONNX sizes only when they are constants.
    if (op == "Resize" && node.inputs.size() >= 4 && shapeValue(3) && !node.attribute("axes") &&
        first->shape.rankKnown() && shapeValue(3)->size() == first->shape.rank()) {
        const Attribute* policy = node.attribute("keep_aspect_ratio_policy");
        if (!policy || policy->s == "stretch") return like(Shape(*shapeValue(3)));
    }
    // Resize by constant scales (an upsampling by 2 in a U-Net's decoder).
    const Attribute* transformMode = node.attribute("coordinate_transformation_mode");
    if (op == "Resize" && node.inputs.size() >= 3 && node.inputs[2].valid() &&
        (node.inputs.size() < 4 || !node.inputs[3].valid()) && !node.attribute("axes") &&
        !(transformMode && transformMode->s == "tf_crop_and_resize")) {
        if (auto scales = constantFloats(graph, node.inputs[2])) return like(scaledShape(first->shape, *scales));
    }
    // Tile by repeats computed from the batch (DETR's learned queries repeated per image).
    if (op == "Tile" && shapeValue(1) && first->shape.rankKnown() && shapeValue(1)->size() == first->shape.rank()) {
        std::vector<Dim> dims;
        for (size_t i = 0; i < first->shape.rank(); ++i) dims.push_back(dimArithmetic("Mul", first->shape[i], (*shapeValue(1))[i]));
        return like(Shape(std::move(dims)));
    }
    if (op == "Conv" || op == "MaxPool" || op == "AveragePool" || op == "LpPool")
        return like(slidingWindowShape(node, first->shape, op == "Conv" && inputType(1) ? &inputType(1)->shape : nullptr));
    if (op == "ConstantOfShape" && shapeValue(0)) {
        const Attribute* value = node.attribute("value");
        return ValueType::tensor(value ? value->t.dtype() : DType::Float32, Shape(*shapeValue(0)));
    }
    return std::nullopt;
}

// A Loop body declares each carried value's input as the body returns it; where the two
// differ the value changes shape from one iteration to the next (Mask R-CNN's paste of each
// mask grows a [0, 320, 320] start by one row a turn), so the input keeps only what they
// agree on: a dim that differs is unknown, and a rank that differs leaves the rank unknown.
void relaxLoopCarriedInputs(Node& loop) {
    if (loop.opType != "Loop" || !loop.domain.empty()) return;
    const auto subgraphs = loop.subgraphs();
    if (subgraphs.size() != 1) return;
    Graph& body = *subgraphs[0];
    // Body inputs: iteration, condition, carried...; outputs: condition, carried..., scans.
    for (size_t k = 2; k < body.inputs.size() && k - 1 < body.outputs.size(); ++k) {
        Shape& in = body.value(body.inputs[k]).type.shape;
        const Shape& out = body.value(body.outputs[k - 1]).type.shape;
        if (!in.rankKnown()) continue;
        if (!out.rankKnown() || out.rank() != in.rank()) {
            in = Shape();
            continue;
        }
        std::vector<Dim> dims = in.dims();
        for (size_t d = 0; d < dims.size(); ++d)
            if (!(dims[d] == out[d])) dims[d] = Dim();
        in = Shape(std::move(dims));
    }
}

// Outputs after the first, for the ops whose later outputs others read.
void inferOtherOutputs(Graph& graph, const Node& node) {
    // A malformed node (fewer than two inputs, or no first) gets no rule, and no crash.
    if (node.domain != "com.microsoft" || node.inputs.size() < 2 || !node.inputs[0].valid()) return;
    if (node.opType == "DynamicQuantizeLSTM") {
        if (auto shapes = quantizedLstmShapes(graph, node))
            for (size_t i = 1; i < 3 && i < node.outputs.size(); ++i)
                if (node.outputs[i].valid()) mergeType(graph.value(node.outputs[i]).type, ValueType::tensor(DType::Float32, (*shapes)[i]));
        return;
    }
    if (node.opType == "GroupQueryAttention") {  // present_key, present_value: (batch, kv heads, total, size)
        const Shape& q = graph.value(node.inputs[0]).type.shape;
        const auto size = gqaHeadSize(graph, node);
        const Attribute* kvHeads = node.attribute("kv_num_heads");
        if (!size || !kvHeads || !q.rankKnown() || q.rank() != 3) return;
        for (size_t i = 1; i < 3 && i < node.outputs.size(); ++i)
            if (node.outputs[i].valid())
                mergeType(graph.value(node.outputs[i]).type,
                          ValueType::tensor(DType::Float32, Shape({q.dims()[0], Dim::known(kvHeads->i), Dim(), Dim::known(*size)})));
        return;
    }
    if (node.opType == "MultiHeadAttention" && node.outputs.size() > 1) {
        // present_key and present_value: (batch, heads, past length + keys, size)
        const Shape& q = graph.value(node.inputs[0]).type.shape;
        const Attribute* heads = node.attribute("num_heads");
        const auto width = mhaValueWidth(graph, node);
        if (!heads || heads->i <= 0 || !q.rankKnown() || q.rank() != 3 || !q.dims()[2].isKnown() || node.inputs.size() < 2 ||
            !node.inputs[1].valid())
            return;
        const Shape& k = graph.value(node.inputs[1]).type.shape;
        if (!k.rankKnown() || k.rank() != 3) return;
        Dim total = k.dims()[1];
        if (node.inputs.size() > 6 && node.inputs[6].valid()) {
            const Shape& past = graph.value(node.inputs[6]).type.shape;
            total = past.rankKnown() && past.rank() == 4 && past.dims()[2].isKnown() && k.dims()[1].isKnown()
                        ? Dim::known(past.dims()[2].size() + k.dims()[1].size())
                        : Dim();
        }
        const Dim sizes[2] = {Dim::known(q.dims()[2].size() / heads->i),
                              width && width->isKnown() ? Dim::known(width->size() / heads->i) : Dim()};
        for (size_t i = 1; i < 3 && i < node.outputs.size(); ++i)
            if (node.outputs[i].valid())
                mergeType(graph.value(node.outputs[i]).type,
                          ValueType::tensor(DType::Float32, Shape({q.dims()[0], Dim::known(heads->i), total, sizes[i - 1]})));
        return;
    }
    if ((node.opType == "Attention" || node.opType == "QAttention") && node.outputs.size() > 1 && node.outputs[1].valid()) {
        // present: (2, batch, heads, past length + sequence, head size)
        const Shape& x = graph.value(node.inputs[0]).type.shape;
        const size_t pastInput = node.opType == "Attention" ? 4 : 8;
        const Attribute* heads = node.attribute("num_heads");
        const Attribute* sizes = node.attribute("qkv_hidden_sizes");
        if (!node.inputs[1].valid()) return;
        const Shape& w = graph.value(node.inputs[1]).type.shape;
        int64_t width = 0;
        if (sizes && sizes->ints.size() == 3) width = sizes->ints[0];
        else if (w.rankKnown() && w.rank() == 2 && w.dims()[1].isKnown()) width = w.dims()[1].size() / 3;
        if (!heads || heads->i <= 0 || width <= 0 || !x.rankKnown() || x.rank() != 3) return;
        Dim total;
        if (pastInput < node.inputs.size() && node.inputs[pastInput].valid()) {
            const Shape& past = graph.value(node.inputs[pastInput]).type.shape;
            if (past.rankKnown() && past.rank() == 5 && past.dims()[3].isKnown() && x.dims()[1].isKnown())
                total = Dim::known(past.dims()[3].size() + x.dims()[1].size());
        } else {
            total = x.dims()[1];
        }
        mergeType(graph.value(node.outputs[1]).type,
                  ValueType::tensor(DType::Float32, Shape({Dim::known(2), x.dims()[0], Dim::known(heads->i), total,
                                                           Dim::known(width / heads->i)})));
        return;
    }
    if (node.opType != "EmbedLayerNormalization" && node.opType != "QEmbedLayerNormalization") return;
    const ValueType& out = graph.value(node.outputs[0]).type;
    if (!out.shape.rankKnown()) return;
    if (node.outputs.size() > 1 && node.outputs[1].valid())  // mask_index: tokens per sequence
        mergeType(graph.value(node.outputs[1]).type, ValueType::tensor(DType::Int32, Shape({out.shape.dims()[0]})));
    if (node.outputs.size() > 2 && node.outputs[2].valid())  // embedding_sum
        mergeType(graph.value(node.outputs[2]).type, out);
}

}  // namespace

void fillUnknownTypes(Graph& graph) {
    ShapeValueTable shapeValues(graph);
    for (NodeId nid : graph.order()) {
        Node& node = graph.node(nid);
        relaxLoopCarriedInputs(node);
        for (const auto& sub : node.subgraphs()) fillUnknownTypes(*sub);
        shapeValues.evaluate(node);
        if (node.outputs.empty() || !node.outputs[0].valid()) continue;
        ValueType& out = graph.value(node.outputs[0]).type;
        const bool known = out.shapeFullyKnown() &&
                           std::none_of(out.shape.dims().begin(), out.shape.dims().end(), isInventedSymbol);
        if (!known)
            if (auto inferred = inferByRule(graph, node, shapeValues)) mergeType(out, *inferred);
        inferOtherOutputs(graph, node);
    }
}

}  // namespace fsc
