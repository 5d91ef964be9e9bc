// float16-to-float32: a model stored in float16 (exported for GPUs: half-precision Hugging Face
// and diffusion exports, onnxconverter-common's conversion) or bfloat16 computes in float32 on the CPU,
// which has no float16 arithmetic: every float16 kernel converted each element in and out, and
// no fusion or GEMM took them (mobilenet_v2 in float16: 75 ms against 7 in float32; ONNX
// Runtime's CPU, which widens the same way, 15). Nodes computing in float16 switch to float32
// with their weights widened once; Casts back to float16 remain only where something still
// reads float16 (graph outputs, control flow, random ops), and Casts between the two types read
// the widened value directly, as ONNX Runtime drops such a pair. The opposite of fp16-conversion
// (convert_precision.cpp), whose shape this follows.
#include <map>

#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"
#include "compiler/runtime/half.h"
#include "core/graph_builder.h"

namespace fsc::passes {
namespace {

// float16, and bfloat16 (LLM exports), which x86 CPUs do not compute in either.
bool isNarrow(DType t) { return t == DType::Float16 || t == DType::BFloat16; }

bool isNarrowFloat(const Graph& g, ValueId v) {
    return v.valid() && g.value(v).type.kind == ValueType::Kind::Tensor && isNarrow(g.value(v).type.elemType);
}

Tensor widenTensor(const Tensor& t, const std::string& name) {
    const int64_t n = t.numElements();
    std::vector<float> values(size_t(std::max<int64_t>(n, 0)));
    const auto* in = t.dataAs<uint16_t>();
    const bool brain = t.dtype() == DType::BFloat16;
    for (int64_t i = 0; i < n; ++i) values[size_t(i)] = brain ? bfloat16ToFloat(in[i]) : halfToFloat(in[i]);
    Tensor wide = makeFloatTensor(t.dims(), std::move(values));
    wide.setName(name);
    return wide;
}

class WidenFloat16Pass : public Pass {
public:
    explicit WidenFloat16Pass(std::string declineAll) : m_declineAll(std::move(declineAll)) {}
    std::string name() const override { return "float16-to-float32"; }
    std::string description() const override {
        return "a float16 model computes in float32 on the CPU: weights widened once, Casts only where float16 "
               "is still read";
    }

    Status run(PassContext& context) override {
        Rewriter& rw = context.rewriter;
        const std::vector<NodeId> order = rw.graph().order();
        for (NodeId id : order) {
            const std::string why = blocker(rw, id);
            if (why == "no float16 work") continue;
            if (!why.empty()) {
                context.reject("widen", id, why);
                continue;
            }
            ++context.counters.matched;
            const bool cast = rw.graph().node(id).opType == "Cast";
            if (cast) readWidened(rw, id);
            else convert(rw, id);
            if (rw.commit("widen", cast ? "the Cast reads the float32 value its float16 input was narrowed from"
                                        : "computes in float32; float16 inputs from outside are Cast"))
                ++context.counters.applied;
        }
        // Casts back to float16 that only widened nodes would have read.
        for (NodeId cast : m_backCasts)
            if (rw.isLive(cast)) {
                removeIfUnread(rw, cast);
                if (!rw.isLive(cast)) rw.commit("unused-cast", "nothing reads this value in float16 any more");
            }
        rw.finish();
        return Status::ok();
    }

private:
    // Why a node keeps float16; "no float16 work" for nodes that have none.
    std::string blocker(const Rewriter& rw, NodeId id) const {
        const Graph& g = rw.graph();
        const Node& n = g.node(id);
        bool halfIn = false, halfOut = false;
        for (ValueId in : n.inputs) halfIn |= isNarrowFloat(g, in);
        for (ValueId out : n.outputs) halfOut |= isNarrowFloat(g, out);
        if (n.opType == "Cast" && n.domain.empty())  // float16 -> T: read the float32 twin, if there is one
            return halfIn && m_wide.count(n.inputs[0].index) ? std::string() : "no float16 work";
        if (!halfIn && !halfOut) return "no float16 work";
        if (!m_declineAll.empty()) return m_declineAll;
        if (n.opType == "CastLike") return "CastLike's type follows its second input";
        if (!halfIn && !(n.opType == "Constant" || n.opType == "ConstantOfShape"))
            return "its float16 output's type comes from an attribute";
        if (!n.subgraphs().empty()) return "control flow runs its body as it is";
        if (isRandomOp(n)) return "random ops are kept as they are";
        return {};
    }

