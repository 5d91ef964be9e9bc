#include "compiler/runtime/smallest_sizes.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace fsc {
namespace {

const std::set<std::string> kKeepShape = {
    "Relu", "LeakyRelu", "PRelu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Softplus", "Softsign", "Elu",
    "Selu", "Gelu", "Mish", "Erf", "Exp", "Log", "Abs", "Neg", "Sqrt", "Reciprocal", "Floor", "Ceil", "Round",
    "Sin", "Cos", "Cast", "Identity", "Dropout", "Clip", "BatchNormalization", "InstanceNormalization",
    "LayerNormalization", "LpNormalization", "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear",
    "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Where", "FusedElementwise", "Relu6"};
const std::set<std::string> kWindows = {"Conv", "ConvInteger", "QLinearConv", "MaxPool", "AveragePool", "LpPool",
                                        "FusedConv"};

std::vector<int64_t> ints(const Node& n, const char* name) {
    const Attribute* a = n.attribute(name);
    return a ? a->ints : std::vector<int64_t>{};
}

std::string str(const Node& n, const char* name, const std::string& fallback) {
    const Attribute* a = n.attribute(name);
    return a ? a->s : fallback;
}

int64_t integer(const Node& n, const char* name, int64_t fallback) {
    const Attribute* a = n.attribute(name);
    return a ? a->i : fallback;
}

// Constant int64 values of an input (Unsqueeze/Squeeze axes, Pad's pads since opset 11),
// looked up in the enclosing graphs for a body's outer value.
std::vector<int64_t> constantInts(const Graph& g, const Node& n, size_t input,
                                  const std::map<const Graph*, const Graph*>& parents) {
    if (input >= n.inputs.size() || !n.inputs[input].valid()) return {};
    const Value* found = &g.value(n.inputs[input]);
    for (const Graph* at = &g; found && found->kind == Value::Kind::OuterScope;) {
        auto up = parents.find(at);
        if (up == parents.end()) return {};
        at = up->second;
        const ValueId outer = at->findValue(found->name);
        found = outer.valid() ? &at->value(outer) : nullptr;
    }
    if (!found) return {};
    const Value& v = *found;
    if (!v.initializer || v.initializer->dtype() != DType::Int64) return {};
    const int64_t* data = v.initializer->dataAs<int64_t>();
    return data ? std::vector<int64_t>(data, data + v.initializer->numElements()) : std::vector<int64_t>{};
}


class Walk {
public:
    // The smallest length `value`'s `axis` may have for every reader to run.
    // `rank`: the value's rank as followed here, for a value with no inferred type (0: unknown).
    int64_t need(const Graph& g, ValueId value, size_t axis, size_t rank = 0, int depth = 0) {
        if (depth > 256) return 1;  // a pathological chain: no claim
        const auto key = std::make_tuple(&g, value.index, axis);
        if (auto it = m_memo.find(key); it != m_memo.end()) return it->second;
        m_memo[key] = 1;  // cycles through subgraph names end here
        int64_t most = 1;
        for (NodeId id : readers(g, value)) most = std::max(most, needOf(g, g.node(id), value, axis, rank, depth));
        // A control-flow body that reads the value by name.
        const std::string& name = g.value(value).name;
        for (NodeId id : g.order())
            for (const auto& body : g.node(id).subgraphs())
                if (ValueId inner = body->findValue(name); inner.valid() && body->value(inner).kind == Value::Kind::OuterScope) {
                    m_parents[body.get()] = &g;
                    most = std::max(most, need(*body, inner, axis, rank ? rank : rankOf(g, value), depth + 1));
                }
        m_memo[key] = most;
        return most;
    }

private:
    const std::vector<NodeId>& readers(const Graph& g, ValueId value) {
        auto [it, fresh] = m_readers.try_emplace(&g);
        if (fresh)
            for (NodeId id : g.order())
                for (ValueId in : g.node(id).inputs)
                    if (in.valid()) it->second[in.index].push_back(id);
        static const std::vector<NodeId> none;
        auto found = it->second.find(value.index);
        return found == it->second.end() ? none : found->second;
    }

    // A body's outer value may carry no type of its own: its type is the outer value's.
    const Shape& shapeOf(const Graph& g, ValueId v) const {
        const Graph* at = &g;
        const Value* value = &g.value(v);
        while (!value->type.shape.rankKnown() && value->kind == Value::Kind::OuterScope) {
            auto up = m_parents.find(at);
            if (up == m_parents.end()) break;
            at = up->second;
            const ValueId outer = at->findValue(value->name);
            if (!outer.valid()) break;
            value = &at->value(outer);
        }
        return value->type.shape;
    }
    size_t rankOf(const Graph& g, ValueId v) const {
        const Shape& s = shapeOf(g, v);
        return s.rankKnown() ? s.rank() : 0;
    }

