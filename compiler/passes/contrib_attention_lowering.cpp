#include "compiler/passes/contrib_attention_lowering.h"

#include <cmath>
#include <cstring>

#include "compiler/passes/pass_util.h"
#include "compiler/runtime/fused_domain.h"
#include "core/buffer.h"
#include "core/graph_builder.h"

namespace fsc::passes {
namespace {

// How mask_index is read (as the kernel in backends/cpu/contrib_attention.cpp reads it).
enum class MaskForm { None, Ends, Keys, Full };

struct Sizes {
    int64_t heads = 0, parts[3] = {0, 0, 0};
};

std::optional<Sizes> partSizes(const Node& n, int64_t packed) {
    Sizes s;
    s.heads = intAttr(n, "num_heads", 0);
    const std::vector<int64_t> given = intsAttr(n, "qkv_hidden_sizes");
    if (given.empty()) s.parts[0] = s.parts[1] = packed / 3, s.parts[2] = packed - 2 * (packed / 3);
    else if (given.size() == 3) std::copy(given.begin(), given.end(), s.parts);
    else return std::nullopt;
    if (s.heads <= 0 || s.parts[0] <= 0 || s.parts[0] != s.parts[1] || s.parts[0] + s.parts[1] + s.parts[2] != packed)
        return std::nullopt;
    for (int64_t p : s.parts)
        if (p % s.heads) return std::nullopt;
    return s;
}

Tensor int32Scalar(int32_t v) {
    std::string bytes(sizeof v, '\0');
    std::memcpy(bytes.data(), &v, sizeof v);
    return Tensor("", DType::Int32, {}, makeBuffer(std::move(bytes)), 0, sizeof v);
}

bool present(const Node& n, size_t i) { return i < n.inputs.size() && n.inputs[i].valid(); }

MaskForm maskForm(const Graph& g, const Node& n) {
    if (!present(n, 3)) return MaskForm::None;
    const Shape& m = g.value(n.inputs[3]).type.shape;
    const Shape& x = g.value(n.inputs[0]).type.shape;
    if (!m.rankKnown()) return MaskForm::None;
    // One value per sequence is its end; 2 x batch values (ends and starts) stay with the kernel.
    if (m.rank() == 1 && m.dims()[0] == x.dims()[0] && !m.dims()[0].isUnknown()) return MaskForm::Ends;
    if (m.rank() == 2) return MaskForm::Keys;
    if (m.rank() == 3) return MaskForm::Full;
    return MaskForm::None;
}

// Builds the nodes of one lowering, each named after the Attention it replaces.
class Builder {
public:
    Builder(Rewriter& rw, const Node& n, int64_t opset) : m_rw(rw), m_n(n), m_opset(opset) {}

