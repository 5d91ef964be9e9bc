#pragma once
// What `fusescope-cli inspect` and the GUI's summary show about a model.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/graph.h"

namespace fsc {

struct ModelSummary {
    struct Port {
        std::string name;
        ValueType type;
    };

    int64_t irVersion = 0;
    std::vector<std::pair<std::string, int64_t>> opsets;
    std::string producerName;
    std::string producerVersion;
    std::vector<Port> inputs;   // graph inputs that are not initializers
    std::vector<Port> outputs;
    size_t nodeCount = 0;       // top-level graph
    size_t totalNodeCount = 0;  // including every subgraph (not function bodies)
    std::map<std::string, size_t> opHistogram;  // "Conv", "com.microsoft::Gelu"; all graphs
    int64_t parameterCount = 0;  // elements of initializers and Constant node values
    int64_t parameterBytes = 0;
    size_t initializerCount = 0;
    size_t constantNodeCount = 0;
    size_t subgraphCount = 0;
    int maxSubgraphDepth = 0;  // 0: no subgraphs
    size_t functionCount = 0;
    std::vector<std::string> unknownShapeValues;  // values whose shape stays unknown
    int64_t unknownRankValues = 0;                // of those: not even the rank is known
    int64_t unnamedDimValues = 0;                 // of those: a known rank, a dim with no size or name
    std::vector<std::string> warnings;
};

ModelSummary summarizeModel(const Model& model);

}  // namespace fsc
