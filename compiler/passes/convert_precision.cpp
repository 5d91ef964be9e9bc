// fp16-conversion / bf16-conversion: nodes computing in float32 switch to float16 (or
// bfloat16) storage, except the ops kept in float32 (norms, softmax, reductions by default,
// editable): their float32 weights are stored narrowed, and Casts appear only where a value
// crosses between a narrowed region and float32 (graph inputs and outputs stay float32).
// Each node's change records what it became; Casts nobody reads are dropped at the end.
#include <map>
#include <set>

#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"
#include "compiler/runtime/half.h"
#include "core/graph_builder.h"

namespace fsc::passes {
namespace {

bool isFloat32(const Graph& g, ValueId v) {
    return v.valid() && g.value(v).type.kind == ValueType::Kind::Tensor && g.value(v).type.elemType == DType::Float32;
}

class ConvertPrecisionPass : public Pass {
public:
    ConvertPrecisionPass(DType target, std::set<std::string> keep) : m_target(target), m_keep(std::move(keep)) {}
    std::string name() const override { return m_target == DType::Float16 ? "fp16-conversion" : "bf16-conversion"; }
    std::string description() const override {
        return std::string("stores float32 work in ") + (m_target == DType::Float16 ? "float16" : "bfloat16") +
               ", keeping norms, softmax and reductions in float32, with Casts only at region boundaries";
    }

    Status run(PassContext& context) override {
        Rewriter& rw = context.rewriter;
        const std::vector<NodeId> order = rw.graph().order();
        for (NodeId id : order) {
            const std::string why = blocker(rw, id);
            if (why == "no float32 work") continue;
            if (!why.empty()) {
                context.reject("narrow", id, why);
                continue;
            }
            ++context.counters.matched;
            convert(rw, id);
            if (rw.commit("narrow", "computes in " + target() + "; float32 inputs from outside the region are Cast"))
                ++context.counters.applied;
        }
        // Casts back to float32 that only converted nodes would have read.
        for (NodeId cast : m_backCasts)
            if (rw.isLive(cast)) {
                removeIfUnread(rw, cast);
                if (!rw.isLive(cast)) rw.commit("unused-cast", "nothing outside the narrowed region reads this value");
            }
        rw.finish();
        return Status::ok();
    }

private:
    // Why a node stays in float32; "no float32 work" for nodes that have none.
    std::string blocker(const Rewriter& rw, NodeId id) const {
        const Graph& g = rw.graph();
        const Node& n = g.node(id);
        bool floatIn = false;
        for (ValueId in : n.inputs) floatIn |= isFloat32(g, in);
        bool outputs = !n.outputs.empty();
        for (ValueId out : n.outputs) outputs &= !out.valid() || isFloat32(g, out);
        if (!floatIn || n.opType == "Cast" || n.opType == "CastLike") return "no float32 work";
        if (!outputs) return "an output is not float32 (indices, shapes or another type)";
        if (m_keep.count(n.opType)) return n.opType + " is kept in float32 (numerically sensitive)";
        if (!n.subgraphs().empty()) return "control flow runs its body as it is";
        if (isRandomOp(n)) return "random ops are kept as they are";
        return {};
    }

    // The narrowed version of float32 value `v`, read by `reader`: a converted producer's
    // output, a narrowed copy of a weight, or a Cast placed before the reader.
    ValueId narrowed(Rewriter& rw, ValueId v, NodeId reader) {
        if (auto it = m_narrow.find(v.index); it != m_narrow.end()) return it->second;
        ValueId out;
        if (const Tensor* weight = rw.constant(v); weight && weight->dtype() == DType::Float32) {
            out = rw.addConstant(narrowTensor(*weight), rw.graph().value(v).name + "_" + target());
        } else {
            ValueType type = rw.graph().value(v).type;
            type.elemType = m_target;
            out = rw.addIntermediate(type, rw.graph().value(v).name + "_" + target());
            Node cast = makeNode("Cast", "", rw.graph().node(reader), {v}, {out}, {fsc::intAttr("to", int64_t(m_target))});
            cast.name = rw.uniqueName(rw.graph().value(v).name + "/Cast_to_" + target());
            rw.addNode(std::move(cast), reader, {reader});
        }
        m_narrow[v.index] = out;
        return out;
    }

