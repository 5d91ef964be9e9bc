// channels-last: the convolutions of a CNN, and the pools and element-wise ops between
// them, work on NHWC tensors ([N, H, W, C]) instead of NCHW, with a Transpose only where such
// a region meets the rest of the graph. oneDNN's convolutions then read and write the layout
// they compute in (no call reorders its activations in and out), and a depthwise one puts
// its channels in the vector lanes (a 7x7 plane no longer runs loops of 7).
//   Conv, FusedConv:   FusedConv with `channels_last` = 1 (X and Y NHWC, W and B as they are;
//                      X stays NCHW, `input_layout` NCHW, where only convolutions read it)
//   GlobalAveragePool: ReduceMean over axes 1 and 2, keeping them ([N, 1, 1, C])
//   ReduceMean/Sum/Max over H and W: the same over axes 1 and 2 (MnasNet's x.mean([2, 3]));
//                      without keepdims its [N, C] is the same in either layout, so it
//                      leaves the region without a Transpose
//   MaxPool:           ai.fusescope.MaxPool with `channels_last` = 1 (ONNX's attributes)
//   AveragePool:       ai.fusescope.AveragePool, the same way (DenseNet's transition layers)
//   element-wise ops:  the same op on NHWC operands; constants are permuted once here
//   Concat of channels: the same Concat over NHWC's last axis (DenseNet's dense blocks,
//                      Inception's branches join inside the region); QLinearConcat likewise
//   BatchNormalization: Mul and Add by per-channel constants ([C], which broadcast over NHWC's
//                      last axis): a pre-activation block's BatchNormalization + Relu before a
//                      convolution (DenseNet's, after a Concat) no longer ends the region
//   Slice, Split of channels: the same over NHWC's last axis (ShuffleNet's channel split)
//   channel shuffle:   Reshape [N, C, H, W] -> [N, g, C/g, H, W], Transpose (0, 2, 1, 3, 4),
//                      Reshape back (ShuffleNet's) is, in NHWC, the same three ops on
//                      [N, H, W, g, C/g] swapping its last two axes: no layout change
//   QLinearConv:       com.microsoft.QLinearConv with `channels_last` = 1 (ONNX Runtime's own;
//                      `input_layout` NCHW as for Conv), a quantized CNN's chain
//   QLinearAdd, QLinearMul: element-wise (their scales and zero points are scalars), and
//                      QuantizedLookup (its table is not an activation)
//   QuantizeLinear, DequantizeLinear: element-wise where their scales and zero points are
//                      scalars
//   QLinearGlobalAveragePool: the same op with `channels_last` = 1 ([N, 1, 1, C]);
//                      QLinearAveragePool likewise
// A pooled [N, 1, 1, C] that only Flattens read leaves without a Transpose (its memory order
// is [N, C, 1, 1]'s). A region is converted only when it needs no more Transposes at its
// edges than it holds convolutions, and a lone Conv only when it needs none (a ViT's patch
// embedding stays as it is). Edges where the region's Transpose cancels an exporter's own
// cost none: ConvNeXt permutes each block to NHWC after its depthwise convolution and back
// before its residual Add, so its whole trunk runs channels-last without a layout change.
// Which element types a region may hold is the target's choice (channelsLastTypes in the
// pipelines file): float32, uint8 and int8 on the CPU; float16 and bfloat16 on CUDA, where
// cuDNN's NHWC kernels are its fast ones. A BatchNormalization and a channel shuffle stay float32-only
// (their rewrites make float32 constants).
#include <algorithm>
#include <cstring>
#include <map>

#include "compiler/runtime/elementwise_program.h"
#include "compiler/runtime/fused_domain.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"
#include "core/graph_builder.h"

