#include "compiler/runtime/input_sizing.h"

#include <algorithm>
#include <set>

#include "compiler/runtime/smallest_sizes.h"

namespace fsc {
namespace {

constexpr int64_t kImageSide = 224;     // torchvision's and most exporters' training size
constexpr int64_t kVideoSide = 112;     // video models (R(2+1)D, S3D) at their usual size
constexpr int64_t kVideoFrames = 16;
constexpr int64_t kSignalLength = 1024;  // a 1-D Conv stack over audio or sensor samples

bool knownSmall(const Dim& d) { return d.isKnown() && d.size() >= 1 && d.size() <= 4; }

bool readByConvOrPool(const Graph& graph, ValueId input, size_t rank) {
    for (NodeId id : graph.order()) {
        const Node& n = graph.node(id);
        const bool spatial = n.opType == "Conv" || n.opType.find("Pool") != std::string::npos ||
                             n.opType == "ConvInteger" || n.opType == "QLinearConv" || n.opType == "ConvTranspose";
        if (!spatial) continue;
        if (rank == 0) return true;  // any Conv or pool in the model
        if (std::find(n.inputs.begin(), n.inputs.end(), input) != n.inputs.end()) return true;
    }
    return false;
}

// The size a typical input has at `axis`, for an input that leaves it open.
int64_t typicalShape(const Graph& graph, ValueId input, size_t axis) {
    const ValueType& type = graph.value(input).type;
    const auto& d = type.shape.dims();
    const size_t rank = d.size();
    if (!isFloatingPoint(type.elemType == DType::Undefined ? DType::Float32 : type.elemType) || axis == 0) return 1;
    if (rank == 4) {
        // NCHW unless only the last dim looks like channels (tf2onnx's NHWC).
        const bool nhwc = knownSmall(d[3]) && !knownSmall(d[1]);
        if (nhwc ? axis == 1 || axis == 2 : axis >= 2) return kImageSide;
    }
    if (rank == 5 && axis >= 2) return axis == 2 ? kVideoFrames : kVideoSide;
    if (rank == 3 && axis == 2 && readByConvOrPool(graph, input, 0)) return kSignalLength;
    return 1;
}

// The typical size, or more where the windows reading the axis need more (an audio model's
// Conv front end over [batch, samples]).
int64_t typicalSize(const Graph& graph, ValueId input, size_t axis) {
    const int64_t typical = typicalShape(graph, input, axis);
    if (axis == 0) return typical;  // the batch: any size runs
    return std::max(typical, smallestValidSize(graph, input, axis));
}

}  // namespace

std::string InputSizing::hint() const {
    if (chosen.empty()) return "";
    std::string s = "; generated inputs gave ";
    for (size_t i = 0; i < chosen.size(); ++i) s += (i ? ", " : "") + chosen[i];
    s += ": set sizes with --dim NAME=VALUE";
    for (const std::string& c : chosen)
        if (c.front() == '\'') return s + ", or give that input with --input NAME=FILE";  // an unnamed dim has no NAME
    return s;
}

Status withSizingHint(const Status& status, const InputSizing& sizing) {
    if (status.isOk() || status.code() == ErrorCode::Unsupported) return status;
    return {status.code(), status.message() + sizing.hint()};
}

InputSizing sizeInputs(const Graph& graph, const std::vector<ValueId>& inputs,
                       const std::map<std::string, int64_t>& given) {
    InputSizing sizing;
    std::map<std::string, int64_t> bySymbol = given;  // one size per symbol across inputs
    for (ValueId id : inputs) {
        const Value& v = graph.value(id);
        std::vector<int64_t> dims;
        const auto& shape = v.type.shape.dims();
        for (size_t axis = 0; axis < shape.size(); ++axis) {
            const Dim& d = shape[axis];
            if (d.isKnown()) {
                dims.push_back(d.size());
                continue;
            }
            if (d.isSymbolic()) {
                auto [it, fresh] = bySymbol.emplace(d.symbol(), 0);
                if (fresh) {
                    it->second = typicalSize(graph, id, axis);
                    sizing.chosen.push_back(d.symbol() + "=" + std::to_string(it->second));
                }
                dims.push_back(it->second);
                continue;
            }
            const int64_t size = typicalSize(graph, id, axis);
            sizing.chosen.push_back("'" + v.name + "' dim " + std::to_string(axis) + "=" + std::to_string(size));
            dims.push_back(size);
        }
        sizing.dims.push_back(std::move(dims));
    }
    return sizing;
}

int64_t generatedIntegerBound(const Graph& graph, ValueId input) {
    int64_t bound = 10;
    auto rows = [&](const Node& n, size_t table, int64_t axis) {
        if (table >= n.inputs.size() || !n.inputs[table].valid()) return;
        const Tensor* t = graph.value(n.inputs[table]).initializer.get();
        if (!t || t->dims().empty()) return;
        const int64_t rank = int64_t(t->dims().size());
        if (axis < 0) axis += rank;
        if (axis >= 0 && axis < rank && t->dims()[size_t(axis)] > 0) bound = std::min(bound, t->dims()[size_t(axis)]);
    };
    static const std::set<std::string> passing = {"Cast", "Reshape", "Unsqueeze", "Squeeze", "Flatten", "Identity"};
    std::vector<ValueId> values = {input};
    for (size_t i = 0; i < values.size() && i < 16; ++i)
        for (NodeId id : graph.order()) {
            const Node& n = graph.node(id);
            for (size_t k = 0; k < n.inputs.size(); ++k) {
                if (n.inputs[k] != values[i]) continue;
                const bool ms = n.domain == "com.microsoft";
                if (n.domain.empty() && passing.count(n.opType) && k == 0 && !n.outputs.empty()) values.push_back(n.outputs[0]);
                if (n.domain.empty() && n.opType == "Gather" && k == 1) {
                    const Attribute* axis = n.attribute("axis");
                    rows(n, 0, axis ? axis->i : 0);
                }
                if (ms && (n.opType == "EmbedLayerNormalization" || n.opType == "QEmbedLayerNormalization")) {
                    if (k == 0) rows(n, 2, 0);  // word embedding
                    if (k == 1) rows(n, 4, 0);  // segment embedding
                    if (k == 8 && n.opType == "EmbedLayerNormalization") rows(n, 3, 0);  // position embedding
                }
            }
        }
    return std::max<int64_t>(bound, 1);
}

}  // namespace fsc
