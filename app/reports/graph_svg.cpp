#include "app/reports/graph_svg.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "profiler/xml_escape.h"
#include "views/heat_scale.h"
#include "views/layered_layout.h"
#include "views/op_category.h"
#include "views/scope_tree.h"

namespace fsc {
namespace {

std::string escape(const std::string& s) {
    return escapeXml(s);
}

std::string hex(unsigned rgb) {
    char text[8];
    std::snprintf(text, sizeof text, "#%06x", rgb & 0xffffff);
    return text;
}

std::string graphSvg(const Graph& graph, const std::vector<double>& shareByNode, const std::vector<double>& msByNode,
                     const std::vector<NodeId>& only);

}  // namespace

std::string graphHeatSvg(const Graph& graph, const std::vector<double>& shareByNode, const std::vector<double>& msByNode) {
    return graphSvg(graph, shareByNode, msByNode, {});
}

std::string graphPartSvg(const Graph& graph, const std::vector<NodeId>& nodes) {
    return graphSvg(graph, {}, {}, nodes);
}

namespace {

// `only` empty: every node but constants.
std::string graphSvg(const Graph& graph, const std::vector<double>& shareByNode, const std::vector<double>& msByNode,
                     const std::vector<NodeId>& only) {
    std::vector<NodeId> shown;
    std::vector<int> index(graph.nodeArenaSize(), -1);
    LayoutInput in;
    for (NodeId id : graph.order()) {
        const Node& n = graph.node(id);
        if (isConstantLike(graph, n)) continue;
        if (!only.empty() && std::find(only.begin(), only.end(), id) == only.end()) continue;
        index[id.index] = int(shown.size());
        shown.push_back(id);
        in.nodes.push_back({std::max(80.0, 8.0 * double(n.opType.size()) + 24), 32});
    }
    for (NodeId id : shown)
        for (ValueId v : graph.node(id).inputs) {
            if (!v.valid()) continue;
            const Value& value = graph.value(v);
            if (value.kind == Value::Kind::NodeOutput && value.producer.valid() && index[value.producer.index] >= 0 &&
                index[value.producer.index] != index[id.index])
                in.edges.push_back({index[value.producer.index], index[id.index]});
        }
    const LayoutResult r = layeredLayout(in);
    double hottest = 0;
    for (NodeId id : shown)
        if (id.index < shareByNode.size()) hottest = std::max(hottest, shareByNode[id.index]);

    const double margin = 16, legend = hottest > 0 ? 40 : 0;
    const double width = r.width + 2 * margin, height = r.height + 2 * margin + legend;
    std::ostringstream s;
    s << "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << width << ' ' << height << "\" width=\"" << width
      << "\" height=\"" << height << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
    s << "<g transform=\"translate(" << margin << ',' << margin + legend << ")\" fill=\"none\" stroke=\"#8a8a92\" stroke-width=\"1\">\n";
    for (const auto& path : r.edgePaths) {
        s << "<polyline points=\"";
        for (const auto& p : path) s << p.x << ',' << p.y << ' ';
        s << "\"/>\n";
    }
    s << "</g>\n<g transform=\"translate(" << margin << ',' << margin + legend << ")\">\n";
    for (size_t i = 0; i < shown.size(); ++i) {
        const Node& n = graph.node(shown[i]);
        const auto& box = in.nodes[i];
        const double x = r.centers[i].x - box.width / 2, y = r.centers[i].y - box.height / 2;
        const uint32_t k = shown[i].index;
        const double share = k < shareByNode.size() ? shareByNode[k] : -1;
        const unsigned fill = hottest > 0 ? heatColor(std::max(0.0, share) / hottest)
                                          : opCategoryColor(opCategory(n.domain, n.opType));
        std::string title = n.name + " (" + (n.domain.empty() ? "" : n.domain + "::") + n.opType + ")";
        if (k < msByNode.size() && msByNode[k] > 0) {
            char t[64];
            std::snprintf(t, sizeof t, "\n%.3f ms per iteration, %.1f%% of the run", msByNode[k], 100 * std::max(0.0, share));
            title += t;
        }
        s << "<g><title>" << escape(title) << "</title><rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << box.width
          << "\" height=\"" << box.height << "\" rx=\"4\" fill=\"" << hex(fill) << "\" stroke=\"#555\"/>"
          << "<text x=\"" << r.centers[i].x << "\" y=\"" << r.centers[i].y + 4 << "\" text-anchor=\"middle\" fill=\""
          << (hottest > 0 && share / hottest > 0.7 ? "#fff" : "#202020") << "\">" << escape(n.opType) << "</text></g>\n";
    }
    s << "</g>\n";
    if (hottest > 0) {  // the legend: the heat scale from no time to the hottest node
        s << "<defs><linearGradient id=\"heat\">";
        for (int i = 0; i <= 8; ++i) s << "<stop offset=\"" << i / 8.0 << "\" stop-color=\"" << hex(heatColor(i / 8.0)) << "\"/>";
        s << "</linearGradient></defs>\n<rect x=\"" << margin << "\" y=\"" << margin << "\" width=\"180\" height=\"12\" fill=\"url(#heat)\" stroke=\"#555\"/>\n";
        char label[96];
        std::snprintf(label, sizeof label, "share of run time, 0 to %.1f%%", 100 * hottest);
        s << "<text x=\"" << margin + 190 << "\" y=\"" << margin + 11 << "\">" << label << "</text>\n";
    }
    s << "</svg>\n";
    return s.str();
}

}  // namespace

}  // namespace fsc