namespace fsc::passes {
namespace {

const std::vector<int64_t> kToNhwc = {0, 2, 3, 1};
const std::vector<int64_t> kToNchw = {0, 3, 1, 2};

enum class Role {
    None,
    Conv,
    QuantizedConv,
    GlobalPool,
    QuantizedPool,
    MaxPool,
    AveragePool,
    SpatialReduce,
    Elementwise,
    BatchNorm,
    ChannelConcat,
    QuantizedConcat,
    Lookup,
    ChannelSlice,
    ChannelSplit,
    ChannelShuffle
};

bool rank4(const Graph& g, ValueId v) {
    const ValueType& t = g.value(v).type;
    return t.kind == ValueType::Kind::Tensor && t.shape.rankKnown() && t.shape.rank() == 4;
}

bool scalarShaped(const Graph& g, ValueId v) {
    const Shape& s = g.value(v).type.shape;
    if (!s.rankKnown()) return false;
    for (const Dim& d : s.dims())
        if (!d.isKnown() || d.size() != 1) return false;
    return true;
}

bool channelAxis(int64_t axis) { return axis == 1 || axis == -3; }

// A reduction's axes, from its attribute or its constant input (empty when neither).
std::vector<int64_t> reductionAxes(const Rewriter& rw, const Node& n) {
    if (n.inputs.size() > 1 && n.inputs[1].valid()) return constantInts(rw, n.inputs[1]).value_or(std::vector<int64_t>{});
    return intsAttr(n, "axes");
}

// A ReduceMean, ReduceSum or ReduceMax of a rank-4 tensor of a region's type over exactly H and W.
bool spatialReduction(const Rewriter& rw, const Node& n, const std::set<DType>& types) {
    if (!(isOp(n, "ReduceMean") || isOp(n, "ReduceSum") || isOp(n, "ReduceMax")) || !rank4(rw.graph(), n.inputs[0]) ||
        !types.count(dtypeOf(rw.graph(), n.inputs[0])))
        return false;
    std::vector<int64_t> axes = reductionAxes(rw, n);
    for (int64_t& a : axes) a = a < 0 ? a + 4 : a;
    std::sort(axes.begin(), axes.end());
    return axes == std::vector<int64_t>{2, 3};
}

// A channel shuffle ending at `last` (a Reshape): its first Reshape and Transpose, each read
// only by the next, and the [N, C, H, W] it shuffles in g groups.
struct ChannelShuffle {
    NodeId split, swap;
    ValueId x;
    int64_t groups = 0, channels = 0, height = 0, width = 0;
};
std::optional<ChannelShuffle> channelShuffleEndingAt(const Rewriter& rw, NodeId last) {
    const Graph& g = rw.graph();
    const Node& n = g.node(last);
    if (!isOp(n, "Reshape") || n.outputs.size() != 1 || n.inputs.empty() || !n.inputs[0].valid() || !n.outputs[0].valid() ||
        !rank4(g, n.outputs[0]))
        return std::nullopt;
    const NodeId swap = rw.producer(n.inputs[0]);
    if (!swap.valid() || rw.soleUser(n.inputs[0]) != last || !isOp(g.node(swap), "Transpose") ||
        intsAttr(g.node(swap), "perm") != std::vector<int64_t>{0, 2, 1, 3, 4})
        return std::nullopt;
    if (g.node(swap).inputs.empty() || !g.node(swap).inputs[0].valid()) return std::nullopt;
    const ValueId grouped = g.node(swap).inputs[0];
    const NodeId split = rw.producer(grouped);
    if (!split.valid() || rw.soleUser(grouped) != swap || !isOp(g.node(split), "Reshape") ||
        g.node(split).inputs.empty() || !g.node(split).inputs[0].valid())
        return std::nullopt;
    ChannelShuffle s{split, swap, g.node(split).inputs[0]};
    if (!rank4(g, s.x) || dtypeOf(g, s.x) != DType::Float32) return std::nullopt;
    // Dims 1.. known: with as many elements, dim 0 is N in all three.
    auto known = [&](ValueId v, size_t rank) -> std::optional<std::vector<int64_t>> {
        const Shape& shape = g.value(v).type.shape;
        if (!shape.rankKnown() || shape.rank() != rank) return std::nullopt;
        std::vector<int64_t> d;
        for (size_t i = 1; i < rank; ++i) {
            if (!shape[i].isKnown()) return std::nullopt;
            d.push_back(shape[i].size());
        }
        return d;
    };
    const auto in = known(s.x, 4), mid = known(grouped, 5), out = known(n.outputs[0], 4);
    if (!in || !mid || !out || *in != *out || (*mid)[2] != (*in)[1] || (*mid)[3] != (*in)[2] ||
        (*mid)[0] * (*mid)[1] != (*in)[0])
        return std::nullopt;
    s.groups = (*mid)[0];
    s.channels = (*in)[0];
    s.height = (*in)[1];
    s.width = (*in)[2];
    return s;
}

// Ops that compute each output element from the same element of each (broadcast) input.
bool elementwiseKind(const Node& n) {
    static const std::set<std::string> extra = {"Clip", "LeakyRelu", "HardSigmoid", "HardSwish", "Elu",
                                                "Selu", "Softplus", "Identity", "Mish", "ThresholdedRelu"};
    static const std::set<std::string> plain = [] {
        std::set<std::string> s = elementwiseOpTypes();
        s.insert(extra.begin(), extra.end());
        return s;
    }();
    if (n.domain == kFusescopeDomain) return n.opType == "FusedElementwise" || n.opType == "Gelu";
    if (n.domain == "com.microsoft") return n.opType == "QLinearAdd" || n.opType == "QLinearMul";  // scalar parameters
    return n.domain.empty() && plain.count(n.opType);
}

// What the node becomes in a channels-last region, or None with the reason.
Role roleOf(const Rewriter& rw, NodeId id, const std::set<DType>& types, std::string& why) {
    const Graph& g = rw.graph();
    const Node& n = g.node(id);
    auto typed = [&](ValueId v) { return types.count(dtypeOf(g, v)) != 0; };
    if (isOp(n, "Split") && channelAxis(intAttr(n, "axis", 0)) && !n.inputs.empty() && n.inputs[0].valid() && rank4(g, n.inputs[0]) &&
        typed(n.inputs[0])) {
        for (ValueId out : n.outputs)
            if (!out.valid() || !rank4(g, out)) return Role::None;
        return Role::ChannelSplit;
    }
    if (n.outputs.size() != 1 || !n.outputs[0].valid() || n.inputs.empty() || !n.inputs[0].valid()) return Role::None;
    const ValueId out = n.outputs[0];
    const bool conv = (isOp(n, "Conv") || (n.domain == kFusescopeDomain && n.opType == "FusedConv"));
    if (conv) {
        if (intAttr(n, "channels_last", 0) != 0) return Role::None;
        if (!rank4(g, n.inputs[0]) || !rank4(g, out)) {
            why = "not a 2-D convolution of known rank";
            return Role::None;
        }
        if (!typed(out)) {
            why = std::string("no channels-last convolution kernels for ") + std::string(dtypeName(dtypeOf(g, out))) +
                  " on this target";
            return Role::None;
        }
        return Role::Conv;
    }
    const bool quantizedConv = n.opType == "QLinearConv" && (n.domain.empty() || n.domain == "com.microsoft");
    if (quantizedConv) {
        if (intAttr(n, "channels_last", 0) != 0) return Role::None;
        if (!rank4(g, n.inputs[0]) || !rank4(g, out)) {
            why = "not a 2-D convolution of known rank";
            return Role::None;
        }
        if (!typed(n.inputs[0]) || !typed(out)) {
            why = std::string("no channels-last QLinearConv for ") + std::string(dtypeName(dtypeOf(g, n.inputs[0]))) +
                  " on this target";
            return Role::None;
        }
        return Role::QuantizedConv;
    }
    if (isOp(n, "GlobalAveragePool"))
        return rank4(g, n.inputs[0]) && typed(out) ? Role::GlobalPool : Role::None;
    if (n.domain == "com.microsoft" && n.opType == "QLinearAveragePool")  // as QLinearGlobalAveragePool: `channels_last` = 1
        return rank4(g, n.inputs[0]) && rank4(g, out) && typed(out) && intAttr(n, "channels_last", 0) == 0
                   ? Role::QuantizedPool
                   : Role::None;
    if (n.domain == "com.microsoft" && n.opType == "QLinearGlobalAveragePool")
        return rank4(g, n.inputs[0]) && typed(out) && intAttr(n, "channels_last", 0) == 0 ? Role::QuantizedPool
                                                                                          : Role::None;
    if (isOp(n, "MaxPool")) {
        if (!rank4(g, n.inputs[0]) || !typed(out)) return Role::None;
        if (intAttr(n, "storage_order", 0) != 0) {
            why = "MaxPool with storage_order 1";
            return Role::None;
        }
        return Role::MaxPool;
    }
    if (isOp(n, "AveragePool"))
        return rank4(g, n.inputs[0]) && typed(out) ? Role::AveragePool : Role::None;
    if (isOp(n, "Concat")) {
        const int64_t axis = intAttr(n, "axis", 1);
        if ((axis != 1 && axis != -3) || !rank4(g, out) || !typed(out)) return Role::None;
        for (ValueId in : n.inputs)
            if (!in.valid() || !rank4(g, in)) return Role::None;
        return Role::ChannelConcat;
    }
    if (n.domain == kFusescopeDomain && n.opType == "QuantizedLookup")
        return rank4(g, n.inputs[0]) && rank4(g, out) ? Role::Lookup : Role::None;
    if (n.domain == "com.microsoft" && n.opType == "QLinearConcat") {
        const int64_t axis = intAttr(n, "axis", 1);
        if ((axis != 1 && axis != -3) || !rank4(g, out) || !typed(out) || n.inputs.size() < 5) return Role::None;
        for (size_t i = 2; i < n.inputs.size(); i += 3)
            if (!n.inputs[i].valid() || !rank4(g, n.inputs[i])) return Role::None;
        return Role::QuantizedConcat;
    }
    if (isOp(n, "Slice")) {
        // Constant bounds over the channel axis alone; any steps.
        const auto axes = n.inputs.size() > 3 && n.inputs[3].valid() ? constantInts(rw, n.inputs[3]) : std::nullopt;
        const bool bounds = n.inputs.size() > 2 && constantInts(rw, n.inputs[1]) && constantInts(rw, n.inputs[2]) &&
                            (n.inputs.size() < 5 || !n.inputs[4].valid() || constantInts(rw, n.inputs[4]));
        if (!axes || axes->size() != 1 || !channelAxis(axes->front()) || !bounds || !rank4(g, n.inputs[0]) || !typed(out))
            return Role::None;
        return Role::ChannelSlice;
    }
    if (channelShuffleEndingAt(rw, id)) return Role::ChannelShuffle;
    if (spatialReduction(rw, n, types)) return Role::SpatialReduce;
    if (isOp(n, "BatchNormalization")) {
        if (!rank4(g, n.inputs[0]) || dtypeOf(g, out) != DType::Float32 || n.inputs.size() != 5) return Role::None;
        bool vectors = true;
        for (size_t i = 1; i < 5; ++i) {
            const Tensor* c = n.inputs[i].valid() ? rw.constant(n.inputs[i]) : nullptr;
            vectors = vectors && c && c->dims().size() == 1;
        }
        if (!vectors || !batchNormAffine(rw, n)) {
            why = "a BatchNormalization whose statistics are not constant vectors";
            return Role::None;
        }
        return Role::BatchNorm;
    }
    if (n.domain.empty() && (n.opType == "QuantizeLinear" || n.opType == "DequantizeLinear")) {
        // Per tensor: each element on its own, as an element-wise op (a QDQ model's float steps
        // between its quantized convolutions: MobileNetV3's hardswish). Not on a graph input:
        // the image's QuantizeLinear stays NCHW, for the first convolution reads NCHW itself.
        for (size_t i = 1; i < n.inputs.size(); ++i)
            if (n.inputs[i].valid() && !scalarShaped(g, n.inputs[i])) return Role::None;
        if (!rw.producer(n.inputs[0]).valid()) return Role::None;
        return rank4(g, n.inputs[0]) && rank4(g, out) && typed(n.inputs[0]) && typed(out) ? Role::Elementwise : Role::None;
    }
    if (!elementwiseKind(n) || !rank4(g, out)) return Role::None;
    for (ValueId in : n.inputs) {
        if (!in.valid() || rank4(g, in) || scalarShaped(g, in)) continue;
        const Tensor* c = rw.constant(in);
        if (!c || c->dims().size() > 4 || c->dtype() == DType::String) {
            why = "an operand of another rank is computed at run time";
            return Role::None;
        }
    }
    return Role::Elementwise;
}

// Whether input i of a node in `role` is an activation, laid out as the region lays out its
// tensors: all but a convolution's W and B (its residual Z is one), and a quantized op's
// scales and zero points.
bool carriesActivation(Role role, size_t i) {
    if (role == Role::QuantizedConcat) return i >= 2 && (i - 2) % 3 == 0;  // its data, not scales and zero points
    if (role == Role::Lookup) return i == 0;  // not its table
    if (role == Role::BatchNorm || role == Role::ChannelSlice || role == Role::ChannelSplit || role == Role::ChannelShuffle ||
        role == Role::SpatialReduce || role == Role::QuantizedConv || role == Role::QuantizedPool)
        return i == 0;
    return role != Role::Conv || i == 0 || i >= 3;
}

// The activations a region's node reads, by input index; a channel shuffle's is the
// [N, C, H, W] its first Reshape reads (index 0 stands for it).
std::vector<std::pair<size_t, ValueId>> activationInputs(const Rewriter& rw, NodeId id, Role role) {
    if (role == Role::ChannelShuffle) return {{0, channelShuffleEndingAt(rw, id)->x}};
    std::vector<std::pair<size_t, ValueId>> out;
    const Node& n = rw.graph().node(id);
    for (size_t i = 0; i < n.inputs.size(); ++i)
        if (n.inputs[i].valid() && carriesActivation(role, i)) out.emplace_back(i, n.inputs[i]);
    return out;
}

// The nodes a region takes out: its members and each channel shuffle's first Reshape and
// Transpose (the values between them never leave it).
std::set<uint32_t> nodesTakenOut(const Rewriter& rw, const std::vector<NodeId>& nodes, const std::map<uint32_t, Role>& roles) {
    std::set<uint32_t> out;
    for (NodeId id : nodes) {
        out.insert(id.index);
        if (roles.at(id.index) != Role::ChannelShuffle) continue;
        const ChannelShuffle s = *channelShuffleEndingAt(rw, id);
        out.insert(s.split.index);
        out.insert(s.swap.index);
    }
    return out;
}

Shape permuted(const Shape& s, const std::vector<int64_t>& perm) {
    std::vector<Dim> dims;
    for (int64_t p : perm) dims.push_back(s[size_t(p)]);
    return Shape(std::move(dims));
}

// A constant broadcast against NCHW operands, as the same constant against NHWC ones: its
// dims padded on the left to rank 4, then permuted.
Tensor toNhwc(const Tensor& t) {
    std::vector<int64_t> d(4 - t.dims().size(), 1);
    d.insert(d.end(), t.dims().begin(), t.dims().end());
    const size_t bytes = size_t(dtypeBits(t.dtype()) / 8);
    const std::vector<int64_t> out = {d[0], d[2], d[3], d[1]};
    std::string data(size_t(t.numElements()) * bytes, '\0');
    const uint8_t* src = t.data();
    size_t o = 0;
    for (int64_t n = 0; n < d[0]; ++n)
        for (int64_t h = 0; h < d[2]; ++h)
            for (int64_t w = 0; w < d[3]; ++w)
                for (int64_t c = 0; c < d[1]; ++c, o += bytes)
                    std::memcpy(data.data() + o, src + size_t(((n * d[1] + c) * d[2] + h) * d[3] + w) * bytes, bytes);
    return Tensor(t.name() + "_nhwc", t.dtype(), out, makeBuffer(std::move(data)), 0, size_t(t.numElements()) * bytes);
}

struct Region {
    std::vector<NodeId> nodes;  // in graph order
    int convolutions = 0;
    int entries = 0, exits = 0;  // values crossing its edges: at most this many Transposes (not
                                 // counting those that cancel an exporter's own)
};

class ChannelsLastPass : public Pass {
public:
    explicit ChannelsLastPass(std::set<DType> types) : m_types(std::move(types)) {}
    std::string name() const override { return "channels-last"; }
    std::string description() const override {
        return "runs convolution chains in NHWC, with Transposes only where they meet the rest of the graph";
    }

