// tensor-parallel: Megatron-style splitting for N devices. A pair of linear layers with
// only head- or column-local work between them (attention: packed QKV projection, heads,
// output projection; MLP: fc1, activation, fc2) becomes N shards: the first layer split by
// columns (each device its share of every packed segment, i.e. its heads), the second by
// rows, so each shard computes a partial sum and one ai.fusescope.AllReduce adds them.
// Shard nodes live in scope "deviceD/...". The split is found by following which axis of
// each value is divided across devices, so it needs no model-specific patterns; anything
// that would mix the shards (a norm over the split axis, a value read outside the pair)
// rejects the pair with its reason.
#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "compiler/runtime/fused_domain.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"
#include "core/graph_builder.h"
#include "core/shape_values.h"

namespace fsc::passes {
namespace {

using Segments = std::vector<std::pair<int64_t, int64_t>>;  // [begin, end) along the split axis

struct Split {
    int axis = -1;
    Segments segments;
    // 0: the axis itself is divided across devices. Otherwise the axis merges an outer factor
    // with the divided one, of `factor` elements, innermost (nn.MultiheadAttention's batch x
    // heads): each shard holds its share of the inner factor for every outer index, which it
    // keeps in the same order, so per shard the axis is still one axis, `devices` times shorter.
    int64_t factor = 0;
};

// A pair and everything between its two layers, with how each inside value is split.
struct Region {
    NodeId row;
    std::vector<NodeId> nodes;    // inside nodes (first layers included), in graph order
    std::set<uint32_t> columns;   // node indexes of the first (column-split) layers
    std::map<uint32_t, Split> split;  // value index -> split
    std::map<uint32_t, std::vector<int64_t>> newShapes;  // Reshape node -> target shape per shard
    // Reshape node whose target shape is computed at run time (a dynamic batch) -> the axis
    // whose entry each shard divides by the device count.
    std::map<uint32_t, int> runtimeShapeAxis;
    // Shape nodes outside the pair that read an inside value (to compute such a target
    // shape), by the value they read, and every node outside the pair and before the row that
    // depends on them: they move after the shards, and the Shape reads device 0's shard
    // times [1, ..., devices, ..., 1], which is the unsplit shape.
    std::map<uint32_t, std::vector<NodeId>> shapeReaders;
    std::vector<NodeId> shapeChain;  // readers included, in graph order
    std::map<uint32_t, std::pair<int64_t, int64_t>> newSlice;  // Slice node -> start, end per shard
};

const std::set<std::string>& unaryOps() {
    static const std::set<std::string> ops{"Erf", "Relu", "Gelu", "Tanh", "Sigmoid", "Sqrt", "Neg", "Exp",
                                           "Log", "Abs", "Cast", "Identity", "Softplus", "HardSigmoid", "LeakyRelu"};
    return ops;
}
const std::set<std::string>& binaryOps() {
    static const std::set<std::string> ops{"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"};
    return ops;
}

bool isWeightedLinear(const Rewriter& rw, NodeId id) {
    const Node& n = rw.graph().node(id);
    if (n.inputs.size() < 2 || rw.constant(n.inputs[0])) return false;
    const Tensor* w = rw.constant(n.inputs[1]);
    if (!w || w->dims().size() != 2 || w->dtype() != DType::Float32) return false;
    if (isOp(n, "MatMul")) return true;
    return isOp(n, "Gemm") && intAttr(n, "transA", 0) == 0 && intAttr(n, "transB", 0) == 1 &&
           floatAttr(n, "alpha", 1.0f) == 1.0f && floatAttr(n, "beta", 1.0f) == 1.0f;
}

int64_t outColumns(const Rewriter& rw, NodeId id) {
    const Node& n = rw.graph().node(id);
    const Tensor* w = rw.constant(n.inputs[1]);
    return isOp(n, "Gemm") ? w->dims()[0] : w->dims()[1];
}

// "device0" + "/a/b" -> "device0/a/b"; "device0" + "w" -> "device0/w".
std::string under(const std::string& prefix, const std::string& name) {
    return prefix + (name.rfind('/', 0) == 0 ? "" : "/") + name;
}

int64_t product(const std::vector<int64_t>& d, size_t from, size_t to) {
    int64_t p = 1;
    for (size_t i = from; i < to && i < d.size(); ++i) p *= std::max<int64_t>(d[i], 1);  // symbolic dims count as 1
    return p;
}

// Dims of a value with every symbolic dim as a negative number standing for its name (the
// same name, the same number), so a dynamic batch passes through unchanged.
std::optional<std::vector<int64_t>> shapeDims(const Graph& g, ValueId v) {
    const Shape& shape = g.value(v).type.shape;
    if (!shape.rankKnown()) return std::nullopt;
    std::vector<int64_t> dims;
    for (const Dim& d : shape.dims()) {
        if (d.isKnown()) dims.push_back(d.size());
        else if (d.isSymbolic()) dims.push_back(-2 - int64_t(std::hash<std::string>{}(d.symbol()) % 1000000));
        else return std::nullopt;
    }
    return dims;
}

// Concatenation of device d's share of every segment along `axis` of a constant.
Tensor shardOf(const Tensor& t, int axis, const Segments& segments, int devices, int d) {
    const std::vector<int64_t>& dims = t.dims();
    const size_t elem = size_t(dtypeBits(t.dtype()) / 8);
    const int64_t outer = product(dims, 0, size_t(axis)), inner = product(dims, size_t(axis) + 1, dims.size());
    std::vector<int64_t> outDims = dims;
    int64_t width = 0;
    for (auto [b, e] : segments) width += (e - b) / devices;
    outDims[size_t(axis)] = width;
    std::string bytes(size_t(outer * width * inner) * elem, '\0');
    const auto* src = reinterpret_cast<const char*>(t.data());
    size_t at = 0;
    for (int64_t o = 0; o < outer; ++o)
        for (auto [b, e] : segments) {
            const int64_t share = (e - b) / devices, from = b + d * share;
            const size_t len = size_t(share * inner) * elem;
            std::memcpy(bytes.data() + at, src + size_t((o * dims[size_t(axis)] + from) * inner) * elem, len);
            at += len;
        }
    const size_t size = bytes.size();
    return Tensor(t.name() + "_shard", t.dtype(), outDims, makeBuffer(std::move(bytes)), 0, size);
}

// How the split axis passes one op between the two layers. Each rule computes the output's
// split from the first split input's (or says why the pair cannot be split) and notes what
// the shards will need (a per-shard target shape, slice bounds); none edits the graph.
struct SplitStep {
    const Rewriter& rw;
    NodeId id;
    const Node& n;
    const Split& in;
    const std::vector<int64_t>& inDims;
    const std::vector<int64_t>& outDims;
    int rank;
    int devices;
    Region& region;
};
using SplitRule = std::string (*)(const SplitStep&, Split& out);

// A target shape computed at run time can be divided at `axis` (an integer Div after it)
// when it has one entry per output axis and that entry is a size: not -1 (inferred) or
// 0 (copied), which the exporter would have written as a constant in a Concat.
std::string runtimeShapeEntry(const Rewriter& rw, ValueId shape, int axis, int rank) {
    const Graph& g = rw.graph();
    const auto dims = shapeDims(g, shape);
    if (!dims || dims->size() != 1 || (*dims)[0] != rank) return "its run-time target shape has no known length";
    const NodeId concat = rw.producer(shape);
    if (!concat.valid() || !isOp(g.node(concat), "Concat")) return {};
    int64_t at = 0;
    for (ValueId part : g.node(concat).inputs) {
        const auto partDims = shapeDims(g, part);
        if (!partDims || partDims->size() != 1) return {};
        if (axis < at + (*partDims)[0]) {
            const auto values = constantInts(rw, part);
            if (values && (*values)[size_t(axis - at)] <= 0) return "the split axis's target size is inferred (-1 or 0)";
            return {};
        }
        at += (*partDims)[0];
    }
    return {};
}


std::string elementwiseUnary(const SplitStep& s, Split& out) {
    out.axis = s.in.axis + s.rank - int(s.inDims.size());
    return {};
}

// Every other input is split the same way, or broadcasts along the split axis, or is a
// constant (each shard gets its share).
std::string elementwiseBinary(const SplitStep& s, Split& out) {
    const Graph& g = s.rw.graph();
    out.axis = s.in.axis + s.rank - int(s.inDims.size());
    for (ValueId input : s.n.inputs) {
        const auto dims = shapeDims(g, input);
        if (!dims) return "no static shape into " + s.n.name;
        const int aligned = out.axis - (s.rank - int(dims->size()));
        if (auto it = s.region.split.find(input.index); it != s.region.split.end()) {
            if (it->second.axis != aligned || it->second.segments != s.in.segments || it->second.factor != s.in.factor)
                return s.n.name + " combines differently split values";
        } else if (aligned >= 0 && (*dims)[size_t(aligned)] != 1 && (!s.rw.constant(input) || s.in.factor)) {
            return s.n.name + " combines a split value with a whole one";
        }
    }
    return {};
}

// Joining split values along another axis (rotary embeddings' rotate-half inside each head):
// every input split alike, each shard joins its own parts.
std::string concat(const SplitStep& s, Split&) {
    int64_t axis = intAttr(s.n, "axis", 0);
    if (axis < 0) axis += s.rank;
    if (axis == s.in.axis) return "Concat along the split axis";
    for (ValueId input : s.n.inputs) {
        auto it = s.region.split.find(input.index);
        if (it == s.region.split.end()) return s.n.name + " joins a split value with a whole one";
        if (it->second.axis != s.in.axis || it->second.segments != s.in.segments || it->second.factor != s.in.factor)
            return s.n.name + " joins differently split values";
    }
    return {};
}

// Where(condition, a, b) with a or b split: the condition (from outside the pair) and a whole
// operand must broadcast along the split axis.
std::string where(const SplitStep& s, Split& out) {
    const Graph& g = s.rw.graph();
    out.axis = s.in.axis + s.rank - int(s.inDims.size());
    for (ValueId input : s.n.inputs) {
        if (auto it = s.region.split.find(input.index); it != s.region.split.end()) {
            if (it->second.axis != out.axis - (s.rank - int(g.value(input).type.shape.rank())) ||
                it->second.segments != s.in.segments || it->second.factor != s.in.factor)
                return s.n.name + " selects between differently split values";
            continue;
        }
        const Shape& shape = g.value(input).type.shape;
        if (!shape.rankKnown()) return "no known rank into " + s.n.name;
        const int aligned = out.axis - (s.rank - int(shape.rank()));
        if (aligned >= 0 && !(shape[size_t(aligned)].isKnown() && shape[size_t(aligned)].size() == 1))
            return s.n.name + " selects with a whole value along the split axis";
    }
    return {};
}

std::string softmax(const SplitStep& s, Split&) {
    int64_t axis = intAttr(s.n, "axis", -1);
    if (axis < 0) axis += s.rank;
    return axis == s.in.axis ? "Softmax over the split axis" : "";
}

std::string transpose(const SplitStep& s, Split& out) {
    const std::vector<int64_t> perm = intsAttr(s.n, "perm");
    if (int(perm.size()) != s.rank) return "Transpose without perm";
    for (int j = 0; j < s.rank; ++j)
        if (perm[size_t(j)] == s.in.axis) out.axis = j;
    return {};
}

// A product of dims: its known part and the symbols of its dynamic ones ("batch*8" is 8 and
// {batch}), so products over a dynamic batch compare and divide exactly.
struct Extent {
    int64_t known = 1;
    std::vector<std::string> symbols;  // sorted
    bool operator==(const Extent&) const = default;
};

std::optional<Extent> extentOf(const Shape& shape, size_t from, size_t to) {
    Extent e;
    for (size_t i = from; i < to && i < shape.rank(); ++i) {
        const Dim& d = shape[i];
        if (d.isKnown()) {
            e.known *= d.size();
            continue;
        }
        if (!d.isSymbolic()) return std::nullopt;
        // Shape inference names a symbol times numbers "batch*8" (and "batch*8*2" when multiplied again).
        std::string symbol = d.symbol();
        while (auto product = splitProductSymbol(symbol)) {
            e.known *= product->second;
            symbol = product->first;
        }
        e.symbols.push_back(symbol);
    }
    std::sort(e.symbols.begin(), e.symbols.end());
    return e;
}

// a / b when it divides exactly.
std::optional<Extent> divided(const Extent& a, const Extent& b) {
    if (b.known == 0 || a.known % b.known) return std::nullopt;
    Extent q{a.known / b.known, {}};
    std::vector<std::string> rest = a.symbols;
    for (const std::string& sym : b.symbols) {
        auto it = std::find(rest.begin(), rest.end(), sym);
        if (it == rest.end()) return std::nullopt;
        rest.erase(it);
    }
    q.symbols = std::move(rest);
    return q;
}

Extent times(Extent a, const Extent& b) {
    a.known *= b.known;
    a.symbols.insert(a.symbols.end(), b.symbols.begin(), b.symbols.end());
    std::sort(a.symbols.begin(), a.symbols.end());
    return a;
}

// The split lands on the output axis that holds the divided factor innermost: everything of
// the input before that factor is the output's outer dims times the axis's outer part, and the
// factor with the input's inner dims is the axis's inner part with the output's inner dims
// (the factor whole, as [L, N, E] -> [L, N, H, D] keeps heads whole in one axis; or merged
// under an outer part, as [L, N, E] -> [L, N x H, D] and back to [L x N, E]). Each shard's
// target shape divides that entry.
std::string reshape(const SplitStep& s, Split& out) {
    if (s.in.segments.size() != 1) return "Reshape of a packed value";
    const Graph& g = s.rw.graph();
    const Shape &inShape = g.value(s.n.inputs[0]).type.shape, &outShape = g.value(s.n.outputs[0]).type.shape;
    const size_t axis = size_t(s.in.axis);
    const auto whole = extentOf(inShape, axis, axis + 1);
    const auto before = extentOf(inShape, 0, axis), innerIn = extentOf(inShape, axis + 1, inShape.rank());
    const Extent factor = s.in.factor ? Extent{s.in.factor, {}} : whole.value_or(Extent{});
    const auto axisOuter = whole ? divided(*whole, factor) : std::nullopt;
    out.axis = -1;
    for (int k = 0; k < s.rank && before && innerIn && axisOuter; ++k) {
        const auto prefix = extentOf(outShape, 0, size_t(k)), size = extentOf(outShape, size_t(k), size_t(k) + 1),
                   innerOut = extentOf(outShape, size_t(k) + 1, outShape.rank());
        if (!prefix || !size || !innerOut) continue;
        const auto outerPart = divided(times(*before, *axisOuter), *prefix);
        const auto innerPart = divided(times(factor, *innerIn), *innerOut);
        if (!outerPart || !innerPart || !innerPart->symbols.empty() || innerPart->known <= 1 ||
            innerPart->known % s.devices || !(times(*outerPart, *innerPart) == *size))
            continue;
        out.axis = k;
        out.factor = *outerPart == Extent{} ? 0 : innerPart->known;
        break;
    }
    if (out.axis < 0) return "Reshape of " + s.n.name + " does not keep the split in one axis";
    if (auto shape = constantInts(s.rw, s.n.inputs[1])) {
        std::vector<int64_t> perShard = *shape;
        if (perShard[size_t(out.axis)] > 0) perShard[size_t(out.axis)] /= s.devices;
        s.region.newShapes[s.id.index] = perShard;
    } else {
        if (std::string why = runtimeShapeEntry(s.rw, s.n.inputs[1], out.axis, s.rank); !why.empty())
            return "Reshape '" + s.n.name + "': " + why;
        s.region.runtimeShapeAxis[s.id.index] = out.axis;
    }
    out.segments = {{0, s.outDims[size_t(out.axis)]}};
    return {};
}

// A slice of one packed segment (Q, K or V) along the split axis: each shard slices its share.
std::string slice(const SplitStep& s, Split& out) {
    const Node& n = s.n;
    auto starts = constantInts(s.rw, n.inputs[1]), ends = constantInts(s.rw, n.inputs[2]);
    auto axes = n.inputs.size() > 3 && n.inputs[3].valid() ? constantInts(s.rw, n.inputs[3]) : std::nullopt;
    if (!starts || !ends || starts->size() != 1 || (n.inputs.size() > 4 && n.inputs[4].valid()))
        return "Slice with more than one axis or steps";
    int64_t axis = axes ? (*axes)[0] : 0;
    if (axis < 0) axis += s.rank;
    if (axis != s.in.axis) return {};
    if (s.in.factor) return "Slice along an axis whose split is an inner factor";
    const int64_t b = (*starts)[0], e = std::min((*ends)[0], s.inDims[size_t(axis)]);
    if (std::find(s.in.segments.begin(), s.in.segments.end(), std::make_pair(b, e)) == s.in.segments.end())
        return "Slice across shards";
    s.region.newSlice[s.id.index] = {b / s.devices, e / s.devices};
    out.segments = {{0, e - b}};
    return {};
}

// Activations by activations (attention's Q.K^T and P.V): the split must be a batch axis.
std::string batchedMatMul(const SplitStep& s, Split& out) {
    const Graph& g = s.rw.graph();
    for (size_t i = 0; i < 2; ++i) {
        const auto dims = shapeDims(g, s.n.inputs[i]);
        if (!dims) return "'" + g.value(s.n.inputs[i]).name + "' has no known rank or an unnamed dynamic dim";
        const int aligned = int(dims->size()) - s.rank;
        auto it = s.region.split.find(s.n.inputs[i].index);
        if (it == s.region.split.end()) return s.n.name + " multiplies a split value by a whole one";
        const int axis = it->second.axis - aligned;
        if (axis >= s.rank - 2) return s.n.name + " contracts over the split axis";
        if (i == 1 && (axis != out.axis || it->second.factor != out.factor)) return s.n.name + " multiplies differently split values";
        out.axis = axis;
        out.factor = it->second.factor;
    }
    return {};
}

// The ops that may sit between the two layers, by type; any other op rejects the pair.
const std::map<std::string, SplitRule>& splitRules() {
    static const std::map<std::string, SplitRule> rules = [] {
        std::map<std::string, SplitRule> r;
        for (const std::string& op : unaryOps()) r[op] = elementwiseUnary;
        for (const std::string& op : binaryOps()) r[op] = elementwiseBinary;
        r["Softmax"] = softmax;
        r["Where"] = where;
        r["Concat"] = concat;
        r["Transpose"] = transpose;
        r["Reshape"] = reshape;
        r["Slice"] = slice;
        r["MatMul"] = batchedMatMul;
        return r;
    }();
    return rules;
}

class TensorParallelPass : public Pass {
public:
    explicit TensorParallelPass(int devices) : m_devices(devices) {}
    std::string name() const override { return "tensor-parallel"; }
    std::string description() const override {
        return "splits linear-layer pairs across " + std::to_string(m_devices) +
               " devices (columns, then rows; attention by heads) with one AllReduce per pair";
    }

