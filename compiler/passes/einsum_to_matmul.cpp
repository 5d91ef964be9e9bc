// einsum-to-matmul: a two-operand Einsum that is a (batched) matrix product, as exporters
// write attention and linear layers with torch.einsum ("bhid,bhjd->bhij", "bnd,dk->bnk"),
// becomes MatMul with Transposes where the labels are out of MatMul's order. The product then
// runs on the GEMM library and the fusions (attention among them) see it; the Einsum kernel
// walks every label combination one multiply at a time. Labels split into batch (both
// operands and the output), rows (the first operand and the output; all but one become
// leading batch dims of that operand alone), columns (the second operand and the output, one)
// and one summed label (both operands, not the output). Anything else (a summed label in one
// operand only, a diagonal, several summed labels) stays an Einsum.
#include <algorithm>

#include "compiler/pass_manager.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"
#include "core/einsum_equation.h"
#include "core/graph_builder.h"

namespace fsc::passes {
namespace {

// MatMul(Transpose(a, aPerm), Transpose(b, bPerm)) then Transpose(outPerm); an empty perm
// is no Transpose. `swapped`: the Einsum's second operand is MatMul's first.
struct EinsumProduct {
    NodeId einsum;
    bool swapped = false;
    std::vector<int64_t> aPerm, bPerm, outPerm;
};

bool distinctLabels(const std::string& term) {
    std::string sorted = term;
    std::sort(sorted.begin(), sorted.end());
    return std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
}

// The permutation taking `from`'s labels to `to`'s order; empty when it is the identity.
std::vector<int64_t> permutation(const std::string& from, const std::string& to) {
    std::vector<int64_t> perm;
    bool identity = true;
    for (size_t i = 0; i < to.size(); ++i) {
        perm.push_back(int64_t(from.find(to[i])));
        identity = identity && perm.back() == int64_t(i);
    }
    return identity ? std::vector<int64_t>{} : perm;
}

// The product with `a` as MatMul's first operand, or nothing when the labels do not fit.
std::optional<EinsumProduct> asProduct(const std::string& a, const std::string& b, const std::string& out) {
    std::string batch, rows, columns, summed;
    for (char c : a) {
        const bool inB = b.find(c) != std::string::npos, inOut = out.find(c) != std::string::npos;
        if (inB && inOut) batch += c;
        else if (inOut) rows += c;
        else if (inB) summed += c;
        else return std::nullopt;  // summed within one operand
    }
    for (char c : b)
        if (a.find(c) == std::string::npos) {
            if (out.find(c) == std::string::npos) return std::nullopt;
            columns += c;
        }
    if (summed.size() != 1 || columns.size() != 1 || rows.empty()) return std::nullopt;
    // Batch labels and the extra row labels in the output's order, the last row label as M.
    auto byOutput = [&](std::string labels) {
        std::sort(labels.begin(), labels.end(), [&](char x, char y) { return out.find(x) < out.find(y); });
        return labels;
    };
    batch = byOutput(batch);
    rows = byOutput(rows);
    const char m = rows.back();
    const std::string leading = rows.substr(0, rows.size() - 1);
    const std::string aOrder = leading + batch + m + summed, bOrder = batch + summed + columns;
    const std::string product = leading + batch + m + columns;
    return EinsumProduct{{}, false, permutation(a, aOrder), permutation(b, bOrder), permutation(product, out)};
}

class EinsumProductPattern : public TypedPattern<EinsumProduct> {
public:
    std::string name() const override { return "einsum-to-matmul"; }
    std::set<std::string> rootOps() const override { return {"Einsum"}; }

    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& n = g.node(anchor);
        if (n.inputs.size() != 2 || n.outputs.size() != 1 || !n.inputs[0].valid() || !n.inputs[1].valid() ||
            !n.outputs[0].valid())
            return MatchResult::none();
        const DType type = dtypeOf(g, n.inputs[0]);
        if (type != DType::Float32 && type != DType::Float16 && type != DType::BFloat16 && type != DType::Float64)
            return MatchResult::rejected("MatMul runs floating-point types only");
        const Shape &sa = g.value(n.inputs[0]).type.shape, &sb = g.value(n.inputs[1]).type.shape;
        if (!sa.rankKnown() || !sb.rankKnown()) return MatchResult::rejected("an operand's rank is not known");
        const auto equation = parseEinsumEquation(stringAttr(n, "equation"));
        const auto labels = equation ? labelEinsum(*equation, {sa.rank(), sb.rank()}) : std::nullopt;
        if (!labels) return MatchResult::rejected("the equation does not fit the operands");
        const std::string &a = labels->inputs[0], &b = labels->inputs[1], &out = labels->output;
        if (!distinctLabels(a) || !distinctLabels(b) || !distinctLabels(out))
            return MatchResult::rejected("a label repeats within a term (a diagonal)");
        // A label of size 1 in one operand broadcasts against the other in Einsum; MatMul
        // broadcasts only batch dims, so sizes must agree wherever a label is shared.
        for (size_t i = 0; i < a.size(); ++i) {
            const size_t j = b.find(a[i]);
            if (j != std::string::npos && !(sa[i] == sb[j]))
                return MatchResult::rejected("a shared label's sizes are not known to agree");
        }
        auto product = asProduct(a, b, out);
        if (!product) {
            product = asProduct(b, a, out);
            if (product) product->swapped = true;
        }
        if (!product)
            return MatchResult::rejected("not one matrix product: needs one summed label and one "
                                         "label of each operand's own");
        product->einsum = anchor;
        return MatchResult::matched(std::move(*product));
    }

