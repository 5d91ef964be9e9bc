#pragma once
// A fast layered ("Sugiyama") layout of our own for graphs where Graphviz `dot` is too slow
// (it ran for minutes on a flat swin_t): longest-path layers, dummy nodes on long edges,
// barycentre sweeps against crossings, then x positions pulled toward neighbours without
// overlaps. Linear in nodes + edges per sweep; pure geometry, no Qt, tested without a window.
#include <atomic>
#include <cstdint>
#include <vector>

namespace fsc {

struct LayoutInput {
    struct Box {
        double width = 120, height = 36;
    };
    std::vector<Box> nodes;
    // Edges as (from, to) node indices. Nodes are expected in a topological order; an edge
    // that points backwards in it (a cycle through a collapsed group) is drawn upwards.
    std::vector<std::pair<int, int>> edges;
};

struct LayoutOptions {
    double layerGap = 48;   // vertical space between layers
    double nodeGap = 24;    // horizontal space between neighbours in a layer
    int orderingSweeps = 4; // barycentre passes down and up
    int positionSweeps = 4;
};

struct LayoutResult {
    struct Point {
        double x = 0, y = 0;
    };
    std::vector<Point> centers;  // per node
    std::vector<int> layerOf;    // per node
    // Per input edge: its points from the source's bottom to the target's top, bending at
    // the dummy nodes of long edges.
    std::vector<std::vector<Point>> edgePaths;
    double width = 0, height = 0;
    int layers = 0;
    int dummies = 0;
    int crossings = 0;  // between adjacent layers after ordering
    bool cancelled = false;
};

// `cancel` is polled between phases and sweeps; a cancelled result has `cancelled` set.
LayoutResult layeredLayout(const LayoutInput& input, const LayoutOptions& options = {},
                           const std::atomic<bool>* cancel = nullptr);

}  // namespace fsc
