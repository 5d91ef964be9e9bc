// The layered layout as pure geometry: edges point down a layer at a time through their
// bends, boxes in a layer never overlap, crossings drop on a graph built to have them,
// cancel stops it, and the swin_t-sized case stays well inside the budget (timed
// in the benchmark, not here).
#include <QTest>

#include "views/box_neighbours.h"
#include "views/label_placement.h"

#include <random>

#include "views/dot_layout.h"
#include "views/layered_layout.h"

using namespace fsc;

namespace {

bool overlapFree(const LayoutInput& in, const LayoutResult& r, double gap) {
    std::vector<std::vector<int>> rows(size_t(r.layers));
    for (size_t v = 0; v < in.nodes.size(); ++v) rows[size_t(r.layerOf[v])].push_back(int(v));
    for (auto& row : rows) {
        std::sort(row.begin(), row.end(), [&](int a, int b) { return r.centers[size_t(a)].x < r.centers[size_t(b)].x; });
        for (size_t i = 1; i < row.size(); ++i) {
            const double left = r.centers[size_t(row[i - 1])].x + in.nodes[size_t(row[i - 1])].width / 2;
            const double right = r.centers[size_t(row[i])].x - in.nodes[size_t(row[i])].width / 2;
            if (right - left < gap - 1e-9) return false;
        }
    }
    return true;
}

// A random DAG in topological order: each node reads one to three earlier nodes, mostly
// recent ones (as exported graphs do), sometimes far back (skip connections).
LayoutInput randomDag(int n, uint32_t seed) {
    std::mt19937 rng(seed);
    LayoutInput in;
    in.nodes.resize(size_t(n));
    for (int v = 1; v < n; ++v) {
        const int reads = 1 + int(rng() % 3);
        for (int k = 0; k < reads; ++k) {
            const int back = rng() % 10 == 0 ? 1 + int(rng() % uint32_t(v)) : 1 + int(rng() % uint32_t(std::min(v, 4)));
            in.edges.push_back({v - back, v});
        }
    }
    return in;
}

}  // namespace

class TestLayeredLayout : public QObject {
    Q_OBJECT
private slots:
    // Arrow keys on the canvas: Down reaches the next layer, not the box further down
    // straight below; Left/Right reach the neighbours of a row; nothing beyond the edge.
    void arrowsFindTheNeighbouringBox() {
        using fsc::ArrowDirection;
        //      0
        //   1     2        5 (far right, slightly lower)
        //      3
        const std::vector<fsc::BoxCentre> c = {{100, 0}, {40, 80}, {160, 80}, {100, 160}, {0, 0}, {600, 90}};
        QCOMPARE(fsc::nearestInDirection(c, 0, ArrowDirection::Down), 1);  // 1 and 2 tie at 80 + 60, before 3 at 160
        QCOMPARE(fsc::nearestInDirection(c, 1, ArrowDirection::Right), 2);
        QCOMPARE(fsc::nearestInDirection(c, 2, ArrowDirection::Down), 3);
        QCOMPARE(fsc::nearestInDirection(c, 3, ArrowDirection::Up), 1);
        QCOMPARE(fsc::nearestInDirection(c, 3, ArrowDirection::Down), -1);
        QCOMPARE(fsc::nearestInDirection(c, 2, ArrowDirection::Right), 5);
        QCOMPARE(fsc::nearestInDirection(c, -1, ArrowDirection::Up), -1);  // the selected node is not on the canvas
    }

    // Two edges converging on one node want their labels at almost the same place: the
    // second goes just below, a third just above, a fourth has no room and is not drawn.
    void convergingEdgeLabelsNeverOverlap() {
        fsc::LabelPlacement places;
        const QRectF wanted(100, 50, 140, 12);
        const auto first = places.place(wanted);
        const auto second = places.place(wanted.translated(6, 2));
        const auto third = places.place(wanted.translated(-4, 0));
        const auto fourth = places.place(wanted);
        QVERIFY(first && second && third);
        QCOMPARE(*first, wanted);
        QVERIFY(!first->intersects(*second) && !first->intersects(*third) && !second->intersects(*third));
        QVERIFY(second->top() > first->bottom() && third->bottom() < first->top());
        QVERIFY(!fourth);
        QVERIFY(places.place(wanted.translated(400, 0)));  // far away: where it wants
        // A node's box is never written over: the label goes below it, or is not drawn.
        fsc::LabelPlacement boxed;
        boxed.block(QRectF(100, 40, 140, 14));
        const auto beside = boxed.place(wanted);
        QVERIFY(beside && beside->top() > 54);
    }

    void chainStacksVertically() {
        LayoutInput in;
        in.nodes.resize(3);
        in.edges = {{0, 1}, {1, 2}};
        const auto r = layeredLayout(in);
        QCOMPARE(r.layers, 3);
        QCOMPARE(r.dummies, 0);
        QCOMPARE(r.centers[0].x, r.centers[1].x);
        QVERIFY(r.centers[0].y < r.centers[1].y && r.centers[1].y < r.centers[2].y);
        // Edge paths leave the bottom of the source and enter the top of the target.
        QCOMPARE(r.edgePaths[0].front().y, r.centers[0].y + 18);
        QCOMPARE(r.edgePaths[0].back().y, r.centers[1].y - 18);
    }

