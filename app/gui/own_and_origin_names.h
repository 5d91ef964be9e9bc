#pragma once
// The names an overlay looks a node up by: its own and those of the imported nodes it was
// made from (provenance), so a figure keyed by ONNX node or by compiled group reaches every
// step of the compile.
#include <string>
#include <vector>

#include "core/graph.h"

namespace fsc {

inline std::vector<std::string> ownAndOriginNames(const Graph& shown, NodeId id) {
    const Node& n = shown.node(id);
    std::vector<std::string> names{n.name};
    for (NodeId origin : n.origins)
        if (origin.index < shown.nodeArenaSize()) names.push_back(shown.node(origin).name);
    return names;
}

}  // namespace fsc