    int64_t needOf(const Graph& g, const Node& n, ValueId value, size_t axis, size_t knownRank, int depth) {
        if (n.outputs.empty() || !n.outputs[0].valid()) return 1;
        const ValueId out = n.outputs[0];
        const size_t inRank = rankOf(g, value) ? rankOf(g, value) : knownRank;
        if (inRank == 0) return 1;
        size_t outRank = rankOf(g, out);
        if (outRank == 0) {  // a body's values may have no inferred type: the op's own rule
            const std::vector<int64_t> axes = n.opType == "Unsqueeze" || n.opType == "Squeeze"
                                                  ? (n.inputs.size() > 1 ? constantInts(g, n, 1, m_parents) : ints(n, "axes"))
                                                  : std::vector<int64_t>{};
            if (n.opType == "Unsqueeze") outRank = axes.empty() ? 0 : inRank + axes.size();
            else if (n.opType == "Squeeze") outRank = axes.empty() || axes.size() >= inRank ? 0 : inRank - axes.size();
            else if (kKeepShape.count(n.opType) || kWindows.count(n.opType) || n.opType == "Transpose" || n.opType == "Pad")
                outRank = inRank;
        }
        if (outRank == 0) return 1;
        if (kKeepShape.count(n.opType)) {
            if (outRank < inRank) return 1;
            return need(g, out, axis + (outRank - inRank), outRank, depth + 1);  // broadcasting aligns from the right
        }
        if (n.opType == "Transpose") {
            std::vector<int64_t> perm = ints(n, "perm");
            if (perm.empty())
                for (size_t i = 0; i < inRank; ++i) perm.insert(perm.begin(), int64_t(i));
            for (size_t j = 0; j < perm.size(); ++j)
                if (perm[j] == int64_t(axis)) return need(g, out, j, outRank, depth + 1);
            return 1;
        }
        if (n.opType == "Unsqueeze" || n.opType == "Squeeze") {
            std::vector<int64_t> axes = n.inputs.size() > 1 ? constantInts(g, n, 1, m_parents) : ints(n, "axes");
            if (axes.empty()) return 1;  // computed at run time, or "every 1": no claim
            const size_t rank = n.opType == "Unsqueeze" ? outRank : inRank;
            std::set<int64_t> changed;
            for (int64_t a : axes) changed.insert(a < 0 ? a + int64_t(rank) : a);
            if (n.opType == "Squeeze") {
                if (changed.count(int64_t(axis))) return 1;
                size_t before = 0;
                for (int64_t a : changed) before += a < int64_t(axis);
                return need(g, out, axis - before, outRank, depth + 1);
            }
            size_t kept = 0;  // the axis-th position Unsqueeze did not insert
            for (size_t j = 0; j < outRank; ++j)
                if (!changed.count(int64_t(j)) && kept++ == axis) return need(g, out, j, outRank, depth + 1);
            return 1;
        }
        if (n.opType == "Pad" && n.inputs[0] == value) {
            std::vector<int64_t> pads = n.inputs.size() > 1 ? constantInts(g, n, 1, m_parents) : ints(n, "pads");
            if (pads.size() != 2 * inRank) return 1;
            return std::max<int64_t>(1, need(g, out, axis, outRank, depth + 1) - pads[axis] - pads[axis + inRank]);
        }
        if (kWindows.count(n.opType) && n.inputs[0] == value) return windowNeed(g, n, axis, inRank, depth);
        return 1;
    }

    // Input length a window needs for its output to be as long as its readers need.
    int64_t windowNeed(const Graph& g, const Node& n, size_t axis, size_t rank, int depth) {
        const bool channelsLast = integer(n, "channels_last", 0) != 0;
        const bool nchwIn = !channelsLast || str(n, "input_layout", "NHWC") == "NCHW";
        if (rank < 3) return 1;
        const size_t firstSpatial = nchwIn ? 2 : 1;
        if (axis < firstSpatial || axis >= firstSpatial + rank - 2) return 1;
        const size_t s = axis - firstSpatial, spatial = rank - 2;
        std::vector<int64_t> kernel = ints(n, "kernel_shape");
        if (kernel.size() != spatial) {  // a convolution's weight [M, C/group, k...]
            const size_t w = n.opType == "QLinearConv" ? 3 : 1;
            if (w >= n.inputs.size() || !n.inputs[w].valid()) return 1;
            const Shape& ws = shapeOf(g, n.inputs[w]);
            if (!ws.rankKnown() || ws.rank() != spatial + 2) return 1;
            kernel.clear();
            for (size_t i = 2; i < ws.rank(); ++i) kernel.push_back(ws[i].isKnown() ? ws[i].size() : 1);
        }
        const std::vector<int64_t> strides = ints(n, "strides"), dilations = ints(n, "dilations"), pads = ints(n, "pads");
        const int64_t stride = strides.size() == spatial ? strides[s] : 1;
        const int64_t dilation = dilations.size() == spatial ? dilations[s] : 1;
        const size_t outAxis = channelsLast ? 1 + s : 2 + s;
        const int64_t outNeed = need(g, n.outputs[0], outAxis, rank, depth + 1);
        const std::string autoPad = str(n, "auto_pad", "NOTSET");
        if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") return (outNeed - 1) * stride + 1;
        const int64_t padding = autoPad == "VALID" || pads.size() != 2 * spatial ? 0 : pads[s] + pads[s + spatial];
        return std::max<int64_t>(1, (outNeed - 1) * stride + dilation * (kernel[s] - 1) + 1 - padding);
    }

    std::map<std::tuple<const Graph*, uint32_t, size_t>, int64_t> m_memo;
    std::map<const Graph*, std::map<uint32_t, std::vector<NodeId>>> m_readers;
    std::map<const Graph*, const Graph*> m_parents;  // a body -> the graph whose node holds it
};

}  // namespace

int64_t smallestValidSize(const Graph& graph, ValueId input, size_t axis) {
    Walk walk;
    return walk.need(graph, input, axis);
}

}  // namespace fsc
