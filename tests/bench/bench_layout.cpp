// Layout time of whole flat graphs with the layered layout, against importing the same
// file in the same process: the explorer's "everything expanded" case (issue 5 asks for
// under 5 s on swin_t and BERT-base; Graphviz dot ran 9 minutes on flat swin_t). The
// grouped layouts use dot for small groups; "layered ms" is the same without it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "core/onnx_import.h"
#include "views/scope_tree.h"
#include "views/group_layout.h"
#include "views/layered_layout.h"

using namespace fsc;

namespace {

template <typename F>
double timeMs(F&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// One box per node, one edge per (producer, reader) pair, in the graph's order.
LayoutInput flatInput(const Graph& g) {
    LayoutInput in;
    std::vector<int> index(g.nodeArenaSize(), -1);
    for (NodeId id : g.order()) {
        index[id.index] = int(in.nodes.size());
        in.nodes.push_back({std::max(80.0, 8.0 * double(g.node(id).opType.size()) + 24), 36});
    }
    for (NodeId id : g.order())
        for (ValueId v : g.node(id).inputs) {
            if (!v.valid()) continue;
            const Value& value = g.value(v);
            if (value.kind == Value::Kind::NodeOutput && value.producer.valid() && index[value.producer.index] >= 0)
                in.edges.push_back({index[value.producer.index], index[id.index]});
        }
    return in;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_layout MODEL.onnx...\n");
        return 64;
    }
    std::printf("%-26s %7s %7s %7s %7s %9s %10s %10s %8s %12s %12s %12s %12s %8s\n", "model", "nodes", "edges", "layers",
                "dummies", "crossings", "flat ms", "import ms", "ratio", "depth-1 ms", "grouped ms", "reuse ms",
                "layered ms", "dot/lay");
    for (int i = 1; i < argc; ++i) {
        const std::string path = argv[i];
        Result<Model> model = Status(ErrorCode::Internal, "not imported");
        const double importMs = timeMs([&] { model = importModel(path); });
        if (!model) {
            std::fprintf(stderr, "error: %s\n", model.status().message().c_str());
            return 2;
        }
        const LayoutInput in = flatInput(*model->graph);
        LayoutResult r;
        const double ms = timeMs([&] { r = layeredLayout(in); });
        // The explorer's cases: the first frame (groups below the top level collapsed),
        // everything expanded by groups, and the same again from a warm cache (another
        // snapshot with nothing changed).
        const ScopeTree tree = ScopeTree::build(*model->graph);
        const double firstMs = timeMs([&] { layoutCanvas(*model->graph, tree, expandedToDepth(tree, 1)); });
        GroupLayoutCache cache;
        const auto all = expandedToDepth(tree, 1 << 20);
        const double groupedMs = timeMs([&] { layoutCanvas(*model->graph, tree, all, &cache); });
        const double reuseMs = timeMs([&] { layoutCanvas(*model->graph, tree, all, &cache); });
        // The same without Graphviz: what dot costs on the groups small enough for it.
        const double layeredMs = timeMs([&] {
            layoutCanvas(*model->graph, tree, all, nullptr, nullptr, {GroupEngine::LayeredOnly, false});
        });
        std::printf("%-26s %7zu %7zu %7d %7d %9d %10.1f %10.1f %7.2fx %12.1f %12.1f %12.1f %12.1f %7.2fx\n",
                    path.substr(path.find_last_of('/') + 1).c_str(), in.nodes.size(), in.edges.size(), r.layers,
                    r.dummies, r.crossings, ms, importMs, ms / importMs, firstMs, groupedMs, reuseMs, layeredMs,
                    groupedMs / layeredMs);
    }
    return 0;
}