    Status run(PassContext& context) override {
        Rewriter& rw = context.rewriter;
        if (m_devices < 2) return Status::ok();
        removeUnread(rw);
        slicePackedSplits(rw);
        rw.finish();
        const std::vector<NodeId> order = rw.graph().order();
        for (NodeId id : order) {
            if (context.cancelled()) return {ErrorCode::Cancelled, "cancelled"};
            if (!rw.isLive(id) || !isWeightedLinear(rw, id)) continue;
            Region region;
            region.row = id;
            bool sawColumn = false;
            std::string why = collect(rw, region, sawColumn);
            if (why.empty()) why = propagate(rw, region);
            if (!why.empty()) {
                if (sawColumn) context.reject("megatron-pair", id, why);
                continue;
            }
            ++context.counters.matched;
            const double bytes = apply(rw, region);
            std::ostringstream reason;
            reason << region.columns.size() << " column-split layer(s) and " << region.nodes.size() - region.columns.size()
                   << " node(s) between them on each of " << m_devices << " devices; the row-split layer's partial sums "
                   << "meet in one AllReduce of " << int64_t(bytes) << " bytes";
            if (rw.commit("megatron-pair", reason.str())) {
                ++context.counters.applied;
                context.counters.figures["all-reduce bytes"] += bytes;
                context.counters.figures["all-reduces"] += 1;
            }
        }
        rw.finish();
        // Output layers (a linear layer producing a graph output: class scores, a vocabulary's
        // logits) split by columns, the pieces gathered.
        // A copy: the splits add nodes, which Graph::addNode appends to the live order.
        const std::vector<NodeId> afterPairs = rw.graph().order();
        for (NodeId id : afterPairs) {
            if (!isWeightedLinear(rw, id) || !rw.isGraphOutput(rw.graph().node(id).outputs[0])) continue;
            if (const int64_t columns = outColumns(rw, id); columns % m_devices) {
                context.reject("output-split", id, std::to_string(columns) + " outputs do not divide by " + std::to_string(m_devices));
                continue;
            }
            ++context.counters.matched;
            const double bytes = splitOutputLayer(rw, id);
            if (rw.commit("output-split", "each of " + std::to_string(m_devices) + " devices computes its share of the outputs; "
                                          "one AllGather of " + std::to_string(int64_t(bytes)) + " bytes joins them")) {
                ++context.counters.applied;
                context.counters.figures["all-gather bytes"] += bytes;
                context.counters.figures["all-gathers"] += 1;
            }
        }
        rw.finish();
        return Status::ok();
    }

private:
    // Everything between the row layer and the column layers that feed it.
    std::string collect(const Rewriter& rw, Region& region, bool& sawColumn) const {
        const Graph& g = rw.graph();
        std::set<uint32_t> inside;
        std::vector<ValueId> stack{g.node(region.row).inputs[0]};
        std::string blocked;  // the first reason found; the walk goes on to learn whether a first layer exists
        while (!stack.empty()) {
            const ValueId v = stack.back();
            stack.pop_back();
            if (rw.constant(v)) continue;
            const NodeId p = rw.producer(v);
            if (!p.valid()) {
                if (blocked.empty()) blocked = "a graph input reaches the second layer without passing a first layer";
                continue;
            }
            if (inside.count(p.index)) continue;
            if (inside.size() > 400) return "too many nodes between the layers";
            inside.insert(p.index);
            if (isWeightedLinear(rw, p)) {
                region.columns.insert(p.index);
                sawColumn = true;
                continue;
            }
            const Node& n = g.node(p);
            const bool known = splitRules().count(n.opType) > 0;
            if (!n.domain.empty() || !known) {
                if (blocked.empty()) blocked = n.opType + " ('" + n.name + "') would mix the shards";
                continue;
            }
            if (isOp(n, "Where") && n.inputs.size() == 3) {
                // A mask (GPT-2's causal one, sliced by the lengths) is no part of the pair: its
                // condition stays outside, read by every shard (where() checks it broadcasts
                // along the split axis; one computed from a split value is read outside the pair).
                stack.push_back(n.inputs[1]);
                stack.push_back(n.inputs[2]);
                continue;
            }
            if (isOp(n, "Reshape") && !rw.constant(n.inputs[1])) {
                // A target shape computed at run time (from a dynamic batch) stays outside the
                // pair: each shard divides its split entry (propagate() says which).
                stack.push_back(n.inputs[0]);
                continue;
            }
            for (ValueId in : n.inputs)
                if (in.valid()) stack.push_back(in);
        }
        if (!blocked.empty()) return blocked;
        if (region.columns.empty()) return "no first layer";
        for (NodeId id : g.order())
            if (inside.count(id.index)) region.nodes.push_back(id);
        for (NodeId id : region.nodes)
            for (ValueId out : g.node(id).outputs) {
                if (!out.valid()) continue;
                if (rw.isGraphOutput(out) || rw.isCaptured(out)) return "'" + g.value(out).name + "' is a graph output";
                for (NodeId user : rw.users(out)) {
                    if (user == region.row || inside.count(user.index)) continue;
                    if (isOp(g.node(user), "Shape")) {
                        region.shapeReaders[out.index].push_back(user);
                        continue;
                    }
                    return "'" + g.value(out).name + "' is also read outside the pair (by '" + g.node(user).name + "')";
                }
            }
        if (!region.shapeReaders.empty()) collectShapeChain(rw, region, inside);
        return {};
    }