    ValueId node(const std::string& op, std::vector<ValueId> inputs, ValueType type, const std::string& hint,
                 std::vector<Attribute> attrs = {}, const std::string& domain = "") {
        const ValueId out = m_rw.addIntermediate(std::move(type), m_n.name + "/" + hint);
        m_nodes.push_back(makeNode(op, domain, m_n, std::move(inputs), {out}, std::move(attrs)));
        return out;
    }
    void nodeInto(const std::string& op, std::vector<ValueId> inputs, ValueId out, std::vector<Attribute> attrs = {},
                  const std::string& domain = "") {
        m_nodes.push_back(makeNode(op, domain, m_n, std::move(inputs), {out}, std::move(attrs)));
    }
    ValueId constant(Tensor t, const std::string& hint) { return m_rw.addConstant(std::move(t), m_n.name + "/" + hint); }
    ValueId ints(std::vector<int64_t> values, const std::string& hint, bool scalar = false) {
        const int64_t count = int64_t(values.size());
        return constant(int64Tensor("", scalar ? std::vector<int64_t>{} : std::vector<int64_t>{count}, values), hint);
    }
    ValueId floatScalar(float v, const std::string& hint) { return constant(makeFloatTensor({}, {v}), hint); }
    // Unsqueeze as the model's opset spells it (axes an input from opset 13).
    ValueId unsqueeze(ValueId x, std::vector<int64_t> axes, Shape shape, const std::string& hint) {
        const DType t = m_rw.graph().value(x).type.elemType;
        if (m_opset >= 13) return node("Unsqueeze", {x, ints(axes, hint + "_axes")}, ValueType::tensor(t, std::move(shape)), hint);
        return node("Unsqueeze", {x}, ValueType::tensor(t, std::move(shape)), hint, {fsc::intsAttr("axes", std::move(axes))});
    }
    std::vector<Node>& nodes() { return m_nodes; }

private:
    Rewriter& m_rw;
    const Node& m_n;
    int64_t m_opset;
    std::vector<Node> m_nodes;
};

std::string maskKey(const Node& n, const Dim& seq);

}  // namespace

std::string contribAttentionBlocker(const Rewriter& rw, const Node& n, int64_t opset) {
    const Graph& g = rw.graph();
    if (n.inputs.size() < 2 || !n.inputs[0].valid()) return "needs input and weights";
    const ValueType& x = g.value(n.inputs[0]).type;
    const Tensor* w = rw.constant(n.inputs[1]);
    if (x.elemType != DType::Float32 || !x.shape.rankKnown() || x.shape.rank() != 3 || !x.shape.dims()[2].isKnown())
        return "the input is not float32 (batch, sequence, hidden) with a known hidden size";
    if (!w || w->dtype() != DType::Float32 || w->dims().size() != 2 || w->dims()[0] != x.shape.dims()[2].size())
        return "the weights are not a float32 constant of (hidden, 3 x hidden)";
    if (!partSizes(n, w->dims()[1])) return "the weights do not split into Q, K and V of num_heads heads each";
    if (present(n, 2)) {
        const Tensor* bias = rw.constant(n.inputs[2]);
        if (!bias || bias->dtype() != DType::Float32 || bias->numElements() != w->dims()[1]) return "the bias is not a constant of the weights' width";
    }
    if (present(n, 4)) return "a past key/value state is read";
    if (n.outputs.size() > 1 && n.outputs[1].valid() && (!rw.users(n.outputs[1]).empty() || rw.isGraphOutput(n.outputs[1])))
        return "its present key/value output is read";
    if (intAttr(n, "do_rotary", 0)) return "do_rotary";
    if (present(n, 3)) {
        const ValueType& m = g.value(n.inputs[3]).type;
        if (maskForm(g, n) == MaskForm::None) return "mask_index is not (batch), (batch, keys) or (batch, sequence, keys)";
        if (m.elemType != DType::Int32 && m.elemType != DType::Int64) return "mask_index is not int32";
    }
    if (present(n, 5)) {
        const ValueType& b = g.value(n.inputs[5]).type;
        if (b.elemType != DType::Float32 || !b.shape.rankKnown() || b.shape.rank() != 4) return "attention_bias is not float32 of rank 4";
    }
    if (opset < 11 && (present(n, 3) || intAttr(n, "unidirectional", 0))) return "the mask needs Range (opset 11)";
    return {};
}

namespace {

// What a mask is built from: the same key, the same mask.
std::string maskKey(const Node& n, const Dim& seq) {
    std::string key = std::to_string(present(n, 3) ? n.inputs[3].index : -1) + "|" +
                      std::to_string(present(n, 5) ? n.inputs[5].index : -1) + "|" + std::to_string(intAttr(n, "unidirectional", 0)) +
                      "|" + std::to_string(floatAttr(n, "mask_filter_value", -10000.0f)) + "|";
    return key + (seq.isKnown() ? std::to_string(seq.size()) : "$" + seq.symbol());
}

}  // namespace

std::string lowerContribAttention(Rewriter& rw, NodeId id, int64_t opset, AttentionMaskCache& masks) {
    const Node n = rw.graph().node(id);
    const Graph& g = rw.graph();
    const Dim batch = g.value(n.inputs[0]).type.shape.dims()[0], seq = g.value(n.inputs[0]).type.shape.dims()[1];
    const Tensor weights = *rw.constant(n.inputs[1]);
    const int64_t hidden = weights.dims()[0], packed = weights.dims()[1];
    const Sizes sizes = *partSizes(n, packed);
    const int64_t heads = sizes.heads;
    const MaskForm form = maskForm(g, n);
    rw.removeNode(id);
    Builder b(rw, n, opset);
    auto floats = [](std::vector<Dim> dims) { return ValueType::tensor(DType::Float32, Shape(std::move(dims))); };

    // Q, K and V: each its own product (and bias), its heads split as (batch, sequence, heads, size).
    static const char* kPart[3] = {"q", "k", "v"};
    ValueId part[3];
    int64_t begin = 0;
    for (int i = 0; i < 3; ++i) {
        const int64_t width = sizes.parts[i];
        const ValueId w = b.constant(columnBlock(weights, hidden, begin, width, {hidden, width}), std::string(kPart[i]) + "_weight");
        ValueId product = b.node("MatMul", {n.inputs[0], w}, floats({batch, seq, Dim::known(width)}), std::string(kPart[i]) + "_product");
        if (present(n, 2)) {
            const ValueId bias = b.constant(columnBlock(*rw.constant(n.inputs[2]), 1, begin, width, {width}), std::string(kPart[i]) + "_bias");
            product = b.node("Add", {product, bias}, floats({batch, seq, Dim::known(width)}), std::string(kPart[i]) + "_biased");
        }
        part[i] = b.node("Reshape", {product, b.ints({0, 0, heads, width / heads}, std::string(kPart[i]) + "_heads_shape")},
                         floats({batch, seq, Dim::known(heads), Dim::known(width / heads)}), std::string(kPart[i]) + "_heads");
        begin += width;
    }

    // The additive mask: mask_filter_value where a key is masked, broadcast over the heads.
    const float filter = floatAttr(n, "mask_filter_value", -10000.0f);
    const bool causal = intAttr(n, "unidirectional", 0) != 0;
    ValueId mask;
    std::vector<Dim> maskDims(4, Dim::known(1));  // broadcast to (batch, heads, sequence, keys)
    auto add = [&](ValueId term, const std::vector<Dim>& termDims, const std::string& hint) {
        for (size_t i = 0; i < termDims.size(); ++i) {
            Dim& d = maskDims[4 - termDims.size() + i];
            if (d == Dim::known(1)) d = termDims[i];
        }
        mask = mask.valid() ? b.node("Add", {mask, term}, floats(maskDims), hint) : term;
    };
    const std::string key = maskKey(n, seq);
    const bool unseen = !masks.byKey.count(key);
    if (!unseen) mask = masks.byKey[key].mask, maskDims = masks.byKey[key].dims;
    ValueId positions;  // 0 .. keys - 1
    if (unseen && (form == MaskForm::Ends || causal)) {
        const ValueId shape = b.node("Shape", {n.inputs[0]}, ValueType::tensor(DType::Int64, Shape::ofSizes({3})), "input_shape");
        const ValueId keys = b.node("Gather", {shape, b.ints({1}, "sequence_axis", true)}, ValueType::tensor(DType::Int64, Shape::scalar()),
                                    "keys", {fsc::intAttr("axis", 0)});
        positions = b.node("Range", {b.ints({0}, "zero", true), keys, b.ints({1}, "one", true)},
                           ValueType::tensor(DType::Int64, Shape({seq})), "key_positions");
    }
    const ValueId zero = unseen ? b.floatScalar(0.0f, "unmasked") : ValueId(), masked = unseen ? b.floatScalar(filter, "masked") : ValueId();
    if (unseen && form != MaskForm::None) {
        const ValueType& indexType = g.value(n.inputs[3]).type;
        const std::vector<Dim> indexDims = indexType.shape.dims();
        ValueId kept;  // true where the key is attended to
        auto boolean = [](std::vector<Dim> dims) { return ValueType::tensor(DType::Bool, Shape(std::move(dims))); };
        if (form == MaskForm::Ends) {  // compared with Range's int64 positions
            ValueId ends = n.inputs[3];
            if (indexType.elemType != DType::Int64)
                ends = b.node("Cast", {ends}, ValueType::tensor(DType::Int64, indexType.shape), "sequence_ends_int64",
                              {fsc::intAttr("to", 7)});  // TensorProto's INT64
            ends = b.unsqueeze(ends, {1}, Shape({batch, Dim::known(1)}), "sequence_ends");
            kept = b.node("Less", {positions, ends}, boolean({batch, seq}), "keys_kept");
        } else {
            const ValueId zero = indexType.elemType == DType::Int64
                                     ? b.ints({0}, "mask_zero", true)
                                     : b.constant(int32Scalar(0), "mask_zero");
            kept = b.node("Greater", {n.inputs[3], zero}, boolean(indexDims), "keys_kept");
        }
        const std::vector<Dim> keptDims = form == MaskForm::Full ? indexDims : std::vector<Dim>{batch, seq};
        const ValueId additive = b.node("Where", {kept, zero, masked}, floats(keptDims), "key_mask");
        const std::vector<Dim> headsDims = form == MaskForm::Full ? std::vector<Dim>{batch, Dim::known(1), keptDims[1], keptDims[2]}
                                                                  : std::vector<Dim>{batch, Dim::known(1), Dim::known(1), seq};
        add(b.unsqueeze(additive, form == MaskForm::Full ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 2}, Shape(headsDims),
                        "key_mask_heads"),
            headsDims, "");
    }
    if (unseen && causal) {  // keys after the query are masked
        const ValueId queries = b.unsqueeze(positions, {1}, Shape({seq, Dim::known(1)}), "query_positions");
        const ValueId later = b.node("Greater", {positions, queries}, ValueType::tensor(DType::Bool, Shape({seq, seq})), "later_keys");
        add(b.node("Where", {later, masked, zero}, floats({seq, seq}), "causal_mask"), {seq, seq}, "mask_with_causal");
    }
    if (unseen && present(n, 5)) add(n.inputs[5], g.value(n.inputs[5]).type.shape.dims(), "mask_with_bias");
    if (unseen && mask.valid()) masks.byKey[key] = {mask, maskDims};