    Status run(PassContext& context) override {
        Rewriter& rw = context.rewriter;
        const Graph& g = rw.graph();
        std::map<uint32_t, Role> roles;
        for (NodeId id : g.order()) {
            std::string why;
            const Role r = roleOf(rw, id, m_types, why);
            if (r != Role::None) roles[id.index] = r;
            else if (!why.empty()) context.reject("channels-last-region", id, why);
        }
        for (const Region& region : regions(rw, roles)) {
            if (context.cancelled()) break;
            if (region.convolutions == 0) continue;  // element-wise ops alone: nothing to gain
            ++context.counters.matched;
            const NodeId first = region.nodes.front();
            if (region.convolutions < 2 && region.entries + region.exits > 0) {
                context.reject("channels-last-region", first, "a lone convolution: the Transposes would cost more than they save");
                continue;
            }
            if (region.entries + region.exits > region.convolutions) {
                context.reject("channels-last-region", first, "more Transposes at its edges than convolutions inside");
                continue;
            }
            const int transposes = convert(rw, context.model, region, roles);
            if (rw.commit("channels-last-region",
                          std::to_string(region.convolutions) + " convolutions and " +
                              std::to_string(region.nodes.size() - size_t(region.convolutions)) +
                              " other nodes run in NHWC; " + std::to_string(transposes) + " Transposes at the edges"))
                ++context.counters.applied;
        }
        rw.finish();
        return Status::ok();
    }

private:
    std::set<DType> m_types;  // the element types a region may hold

