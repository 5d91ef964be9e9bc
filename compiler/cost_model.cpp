#include "compiler/cost_model.h"

#include "core/shape_values.h"

#include <cmath>
#include <optional>

namespace fsc {
namespace {

std::optional<std::vector<int64_t>> sizesOf(const Graph& g, ValueId id, const DimBindings& bindings) {
    if (!id.valid()) return std::nullopt;
    const ValueType& t = g.value(id).type;
    if (!t.shape.rankKnown()) return std::nullopt;
    std::vector<int64_t> out;
    for (const Dim& d : t.shape.dims()) {
        if (const auto bound = boundSize(d, bindings)) out.push_back(*bound);  // products too: batch*197
        else if (const auto product = splitProductSymbol(d.symbol())) out.push_back(product->second);
        else if (!d.symbol().empty()) out.push_back(1);  // unbound symbols count as 1, like the memory plan
        else return std::nullopt;
    }
    return out;
}

double count(const std::vector<int64_t>& sizes) {
    double n = 1;
    for (int64_t s : sizes) n *= double(s);
    return n;
}

int64_t intAttr(const Node& n, const char* name, int64_t fallback) {
    for (const Attribute& a : n.attributes)
        if (a.name == name) return a.i;
    return fallback;
}

std::string stringAttr(const Node& n, const char* name) {
    for (const Attribute& a : n.attributes)
        if (a.name == name) return a.s;
    return {};
}

size_t countAttr(const Node& n, const char* name) {
    for (const Attribute& a : n.attributes)
        if (a.name == name) return std::max(a.strings.size(), a.ints.size());
    return 0;
}

bool is(const Node& n, const char* op) {
    return n.opType == op;
}

// A convolution's W sizes ([M, C/group, kernel...]; QLinearConv's is its fourth input), if known.
std::optional<std::vector<int64_t>> convWeights(const Graph& g, const Node& n, const DimBindings& bindings) {
    const size_t i = is(n, "QLinearConv") ? 3 : 1;
    if (n.inputs.size() <= i || !n.inputs[i].valid()) return std::nullopt;
    auto w = sizesOf(g, n.inputs[i], bindings);
    if (!w || w->size() < 3) return std::nullopt;
    return w;
}

}  // namespace

NodeCost estimateNodeCost(const Graph& g, const Node& n, const DimBindings& bindings) {
    NodeCost cost;
    // Bytes: every tensor input and output once.
    for (const auto* list : {&n.inputs, &n.outputs})
        for (ValueId v : *list) {
            if (!v.valid()) continue;
            const auto sizes = sizesOf(g, v, bindings);
            const int bits = dtypeBits(g.value(v).type.elemType);
            if (!sizes) cost.shapesKnown = false;
            else cost.bytes += count(*sizes) * bits / 8.0;
        }
    const auto out = n.outputs.empty() ? std::nullopt : sizesOf(g, n.outputs[0], bindings);
    const auto in0 = n.inputs.empty() ? std::nullopt : sizesOf(g, n.inputs[0], bindings);
    const auto in1 = n.inputs.size() < 2 ? std::nullopt : sizesOf(g, n.inputs[1], bindings);
    if (!out) {
        cost.shapesKnown = false;
        return cost;
    }
    const double outputs = count(*out);
    const std::string& op = n.opType;

    const bool integerProduct = is(n, "MatMulInteger") || is(n, "MatMulIntegerToFloat") ||
                                is(n, "DynamicQuantizeMatMul") || is(n, "MatMulNBits");
    const bool packedAttention = n.domain == "com.microsoft" && (is(n, "Attention") || is(n, "QAttention"));
    if ((is(n, "MatMul") || is(n, "FusedMatMul") || integerProduct) && in0 && !in0->empty()) {
        cost.flops = 2 * outputs * double(in0->back());  // each output: a K-long dot product
    } else if (packedAttention && in0 && in0->size() == 3 && in1 && in1->size() == 2 && out->size() == 3) {
        // The packed projection (rows x hidden x Q, K and V widths), then Q.K^T (Q's width per
        // key) and P.V (V's width per key); Q and K share a width.
        const double rows = double((*in0)[0] * (*in0)[1]), keys = double((*in0)[1]);
        const double vWidth = double(out->back()), qWidth = (double((*in1)[1]) - vWidth) / 2;
        cost.flops = 2 * rows * double((*in0)[2]) * double((*in1)[1]) + 2 * rows * keys * (qWidth + vWidth);
    } else if ((is(n, "Gemm") || is(n, "FusedGemm")) && in0 && in0->size() == 2) {
        const int64_t k = intAttr(n, "transA", 0) ? (*in0)[0] : (*in0)[1];
        cost.flops = 2 * outputs * double(k);
    } else if ((is(n, "Conv") || is(n, "FusedConv") || is(n, "ConvTranspose") || is(n, "ConvInteger") ||
                is(n, "QLinearConv")) &&
               convWeights(g, n, bindings)) {
        // Per output element: Cin/group * kernel positions multiply-adds (W's dims past the
        // first, in either layout of X and Y).
        const auto w = convWeights(g, n, bindings);
        double perOutput = 1;
        for (size_t i = 1; i < w->size(); ++i) perOutput *= double((*w)[i]);
        if (is(n, "ConvTranspose") && in0 && in0->size() >= 2) perOutput = double((*in1)[0]) / double(intAttr(n, "group", 1));
        cost.flops = 2 * outputs * perOutput;
    } else if (is(n, "Attention") && in0 && in1 && !in1->empty()) {
        // Q.K^T then P.V: 2 * Lk flops per element of Q and per element of the output. Lk is
        // the last dim of K^T after its permutation.
        int64_t lk = in1->back();
        for (const Attribute& a : n.attributes)
            if (a.name == "k_perm" && !a.ints.empty() && size_t(a.ints.back()) < in1->size()) lk = (*in1)[size_t(a.ints.back())];
        cost.flops = 2 * count(*in0) * double(lk) + 2 * outputs * double(lk);
    } else if (is(n, "FusedElementwise")) {
        cost.flops = outputs * double(countAttr(n, "ops"));
    } else if (is(n, "Softmax") || is(n, "LogSoftmax")) {
        cost.flops = 5 * outputs;
    } else if (is(n, "LayerNormalization") || is(n, "SkipLayerNorm") || is(n, "RmsNorm") ||
               is(n, "BatchNormalization") || is(n, "InstanceNormalization") || is(n, "GroupNormalization")) {
        cost.flops = 8 * outputs;
    } else if (op == "MaxPool" || op == "AveragePool") {
        double window = 1;
        for (const Attribute& a : n.attributes)
            if (a.name == "kernel_shape")
                for (int64_t k : a.ints) window *= double(k);
        cost.flops = outputs * window;
    } else if (op.rfind("Reduce", 0) == 0 || op == "GlobalAveragePool" || op == "GlobalMaxPool") {
        cost.flops = in0 ? count(*in0) : outputs;
    } else if (op == "Gelu" || op == "Erf" || op == "Tanh" || op == "Sigmoid" || op == "Exp" || op == "Log") {
        cost.flops = 8 * outputs;  // a transcendental is several operations
    } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Relu" || op == "Pow" ||
               op == "Max" || op == "Min" || op == "Sqrt" || op == "Neg" || op == "Abs" || op == "Clip" ||
               op == "LeakyRelu" || op == "HardSigmoid" || op == "HardSwish") {
        cost.flops = outputs;
    }
    if (!stringAttr(n, "activation").empty()) cost.flops += outputs;  // fused epilogues
    return cost;
}

}  // namespace fsc
