// The canvas layout: each expanded group laid out on its own inside its frame, collapsed
// groups as boxes, unchanged groups reused from the cache across snapshots, cancel.
#include <QTest>

#include <cmath>

#include "core/graph_builder.h"
#include "views/group_layout.h"

using namespace fsc;

namespace {

// Two encoder layers of three nodes each and a head; `headOp` varies the head only.
Graph model(const std::string& headOp) {
    GraphBuilder b;
    ValueId x = b.input("x", DType::Float32, Shape::ofSizes({2, 2}));
    ValueId h = x;
    for (const char* layer : {"l0", "l1"}) {
        const std::string p = std::string("/enc/") + layer + "/";
        ValueId a = b.op("MatMul", {h, h}, p + "a", {}, p + "MatMul");
        ValueId s = b.op("Softmax", {a}, p + "s", {}, p + "Softmax");
        h = b.op("Add", {s, h}, p + "y", {}, p + "Add");
    }
    b.output(b.op(headOp, {h}, "y", {}, "/head/" + headOp));
    return b.graph();
}

bool contains(const Rect& outer, const Rect& inner) {
    return inner.x >= outer.x - 1e-9 && inner.y >= outer.y - 1e-9 && inner.x + inner.width <= outer.x + outer.width + 1e-9 &&
           inner.bottom() <= outer.bottom() + 1e-9;
}

}  // namespace

class TestGroupLayout : public QObject {
    Q_OBJECT
private slots:
    void expandedGroupsFrameTheirContents() {
        const Graph g = model("Relu");
        const ScopeTree t = ScopeTree::build(g);
        const CanvasLayout c = layoutCanvas(g, t, expandedToDepth(t, 9));
        int nodes = 0, frames = 0;
        for (const auto& box : c.boxes) {
            if (box.node.valid()) {
                ++nodes;
                // Inside the frame of every group that holds it.
                for (int grp = t.groupOf(box.node); grp > 0; grp = t.groups()[size_t(grp)].parent)
                    for (const auto& frame : c.boxes)
                        if (frame.group == grp) QVERIFY(contains(frame.rect, box.rect));
            } else {
                QVERIFY(box.expanded);
                ++frames;
            }
        }
        QCOMPARE(nodes, 7);
        QCOMPARE(frames, 3);  // enc, enc/l0, enc/l1; head holds one node, shown as the node
        QVERIFY(!c.edges.empty());
        QVERIFY(c.width > 0 && c.height > 0);
    }

    // A group whose nodes are narrower than its title grows to the title's width (about 9
    // units a character at the canvas's 11 pt) and centres its nodes, so the title is whole.
    void aNarrowGroupGrowsToItsTitle() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({2, 2}));
        const std::string scope = "/a_rather_long_module_name/";
        ValueId p = b.op("Relu", {x}, "p", {}, scope + "Relu");
        b.output(b.op("Relu", {p}, "y", {}, scope + "Relu_1"));
        const Graph g = b.graph();
        const ScopeTree t = ScopeTree::build(g);
        const CanvasLayout c = layoutCanvas(g, t, expandedToDepth(t, 9));
        const CanvasLayout::Box* frame = nullptr;
        for (const auto& box : c.boxes)
            if (box.expanded) frame = &box;
        QVERIFY(frame);
        const std::string title = "a_rather_long_module_name  (2)";
        QVERIFY2(frame->rect.width >= 9.0 * double(title.size()), qPrintable(QString::number(frame->rect.width)));
        for (const auto& box : c.boxes) {
            if (!box.node.valid()) continue;
            QVERIFY(contains(frame->rect, box.rect));
            QVERIFY(std::abs(box.rect.centerX() - frame->rect.centerX()) < 1.0);  // centred
        }
    }

    void collapsedGroupsAreSingleBoxes() {
        const Graph g = model("Relu");
        const ScopeTree t = ScopeTree::build(g);
        const CanvasLayout c = layoutCanvas(g, t, expandedToDepth(t, 0));
        QCOMPARE(int(c.boxes.size()), 2);  // enc collapsed, and head's single node
        QVERIFY(!c.boxes[0].expanded && c.boxes[0].group == t.find("enc"));
        QVERIFY(c.boxes[1].node.valid());
        QCOMPARE(c.groupsLaidOut, 1);  // the root only
        QCOMPARE(int(c.edges.size()), 1);
        // The one edge carries l1's output into the head, read by the head's node.
        QCOMPARE(c.edgeInfo.size(), c.edges.size());
        QCOMPARE(g.value(c.edgeInfo[0].value).name, std::string("/enc/l1/y"));
        QCOMPARE(g.node(c.edgeInfo[0].target).opType, std::string("Relu"));
        QCOMPARE(c.edgeInfo[0].values, 1);
    }

    void edgesKnowWhatTheyCarry() {
        const Graph g = model("Relu");
        const ScopeTree t = ScopeTree::build(g);
        const CanvasLayout c = layoutCanvas(g, t, expandedToDepth(t, 9));
        QCOMPARE(c.edgeInfo.size(), c.edges.size());
        for (const auto& info : c.edgeInfo) {
            // Every edge's value is read by its target node.
            const auto& inputs = g.node(info.target).inputs;
            QVERIFY(std::find(inputs.begin(), inputs.end(), info.value) != inputs.end());
        }
        // A collapsed group handing one node two values: one edge that counts both.
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({2, 2}));
        ValueId p = b.op("Relu", {x}, "p", {}, "/enc/Relu");
        ValueId q = b.op("Sigmoid", {p}, "q", {}, "/enc/Sigmoid");
        b.output(b.op("Add", {p, q}, "y", {}, "/head/Add"));
        const Graph two = b.graph();
        const ScopeTree tt = ScopeTree::build(two);
        const CanvasLayout merged = layoutCanvas(two, tt, expandedToDepth(tt, 0));
        QCOMPARE(int(merged.edgeInfo.size()), 1);
        QCOMPARE(merged.edgeInfo[0].values, 2);
        QCOMPARE(two.node(merged.edgeInfo[0].target).opType, std::string("Add"));
    }

    void unchangedGroupsAreReused() {
        GroupLayoutCache cache;
        const Graph before = model("Relu");
        const ScopeTree t1 = ScopeTree::build(before);
        const CanvasLayout first = layoutCanvas(before, t1, expandedToDepth(t1, 9), &cache);
        QCOMPARE(first.groupsLaidOut, 4);  // root, enc, l0, l1
        QCOMPARE(layoutCanvas(before, t1, expandedToDepth(t1, 9), &cache).groupsLaidOut, 0);
        // Another snapshot where only the head changed: only the root is laid out again.
        const Graph after = model("Sigmoid");
        const ScopeTree t2 = ScopeTree::build(after);
        QCOMPARE(layoutCanvas(after, t2, expandedToDepth(t2, 9), &cache).groupsLaidOut, 1);
    }

    void cancelStops() {
        const Graph g = model("Relu");
        const ScopeTree t = ScopeTree::build(g);
        std::atomic<bool> cancel{true};
        QVERIFY(layoutCanvas(g, t, expandedToDepth(t, 9), nullptr, &cancel).cancelled);
    }
};

QTEST_APPLESS_MAIN(TestGroupLayout)
#include "tst_group_layout.moc"