    Tensor narrowTensor(const Tensor& t) const {
        const int64_t n = t.numElements();
        std::string bytes(size_t(n) * 2, '\0');
        auto* out = reinterpret_cast<uint16_t*>(bytes.data());
        const float* in = t.dataAs<float>();
        for (int64_t i = 0; i < n; ++i) out[i] = m_target == DType::Float16 ? floatToHalf(in[i]) : floatToBfloat16(in[i]);
        const size_t size = bytes.size();
        return Tensor(t.name(), m_target, t.dims(), makeBuffer(std::move(bytes)), 0, size);
    }

    void convert(Rewriter& rw, NodeId id) {
        Node copy = rw.graph().node(id);
        for (size_t i = 0; i < copy.inputs.size(); ++i)
            if (isFloat32(rw.graph(), copy.inputs[i])) copy.inputs[i] = narrowed(rw, copy.inputs[i], id);
        std::vector<std::pair<ValueId, ValueId>> outputs;  // (float32, narrowed)
        for (ValueId& out : copy.outputs) {
            if (!out.valid()) continue;
            ValueType type = rw.graph().value(out).type;
            type.elemType = m_target;
            const ValueId narrow = rw.addIntermediate(type, rw.graph().value(out).name + "_" + target());
            outputs.push_back({out, narrow});
            out = narrow;
        }
        rw.addNode(copy, id, {id});
        // Everything that read the float32 output now reads a Cast back; converted readers
        // later take the narrowed value directly, and the Cast goes when nobody is left.
        for (const auto& [wide, narrow] : outputs) {
            const ValueId back = rw.addIntermediate(rw.graph().value(wide).type, rw.graph().value(wide).name + "_float32");
            Node cast = makeNode("Cast", "", rw.graph().node(id), {narrow}, {back}, {fsc::intAttr("to", int64_t(DType::Float32))});
            cast.name = rw.uniqueName(rw.graph().value(wide).name + "/Cast_to_float32");
            m_backCasts.push_back(rw.addNode(std::move(cast), id, {id}));
            rw.replaceAllUses(wide, back);
            m_narrow[back.index] = narrow;
        }
        rw.removeNode(id);
    }

    std::string target() const { return std::string(dtypeName(m_target)); }
    DType m_target;
    std::set<std::string> m_keep;
    std::map<uint32_t, ValueId> m_narrow;  // float32 value index -> its narrowed twin
    std::vector<NodeId> m_backCasts;
};

}  // namespace

const std::set<std::string>& defaultKeepInFloat32() {
    static const std::set<std::string> keep{
        "LayerNormalization", "SkipLayerNorm", "RmsNorm", "SimplifiedLayerNormalization", "BatchNormalization",
        "InstanceNormalization", "GroupNormalization", "LpNormalization", "Softmax", "LogSoftmax", "ReduceMean",
        "ReduceSum", "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
        "ReduceMin", "ReduceProd", "CumSum"};
    return keep;
}

std::unique_ptr<Pass> convertToFloat16(std::set<std::string> keepInFloat32) {
    return std::make_unique<ConvertPrecisionPass>(DType::Float16, std::move(keepInFloat32));
}
std::unique_ptr<Pass> convertToBFloat16(std::set<std::string> keepInFloat32) {
    return std::make_unique<ConvertPrecisionPass>(DType::BFloat16, std::move(keepInFloat32));
}
std::unique_ptr<Pass> convertToFloat16() {
    return convertToFloat16(defaultKeepInFloat32());
}
std::unique_ptr<Pass> convertToBFloat16() {
    return convertToBFloat16(defaultKeepInFloat32());
}

}  // namespace fsc::passes