    void collectShapeChain(const Rewriter& rw, Region& region, const std::set<uint32_t>& inside) const {
        const Graph& g = rw.graph();
        std::set<uint32_t> readers, chainValues;
        for (const auto& [value, nodes] : region.shapeReaders)
            for (NodeId n : nodes) readers.insert(n.index);
        for (NodeId id : g.order()) {
            if (id == region.row) break;
            if (inside.count(id.index)) continue;
            const Node& n = g.node(id);
            bool depends = readers.count(id.index) > 0;
            for (ValueId in : n.inputs) depends = depends || (in.valid() && chainValues.count(in.index));
            if (!depends) continue;
            region.shapeChain.push_back(id);
            for (ValueId out : n.outputs)
                if (out.valid()) chainValues.insert(out.index);
        }
    }

    // Follows the split axis from the first layers to the second, each op by its rule in
    // splitRules(); every op must keep the shards apart.
    std::string propagate(const Rewriter& rw, Region& region) const {
        const Graph& g = rw.graph();
        for (NodeId id : region.nodes) {
            const Node& n = g.node(id);
            const auto outDims = shapeDims(g, n.outputs[0]);
            if (!outDims) return "'" + g.value(n.outputs[0]).name + "' has no known rank or an unnamed dynamic dim";
            const int rank = int(outDims->size());
            if (region.columns.count(id.index)) {
                std::string why = columnSegments(rw, id, region);
                if (!why.empty()) return why;
                continue;
            }
            std::vector<std::pair<size_t, Split>> splitIns;  // input slot, split
            for (size_t i = 0; i < n.inputs.size(); ++i)
                if (auto it = region.split.find(n.inputs[i].index); n.inputs[i].valid() && it != region.split.end())
                    splitIns.push_back({i, it->second});
            if (splitIns.empty()) return n.name + " reads no split value";
            const Split in = splitIns[0].second;
            const auto inDims = shapeDims(g, n.inputs[splitIns[0].first]);
            if (!inDims) return "no static shape into " + n.name;
            Split out = in;
            const SplitRule rule = splitRules().at(n.opType);
            if (std::string why = rule(SplitStep{rw, id, n, in, *inDims, *outDims, rank, m_devices, region}, out); !why.empty())
                return why;
            if (out.axis < 0) return n.name + ": the split axis is lost";
            region.split[n.outputs[0].index] = out;
        }
        const Node& row = g.node(region.row);
        auto it = region.split.find(row.inputs[0].index);
        const auto dims = shapeDims(g, row.inputs[0]);
        if (it == region.split.end() || !dims || it->second.axis != int(dims->size()) - 1 || it->second.segments.size() != 1 ||
            it->second.factor)
            return "the second layer's input is not split along its last axis";
        return {};
    }

