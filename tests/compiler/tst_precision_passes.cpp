// fp16-conversion and bf16-conversion: which nodes narrow (counts), where Casts go (only at
// region boundaries), weights stored narrowed, the keep-in-float32 list and each guard
// (rejections with reasons), numbers within the format's tolerance of float32 on the CPU
// runtime, and a golden dump.
#include <QTest>

#include "compiler/pass_manager.h"
#include "compiler/passes/passes.h"
#include "pass_test_support.h"

using namespace fsc;
using namespace fsc::test;

namespace {

// x[2,8] -> MatMul(W1) -> Relu -> Softmax -> MatMul(W2) -> Add(b) -> y, and ArgMax(y) -> k.
Model classifierHead() {
    GraphBuilder b;
    ValueId x = b.input("x", DType::Float32, Shape::ofSizes({2, 8}));
    ValueId w1 = b.initializer(randomFloatTensor("w1", {8, 16}, 1, 0.5f));
    ValueId w2 = b.initializer(randomFloatTensor("w2", {16, 4}, 2, 0.5f));
    ValueId bias = b.initializer(randomFloatTensor("bias", {4}, 3, 0.5f));
    ValueId h = b.op("MatMul", {x, w1}, "h");
    ValueId r = b.op("Relu", {h}, "r");
    ValueId s = b.op("Softmax", {r}, "s", {intAttr("axis", 1)});
    ValueId m = b.op("MatMul", {s, w2}, "m");
    ValueId y = b.op("Add", {m, bias}, "y");
    ValueId k = b.op("ArgMax", {y}, "k", {intAttr("axis", 1)});
    b.output(y);
    b.output(k);
    return withInferredTypes(b);
}

int castsTo(const Graph& g, DType to) {
    int n = 0;
    for (NodeId id : g.order()) {
        const Node& node = g.node(id);
        if (node.opType != "Cast") continue;
        for (const Attribute& a : node.attributes)
            if (a.name == "to" && a.i == int64_t(to)) ++n;
    }
    return n;
}

}  // namespace

class TestPrecisionPasses : public QObject {
    Q_OBJECT
private slots:
    void float16NarrowsAllButTheKeptOps() {
        Model m = classifierHead();
        auto r = compileWith(m, {"fp16-conversion"});
        const Graph& g = *r.model.graph;
        // MatMul, Relu, MatMul, Add narrowed; Softmax kept; ArgMax has an int64 output.
        QCOMPARE(r.trace.passes[0].counters.applied, 4);
        QVERIFY(rejectedFor(r, "Softmax is kept in float32"));
        QVERIFY(rejectedFor(r, "an output is not float32"));
        // Casts only where values cross: x in, into and out of Softmax, y out (y is read by
        // the graph and by ArgMax, both float32: one Cast serves both).
        QCOMPARE(castsTo(g, DType::Float16), 2);  // x, softmax's output
        QCOMPARE(castsTo(g, DType::Float32), 2);  // relu's output into softmax, y
        for (NodeId id : g.order()) {
            const Node& n = g.node(id);
            if (n.opType == "MatMul" || n.opType == "Relu" || n.opType == "Add")
                QCOMPARE(g.value(n.outputs[0]).type.elemType, DType::Float16);
            if (n.opType == "Softmax") QCOMPARE(g.value(n.outputs[0]).type.elemType, DType::Float32);
        }
        // Weights stored narrowed; the graph's interface stays float32.
        int halfWeights = 0;
        for (ValueId w : g.initializers) halfWeights += g.value(w).initializer->dtype() == DType::Float16;
        QCOMPARE(halfWeights, 3);
        QCOMPARE(g.value(g.outputs[0]).type.elemType, DType::Float32);
        QCOMPARE(g.value(g.outputs[0]).name, std::string("y"));
        // float16 keeps about 3 significant digits: outputs within 1e-2 of float32, and changed.
        const double error = maxRelativeError(m, r.model);
        QVERIFY2(error < 1e-2 && error > 0, qPrintable(QString::number(error)));
        checkGolden(g, QStringLiteral("fp16_conversion"));
    }

    void bfloat16HasItsOwnTolerance() {
        Model m = classifierHead();
        auto r = compileWith(m, {"bf16-conversion"});
        QCOMPARE(r.trace.passes[0].counters.applied, 4);
        QCOMPARE(castsTo(*r.model.graph, DType::BFloat16), 2);
        const double error = maxRelativeError(m, r.model);  // 8 significant bits
        QVERIFY2(error < 5e-2 && error > 0, qPrintable(QString::number(error)));
    }

    void anEmptyKeepListNarrowsSoftmaxToo() {
        Model m = classifierHead();
        CompileOptions options;
        options.verifyEachPass = true;
        std::vector<std::unique_ptr<Pass>> list;
        list.push_back(passes::convertToFloat16({}));
        auto r = compileModel(m, std::move(list), options);
        QVERIFY(r);
        QCOMPARE(r->trace.passes[0].counters.applied, 5);
        QCOMPARE(castsTo(*r->model.graph, DType::Float16), 1);  // x only: one region now
        QCOMPARE(castsTo(*r->model.graph, DType::Float32), 1);  // y
        QVERIFY(maxRelativeError(m, r->model) < 1e-2);
    }

    void controlFlowAndCastsStay() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({4}));
        ValueId d = b.op("Cast", {x}, "d", {intAttr("to", int64_t(DType::Float64))});
        ValueId back = b.op("Cast", {d}, "back", {intAttr("to", int64_t(DType::Float32))});
        ValueId y = b.op("Relu", {back}, "y");
        b.output(y);
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"fp16-conversion"});
        QCOMPARE(r.trace.passes[0].counters.applied, 1);  // Relu only; the Casts are left as they are
        QCOMPARE(countOps(*r.model.graph, "Cast"), 4);
        QVERIFY(maxRelativeError(m, r.model) < 1e-3);
    }
};

QTEST_APPLESS_MAIN(TestPrecisionPasses)
#include "tst_precision_passes.moc"