    // Connected groups of convertible nodes, joined through the values they pass each other.
    static std::vector<Region> regions(const Rewriter& rw, const std::map<uint32_t, Role>& roles) {
        const Graph& g = rw.graph();
        std::map<uint32_t, uint32_t> parent;
        for (const auto& [id, role] : roles) parent[id] = id;
        auto find = [&](uint32_t x) {
            while (parent[x] != x) x = parent[x] = parent[parent[x]];
            return x;
        };
        for (const auto& [id, role] : roles)
            for (const auto& [i, in] : activationInputs(rw, NodeId{id}, role)) {
                const NodeId p = rw.producer(in);
                if (p.valid() && roles.count(p.index) && rank4(g, in)) parent[find(id)] = find(p.index);
            }
        std::map<uint32_t, Region> byRoot;
        std::vector<uint32_t> rootOrder;
        for (NodeId id : g.order()) {
            auto it = roles.find(id.index);
            if (it == roles.end()) continue;
            const uint32_t root = find(id.index);
            if (!byRoot.count(root)) rootOrder.push_back(root);
            Region& r = byRoot[root];
            r.nodes.push_back(id);
            r.convolutions += it->second == Role::Conv || it->second == Role::QuantizedConv;
        }
        std::vector<Region> out;
        for (uint32_t root : rootOrder) {
            Region& r = byRoot[root];
            std::set<uint32_t> members, entered;
            for (NodeId id : r.nodes) members.insert(id.index);
            const std::set<uint32_t> takenOut = nodesTakenOut(rw, r.nodes, roles);
            const std::set<uint32_t> readNchw = readAsNchw(rw, members, roles);  // need no Transpose
            for (NodeId id : r.nodes) {
                for (const auto& [i, in] : activationInputs(rw, id, roles.at(id.index)))
                    if (rank4(g, in) && !rw.constant(in)) {
                        const NodeId p = rw.producer(in);
                        if ((!p.valid() || !members.count(p.index)) && entered.insert(in.index).second &&
                            !readNchw.count(in.index) && !enteringUndone(rw, in))
                            ++r.entries;
                    }
                for (ValueId out : g.node(id).outputs)
                    r.exits += rank4(g, out) && leavesRegion(rw, out, takenOut) && !leavingUndone(rw, out, takenOut);
            }
            out.push_back(std::move(r));
        }
        return out;
    }

