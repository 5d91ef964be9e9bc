#pragma once
// Symbolic evaluation of the small integer tensors that exporters use to compute shapes
// (Shape -> Gather -> Div -> Cast -> Unsqueeze -> Concat -> Reshape). Each element is a
// known number, a symbolic dim ("batch") or unknown. ONNX 1.12's data propagation stops at
// Div and Cast; this keeps going so Reshape, Expand and ConstantOfShape get their shapes.
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/graph.h"

namespace fsc {

using ShapeValue = std::vector<Dim>;

class ShapeValueTable {
public:
    explicit ShapeValueTable(const Graph& graph) : m_graph(graph) {}

    // Evaluates the node's first output from its inputs' values (call in topological order).
    void evaluate(const Node& node);
    // The value of an initializer, a Constant's output or an evaluated node output.
    const ShapeValue* find(ValueId id);

private:
    const Graph& m_graph;
    std::unordered_map<uint32_t, ShapeValue> m_values;
    // Row counts of the few shape values that are 2-D (torch's pads are reshaped to
    // [rank, 2], reversed and transposed); the elements are stored row-major.
    std::unordered_map<uint32_t, int64_t> m_rows;
};

// Products of a symbol and a number are named "symbol*factor" (batch*64). Splits such a
// name into its symbol and factor; plain symbols give nothing.
std::optional<std::pair<std::string, int64_t>> splitProductSymbol(const std::string& name);

// Which elements Slice takes from a dimension of `size`: `count` of them from `first`
// by `step`, after ONNX's clamping of start and end for either direction.
struct SliceRange {
    int64_t first = 0;
    int64_t count = 0;
    int64_t step = 1;
};
SliceRange sliceRange(int64_t size, int64_t start, int64_t end, int64_t step);

// a op b for Add, Sub, Mul, Div and Mod on dims: numbers exactly, symbols where an identity
// keeps one (batch * 1) or a product names one (batch*64); otherwise unknown.
Dim dimArithmetic(const std::string& op, const Dim& a, const Dim& b);

// Elements of Range(start, limit, delta): max(ceil((limit - start) / delta), 0).
int64_t rangeLength(int64_t start, int64_t limit, int64_t delta);

// The numbers of a shape value whose elements are all known.
std::optional<std::vector<int64_t>> knownInts(const ShapeValue* value);

// The output shape of Slice(data, starts, ends[, axes, steps]) when its bounds are known.
std::optional<Shape> sliceResult(const Node& slice, const Graph& graph, ShapeValueTable& values);

// The output shape of Reshape(data, target) when it can be decided; symbols must match
// one-to-one for a -1 to be resolved.
std::optional<Shape> reshapeResult(const Shape& data, const ShapeValue& target, bool allowZero);

}  // namespace fsc