    const int64_t headSize = sizes.parts[0] / heads, vHeadSize = sizes.parts[2] / heads;
    const float given = floatAttr(n, "scale", 0.0f);
    const float scale = given != 0.0f ? given : 1.0f / std::sqrt(float(headSize));
    std::vector<ValueId> inputs = {part[0], part[1], part[2]};
    if (mask.valid()) inputs.push_back(mask);
    const ValueId attended = b.node("Attention", inputs, floats({batch, seq, Dim::known(heads), Dim::known(vHeadSize)}), "attended",
                                    {fsc::floatAttr("scale", scale), fsc::intsAttr("q_perm", {0, 2, 1, 3}), fsc::intsAttr("k_perm", {0, 2, 3, 1}),
                                     fsc::intsAttr("v_perm", {0, 2, 1, 3}), fsc::intsAttr("out_perm", {0, 2, 1, 3})},
                                    kFusescopeDomain);
    b.nodeInto("Reshape", {attended, b.ints({0, 0, sizes.parts[2]}, "merged_shape")}, n.outputs[0]);
    for (Node& node : b.nodes()) rw.addNode(std::move(node), id, {id});
    return "Attention as a product per part of its packed weight, the heads by Reshape and our fused attention" +
           std::string(!mask.valid() ? "" : unseen ? ", its mask as additive terms" : ", the mask an earlier layer built");
}

}  // namespace fsc::passes
