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
};

// The numbers of a shape value whose elements are all known.
std::optional<std::vector<int64_t>> knownInts(const ShapeValue* value);

// The output shape of Slice(data, starts, ends[, axes, steps]) when its bounds are known.
std::optional<Shape> sliceResult(const Node& slice, const Graph& graph, ShapeValueTable& values);

// The output shape of Reshape(data, target) when it can be decided; symbols must match
// one-to-one for a -1 to be resolved.
std::optional<Shape> reshapeResult(const Shape& data, const ShapeValue& target, bool allowZero);

}  // namespace fsc