    // Whether v comes out of a Transpose to NCHW (an exporter's own: ConvNeXt permutes back
    // before its layer scale and residual Add): the Transpose the region puts after it
    // cancels it (cancel-inverse-pairs), so the edge costs nothing.
    static bool enteringUndone(const Rewriter& rw, ValueId v) {
        const NodeId p = rw.producer(v);
        return p.valid() && isOp(rw.graph().node(p), "Transpose") && intsAttr(rw.graph().node(p), "perm") == kToNchw;
    }

    // Whether every reader of v outside the region is a Transpose to NHWC (ConvNeXt's permute
    // after its depthwise convolution), which the region's Transpose back cancels.
    static bool leavingUndone(const Rewriter& rw, ValueId v, const std::set<uint32_t>& members) {
        if (rw.isGraphOutput(v) || rw.isCaptured(v)) return false;
        for (NodeId u : rw.users(v)) {
            if (members.count(u.index)) continue;
            const Node& n = rw.graph().node(u);
            if (!isOp(n, "Transpose") || intsAttr(n, "perm") != kToNhwc) return false;
        }
        return true;
    }

    static bool leavesRegion(const Rewriter& rw, ValueId v, const std::set<uint32_t>& members) {
        if (rw.isGraphOutput(v) || rw.isCaptured(v)) return true;
        for (NodeId u : rw.users(v))
            if (!members.count(u.index)) return true;
        return false;
    }