    // Nodes whose results nothing reads would count as readers outside a pair: the shape
    // arithmetic of a Reshape that an earlier pass took out (rows-gemm-to-matmul's second
    // Reshape), which dead-code elimination removes only after this pass.
    static void removeUnread(Rewriter& rw) {
        const std::vector<NodeId> order = rw.graph().order();
        for (auto it = order.rbegin(); it != order.rend(); ++it) {
            if (anyOutputRead(rw, *it)) continue;
            const std::string op = rw.graph().node(*it).opType;
            rw.removeNode(*it);
            rw.commit("unread", "no output of this " + op + " is read");
        }
        rw.finish();
    }

    // torch.chunk's Split of a packed projection (older exports of nn.MultiheadAttention) becomes
    // a Slice per part, as newer exporters write it, so columnSegments() sees the parts.
    static void slicePackedSplits(Rewriter& rw) {
        const Graph& g = rw.graph();
        for (NodeId id : std::vector<NodeId>(g.order())) {
            if (!isWeightedLinear(rw, id)) continue;
            const int64_t columns = outColumns(rw, id);
            const ValueId out = biasedOutput(rw, g.node(id).outputs[0], columns);
            const auto dims = shapeDims(g, out);
            if (!dims) continue;
            const int64_t rank = int64_t(dims->size());
            for (NodeId user : std::vector<NodeId>(rw.users(out))) {
                const Node split = g.node(user);
                if (!isOp(split, "Split")) continue;
                int64_t axis = intAttr(split, "axis", 0);
                if (axis < 0) axis += rank;
                const auto sizes = splitSizes(rw, split, columns);
                if (axis != rank - 1 || !sizes) continue;
                rw.removeNode(user);
                const ValueId axes = rw.addConstant(int64Tensor("axes", {1}, {axis}), split.name + "/axes");
                int64_t begin = 0;
                for (size_t k = 0; k < split.outputs.size(); ++k) {
                    const int64_t end = begin + (*sizes)[k];
                    if (split.outputs[k].valid()) {
                        const ValueId starts = rw.addConstant(int64Tensor("starts", {1}, {begin}), split.name + "/starts");
                        const ValueId ends = rw.addConstant(int64Tensor("ends", {1}, {end}), split.name + "/ends");
                        Node slice = makeNode("Slice", "", split, {out, starts, ends, axes}, {split.outputs[k]});
                        slice.name = split.name + "/part" + std::to_string(k);
                        rw.addNode(std::move(slice), user, {user});
                    }
                    begin = end;
                }
                rw.commit("packed-split", "a Split of packed columns read as one Slice per part, which the pair can divide by heads");
            }
        }
    }