    // The float32 version of float16 value `v`, read by `reader`: a widened producer's output,
    // a widened copy of a weight, or a Cast placed before the reader.
    ValueId widened(Rewriter& rw, ValueId v, NodeId reader) {
        if (auto it = m_wide.find(v.index); it != m_wide.end()) return it->second;
        ValueId out;
        if (const Tensor* weight = rw.constant(v); weight && isNarrow(weight->dtype())) {
            out = rw.addConstant(widenTensor(*weight, weight->name()), rw.graph().value(v).name + "_float32");
        } else {
            ValueType type = rw.graph().value(v).type;
            type.elemType = DType::Float32;
            out = rw.addIntermediate(type, rw.graph().value(v).name + "_float32");
            Node cast = makeNode("Cast", "", rw.graph().node(reader), {v}, {out}, {fsc::intAttr("to", int64_t(DType::Float32))});
            cast.name = rw.uniqueName(rw.graph().value(v).name + "/Cast_to_float32");
            rw.addNode(std::move(cast), reader, {reader});
        }
        m_wide[v.index] = out;
        return out;
    }

    // A Cast from float16 reads the float32 twin instead; to float32, it is no Cast at all.
    void readWidened(Rewriter& rw, NodeId id) {
        const Node& cast = rw.graph().node(id);
        const ValueId wide = m_wide.at(cast.inputs[0].index), out = cast.outputs[0];
        if (intAttr(cast, "to", 0) != int64_t(DType::Float32)) {
            rw.setInput(id, 0, wide);
            return;
        }
        rw.removeNode(id);
        rw.replaceAllUses(out, wide);
    }

    void convert(Rewriter& rw, NodeId id) {
        Node copy = rw.graph().node(id);
        for (size_t i = 0; i < copy.inputs.size(); ++i)
            if (isNarrowFloat(rw.graph(), copy.inputs[i])) copy.inputs[i] = widened(rw, copy.inputs[i], id);
        for (Attribute& a : copy.attributes)  // Constant's and ConstantOfShape's value
            if (a.type == Attribute::Type::Tensor && isNarrow(a.t.dtype())) a.t = widenTensor(a.t, a.t.name());
        std::vector<std::pair<ValueId, ValueId>> outputs;  // (float16, float32)
        for (ValueId& out : copy.outputs) {
            if (!isNarrowFloat(rw.graph(), out)) continue;
            ValueType type = rw.graph().value(out).type;
            type.elemType = DType::Float32;
            const ValueId wide = rw.addIntermediate(type, rw.graph().value(out).name + "_float32");
            outputs.push_back({out, wide});
            out = wide;
        }
        rw.addNode(copy, id, {id});
        // Everything that read the float16 output now reads a Cast back; widened readers
        // later take the float32 value directly, and the Cast goes when nobody is left.
        for (const auto& [half, wide] : outputs) {
            const ValueId back = rw.addIntermediate(rw.graph().value(half).type, rw.graph().value(half).name + "_narrow");
            const DType narrow = rw.graph().value(half).type.elemType;
            Node cast = makeNode("Cast", "", rw.graph().node(id), {wide}, {back}, {fsc::intAttr("to", int64_t(narrow))});
            cast.name = rw.uniqueName(rw.graph().value(half).name + "/Cast_to_" + std::string(dtypeName(narrow)));
            m_backCasts.push_back(rw.addNode(std::move(cast), id, {id}));
            rw.replaceAllUses(half, back);
            m_wide[back.index] = wide;
        }
        rw.removeNode(id);
    }

    std::string m_declineAll;
    std::map<uint32_t, ValueId> m_wide;  // float16 value index -> its float32 twin
    std::vector<NodeId> m_backCasts;
};

}  // namespace

std::unique_ptr<Pass> widenFloat16(std::string declineAll) {
    return std::make_unique<WidenFloat16Pass>(std::move(declineAll));
}

}  // namespace fsc::passes
