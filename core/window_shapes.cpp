#include "core/window_shapes.h"

#include <string>
#include <vector>

namespace fsc {
namespace {

std::vector<int64_t> intsOr(const Node& node, const char* name, size_t count, int64_t fallback) {
    const Attribute* a = node.attribute(name);
    if (a && a->ints.size() == count) return a->ints;
    return std::vector<int64_t>(count, fallback);
}

int64_t ceilDiv(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

}  // namespace

std::optional<Shape> slidingWindowShape(const Node& node, const Shape& input, const Shape* weight) {
    const bool conv = node.opType == "Conv";
    if (!input.rankKnown() || input.rank() < 3) return std::nullopt;
    const size_t spatial = input.rank() - 2;
    std::vector<int64_t> kernel;
    if (const Attribute* k = node.attribute("kernel_shape"); k && k->ints.size() == spatial) {
        kernel = k->ints;
    } else if (conv && weight && weight->rankKnown() && weight->rank() == input.rank()) {
        for (size_t i = 0; i < spatial; ++i) {
            if (!(*weight)[2 + i].isKnown()) return std::nullopt;
            kernel.push_back((*weight)[2 + i].size());
        }
    } else {
        return std::nullopt;
    }
    const auto strides = intsOr(node, "strides", spatial, 1);
    const auto dilations = intsOr(node, "dilations", spatial, 1);
    const auto pads = intsOr(node, "pads", 2 * spatial, 0);
    const Attribute* autoPad = node.attribute("auto_pad");
    const std::string padMode = autoPad ? autoPad->s : "NOTSET";
    const Attribute* ceilMode = node.attribute("ceil_mode");
    const bool ceil = !conv && ceilMode && ceilMode->i;

    std::vector<Dim> dims{input[0]};
    if (conv) {
        if (!weight || !weight->rankKnown() || weight->rank() != input.rank()) return std::nullopt;
        dims.push_back((*weight)[0]);
    } else {
        dims.push_back(input[1]);
    }
    for (size_t i = 0; i < spatial; ++i) {
        const Dim& in = input[2 + i];
        if (strides[i] <= 0 || dilations[i] <= 0 || kernel[i] <= 0) return std::nullopt;
        if (!in.isKnown() || ceil) {
            dims.push_back(Dim());
            continue;
        }
        const int64_t reach = dilations[i] * (kernel[i] - 1) + 1;  // input span of one window
        int64_t out = 0;
        if (padMode == "SAME_UPPER" || padMode == "SAME_LOWER") out = ceilDiv(in.size(), strides[i]);
        else if (padMode == "VALID") out = ceilDiv(in.size() - reach + 1, strides[i]);
        else if (padMode == "NOTSET") out = (in.size() + pads[i] + pads[spatial + i] - reach) / strides[i] + 1;
        else return std::nullopt;
        if (out <= 0) return std::nullopt;  // a malformed node: left to ONNX's rule to refuse
        dims.push_back(Dim::known(out));
    }
    return Shape(std::move(dims));
}

}  // namespace fsc