    // A MatMul's output, or its bias Add's when that is its one reader: an exporter writes a
    // Linear over a 3-D input so, and the Slices of packed Q, K and V read the sum.
    static ValueId biasedOutput(const Rewriter& rw, ValueId out, int64_t columns) {
        const NodeId add = rw.soleUser(out);
        if (!add.valid() || !isOp(rw.graph().node(add), "Add")) return out;
        const Node& n = rw.graph().node(add);
        const ValueId other = n.inputs[n.inputs[0] == out ? 1 : 0];
        const Tensor* bias = rw.constant(other);
        if (!bias || bias->dims().empty() || bias->dims().back() != columns || bias->numElements() != columns) return out;
        return n.outputs[0];
    }

    // A first layer's output columns, in the segments its readers slice (packed Q, K, V).
    std::string columnSegments(const Rewriter& rw, NodeId id, Region& region) const {
        const Graph& g = rw.graph();
        const ValueId out = g.node(id).outputs[0];
        const int64_t columns = outColumns(rw, id);
        const auto outDims = shapeDims(g, out);
        if (!outDims) return "'" + g.value(out).name + "' has no known rank or an unnamed dynamic dim";
        const int rank = int(outDims->size());
        Segments segments;
        for (NodeId user : rw.users(biasedOutput(rw, out, columns))) {
            const Node& s = g.node(user);
            if (!isOp(s, "Slice") || s.inputs.size() < 4) {
                segments.clear();
                break;
            }
            auto starts = constantInts(rw, s.inputs[1]), ends = constantInts(rw, s.inputs[2]), axes = constantInts(rw, s.inputs[3]);
            if (!starts || !ends || !axes || axes->size() != 1 || ((*axes)[0] != -1 && (*axes)[0] != rank - 1)) {
                segments.clear();
                break;
            }
            segments.push_back({(*starts)[0], std::min((*ends)[0], columns)});
        }
        std::sort(segments.begin(), segments.end());
        int64_t at = 0;
        for (auto [b, e] : segments) at = b == at ? e : -1;
        if (segments.empty() || at != columns) segments = {{0, columns}};
        for (auto [b, e] : segments)
            if ((e - b) % m_devices) return "a column block of " + std::to_string(e - b) + " does not divide by " + std::to_string(m_devices);
        region.split[out.index] = {rank - 1, segments};
        return {};
    }

