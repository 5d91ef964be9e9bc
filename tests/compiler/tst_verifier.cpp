// The verifier accepts well-formed graphs and names what is wrong in broken ones.
#include <QtTest>

#include "compiler/verifier.h"
#include "core/graph_builder.h"

using namespace fsc;

namespace {
Model chain() {
    GraphBuilder b;
    ValueId x = b.input("x", DType::Float32, Shape::ofSizes({4}));
    ValueId a = b.op("Relu", {x}, "a", {}, "relu");
    ValueId c = b.op("Neg", {a}, "c", {}, "neg");
    b.output(c);
    return b.buildModel();
}
}  // namespace

class TestVerifier : public QObject {
    Q_OBJECT
private slots:
    void acceptsAWellFormedGraph() { QVERIFY(verifyModel(chain()).isOk()); }

    void rejectsUseBeforeDefinition() {
        Model m = chain();
        std::vector<NodeId> order(m.graph->order().rbegin(), m.graph->order().rend());
        m.graph->setOrder(order);
        Status s = verifyModel(m);
        QVERIFY(!s.isOk());
        QVERIFY2(s.message().find("node 'neg' (Neg): reads 'a' before it is produced") != std::string::npos,
                 s.message().c_str());
    }

    void rejectsAValueProducedTwice() {
        Model m = chain();
        Graph& g = *m.graph;
        g.node(g.order()[1]).outputs[0] = g.node(g.order()[0]).outputs[0];
        Status s = verifyModel(m);
        QVERIFY(!s.isOk());
        QVERIFY2(s.message().find("produced twice") != std::string::npos, s.message().c_str());
    }

    void rejectsAnUndefinedOuterValue() {
        GraphBuilder body("body");
        ValueId outer = body.outerValue("nowhere");
        body.output(body.op("Identity", {outer}, "o"));
        GraphBuilder b;
        ValueId cond = b.input("cond", DType::Bool, Shape::scalar());
        b.output(b.node("If", {cond}, {"r"}, {graphAttr("then_branch", body.takeGraph())}, "if")[0]);
        Status s = verifyModel(b.buildModel());
        QVERIFY(!s.isOk());
        QVERIFY2(s.message().find("outer value 'nowhere'") != std::string::npos, s.message().c_str());
    }

    void rejectsAnOutputNobodyProduces() {
        Model m = chain();
        m.graph->outputs.push_back(ValueId(999));
        QVERIFY(!verifyModel(m).isOk());
    }
};

QTEST_GUILESS_MAIN(TestVerifier)
#include "tst_verifier.moc"