    void longEdgesBendThroughEveryLayer() {
        LayoutInput in;
        in.nodes.resize(4);
        in.edges = {{0, 1}, {1, 2}, {2, 3}, {0, 3}};  // a skip connection over two layers
        const auto r = layeredLayout(in);
        QCOMPARE(r.dummies, 2);
        const auto& skip = r.edgePaths[3];
        QCOMPARE(int(skip.size()), 4);
        for (size_t i = 1; i < skip.size(); ++i) QVERIFY(skip[i].y > skip[i - 1].y);
        QVERIFY(overlapFree(in, r, 24 / 3.0));
    }

    void barycentreRemovesAvoidableCrossings() {
        // Two sources, two sinks wired crosswise in input order: 0->3, 1->2.
        LayoutInput in;
        in.nodes.resize(4);
        in.edges = {{0, 3}, {1, 2}};
        const auto r = layeredLayout(in);
        QCOMPARE(r.crossings, 0);
        QVERIFY((r.centers[0].x < r.centers[1].x) == (r.centers[3].x < r.centers[2].x));
    }

    void randomGraphsKeepTheInvariants() {
        for (uint32_t seed : {1u, 2u, 3u}) {
            LayoutInput in = randomDag(400, seed);
            for (size_t v = 0; v < in.nodes.size(); ++v) in.nodes[v].width = 60 + double(v % 5) * 20;
            const auto r = layeredLayout(in);
            QVERIFY(overlapFree(in, r, 24 / 3.0));
            for (size_t e = 0; e < in.edges.size(); ++e) {
                const auto [a, b] = in.edges[e];
                QVERIFY(r.layerOf[size_t(b)] > r.layerOf[size_t(a)]);
                const auto& path = r.edgePaths[e];
                QCOMPARE(int(path.size()), r.layerOf[size_t(b)] - r.layerOf[size_t(a)] + 1);
            }
            // Deterministic: the same input gives the same picture.
            const auto again = layeredLayout(in);
            for (size_t v = 0; v < in.nodes.size(); ++v) QCOMPARE(again.centers[v].x, r.centers[v].x);
        }
    }

    void dotKeepsTheSameContract() {
        // Graphviz for small groups: same input, same kind of result, no overlaps, edges
        // running from their source's box border down to their target's.
        LayoutInput in = randomDag(kDotMaxNodes, 7);
        for (size_t v = 0; v < in.nodes.size(); ++v) in.nodes[v].width = 60 + double(v % 5) * 20;
        const LayoutResult r = dotLayout(in);
        QVERIFY(!r.cancelled);
        QCOMPARE(r.centers.size(), in.nodes.size());
        QCOMPARE(r.edgePaths.size(), in.edges.size());
        QVERIFY(overlapFree(in, r, 1.0));
        for (size_t v = 0; v < in.nodes.size(); ++v) {  // inside the reported extent
            QVERIFY(r.centers[v].x - in.nodes[v].width / 2 >= -1 && r.centers[v].x + in.nodes[v].width / 2 <= r.width + 1);
            QVERIFY(r.centers[v].y - in.nodes[v].height / 2 >= -1 && r.centers[v].y + in.nodes[v].height / 2 <= r.height + 1);
        }
        for (size_t e = 0; e < in.edges.size(); ++e) {
            const auto [a, b] = in.edges[e];
            QVERIFY(r.layerOf[size_t(b)] > r.layerOf[size_t(a)]);
            QVERIFY(r.centers[size_t(b)].y > r.centers[size_t(a)].y);
            const auto& path = r.edgePaths[e];
            QVERIFY(path.size() >= 2);
            auto touches = [&](const LayoutResult::Point& p, int v) {  // on the box's border, give or take 2
                const double dx = std::abs(p.x - r.centers[size_t(v)].x) - in.nodes[size_t(v)].width / 2;
                const double dy = std::abs(p.y - r.centers[size_t(v)].y) - in.nodes[size_t(v)].height / 2;
                return dx <= 2 && dy <= 2 && (dx >= -2 || dy >= -2);
            };
            QVERIFY(touches(path.front(), a));
            QVERIFY(touches(path.back(), b));
        }
        // Parallel edges stay two edges.
        LayoutInput twice;
        twice.nodes.resize(2);
        twice.edges = {{0, 1}, {0, 1}};
        QCOMPARE(dotLayout(twice).edgePaths.size(), size_t(2));
    }

    void backEdgesAndEmptyInput() {
        QCOMPARE(layeredLayout({}).layers, 0);
        LayoutInput in;
        in.nodes.resize(3);
        in.edges = {{0, 1}, {1, 2}, {2, 0}, {1, 1}};  // a cycle through a collapsed group; a self loop
        const auto r = layeredLayout(in);
        QCOMPARE(r.layers, 3);
        QVERIFY(r.edgePaths[2].front().y > r.edgePaths[2].back().y);  // drawn upwards, source to target
        QVERIFY(r.edgePaths[3].empty());
    }

    void cancelStops() {
        std::atomic<bool> cancel{true};
        const auto r = layeredLayout(randomDag(200, 9), {}, &cancel);
        QVERIFY(r.cancelled);
    }
};

QTEST_APPLESS_MAIN(TestLayeredLayout)
#include "tst_layered_layout.moc"