    // Builds the shards and the AllReduce; returns the bytes each device contributes.
    double apply(Rewriter& rw, const Region& region) {
        const Node row = rw.graph().node(region.row);
        std::vector<Node> originals;
        for (NodeId id : region.nodes) originals.push_back(rw.graph().node(id));
        const ValueId result = row.outputs[0];
        const ValueType resultType = rw.graph().value(result).type;
        std::vector<Node> chain;
        for (NodeId id : region.shapeChain) chain.push_back(rw.graph().node(id));
        for (auto it = region.shapeChain.rbegin(); it != region.shapeChain.rend(); ++it) rw.removeNode(*it);
        rw.removeNode(region.row);
        for (auto it = region.nodes.rbegin(); it != region.nodes.rend(); ++it) rw.removeNode(*it);
        // Values the moved chain produces, not yet produced again.
        std::set<uint32_t> waiting;
        for (const Node& n : chain)
            for (ValueId out : n.outputs)
                if (out.valid()) waiting.insert(out.index);
        std::vector<bool> chainPlaced(chain.size(), false);
        auto placeReady = [&] {  // every moved node whose inputs are all produced again, in order
            for (bool progress = true; progress;) {
                progress = false;
                for (size_t c = 0; c < chain.size(); ++c) {
                    if (chainPlaced[c] || isOp(chain[c], "Shape")) continue;
                    bool ready = true;
                    for (ValueId in : chain[c].inputs) ready = ready && (!in.valid() || !waiting.count(in.index));
                    if (!ready) continue;
                    for (ValueId out : chain[c].outputs)
                        if (out.valid()) waiting.erase(out.index);
                    rw.addNode(chain[c], region.row, std::vector<NodeId>{region.shapeChain[c]});
                    chainPlaced[c] = progress = true;
                }
            }
        };

        std::map<uint32_t, ValueId> sharedConstants;  // Reshape/Slice parameters, same on every device
        std::vector<ValueId> partials;
        for (int d = 0; d < m_devices; ++d) {
            const std::string prefix = "device" + std::to_string(d);
            std::map<uint32_t, ValueId> local;
            auto mapped = [&](ValueId v) {
                auto it = local.find(v.index);
                return it == local.end() ? v : it->second;
            };
            auto place = [&](Node n, NodeId from) {
                n.name = under(prefix, n.name);
                n.scope = prefix + (n.scope.empty() ? "" : "/" + n.scope);
                rw.addNode(std::move(n), region.row, {from});
            };
            for (size_t k = 0; k < originals.size(); ++k) {
                const NodeId id = region.nodes[k];
                Node n = originals[k];
                for (ValueId& in : n.inputs)
                    if (in.valid()) in = mapped(in);
                const Split& split = region.split.at(n.outputs[0].index);
                if (region.columns.count(id.index)) {
                    const bool gemm = isOp(n, "Gemm");
                    n.inputs[1] = shardConstant(rw, n.inputs[1], gemm ? 0 : 1, split.segments, d, prefix);
                    if (gemm && n.inputs.size() > 2 && n.inputs[2].valid() && rw.constant(n.inputs[2])->dims().size() == 1)
                        n.inputs[2] = shardConstant(rw, n.inputs[2], 0, split.segments, d, prefix);
                } else if (binaryOps().count(n.opType)) {
                    shardConstants(rw, n, split, prefix, d);
                } else if (auto s = region.newShapes.find(id.index); s != region.newShapes.end()) {
                    auto [it, fresh] = sharedConstants.try_emplace(id.index);
                    if (fresh) it->second = rw.addConstant(int64Tensor("shape", {int64_t(s->second.size())}, s->second), n.name + "/shard_shape");
                    n.inputs[1] = it->second;
                } else if (auto r = region.runtimeShapeAxis.find(id.index); r != region.runtimeShapeAxis.end()) {
                    auto [it, fresh] = sharedConstants.try_emplace(id.index);
                    if (fresh) it->second = dividedShape(rw, n, r->second, region.row);
                    n.inputs[1] = it->second;
                } else if (auto sl = region.newSlice.find(id.index); sl != region.newSlice.end()) {
                    n.inputs[1] = rw.addConstant(int64Tensor("s", {1}, {sl->second.first}), n.name + "/shard_start");
                    n.inputs[2] = rw.addConstant(int64Tensor("e", {1}, {sl->second.second}), n.name + "/shard_end");
                }
                ValueType type = rw.graph().value(n.outputs[0]).type;
                type.shape = shardedShape(type.shape, split.axis);
                const ValueId out = rw.addIntermediate(type, under(prefix, rw.graph().value(n.outputs[0]).name));
                const ValueId original = n.outputs[0];
                local[original.index] = out;
                n.outputs[0] = out;
                place(std::move(n), id);
                if (d == 0) {
                    if (auto readers = region.shapeReaders.find(original.index); readers != region.shapeReaders.end())
                        for (NodeId reader : readers->second) {
                            const size_t c = size_t(std::find(region.shapeChain.begin(), region.shapeChain.end(), reader) -
                                                    region.shapeChain.begin());
                            unsplitShape(rw, chain[c], out, split.axis, reader, region.row);
                            waiting.erase(chain[c].outputs[0].index);
                            chainPlaced[c] = true;
                        }
                    placeReady();
                }
            }
            // The row-split layer: this device's rows of the weight, no bias (added once, after).
            Node partial = row;
            partial.inputs[0] = mapped(row.inputs[0]);
            const bool gemm = isOp(row, "Gemm");
            const Tensor& w = *rw.constant(row.inputs[1]);
            const int64_t rows = gemm ? w.dims()[1] : w.dims()[0];
            partial.inputs[1] = shardConstant(rw, row.inputs[1], gemm ? 1 : 0, {{0, rows}}, d, prefix);
            if (partial.inputs.size() > 2) partial.inputs.resize(2);
            partial.outputs[0] = rw.addIntermediate(resultType, under(prefix, rw.graph().value(result).name) + "_partial");
            partials.push_back(partial.outputs[0]);
            place(std::move(partial), region.row);
        }
        const bool bias = isOp(row, "Gemm") && row.inputs.size() > 2 && row.inputs[2].valid();
        const ValueId sum = bias ? rw.addIntermediate(resultType, rw.graph().value(result).name + "_all_reduced") : result;
        const int64_t bytes = int64_t(valueBytes(rw.graph(), result));
        Node reduce = makeNode("AllReduce", kFusescopeDomain, row, partials, {sum},
                               {fsc::intAttr("devices", m_devices), fsc::intAttr("bytes", bytes), fsc::stringAttr("reduction", "sum")});
        reduce.name = row.name + "/AllReduce";
        rw.addNode(std::move(reduce), region.row, {region.row});
        if (bias) {
            Node add = makeNode("Add", "", row, {sum, row.inputs[2]}, {result});
            add.name = row.name + "/bias";
            rw.addNode(std::move(add), region.row, {region.row});
        }
        return double(bytes);
    }

