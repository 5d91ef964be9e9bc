#include "views/layered_layout.h"

#include <algorithm>
#include <numeric>

namespace fsc {
namespace {

// The working graph: real nodes first, then dummies; edges only between adjacent layers.
struct Layered {
    std::vector<int> layer;
    std::vector<double> width;
    std::vector<std::vector<int>> up, down;  // neighbours in the layer above / below
    std::vector<std::vector<int>> rows;      // nodes per layer, in order
    std::vector<int> position;               // index within its row
};

int countCrossings(const Layered& g, size_t r) {
    // Pairs of edges between rows r and r+1 whose ends are in opposite orders.
    std::vector<std::pair<int, int>> ends;
    for (int u : g.rows[r])
        for (int v : g.down[size_t(u)]) ends.push_back({g.position[size_t(u)], g.position[size_t(v)]});
    std::sort(ends.begin(), ends.end());
    int crossings = 0;
    // Counting inversions of the second coordinate with a Fenwick tree.
    const size_t n = g.rows[r + 1].size() + 1;
    std::vector<int> tree(n + 1, 0);
    for (size_t i = ends.size(); i-- > 0;) {
        for (int k = ends[i].second; k > 0; k -= k & -k) crossings += tree[size_t(k)];
        for (size_t k = size_t(ends[i].second) + 1; k <= n; k += k & (~k + 1)) tree[k]++;
    }
    return crossings;
}

void sortRowByBarycentre(Layered& g, std::vector<int>& row, const std::vector<std::vector<int>>& neighbours) {
    std::vector<std::pair<double, int>> keyed;
    keyed.reserve(row.size());
    for (int v : row) {
        const auto& ns = neighbours[size_t(v)];
        double key = g.position[size_t(v)];  // nodes without neighbours keep their place
        if (!ns.empty()) {
            double sum = 0;
            for (int u : ns) sum += g.position[size_t(u)];
            key = sum / double(ns.size());
        }
        keyed.push_back({key, v});
    }
    std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < row.size(); ++i) {
        row[i] = keyed[i].second;
        g.position[size_t(row[i])] = int(i);
    }
}

}  // namespace

