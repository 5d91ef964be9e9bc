// Scope groups from node names, and the visible graph with groups collapsed: one box per
// collapsed group, edges merged between boxes, Constants hidden unless asked for.
#include <QAbstractItemModelTester>
#include <QTest>

#include "core/graph_builder.h"
#include "views/node_search.h"
#include "views/scope_outline_model.h"
#include "views/scope_tree.h"

using namespace fsc;

namespace {

// x -> /enc/l0/attn/MatMul -> /enc/l0/attn/Softmax -> /enc/l0/ffn/Relu -> /enc/l1/Relu -> /head/Gemm,
// plus a Constant read inside l0/ffn.
Graph scoped() {
    GraphBuilder b;
    ValueId x = b.input("x", DType::Float32, Shape::ofSizes({2, 2}));
    ValueId mm = b.op("MatMul", {x, x}, "mm", {}, "/enc/l0/attn/MatMul");
    ValueId sm = b.op("Softmax", {mm}, "sm", {}, "/enc/l0/attn/Softmax");
    ValueId c = b.op("Constant", {}, "c", {tensorAttr("value", floatTensor("c", {}, {2.0f}))}, "/enc/l0/ffn/Constant");
    ValueId r0 = b.op("Mul", {sm, c}, "r0", {}, "/enc/l0/ffn/Mul");
    ValueId r1 = b.op("Relu", {r0}, "r1", {}, "/enc/l1/Relu");
    ValueId y = b.op("Add", {r1, mm}, "y", {}, "/head/Add");  // a skip edge from attn to head
    b.output(y);
    return b.graph();
}

}  // namespace

class TestScopeTree : public QObject {
    Q_OBJECT
private slots:
    void groupsFollowScopePaths() {
        const Graph g = scoped();
        const ScopeTree t = ScopeTree::build(g);
        // root, enc, enc/l0, enc/l0/attn, enc/l0/ffn, enc/l1, head
        QCOMPARE(int(t.groups().size()), 7);
        QCOMPARE(t.groups()[0].totalNodes, 6);
        const int l0 = t.find("enc/l0");
        QVERIFY(l0 > 0);
        QCOMPARE(t.groups()[size_t(l0)].name, std::string("l0"));
        QCOMPARE(t.groups()[size_t(l0)].depth, 2);
        QCOMPARE(t.groups()[size_t(l0)].totalNodes, 4);
        QCOMPARE(int(t.groups()[size_t(l0)].children.size()), 2);
        QCOMPARE(t.find("nope"), -1);
    }

    void outlineModelMirrorsTheTree() {
        const Graph g = scoped();
        auto tree = std::make_shared<const ScopeTree>(ScopeTree::build(g));
        ScopeOutlineModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        model.setTree(tree);
        QCOMPARE(model.rowCount(), 2);  // enc, head
        const QModelIndex enc = model.index(0, 0);
        QCOMPARE(enc.data().toString(), QStringLiteral("enc"));
        QCOMPARE(model.index(0, ScopeOutlineModel::Nodes).data().toInt(), 5);
        QCOMPARE(model.rowCount(enc), 2);  // l0, l1
        const QModelIndex l0 = model.index(0, 0, enc);
        QCOMPARE(l0.data(ScopeOutlineModel::GroupRole).toInt(), tree->find("enc/l0"));
        QCOMPARE(l0.data(Qt::ToolTipRole).toString(), QStringLiteral("enc/l0"));
        QCOMPARE(model.parent(l0), enc);
        QCOMPARE(model.indexOfGroup(tree->find("enc/l0/attn")).parent(), l0);
        QVERIFY(!model.index(0, ScopeOutlineModel::Share).data().isValid());
        std::vector<double> byNode(g.nodeArenaSize(), 0.1);
        model.setShares(groupTotals(*tree, byNode));
        QCOMPARE(model.index(0, ScopeOutlineModel::Share).data().toString(), QStringLiteral("50.0%"));
        model.setTree(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    void groupTotalsSumTheirSubtrees() {
        const Graph g = scoped();
        const ScopeTree t = ScopeTree::build(g);
        std::vector<double> byNode(g.nodeArenaSize(), 0.0);
        for (NodeId id : g.order()) byNode[id.index] = g.node(id).opType == "MatMul" ? 0.5 : 0.1;
        const std::vector<double> totals = groupTotals(t, byNode);
        QCOMPARE(totals.size(), t.groups().size());
        QCOMPARE(totals[0], 0.5 + 5 * 0.1);                                      // every node
        QCOMPARE(totals[size_t(t.find("enc/l0/attn"))], 0.5 + 0.1);              // MatMul, Softmax
        QCOMPARE(totals[size_t(t.find("enc/l0"))], 0.5 + 3 * 0.1);               // attn + ffn (Constant, Mul)
        QCOMPARE(totals[size_t(t.find("head"))], 0.1);
        // A shorter vector (a graph that grew) counts the missing nodes as 0.
        QCOMPARE(groupTotals(t, {})[0], 0.0);
    }

    void collapsedGroupsBecomeBoxesWithMergedEdges() {
        const Graph g = scoped();
        const ScopeTree t = ScopeTree::build(g);
        // Depth 1: the root, enc and head are expanded; enc/l0 and enc/l1 are not.
        const VisibleGraph v = visibleGraph(g, t, expandedToDepth(t, 1));
        // enc/l0 and enc/l1 collapsed, head's Add visible: 3 items.
        QCOMPARE(int(v.items.size()), 3);
        QCOMPARE(v.items[0].group, t.find("enc/l0"));
        QCOMPARE(v.items[1].group, t.find("enc/l1"));
        QVERIFY(v.items[2].node.valid());
        // l0 -> l1, l1 -> Add, l0 -> Add (the skip edge), each once.
        QCOMPARE(int(v.edges.size()), 3);

        const VisibleGraph all = visibleGraph(g, t, expandedToDepth(t, 9));
        QCOMPARE(int(all.items.size()), 5);  // the Constant is hidden
        const VisibleGraph withConstants = visibleGraph(g, t, expandedToDepth(t, 9), true);
        QCOMPARE(int(withConstants.items.size()), 6);

        const VisibleGraph none = visibleGraph(g, t, expandedToDepth(t, 0));
        QCOMPARE(int(none.items.size()), 2);  // enc, head
        QCOMPARE(int(none.edges.size()), 1);  // merged, no self loops
    }

    void searchMatchesNamesOpsAndTensors() {
        const Graph g = scoped();
        QCOMPARE(int(findNodes(g, "RELU").size()), 1);  // op type, any case
        QCOMPARE(int(findNodes(g, "/enc/l0/").size()), 3);  // names (the Constant is hidden)
        QCOMPARE(int(findNodes(g, "sm").size()), 2);  // the tensor 'sm': its producer and reader
        QVERIFY(findNodes(g, "").empty());
        QVERIFY(findNodes(g, "nothing").empty());
    }
};

QTEST_APPLESS_MAIN(TestScopeTree)
#include "tst_scope_tree.moc"
