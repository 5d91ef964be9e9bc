// The selection every view observes: what it says changed (once, and only on a change), and
// views that follow it and publish to it without knowing each other (the graph canvas, the
// properties, the node table, the timeline, the roofline and the memory chart).
#include <QSignalSpy>
#include <QTest>
#include <QTreeWidgetItem>

#include "core/graph_builder.h"
#include "views/graph_canvas.h"
#include "views/job_runner.h"
#include "views/memory_view.h"
#include "views/node_properties_view.h"
#include "views/node_table_model.h"
#include "views/node_table_view.h"
#include "views/roofline_view.h"
#include "views/selection.h"
#include "views/timeline_view.h"

using namespace fsc;

namespace {

// x -> Relu -> Sigmoid -> Add(x) -> y: three nodes, in that order.
std::shared_ptr<const Graph> chain() {
    GraphBuilder b;
    const ValueId x = b.input("x", DType::Float32, Shape::ofSizes({1, 8}));
    const ValueId r = b.op("Relu", {x}, "r", {}, "relu");
    const ValueId s = b.op("Sigmoid", {r}, "s", {}, "sigmoid");
    b.output(b.op("Add", {s, x}, "y", {}, "add"));
    return b.takeGraph();
}

NodeId nodeNamed(const Graph& g, const std::string& name) {
    for (NodeId id : g.order())
        if (g.node(id).name == name) return id;
    return {};
}

// A run of chain()'s three nodes, one after another, 100 ns each, with the planned arena's
// steps at the same times.
std::shared_ptr<Trace> runOfChain(const Graph& g) {
    auto t = std::make_shared<Trace>();
    int64_t at = 0;
    for (NodeId id : g.order()) {
        Activity a;
        a.name = "kernel_" + g.node(id).name;
        a.node = int64_t(id.index);
        a.startNs = at, a.endNs = at + 100;
        t->activities.push_back(a);
        t->nodes.push_back({int64_t(id.index), g.node(id).name, g.node(id).opType, a.name, {}, 1e6, 1e4});
        t->plannedMemory.push_back({at, 64 * (at / 100 + 1), g.node(id).name});
        at += 100;
    }
    t->plannedBuffers = {{"r", 0, 32, 0, 1}, {"s", 32, 32, 1, 2}};
    t->iterations = 1;
    return t;
}

}  // namespace

class TestSelection : public QObject {
    Q_OBJECT
private slots:
    void aStepNodeIsFoundByName() {
        Selection selection;
        const auto graph = chain();
        selection.setStepGraph(graph);
        QSignalSpy picked(&selection, &Selection::nodeSelected);
        QVERIFY(selection.selectStepNodeNamed("sigmoid"));
        QCOMPARE(selection.node(), nodeNamed(*graph, "sigmoid"));
        QVERIFY(!selection.selectStepNodeNamed("no such node", true));  // nothing made from it either
        QCOMPARE(selection.node(), nodeNamed(*graph, "sigmoid"));
        QCOMPARE(picked.size(), 1);
    }

    void saysWhatChangedOnce() {
        const auto g = chain(), other = chain();
        const NodeId relu = nodeNamed(*g, "relu");
        Selection s;
        QSignalSpy nodes(&s, &Selection::nodeSelected), values(&s, &Selection::valueSelected);
        s.selectNode(g, relu);
        s.selectNode(g, relu);  // the same again: nothing to say
        QCOMPARE(nodes.count(), 1);
        QCOMPARE(s.nodeOf(g.get()), relu);
        QVERIFY(!s.nodeOf(other.get()).valid());  // another graph's views show nothing selected
        // A value of the graph, forgotten when a node of another graph is picked (ids differ).
        s.selectValue(g->node(relu).outputs[0]);
        QCOMPARE(values.count(), 1);
        QCOMPARE(s.valueOf(g.get()), g->node(relu).outputs[0]);
        QVERIFY(!s.valueOf(other.get()).valid());
        s.selectNode(other, nodeNamed(*other, "add"));
        QVERIFY(!s.value().valid());
        QCOMPARE(nodes.count(), 2);
        // Ids outside the graph clear the node rather than point at nothing.
        s.selectNode(g, NodeId{999});
        QVERIFY(!s.node().valid());
        QCOMPARE(s.graph(), g);
        s.selectValue(ValueId{999});
        QVERIFY(!s.value().valid());

        // A node of the run picks nothing while the run's graph is not shown here.
        QSignalSpy elsewhere(&s, &Selection::runNodeElsewhere);
        QVERIFY(!s.selectRunNode(relu));
        QCOMPARE(elsewhere.count(), 1);
        QVERIFY(!s.isOfRun());
        s.setRunGraph(g);
        QVERIFY(s.selectRunNode(relu));
        QVERIFY(s.isOfRun());
        QCOMPARE(s.node(), relu);

        // Steps and time ranges: said once, a reversed range put in order.
        QSignalSpy steps(&s, &Selection::stepSelected), ranges(&s, &Selection::timeRangeSelected);
        s.selectStep(3);
        s.selectStep(3);
        QCOMPARE(steps.count(), 1);
        QCOMPARE(steps.at(0).at(0).toInt(), 3);
        s.selectTimeRange(500, 200);
        QCOMPARE(s.rangeBegin(), int64_t(200));
        QCOMPARE(s.rangeEnd(), int64_t(500));
        s.selectTimeRange(200, 500);
        QCOMPARE(ranges.count(), 1);
        s.selectStepNode(relu);  // no step graph yet: clears
        QVERIFY(!s.node().valid());
    }

