// fp16-conversion and bf16-conversion: which nodes narrow (counts), where Casts go (only at
// region boundaries), weights stored narrowed, the keep-in-float32 list and each guard
// (rejections with reasons), numbers within the format's tolerance of float32 on the CPU
// runtime, and a golden dump.
#include <QTest>

#include "compiler/pass_manager.h"
#include "compiler/passes/passes.h"
#include "compiler/runtime/half.h"
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

// Weights stored in float16 (or bfloat16), as a half-precision export holds them.
Tensor halfTensor(const std::string& name, std::vector<int64_t> dims, uint64_t seed, DType type) {
    const Tensor wide = randomFloatTensor(name, dims, seed, 0.5f);
    std::string bytes(size_t(wide.numElements()) * 2, '\0');
    auto* out = reinterpret_cast<uint16_t*>(bytes.data());
    for (int64_t i = 0; i < wide.numElements(); ++i) {
        const float v = wide.dataAs<float>()[i];
        out[i] = type == DType::BFloat16 ? floatToBfloat16(v) : floatToHalf(v);
    }
    const size_t size = bytes.size();
    return Tensor(name, type, std::move(dims), makeBuffer(std::move(bytes)), 0, size);
}

int nodesComputingIn(const Graph& g, DType type) {
    int n = 0;
    for (NodeId id : g.order()) {
        const Node& node = g.node(id);
        if (node.opType == "Cast" || node.outputs.empty()) continue;
        n += g.value(node.outputs[0]).type.elemType == type;
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

    // A model exported in float16 (its input, weights, a Constant and its output float16; a
    // Cast to float32 for a second output, as converters keep some outputs wide): every node
    // computes in float32, the weights widened once; float16 remains only at the interface,
    // and the Cast to float32 reads the widened value directly. Closer to the float32 model
    // than the float16 arithmetic it replaces.
    void float16ModelsComputeInFloat32_data() {
        QTest::addColumn<int>("type");
        QTest::addColumn<double>("tolerance");  // float16 keeps 11 significant bits, bfloat16 8
        QTest::newRow("float16") << int(DType::Float16) << 1e-2;
        QTest::newRow("bfloat16") << int(DType::BFloat16) << 8e-2;
    }
    void float16ModelsComputeInFloat32() {
        QFETCH(int, type);
        QFETCH(double, tolerance);
        const DType half = DType(type);
        GraphBuilder b;
        ValueId x = b.input("x", half, Shape::ofSizes({2, 8}));
        ValueId w1 = b.initializer(halfTensor("w1", {8, 16}, 1, half));
        ValueId w2 = b.initializer(halfTensor("w2", {16, 4}, 2, half));
        ValueId shift = b.op("Constant", {}, "shift", {tensorAttr("value", halfTensor("shift_value", {4}, 3, half))});
        ValueId h = b.op("Relu", {b.op("MatMul", {x, w1}, "h")}, "r");
        ValueId y = b.op("Add", {b.op("MatMul", {h, w2}, "m"), shift}, "y");
        ValueId wide = b.op("Cast", {b.op("Softmax", {y}, "p", {intAttr("axis", 1)})}, "p32",
                            {intAttr("to", int64_t(DType::Float32))});
        b.output(y);
        b.output(wide);
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"float16-to-float32"});
        const Graph& g = *r.model.graph;
        QCOMPARE(r.trace.passes[0].counters.applied, 7);  // Constant, 2 MatMul, Relu, Add, Softmax, the Cast
        QCOMPARE(nodesComputingIn(g, half), 0);
        QCOMPARE(castsTo(g, DType::Float32), 1);  // x in
        QCOMPARE(castsTo(g, half), 1);            // y out
        int wideWeights = 0;
        for (ValueId w : g.initializers) wideWeights += g.value(w).initializer->dtype() == DType::Float32;
        QCOMPARE(wideWeights, 2);
        QCOMPARE(g.value(g.outputs[0]).type.elemType, half);
        QCOMPARE(g.value(g.outputs[0]).name, std::string("y"));
        QCOMPARE(g.value(g.outputs[1]).type.elemType, DType::Float32);
        QCOMPARE(g.value(g.outputs[1]).name, std::string("p32"));
        // The narrow type's rounding of every intermediate is gone: the outputs move, within
        // its precision.
        const double error = maxRelativeError(m, r.model);
        QVERIFY2(error < tolerance && error > 0, qPrintable(QString::number(error)));
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