    static Node transposeNode(const Node& near, const std::string& name, ValueId in, ValueId out,
                              const std::vector<int64_t>& perm) {
        Node t;
        t.name = name;
        t.opType = "Transpose";
        t.scope = near.scope;
        t.inputs = {in};
        t.outputs = {out};
        t.attributes = {fsc::intsAttr("perm", perm)};
        return t;
    }

    // Values entering the region that only convolutions read, as their X: those read NCHW
    // themselves (`input_layout`), so the region needs no Transpose in (the graph's input
    // image into the first convolution).
    static std::set<uint32_t> readAsNchw(const Rewriter& rw, const std::set<uint32_t>& members,
                                         const std::map<uint32_t, Role>& roles) {
        const Graph& g = rw.graph();
        std::set<uint32_t> absorbed, refused;
        for (uint32_t id : members)
            for (const auto& [i, in] : activationInputs(rw, NodeId{id}, roles.at(id))) {
                if (!rank4(g, in) || rw.constant(in)) continue;
                const NodeId p = rw.producer(in);
                if (p.valid() && members.count(p.index)) continue;
                // An exporter's own Transpose in front composes with ours (or cancels it).
                const bool transposed = p.valid() && isOp(g.node(p), "Transpose");
                const bool convolution = roles.at(id) == Role::Conv || roles.at(id) == Role::QuantizedConv;
                if (convolution && i == 0 && !transposed) absorbed.insert(in.index);
                else refused.insert(in.index);
            }
        for (uint32_t v : refused) absorbed.erase(v);
        return absorbed;
    }

    // A pooled [N, 1, 1, C] is laid out as [N, C, 1, 1] is: a Flatten (axis 1) reading it
    // gives the same [N, C] from either, so it needs no Transpose back.
    static bool flattenOnly(const Rewriter& rw, ValueId out, ValueId nhwc, const std::set<uint32_t>& members) {
        const Shape& s = rw.graph().value(nhwc).type.shape;
        if (rw.isGraphOutput(out) || rw.isCaptured(out) || !s.rankKnown() || s.rank() != 4) return false;
        for (size_t d : {size_t(1), size_t(2)})
            if (!s[d].isKnown() || s[d].size() != 1) return false;
        for (NodeId u : rw.users(out)) {
            if (members.count(u.index)) continue;
            const Node& n = rw.graph().node(u);
            if (!isOp(n, "Flatten") || intAttr(n, "axis", 1) != 1) return false;
        }
        return true;
    }