    void graphViewsFollowAndPublish() {
        const auto g = chain();
        const NodeId relu = nodeNamed(*g, "relu"), sigmoid = nodeNamed(*g, "sigmoid");
        JobRunner jobs;
        Selection s;
        GraphCanvas canvas(jobs);
        NodePropertiesView properties(jobs);
        NodeTableView table;
        canvas.setSelection(&s);
        properties.setSelection(&s);
        table.setSelection(&s);
        canvas.resize(600, 400);
        canvas.show();
        QSignalSpy laidOut(&canvas, &GraphCanvas::laidOut);
        canvas.setGraph(g, 1 << 20);
        table.nodes()->setGraph(g);
        QVERIFY(laidOut.wait(10000));

        // The table's row: the canvas selects it, the properties describe it.
        emit table.activated(table.nodes()->index(table.nodes()->rowOf(sigmoid), 0));
        QCOMPARE(s.node(), sigmoid);
        QCOMPARE(canvas.selectedNode(), sigmoid);
        QCOMPARE(properties.valueOf(QStringLiteral("Name")), QStringLiteral("sigmoid"));

        // The canvas's pick: the table's current row follows.
        canvas.selectNode(relu);
        QCOMPARE(s.node(), relu);
        QCOMPARE(table.currentIndex().row(), table.nodes()->rowOf(relu));
        QCOMPARE(properties.valueOf(QStringLiteral("Op")), QStringLiteral("Relu"));

        // An output row of the properties picks that value.
        QTreeWidgetItem* outputs = properties.rowNamed(QStringLiteral("Outputs"));
        QVERIFY(outputs && outputs->childCount() == 1);
        properties.setCurrentItem(outputs->child(0));
        QCOMPARE(s.value(), g->node(relu).outputs[0]);

        // A node of another graph: the canvas shows nothing selected; the properties show it.
        const auto other = chain();
        s.selectNode(other, nodeNamed(*other, "add"));
        QVERIFY(!canvas.selectedNode().valid());
        QCOMPARE(properties.valueOf(QStringLiteral("Name")), QStringLiteral("add"));
        QVERIFY(!canvas.isLinked(nodeNamed(*g, "add")));  // linking is for comparisons
        canvas.setLinkSelection(true);  // chain() twice: the same imported nodes by index
        QVERIFY(canvas.isLinked(nodeNamed(*g, "add")));
    }

    void runViewsFollowOnlyTheRunsGraph() {
        const auto g = chain();
        const NodeId sigmoid = nodeNamed(*g, "sigmoid");
        const auto trace = runOfChain(*g);
        Selection s;
        TimelineView timeline;
        RooflineView roofline;
        timeline.setSelection(&s);
        roofline.setSelection(&s);
        timeline.resize(800, 200);
        timeline.setTrace(trace);
        roofline.setTrace(trace);

        s.selectNode(g, sigmoid);  // the run's graph is not known: not a node of the run
        QCOMPARE(timeline.selectedNode(), int64_t(-1));
        s.setRunGraph(g);
        s.selectNode(g, NodeId{});
        s.selectNode(g, sigmoid);
        QCOMPARE(timeline.selectedNode(), int64_t(sigmoid.index));
        QCOMPARE(roofline.selectedNode(), int64_t(sigmoid.index));

        // A click on a block picks its kernel and its node.
        timeline.show();
        const int x = TimelineView::kGutter + int(timeline.scale().toX(50));  // inside relu's block
        QTest::mouseClick(&timeline, Qt::LeftButton, {}, QPoint(x, timeline.laneMiddle(0)));
        QCOMPARE(s.kernel(), QStringLiteral("kernel_relu"));
        QCOMPARE(s.node(), nodeNamed(*g, "relu"));
        QCOMPARE(roofline.selectedNode(), int64_t(nodeNamed(*g, "relu").index));
    }

    void timeRangesPassBetweenTimelineAndMemory() {
        const auto g = chain();
        const auto trace = runOfChain(*g);
        Selection s;
        TimelineView timeline;
        MemoryView memory;
        timeline.setSelection(&s);
        memory.setSelection(&s);
        timeline.resize(800, 200);
        memory.resize(800, 300);
        timeline.setTrace(trace);
        memory.setTrace(trace);

        // A range on the timeline: the memory chart lists what is live where it starts.
        timeline.setRange(150, 260);
        QCOMPARE(s.rangeBegin(), int64_t(150));
        QCOMPARE(s.rangeEnd(), int64_t(260));
        QCOMPARE(memory.chart()->cursorTime(), int64_t(150));
        // The memory chart's cursor: an instant, drawn on the timeline as a line.
        memory.chart()->setCursorTime(250);
        QCOMPARE(s.rangeBegin(), int64_t(250));
        QCOMPARE(s.rangeEnd(), int64_t(250));
        QCOMPARE(timeline.cursorTime(), int64_t(250));
        // Esc on the timeline clears both.
        timeline.show();
        QTest::keyClick(&timeline, Qt::Key_Escape);
        QCOMPARE(s.rangeBegin(), int64_t(-1));
        QCOMPARE(timeline.cursorTime(), int64_t(-1));
    }
};

QTEST_MAIN(TestSelection)
#include "tst_selection.moc"
