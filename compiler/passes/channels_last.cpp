// channels-last: the convolutions of a CNN, and the pools and element-wise ops between
// them, work on NHWC tensors ([N, H, W, C]) instead of NCHW, with a Transpose only where such
// a region meets the rest of the graph. oneDNN's convolutions then read and write the layout
// they compute in (no call reorders its activations in and out), and a depthwise one puts
// its channels in the vector lanes (a 7x7 plane no longer runs loops of 7).
//   Conv, FusedConv:   FusedConv with `channels_last` = 1 (X and Y NHWC, W and B as they are;
//                      X stays NCHW, `input_layout` NCHW, where only convolutions read it)
//   GlobalAveragePool: ReduceMean over axes 1 and 2, keeping them ([N, 1, 1, C])
//   MaxPool:           ai.fusescope.MaxPool with `channels_last` = 1 (ONNX's attributes)
//   element-wise ops:  the same op on NHWC operands; constants are permuted once here
//   Concat of channels: the same Concat over NHWC's last axis (DenseNet's dense blocks,
//                      Inception's branches join inside the region)
//   BatchNormalization: Mul and Add by per-channel constants ([C], which broadcast over NHWC's
//                      last axis): a pre-activation block's BatchNormalization + Relu before a
//                      convolution (DenseNet's, after a Concat) no longer ends the region
// A pooled [N, 1, 1, C] that only Flattens read leaves without a Transpose (its memory order
// is [N, C, 1, 1]'s). A region is converted only when it holds at least two convolutions
// and needs no more Transposes at its edges than it holds convolutions: a lone Conv (a ViT's
// patch embedding) stays as it is.
#include <algorithm>
#include <cstring>
#include <map>

#include "compiler/elementwise_program.h"
#include "compiler/fused_domain.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"
#include "core/graph_builder.h"