    // Rewrites the region; returns how many Transposes it placed at the edges.
    static int convert(Rewriter& rw, const Model& model, const Region& region, const std::map<uint32_t, Role>& roles) {
        int transposes = 0;
        std::set<uint32_t> members;
        for (NodeId id : region.nodes) members.insert(id.index);
        const std::set<uint32_t> takenOut = nodesTakenOut(rw, region.nodes, roles);
        const std::set<uint32_t> nchwEntries = readAsNchw(rw, members, roles);
        std::map<uint32_t, ValueId> nhwc;  // a value of the region (or entering it) -> its NHWC twin
        std::map<uint32_t, ChannelShuffle> shuffles;  // by the shuffle's last Reshape
        auto typeOf = [&](ValueId v) {  // a value of another rank ([N, C]) reads the same in both
            ValueType t = rw.graph().value(v).type;
            if (rank4(rw.graph(), v)) t.shape = permuted(t.shape, kToNhwc);
            return t;
        };
        // The NHWC twin of an activation entering the region: a Transpose in, made once.
        auto entering = [&](ValueId in, const Node& near, NodeId anchor) {
            if (auto it = nhwc.find(in.index); it != nhwc.end()) return it->second;
            const std::string name = rw.graph().value(in).name;
            const ValueId entered = rw.addIntermediate(typeOf(in), name + "_nhwc");
            rw.addNode(transposeNode(near, name + "/to_nhwc", in, entered, kToNhwc), anchor, {anchor});
            ++transposes;
            return nhwc[in.index] = entered;
        };
        for (NodeId id : region.nodes) {
            const Node old = rw.graph().node(id);
            const Role role = roles.at(id.index);
            Node made = old;
            made.origins.clear();
            if (role == Role::ChannelShuffle) {
                const ChannelShuffle sh = *channelShuffleEndingAt(rw, id);
                shuffles[id.index] = sh;
                made.inputs = {entering(sh.x, old, id), {}};
                addNhwcShuffleHead(rw, sh, made, id);
            }
            for (size_t i = 0; i < made.inputs.size() && role != Role::ChannelShuffle; ++i) {
                const ValueId in = made.inputs[i];
                if (!in.valid()) continue;
                if (nchwEntries.count(in.index) && i == 0 && (role == Role::Conv || role == Role::QuantizedConv)) {
                    made.attributes.push_back(fsc::stringAttr("input_layout", "NCHW"));
                } else if (auto it = nhwc.find(in.index); it != nhwc.end()) {
                    made.inputs[i] = it->second;
                } else if (const Tensor* c = rw.constant(in); c && carriesActivation(role, i)) {
                    if (c->numElements() != 1) made.inputs[i] = rw.addConstant(toNhwc(*c), rw.graph().value(in).name + "_nhwc");
                } else if (rank4(rw.graph(), in) && carriesActivation(role, i)) {
                    made.inputs[i] = entering(in, old, id);
                }
            }
            made.outputs.clear();
            for (ValueId out : old.outputs)
                made.outputs.push_back(
                    rw.addIntermediate(typeOf(out), rw.graph().value(out).name + (rank4(rw.graph(), out) ? "_nhwc" : "")));
            if (role == Role::Conv) {
                if (made.domain.empty()) {
                    made.domain = kFusescopeDomain;
                    made.opType = "FusedConv";
                }
                made.attributes.push_back(fsc::intAttr("channels_last", 1));
            } else if (role == Role::QuantizedConv || role == Role::QuantizedPool) {
                made.domain = "com.microsoft";  // ONNX Runtime's op, which has the attribute
                std::erase_if(made.attributes, [](const Attribute& a) { return a.name == "channels_last"; });
                made.attributes.push_back(fsc::intAttr("channels_last", 1));
            } else if (role == Role::ChannelConcat || role == Role::QuantizedConcat) {
                made.attributes = {fsc::intAttr("axis", 3)};
            } else if (role == Role::ChannelSplit) {
                std::erase_if(made.attributes, [](const Attribute& a) { return a.name == "axis"; });
                made.attributes.push_back(fsc::intAttr("axis", 3));
            } else if (role == Role::ChannelSlice) {
                made.inputs[3] = rw.addConstant(int64Tensor("", {1}, {3}), old.name + "_axes_nhwc");
            } else if (role == Role::SpatialReduce) {
                if (made.inputs.size() > 1 && made.inputs[1].valid()) {
                    made.inputs[1] = rw.addConstant(int64Tensor("", {2}, {1, 2}), old.name + "_axes_nhwc");
                } else {
                    std::erase_if(made.attributes, [](const Attribute& a) { return a.name == "axes"; });
                    made.attributes.push_back(fsc::intsAttr("axes", {1, 2}));
                }
            } else if (role == Role::MaxPool || role == Role::AveragePool) {
                made.domain = kFusescopeDomain;
                made.attributes.push_back(fsc::intAttr("channels_last", 1));
            } else if (role == Role::GlobalPool) {
                made.opType = "ReduceMean";
                made.attributes = {fsc::intAttr("keepdims", 1)};
                if (model.opsetVersion("") >= 18)
                    made.inputs.push_back(rw.addConstant(int64Tensor("", {2}, {1, 2}), old.name + "_axes"));
                else
                    made.attributes.push_back(fsc::intsAttr("axes", {1, 2}));
            }
            const std::vector<ValueId> madeOutputs = made.outputs;
            if (role == Role::BatchNorm) addNhwcBatchNorm(rw, old, made, id);
            else rw.addNode(std::move(made), id, {id});
            for (size_t k = 0; k < old.outputs.size(); ++k) {
                const ValueId out = old.outputs[k], outNhwc = madeOutputs[k];
                if (!rank4(rw.graph(), out)) {  // [N, C]: the same in either layout
                    rw.replaceAllUses(out, outNhwc);
                    continue;
                }
                nhwc[out.index] = outNhwc;
                if (!leavesRegion(rw, out, takenOut)) continue;
                if (flattenOnly(rw, out, outNhwc, takenOut)) {
                    for (NodeId u : std::vector<NodeId>(rw.users(out)))
                        if (!takenOut.count(u.index))
                            for (size_t i = 0; i < rw.graph().node(u).inputs.size(); ++i)
                                if (rw.graph().node(u).inputs[i] == out) rw.setInput(u, i, outNhwc);
                    continue;
                }
                const ValueId back = rw.addIntermediate(rw.graph().value(out).type, rw.graph().value(out).name + "_nchw");
                rw.addNode(transposeNode(old, rw.graph().value(out).name + "/to_nchw", outNhwc, back, kToNchw), id, {id});
                ++transposes;
                rw.replaceAllUses(out, back);
                nhwc[back.index] = outNhwc;  // region nodes still to come now read `back`
            }
        }
        for (auto it = region.nodes.rbegin(); it != region.nodes.rend(); ++it) {
            rw.removeNode(*it);
            if (auto sh = shuffles.find(it->index); sh != shuffles.end()) {  // before what feeds them
                rw.removeNode(sh->second.swap);
                rw.removeNode(sh->second.split);
            }
        }
        return transposes;
    }

