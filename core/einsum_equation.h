#pragma once
// Einsum's equation, read once for shape inference, the compiler's rewrite into MatMul and the
// CPU kernel, so all three agree on what an equation means.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/shape.h"

namespace fsc {

// The equation's terms with spaces dropped ("..." kept), and whether the output was written
// after "->" or is implied.
struct EinsumEquation {
    std::vector<std::string> inputs;
    std::string output;
    bool explicitOutput = false;
};

// Nothing when the text is not an equation: a label that is not a letter, "..." twice in a
// term, or a broken arrow.
std::optional<EinsumEquation> parseEinsumEquation(std::string_view text);

// One label per dim: each "..." becomes labels '0', '1', ... for the broadcast dims, aligned
// from the right across the terms (an equation's own labels are letters, so they never
// collide). An implied output is the broadcast dims, then the letters found in exactly one
// place, in ASCII order (NumPy's rule, which ONNX adopts).
struct EinsumLabels {
    std::vector<std::string> inputs;
    std::string output;
};

// Nothing when the terms do not fit the inputs' ranks or the output names a label no input has.
std::optional<EinsumLabels> labelEinsum(const EinsumEquation& equation, const std::vector<size_t>& ranks);

// The output's shape from the inputs' (ranks known): each label's size from the inputs
// that have it, 1s broadcasting; an unknown size where none says more. Nothing when two
// inputs give one label different sizes.
std::optional<Shape> einsumShape(const EinsumLabels& labels, const std::vector<const Shape*>& inputs);

}  // namespace fsc
