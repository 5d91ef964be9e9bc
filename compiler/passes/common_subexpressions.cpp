// eliminate-common-subexpressions: two nodes of the same op, attributes and inputs compute
// the same thing; the later one is removed and its readers read the earlier one's outputs.
// Identical constants are merged first, so nodes reading copies of one constant also match.
#include <cstring>
#include <sstream>
#include <unordered_map>

#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"

namespace fsc::passes {
namespace {

bool deterministic(const Node& n) {
    return !isRandomOp(n) && n.opType != "Dropout";
}

void writeAttribute(std::ostringstream& s, const Attribute& a) {
    s << a.name << ':' << static_cast<int>(a.type) << '=';
    switch (a.type) {
        case Attribute::Type::Float: s << a.f; break;
        case Attribute::Type::Int: s << a.i; break;
        case Attribute::Type::String: s << a.s.size() << '#' << a.s; break;
        case Attribute::Type::Tensor: s << a.t.fingerprint(); break;
        case Attribute::Type::Floats:
            for (float f : a.floats) s << f << ',';
            break;
        case Attribute::Type::Ints:
            for (int64_t i : a.ints) s << i << ',';
            break;
        case Attribute::Type::Strings:
            for (const auto& str : a.strings) s << str.size() << '#' << str;
            break;
        default: s << "?" << &a; break;  // never equal: such nodes are not merged
    }
    s << ';';
}

// The identity of what a node computes; empty when it must not be merged.
std::string nodeKey(const Node& n) {
    if (!deterministic(n) || !n.subgraphs().empty()) return {};
    std::ostringstream s;
    s.precision(17);
    s << n.domain << '|' << n.opType << '|';
    for (ValueId in : n.inputs) s << (in.valid() ? static_cast<int64_t>(in.index) : -1) << ',';
    s << '|' << n.outputs.size() << '|';
    for (const Attribute& a : n.attributes) writeAttribute(s, a);
    return s.str();
}

bool sameTensor(const Tensor& a, const Tensor& b) {
    return a.dtype() == b.dtype() && a.dims() == b.dims() && a.byteSize() == b.byteSize() &&
           a.strings() == b.strings() &&
           (a.byteSize() == 0 || std::memcmp(a.data(), b.data(), a.byteSize()) == 0);
}

constexpr size_t kMaxMergedBytes = 64 * 1024;

class CsePass : public Pass {
public:
    std::string name() const override { return "eliminate-common-subexpressions"; }
    std::string description() const override {
        return "merges nodes (and constants) that compute the same value";
    }

    Status run(PassContext& context) override {
        Rewriter& rw = context.rewriter;
        mergeConstants(context);
        std::unordered_map<std::string, NodeId> seen;
        for (NodeId id : std::vector<NodeId>(rw.graph().order())) {
            if (context.cancelled()) return {ErrorCode::Cancelled, "cancelled"};
            const Node& n = rw.graph().node(id);
            std::string key = nodeKey(n);
            if (key.empty()) continue;
            auto [it, fresh] = seen.emplace(std::move(key), id);
            if (fresh) continue;
            ++context.counters.matched;
            const NodeId keep = it->second;
            const std::string op = n.opType;
            const std::vector<ValueId> dupOutputs = n.outputs;
            const std::vector<ValueId> keptOutputs = rw.graph().node(keep).outputs;
            for (size_t i = 0; i < dupOutputs.size(); ++i)
                if (dupOutputs[i].valid() && keptOutputs[i].valid())
                    rw.replaceAllUses(dupOutputs[i], keptOutputs[i]);
            rw.removeNode(id);
            if (rw.commit("duplicate-node",
                          op + " computes what node '" + rw.graph().node(keep).name + "' does"))
                ++context.counters.applied;
        }
        rw.finish();
        return Status::ok();
    }

private:
    void mergeConstants(PassContext& context) {
        Rewriter& rw = context.rewriter;
        std::unordered_map<uint64_t, std::vector<ValueId>> byPrint;
        for (ValueId v : std::vector<ValueId>(rw.graph().initializers)) {
            const Tensor* t = rw.constant(v);
            // Large weights are seldom duplicated, and hashing them all would cost more than
            // the rest of the pipeline.
            if (!t || t->byteSize() > kMaxMergedBytes || rw.isGraphOutput(v) || rw.isCaptured(v))
                continue;
            auto& bucket = byPrint[t->fingerprint()];
            ValueId twin;
            for (ValueId other : bucket)
                if (sameTensor(*rw.constant(other), *t)) twin = other;
            if (!twin.valid()) {
                bucket.push_back(v);
                continue;
            }
            if (rw.users(v).empty()) continue;
            ++context.counters.matched;
            rw.replaceAllUses(v, twin);
            if (rw.commit("duplicate-constant", "constant '" + rw.graph().value(v).name +
                                                    "' equals '" + rw.graph().value(twin).name + "'"))
                ++context.counters.applied;
        }
    }
};

}  // namespace

std::unique_ptr<Pass> eliminateCommonSubexpressions() { return std::make_unique<CsePass>(); }

}  // namespace fsc::passes