    // A channel shuffle's first Reshape and Transpose in NHWC: [N, H, W, C] -> [N, H, W, g, C/g]
    // -> last two axes swapped; `last` (its final Reshape, inputs[0] the NHWC input) then
    // reads the swapped value and goes back to [N, H, W, C]. Targets copy N with a 0.
    static void addNhwcShuffleHead(Rewriter& rw, const ChannelShuffle& sh, Node& last, NodeId anchor) {
        const Node split = rw.graph().node(sh.split), swap = rw.graph().node(sh.swap);
        const int64_t perGroup = sh.channels / sh.groups;
        ValueType grouped = rw.graph().value(split.outputs[0]).type;  // [N, g, C/g, H, W]
        grouped.shape = permuted(grouped.shape, {0, 3, 4, 1, 2});
        ValueType swapped = grouped;
        swapped.shape = permuted(grouped.shape, {0, 1, 2, 4, 3});
        const std::string base = rw.graph().value(split.outputs[0]).name;
        Node head = split;
        head.origins.clear();
        head.attributes.clear();
        head.inputs = {last.inputs[0], rw.addConstant(int64Tensor("", {5}, {0, sh.height, sh.width, sh.groups, perGroup}),
                                                      base + "_shape_nhwc")};
        head.outputs = {rw.addIntermediate(grouped, base + "_nhwc")};
        const ValueId groupedNhwc = head.outputs[0];
        rw.addNode(std::move(head), anchor, {sh.split});
        const ValueId swappedNhwc = rw.addIntermediate(swapped, rw.graph().value(swap.outputs[0]).name + "_nhwc");
        rw.addNode(transposeNode(swap, swap.name, groupedNhwc, swappedNhwc, {0, 1, 2, 4, 3}), anchor, {sh.swap});
        last.attributes.clear();
        last.inputs = {swappedNhwc, rw.addConstant(int64Tensor("", {4}, {0, sh.height, sh.width, sh.channels}),
                                                   rw.graph().value(last.outputs[0]).name + "_shape_nhwc")};
    }

    // BatchNormalization as Mul then Add by its folded per-channel constants.
    static void addNhwcBatchNorm(Rewriter& rw, const Node& old, const Node& made, NodeId id) {
        const ChannelAffine affine = *batchNormAffine(rw, old);  // roleOf() checked the statistics
        const int64_t channels = int64_t(affine.scale.size());
        const Tensor scale = floatTensor(old.name + "_scale", {channels}, {affine.scale.begin(), affine.scale.end()});
        const Tensor shift = floatTensor(old.name + "_shift", {channels}, {affine.shift.begin(), affine.shift.end()});
        const std::string base = rw.graph().value(old.outputs[0]).name;
        const ValueId scaled = rw.addIntermediate(rw.graph().value(made.outputs[0]).type, base + "_scaled");
        Node mul = made, add = made;
        mul.name = old.name + "/scale";
        mul.opType = "Mul";
        mul.attributes.clear();
        mul.inputs = {made.inputs[0], rw.addConstant(scale, base + "_scale")};
        mul.outputs = {scaled};
        add.name = old.name + "/shift";
        add.opType = "Add";
        add.attributes.clear();
        add.inputs = {scaled, rw.addConstant(shift, base + "_shift")};
        rw.addNode(std::move(mul), id, {id});
        rw.addNode(std::move(add), id, {id});
    }
};

}  // namespace

std::unique_ptr<Pass> channelsLast() { return channelsLast({DType::Float32, DType::UInt8, DType::Int8}); }
std::unique_ptr<Pass> channelsLast(std::set<DType> types) { return std::make_unique<ChannelsLastPass>(std::move(types)); }

}  // namespace fsc::passes