    // `shape` (a Shape node that read an inside value) again, reading device 0's shard: the
    // shard's dims times [1, ..., devices, ..., 1] are the unsplit value's.
    void unsplitShape(Rewriter& rw, Node shape, ValueId shard, int axis, NodeId from, NodeId anchor) {
        const int64_t rank = int64_t(shapeDims(rw.graph(), shard)->size());
        int64_t start = intAttr(shape, "start", 0), end = intAttr(shape, "end", rank);
        if (start < 0) start += rank;
        if (end < 0) end += rank;
        start = std::clamp<int64_t>(start, 0, rank);
        end = std::clamp<int64_t>(end, start, rank);
        const ValueId result = shape.outputs[0];
        shape.inputs[0] = shard;
        if (axis < start || axis >= end) {  // the split axis is not among the dims it reads
            rw.addNode(std::move(shape), anchor, {from});
            return;
        }
        std::vector<int64_t> factor(size_t(end - start), 1);
        factor[size_t(axis - start)] = m_devices;
        shape.outputs[0] = rw.addIntermediate(rw.graph().value(result).type, shape.name + "/of_shard");
        const ValueId by = rw.addConstant(int64Tensor("factor", {end - start}, factor), shape.name + "/shard_factor");
        Node times = makeNode("Mul", "", shape, {shape.outputs[0], by}, {result});
        times.name = shape.name + "/unsplit";
        rw.addNode(std::move(shape), anchor, {from});
        rw.addNode(std::move(times), anchor, {from});
    }