LayoutResult layeredLayout(const LayoutInput& input, const LayoutOptions& options, const std::atomic<bool>* cancel) {
    auto stopped = [&] { return cancel && cancel->load(std::memory_order_relaxed); };
    LayoutResult result;
    const int n = int(input.nodes.size());
    result.centers.resize(size_t(n));
    result.layerOf.assign(size_t(n), 0);
    result.edgePaths.resize(input.edges.size());
    if (n == 0) return result;

    // 1. Layers: longest path from the sources, over edges that point forward.
    std::vector<std::vector<int>> succ(static_cast<size_t>(n));
    for (const auto& [a, b] : input.edges)
        if (a != b && a >= 0 && b >= 0 && a < n && b < n) succ[size_t(std::min(a, b))].push_back(std::max(a, b));
    std::vector<int> layer(size_t(n), 0);
    for (int v = 0; v < n; ++v)
        for (int w : succ[size_t(v)]) layer[size_t(w)] = std::max(layer[size_t(w)], layer[size_t(v)] + 1);
    // Then each node as low as its readers allow: a Constant or Shape read once, far down,
    // sits just above its reader instead of at the top with a long edge (dummies) to it.
    for (int v = n; v-- > 0;) {
        if (succ[size_t(v)].empty()) continue;
        int lowest = INT32_MAX;
        for (int w : succ[size_t(v)]) lowest = std::min(lowest, layer[size_t(w)] - 1);
        layer[size_t(v)] = std::max(layer[size_t(v)], lowest);
    }

    // 2. Dummies on long edges, so each edge joins adjacent layers.
    Layered g;
    g.layer = layer;
    for (const auto& box : input.nodes) g.width.push_back(box.width);
    g.up.resize(size_t(n));
    g.down.resize(size_t(n));
    std::vector<std::vector<int>> chain(input.edges.size());  // per edge: the nodes it passes
    for (size_t e = 0; e < input.edges.size(); ++e) {
        const auto [a, b] = input.edges[e];
        if (a == b || a < 0 || b < 0 || a >= n || b >= n) continue;
        const int top = layer[size_t(a)] <= layer[size_t(b)] ? a : b, bottom = top == a ? b : a;
        std::vector<int>& path = chain[e];
        path.push_back(top);
        for (int l = layer[size_t(top)] + 1; l < layer[size_t(bottom)]; ++l) {
            const int d = int(g.layer.size());
            g.layer.push_back(l);
            g.width.push_back(0);
            g.up.emplace_back();
            g.down.emplace_back();
            path.push_back(d);
        }
        path.push_back(bottom);
        for (size_t i = 0; i + 1 < path.size(); ++i) {
            g.down[size_t(path[i])].push_back(path[i + 1]);
            g.up[size_t(path[i + 1])].push_back(path[i]);
        }
        if (top != a) std::reverse(path.begin(), path.end());  // drawn from source to target
    }
    const int total = int(g.layer.size());
    result.dummies = total - n;
    result.layers = *std::max_element(layer.begin(), layer.end()) + 1;
    g.rows.resize(size_t(result.layers));
    g.position.assign(size_t(total), 0);
    for (int v = 0; v < total; ++v) {  // initial order: input order, dummies after their source
        g.position[size_t(v)] = int(g.rows[size_t(g.layer[size_t(v)])].size());
        g.rows[size_t(g.layer[size_t(v)])].push_back(v);
    }
    if (stopped()) return result.cancelled = true, result;

    // 3. Crossing reduction: barycentre sweeps down then up, keeping the best order seen.
    auto crossingsNow = [&] {
        int c = 0;
        for (size_t r = 0; r + 1 < g.rows.size(); ++r) c += countCrossings(g, r);
        return c;
    };
    int best = crossingsNow();
    std::vector<std::vector<int>> bestRows = g.rows;
    for (int sweep = 0; sweep < options.orderingSweeps && best > 0; ++sweep) {
        for (size_t r = 1; r < g.rows.size(); ++r) sortRowByBarycentre(g, g.rows[r], g.up);
        for (size_t r = g.rows.size() - 1; r-- > 0;) sortRowByBarycentre(g, g.rows[r], g.down);
        const int c = crossingsNow();
        if (c < best) {
            best = c;
            bestRows = g.rows;
        }
        if (stopped()) return result.cancelled = true, result;
    }
    g.rows = bestRows;
    for (const auto& row : g.rows)
        for (size_t i = 0; i < row.size(); ++i) g.position[size_t(row[i])] = int(i);
    result.crossings = best;

    // 4. x: packed left to right, then pulled toward the mean of the neighbours' x, each row
    //    resolved left to right so boxes never overlap.
    std::vector<double> x(size_t(total), 0);
    auto gapAfter = [&](int v) { return g.width[size_t(v)] > 0 ? options.nodeGap : options.nodeGap / 3; };
    for (const auto& row : g.rows) {
        double cursor = 0;
        for (int v : row) {
            x[size_t(v)] = cursor + g.width[size_t(v)] / 2;
            cursor += g.width[size_t(v)] + gapAfter(v);
        }
    }
    auto pull = [&](std::vector<int>& row, const std::vector<std::vector<int>>& neighbours) {
        std::vector<double> want(row.size());
        for (size_t i = 0; i < row.size(); ++i) {
            const auto& ns = neighbours[size_t(row[i])];
            double sum = 0;
            for (int u : ns) sum += x[size_t(u)];
            want[i] = ns.empty() ? x[size_t(row[i])] : sum / double(ns.size());
        }
        // Left to right keeps order and gaps; a right-to-left pass lets the row shift back.
        for (size_t i = 0; i < row.size(); ++i) {
            const int v = row[i];
            double lo = -1e18;
            if (i > 0) lo = x[size_t(row[i - 1])] + g.width[size_t(row[i - 1])] / 2 + gapAfter(row[i - 1]) + g.width[size_t(v)] / 2;
            x[size_t(v)] = std::max(want[i], lo);
        }
        for (size_t i = row.size() - 1; i-- > 0;) {
            const int v = row[i], right = row[i + 1];
            const double hi = x[size_t(right)] - g.width[size_t(right)] / 2 - gapAfter(v) - g.width[size_t(v)] / 2;
            x[size_t(v)] = std::min(x[size_t(v)], std::max(hi, -1e18));
        }
    };
    for (int sweep = 0; sweep < options.positionSweeps; ++sweep) {
        for (size_t r = 1; r < g.rows.size(); ++r) pull(g.rows[r], g.up);
        for (size_t r = g.rows.size() - 1; r-- > 0;) pull(g.rows[r], g.down);
        if (stopped()) return result.cancelled = true, result;
    }
    double minX = 1e18, maxX = -1e18;
    for (int v = 0; v < total; ++v) {
        minX = std::min(minX, x[size_t(v)] - g.width[size_t(v)] / 2);
        maxX = std::max(maxX, x[size_t(v)] + g.width[size_t(v)] / 2);
    }

    // 5. y per layer from the tallest box in it.
    std::vector<double> rowHeight(g.rows.size(), 0), rowTop(g.rows.size(), 0);
    for (int v = 0; v < n; ++v)
        rowHeight[size_t(layer[size_t(v)])] = std::max(rowHeight[size_t(layer[size_t(v)])], input.nodes[size_t(v)].height);
    double y = 0;
    for (size_t r = 0; r < g.rows.size(); ++r) {
        rowTop[r] = y;
        y += rowHeight[r] + options.layerGap;
    }
    result.height = y - options.layerGap;
    result.width = maxX - minX;
    auto center = [&](int v) {
        const size_t r = size_t(g.layer[size_t(v)]);
        return LayoutResult::Point{x[size_t(v)] - minX, rowTop[r] + rowHeight[r] / 2};
    };
    for (int v = 0; v < n; ++v) {
        result.centers[size_t(v)] = center(v);
        result.layerOf[size_t(v)] = layer[size_t(v)];
    }
    for (size_t e = 0; e < input.edges.size(); ++e) {
        const auto& path = chain[e];
        if (path.size() < 2) continue;
        auto& points = result.edgePaths[e];
        for (size_t i = 0; i < path.size(); ++i) {
            LayoutResult::Point p = center(path[i]);
            if (i == 0 || i + 1 == path.size()) {  // leave and enter at the boxes' edges
                const bool downward = g.layer[size_t(path.front())] < g.layer[size_t(path.back())];
                const double half = input.nodes[size_t(path[i])].height / 2;
                p.y += (i == 0) == downward ? half : -half;
            }
            points.push_back(p);
        }
    }
    return result;
}

}  // namespace fsc