namespace fsc::passes {
namespace {

const std::vector<int64_t> kToNhwc = {0, 2, 3, 1};
const std::vector<int64_t> kToNchw = {0, 3, 1, 2};

enum class Role { None, Conv, GlobalPool, MaxPool, Elementwise, BatchNorm, ChannelConcat };

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
    return n.domain.empty() && plain.count(n.opType);
}

// What the node becomes in a channels-last region, or None with the reason.
Role roleOf(const Rewriter& rw, const Node& n, std::string& why) {
    const Graph& g = rw.graph();
    if (n.outputs.size() != 1 || !n.outputs[0].valid() || n.inputs.empty() || !n.inputs[0].valid()) return Role::None;
    const ValueId out = n.outputs[0];
    const bool conv = (isOp(n, "Conv") || (n.domain == kFusescopeDomain && n.opType == "FusedConv"));
    if (conv) {
        if (intAttr(n, "channels_last", 0) != 0) return Role::None;
        if (!rank4(g, n.inputs[0]) || !rank4(g, out)) {
            why = "not a 2-D convolution of known rank";
            return Role::None;
        }
        if (dtypeOf(g, out) != DType::Float32) {
            why = "only float32 convolutions have channels-last kernels";
            return Role::None;
        }
        return Role::Conv;
    }
    if (isOp(n, "GlobalAveragePool"))
        return rank4(g, n.inputs[0]) && dtypeOf(g, out) == DType::Float32 ? Role::GlobalPool : Role::None;
    if (isOp(n, "MaxPool")) {
        if (!rank4(g, n.inputs[0]) || dtypeOf(g, out) != DType::Float32) return Role::None;
        if (intAttr(n, "storage_order", 0) != 0) {
            why = "MaxPool with storage_order 1";
            return Role::None;
        }
        return Role::MaxPool;
    }
    if (isOp(n, "Concat")) {
        const int64_t axis = intAttr(n, "axis", 1);
        if ((axis != 1 && axis != -3) || !rank4(g, out) || dtypeOf(g, out) != DType::Float32) return Role::None;
        for (ValueId in : n.inputs)
            if (!in.valid() || !rank4(g, in)) return Role::None;
        return Role::ChannelConcat;
    }
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
// tensors: all but a convolution's W and B (its residual Z is one).
bool carriesActivation(Role role, size_t i) {
    if (role == Role::BatchNorm) return i == 0;
    return role != Role::Conv || i == 0 || i >= 3;
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
    int entries = 0, exits = 0;  // values crossing its edges: at most this many Transposes
};

class ChannelsLastPass : public Pass {
public:
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
            const Role r = roleOf(rw, g.node(id), why);
            if (r != Role::None) roles[id.index] = r;
            else if (!why.empty()) context.reject("channels-last-region", id, why);
        }
        for (const Region& region : regions(rw, roles)) {
            if (context.cancelled()) break;
            if (region.convolutions == 0) continue;  // element-wise ops alone: nothing to gain
            ++context.counters.matched;
            const NodeId first = region.nodes.front();
            if (region.convolutions < 2) {
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
            for (size_t i = 0; i < g.node(NodeId{id}).inputs.size(); ++i) {
                const ValueId in = g.node(NodeId{id}).inputs[i];
                if (!in.valid() || !carriesActivation(role, i)) continue;
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
            r.convolutions += it->second == Role::Conv;
        }
        std::vector<Region> out;
        for (uint32_t root : rootOrder) {
            Region& r = byRoot[root];
            std::set<uint32_t> members, entered;
            for (NodeId id : r.nodes) members.insert(id.index);
            for (NodeId id : r.nodes) {
                const Node& n = g.node(id);
                for (size_t i = 0; i < n.inputs.size(); ++i)
                    if (const ValueId in = n.inputs[i];
                        in.valid() && carriesActivation(roles.at(id.index), i) && rank4(g, in) && !rw.constant(in)) {
                        const NodeId p = rw.producer(in);
                        if ((!p.valid() || !members.count(p.index)) && entered.insert(in.index).second) ++r.entries;
                    }
                if (leavesRegion(rw, n.outputs[0], members)) ++r.exits;
            }
            out.push_back(std::move(r));
        }
        return out;
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
        for (uint32_t id : members) {
            const Node& n = g.node(NodeId{id});
            for (size_t i = 0; i < n.inputs.size(); ++i) {
                const ValueId in = n.inputs[i];
                if (!in.valid() || !rank4(g, in) || rw.constant(in)) continue;
                const NodeId p = rw.producer(in);
                if (p.valid() && members.count(p.index)) continue;
                // An exporter's own Transpose in front composes with ours (or cancels it).
                const bool transposed = p.valid() && isOp(g.node(p), "Transpose");
                if (roles.at(id) == Role::Conv && i == 0 && !transposed) absorbed.insert(in.index);
                else if (carriesActivation(roles.at(id), i)) refused.insert(in.index);
            }
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
        const std::set<uint32_t> nchwEntries = readAsNchw(rw, members, roles);
        std::map<uint32_t, ValueId> nhwc;  // a value of the region (or entering it) -> its NHWC twin
        auto typeOf = [&](ValueId v) {
            ValueType t = rw.graph().value(v).type;
            t.shape = permuted(t.shape, kToNhwc);
            return t;
        };
        for (NodeId id : region.nodes) {
            const Node old = rw.graph().node(id);
            Node made = old;
            made.origins.clear();
            for (size_t i = 0; i < made.inputs.size(); ++i) {
                const ValueId in = made.inputs[i];
                if (!in.valid()) continue;
                if (nchwEntries.count(in.index) && i == 0 && roles.at(id.index) == Role::Conv) {
                    made.attributes.push_back(fsc::stringAttr("input_layout", "NCHW"));
                } else if (auto it = nhwc.find(in.index); it != nhwc.end()) {
                    made.inputs[i] = it->second;
                } else if (const Tensor* c = rw.constant(in); c && carriesActivation(roles.at(id.index), i)) {
                    if (c->numElements() != 1) made.inputs[i] = rw.addConstant(toNhwc(*c), rw.graph().value(in).name + "_nhwc");
                } else if (rank4(rw.graph(), in) && carriesActivation(roles.at(id.index), i)) {
                    const ValueId entered = rw.addIntermediate(typeOf(in), rw.graph().value(in).name + "_nhwc");
                    rw.addNode(transposeNode(old, rw.graph().value(in).name + "/to_nhwc", in, entered, kToNhwc), id, {id});
                    ++transposes;
                    nhwc[in.index] = made.inputs[i] = entered;
                }
            }
            const ValueId out = old.outputs[0];
            const ValueId outNhwc = rw.addIntermediate(typeOf(out), rw.graph().value(out).name + "_nhwc");
            made.outputs = {outNhwc};
            const Role role = roles.at(id.index);
            if (role == Role::Conv) {
                if (made.domain.empty()) {
                    made.domain = kFusescopeDomain;
                    made.opType = "FusedConv";
                }
                made.attributes.push_back(fsc::intAttr("channels_last", 1));
            } else if (role == Role::ChannelConcat) {
                made.attributes = {fsc::intAttr("axis", 3)};
            } else if (role == Role::MaxPool) {
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
            if (role == Role::BatchNorm) {  // Mul then Add, by the folded per-channel constants
                const ChannelAffine affine = *batchNormAffine(rw, old);  // roleOf() checked the statistics
                const int64_t channels = int64_t(affine.scale.size());
                const Tensor scale = floatTensor(old.name + "_scale", {channels}, {affine.scale.begin(), affine.scale.end()});
                const Tensor shift = floatTensor(old.name + "_shift", {channels}, {affine.shift.begin(), affine.shift.end()});
                const std::string base = rw.graph().value(out).name;
                const ValueId scaled = rw.addIntermediate(typeOf(out), base + "_scaled");
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
            } else {
                rw.addNode(std::move(made), id, {id});
            }
            nhwc[out.index] = outNhwc;
            if (leavesRegion(rw, out, members) && flattenOnly(rw, out, outNhwc, members)) {
                for (NodeId u : std::vector<NodeId>(rw.users(out)))
                    if (!members.count(u.index))
                        for (size_t i = 0; i < rw.graph().node(u).inputs.size(); ++i)
                            if (rw.graph().node(u).inputs[i] == out) rw.setInput(u, i, outNhwc);
            } else if (leavesRegion(rw, out, members)) {
                const ValueId back = rw.addIntermediate(rw.graph().value(out).type, rw.graph().value(out).name + "_nchw");
                rw.addNode(transposeNode(old, rw.graph().value(out).name + "/to_nchw", outNhwc, back, kToNchw), id, {id});
                ++transposes;
                rw.replaceAllUses(out, back);
                nhwc[back.index] = outNhwc;  // region nodes still to come now read `back`
            }
        }
        for (auto it = region.nodes.rbegin(); it != region.nodes.rend(); ++it) rw.removeNode(*it);
        return transposes;
    }
};

}  // namespace

std::unique_ptr<Pass> channelsLast() { return std::make_unique<ChannelsLastPass>(); }

}  // namespace fsc::passes