    // The shard's target shape: the run-time one with its entry at `axis` divided by the
    // device count (integer Div by [1, ..., devices, ..., 1]), computed once for all devices.
    ValueId dividedShape(Rewriter& rw, const Node& reshape, int axis, NodeId anchor) {
        const ValueId shape = reshape.inputs[1];
        const int64_t rank = shapeDims(rw.graph(), shape)->at(0);
        std::vector<int64_t> divisor(size_t(rank), 1);
        divisor[size_t(axis)] = m_devices;
        const ValueId by = rw.addConstant(int64Tensor("divisor", {rank}, divisor), reshape.name + "/shard_divisor");
        const ValueId out = rw.addIntermediate(rw.graph().value(shape).type, reshape.name + "/shard_shape");
        Node div = makeNode("Div", "", reshape, {shape, by}, {out});
        div.name = reshape.name + "/shard_shape";
        rw.addNode(std::move(div), anchor, {});
        return out;
    }

    // A linear layer split by output columns, its shards joined by an AllGather on the last
    // axis; returns the gathered bytes.
    double splitOutputLayer(Rewriter& rw, NodeId id) {
        const Node layer = rw.graph().node(id);
        const bool gemm = isOp(layer, "Gemm");
        const ValueId result = layer.outputs[0];
        const ValueType type = rw.graph().value(result).type;
        const int rank = type.shape.rankKnown() ? int(type.shape.rank()) : 2;
        const Segments all{{0, outColumns(rw, id)}};
        rw.removeNode(id);
        std::vector<ValueId> shards;
        for (int d = 0; d < m_devices; ++d) {
            const std::string prefix = "device" + std::to_string(d);
            Node shard = layer;
            shard.name = under(prefix, layer.name);
            shard.scope = prefix + (layer.scope.empty() ? "" : "/" + layer.scope);
            shard.inputs[1] = shardConstant(rw, layer.inputs[1], gemm ? 0 : 1, all, d, prefix);
            if (gemm && layer.inputs.size() > 2 && layer.inputs[2].valid()) {
                const Tensor& c = *rw.constant(layer.inputs[2]);
                if (c.dims().size() == 1) shard.inputs[2] = shardConstant(rw, layer.inputs[2], 0, all, d, prefix);
            }
            ValueType piece = type;
            piece.shape = shardedShape(type.shape, rank - 1);
            shard.outputs[0] = rw.addIntermediate(piece, under(prefix, rw.graph().value(result).name));
            shards.push_back(shard.outputs[0]);
            rw.addNode(std::move(shard), id, {id});
        }
        const int64_t bytes = int64_t(valueBytes(rw.graph(), result));
        Node gather = makeNode("AllGather", kFusescopeDomain, layer, shards, {result},
                               {fsc::intAttr("axis", -1), fsc::intAttr("devices", m_devices), fsc::intAttr("bytes", bytes)});
        gather.name = layer.name + "/AllGather";
        rw.addNode(std::move(gather), id, {id});
        return double(bytes);
    }

    // Device d's share of constant `v` (a weight several layers share is split once).
    ValueId shardConstant(Rewriter& rw, ValueId v, int axis, const Segments& segments, int d, const std::string& prefix) {
        auto [it, fresh] = m_shards.try_emplace(std::make_tuple(v.index, axis, d, segments));
        if (fresh) {
            const Tensor& t = *rw.constant(v);
            it->second = rw.addConstant(shardOf(t, axis, segments, m_devices, d), under(prefix, t.name()));
        }
        return it->second;
    }

    // A binary op's constant operand that spans the split axis gets this device's share.
    void shardConstants(Rewriter& rw, Node& n, const Split& split, const std::string& prefix, int d) {
        const auto outDims = shapeDims(rw.graph(), n.outputs[0]);
        for (ValueId& in : n.inputs) {
            const Tensor* c = rw.constant(in);
            if (!c) continue;
            const int axis = split.axis - (int(outDims->size()) - int(c->dims().size()));
            if (axis < 0 || c->dims()[size_t(axis)] == 1) continue;
            in = shardConstant(rw, in, axis, split.segments, d, prefix);
        }
    }

    Shape shardedShape(const Shape& shape, int axis) const {
        if (!shape.rankKnown() || axis < 0 || size_t(axis) >= shape.rank()) return shape;
        std::vector<Dim> dims = shape.dims();
        if (dims[size_t(axis)].isKnown()) dims[size_t(axis)] = Dim::known(dims[size_t(axis)].size() / m_devices);
        return Shape(std::move(dims));
    }

    int m_devices;
    std::map<std::tuple<uint32_t, int, int, Segments>, ValueId> m_shards;
};

}  // namespace

std::unique_ptr<Pass> tensorParallel(int devices) {
    return std::make_unique<TensorParallelPass>(devices);
}

}  // namespace fsc::passes
