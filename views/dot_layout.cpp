#include "views/dot_layout.h"

#include <graphviz/gvc.h>

#include <mutex>
#include <string>

namespace fsc {
namespace {

constexpr double kPointsPerInch = 72.0;

std::mutex& graphvizMutex() {
    static std::mutex m;
    return m;
}

char* str(const char* s) {
    return const_cast<char*>(s);  // cgraph's API takes char* it does not modify
}

LayoutResult::Point cubicAt(const pointf* p, double t) {
    const double u = 1 - t;
    const double a = u * u * u, b = 3 * u * u * t, c = 3 * u * t * t, d = t * t * t;
    return {a * p[0].x + b * p[1].x + c * p[2].x + d * p[3].x, a * p[0].y + b * p[1].y + c * p[2].y + d * p[3].y};
}

}  // namespace

LayoutResult dotLayout(const LayoutInput& input, const LayoutOptions& options) {
    LayoutResult out;
    std::lock_guard lock(graphvizMutex());
    GVC_t* gvc = gvContext();
    Agraph_t* g = agopen(str("g"), Agdirected, nullptr);
    agsafeset(g, str("rankdir"), str("TB"), str(""));
    agsafeset(g, str("nodesep"), str(std::to_string(options.nodeGap / kPointsPerInch).c_str()), str(""));
    agsafeset(g, str("ranksep"), str(std::to_string(options.layerGap / kPointsPerInch).c_str()), str(""));
    agattr(g, AGNODE, str("shape"), str("box"));
    agattr(g, AGNODE, str("fixedsize"), str("true"));
    agattr(g, AGNODE, str("label"), str(""));
    agattr(g, AGNODE, str("width"), str("1"));
    agattr(g, AGNODE, str("height"), str("0.5"));
    std::vector<Agnode_t*> nodes;
    for (size_t i = 0; i < input.nodes.size(); ++i) {
        Agnode_t* n = agnode(g, str(("n" + std::to_string(i)).c_str()), 1);
        agset(n, str("width"), str(std::to_string(input.nodes[i].width / kPointsPerInch).c_str()));
        agset(n, str("height"), str(std::to_string(input.nodes[i].height / kPointsPerInch).c_str()));
        nodes.push_back(n);
    }
    std::vector<Agedge_t*> edges;
    for (size_t e = 0; e < input.edges.size(); ++e) {
        const auto [from, to] = input.edges[e];
        // A key per edge: cgraph would merge parallel edges otherwise.
        edges.push_back(agedge(g, nodes[size_t(from)], nodes[size_t(to)], str(("e" + std::to_string(e)).c_str()), 1));
    }
    if (gvLayout(gvc, g, "dot") != 0) {
        agclose(g);
        gvFreeContext(gvc);
        out.cancelled = true;
        return out;
    }
    // Graphviz puts y up with the origin at the bottom left; the canvas has y down.
    const boxf bb = GD_bb(g);
    auto flip = [&](double x, double y) { return LayoutResult::Point{x - bb.LL.x, bb.UR.y - y}; };
    for (Agnode_t* n : nodes) out.centers.push_back(flip(ND_coord(n).x, ND_coord(n).y));
    out.layerOf.assign(nodes.size(), 0);
    for (size_t i = 0; i < nodes.size(); ++i) out.layerOf[i] = ND_rank(nodes[i]);
    for (size_t e = 0; e < edges.size(); ++e) {
        std::vector<LayoutResult::Point> path;
        const splines* spl = ED_spl(edges[e]);
        if (spl && spl->size > 0 && spl->list[0].size >= 4) {
            const ::bezier& curve = spl->list[0];
            if (curve.sflag) path.push_back(flip(curve.sp.x, curve.sp.y));
            for (size_t k = 0; k + 3 < size_t(curve.size); k += 3)
                for (int step = k == 0 ? 0 : 1; step <= 6; ++step) {
                    const LayoutResult::Point p = cubicAt(curve.list + k, step / 6.0);
                    path.push_back(flip(p.x, p.y));
                }
            if (curve.eflag) path.push_back(flip(curve.ep.x, curve.ep.y));  // the arrow's tip
        } else {  // no spline: a straight line between the boxes
            const auto [from, to] = input.edges[e];
            path = {{out.centers[size_t(from)].x, out.centers[size_t(from)].y + input.nodes[size_t(from)].height / 2},
                    {out.centers[size_t(to)].x, out.centers[size_t(to)].y - input.nodes[size_t(to)].height / 2}};
        }
        out.edgePaths.push_back(std::move(path));
    }
    out.width = bb.UR.x - bb.LL.x;
    out.height = bb.UR.y - bb.LL.y;
    out.layers = 0;
    for (int layer : out.layerOf) out.layers = std::max(out.layers, layer + 1);
    gvFreeLayout(gvc, g);
    agclose(g);
    gvFreeContext(gvc);
    return out;
}

}  // namespace fsc