    std::string rewrite(Rewriter& rw, const EinsumProduct& m) const override {
        const Node einsum = rw.graph().node(m.einsum);
        auto transposed = [&](ValueId x, const std::vector<int64_t>& perm, const std::string& suffix) {
            if (perm.empty()) return x;
            const Shape& s = rw.graph().value(x).type.shape;
            std::vector<Dim> dims;
            for (int64_t p : perm) dims.push_back(s[size_t(p)]);
            const ValueId y = rw.addIntermediate(ValueType::tensor(dtypeOf(rw.graph(), x), Shape(std::move(dims))),
                                                 einsum.name + suffix);
            Node t = makeNode("Transpose", "", einsum, {x}, {y}, {fsc::intsAttr("perm", perm)});
            t.name = einsum.name + suffix;
            rw.addNode(std::move(t), m.einsum, {m.einsum});
            return y;
        };
        const ValueId first = einsum.inputs[m.swapped ? 1 : 0], second = einsum.inputs[m.swapped ? 0 : 1];
        const ValueId a = transposed(first, m.aPerm, "/a");
        const ValueId b = transposed(second, m.bPerm, "/b");
        const ValueId out = einsum.outputs[0];
        ValueId product = out;
        if (!m.outPerm.empty()) {
            const Shape& s = rw.graph().value(out).type.shape;
            std::vector<Dim> dims(s.rank());
            for (size_t i = 0; i < m.outPerm.size(); ++i) dims[size_t(m.outPerm[i])] = s[i];
            product = rw.addIntermediate(ValueType::tensor(dtypeOf(rw.graph(), out), Shape(std::move(dims))),
                                         einsum.name + "/product");
        }
        rw.removeNode(m.einsum);
        Node matmul = makeNode("MatMul", "", einsum, {a, b}, {product});
        matmul.name = einsum.name;
        rw.addNode(std::move(matmul), m.einsum, {m.einsum});
        if (product != out) {
            Node t = makeNode("Transpose", "", einsum, {product}, {out}, {fsc::intsAttr("perm", m.outPerm)});
            t.name = einsum.name + "/out";
            rw.addNode(std::move(t), m.einsum, {m.einsum});
        }
        return "a matrix product written as Einsum runs as MatMul";
    }
};

}  // namespace

std::unique_ptr<Pass> einsumToMatmul() {
    return std::make_unique<PatternPass>("einsum-to-matmul",
                                         "a two-operand Einsum that is a matrix product becomes MatMul",
                                         onePattern(std::make_unique<EinsumProductPattern>()));
}

}  // namespace fsc::passes
