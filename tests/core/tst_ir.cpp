// IR building blocks: dtypes, shapes, scope paths, the graph builder and topological sort.
#include <QtTest>

#include "core/graph_builder.h"
#include "core/topo_sort.h"
#include "core/units.h"
#include "compiler/verifier.h"

using namespace fsc;

class TestIr : public QObject {
    Q_OBJECT
private slots:
    void dtypesFollowOnnxNumbering() {
        QCOMPARE(dtypeFromOnnx(1).value(), DType::Float32);
        QCOMPARE(dtypeFromOnnx(16).value(), DType::BFloat16);
        QCOMPARE(dtypeFromOnnx(22).value(), DType::Int4);
        QVERIFY(!dtypeFromOnnx(0));
        QVERIFY(!dtypeFromOnnx(23));
        QVERIFY(!dtypeFromOnnx(-1));
        QCOMPARE(dtypeName(DType::Float16), std::string_view("float16"));
        QCOMPARE(dtypeBits(DType::BFloat16), 16);
        QCOMPARE(dtypeBits(DType::Int4), 4);
        QCOMPARE(packedByteSize(DType::Int4, 3), size_t(2));
        QCOMPARE(packedByteSize(DType::Complex128, 2), size_t(32));
    }

    void shapesKeepSymbolicAndUnknownDims() {
        Shape s({Dim::symbolic("batch"), Dim(), Dim::known(8)});
        QCOMPARE(QString::fromStdString(s.toString()), QStringLiteral("[batch,?,8]"));
        QVERIFY(!s.isStatic());
        QVERIFY(!s.numElements());
        QCOMPARE(QString::fromStdString(Shape().toString()), QStringLiteral("?"));
        QCOMPARE(QString::fromStdString(Shape::scalar().toString()), QStringLiteral("[]"));
        QCOMPARE(Shape::ofSizes({2, 3, 4}).numElements().value(), int64_t(24));
        ValueType t = ValueType::tensor(DType::Float32, s);
        QVERIFY(!t.shapeFullyKnown());  // the unnamed dim
        QVERIFY(ValueType::tensor(DType::Float32, Shape({Dim::symbolic("n")})).shapeFullyKnown());
    }

    void checkedProductDetectsOverflow() {
        QCOMPARE(checkedProduct({1 << 20, 1 << 20}).value(), int64_t(1) << 40);
        QVERIFY(!checkedProduct({int64_t(1) << 40, int64_t(1) << 40}));
        QVERIFY(!checkedProduct({-1, 4}));
        QCOMPARE(checkedProduct({0, int64_t(1) << 62}).value(), int64_t(0));
    }

    void scopeComesFromTheNodeName() {
        QCOMPARE(scopeFromName("/encoder/layer.3/attn/MatMul"), std::string("encoder/layer.3/attn"));
        QCOMPARE(scopeFromName("model/conv1/Conv2D"), std::string("model/conv1"));
        QCOMPARE(scopeFromName("MatMul_12"), std::string(""));
        QCOMPARE(scopeFromName("//a//b/"), std::string("a"));
        QCOMPARE(scopeFromName(""), std::string(""));
    }

    void builderMakesAVerifiableGraph() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({2, 4}));
        ValueId w = b.initializer(randomFloatTensor("w", {4, 4}, 1));
        ValueId y = b.op("MatMul", {x, w}, "y", {}, "/layer/MatMul");
        ValueId z = b.op("Relu", {y}, "z", {}, "/layer/Relu");
        b.output(z);
        Model m = b.buildModel();
        QCOMPARE(m.graph->nodeCount(), size_t(2));
        QCOMPARE(m.graph->node(m.graph->order()[0]).scope, std::string("layer"));
        QCOMPARE(m.graph->consumers(y).size(), size_t(1));
        QVERIFY(verifyModel(m).isOk());
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, b.op("Relu", {z}, "y"));
    }

    void randomWeightsAreDeterministicAndBounded() {
        Tensor a = randomFloatTensor("a", {1000}, 42, 0.5f);
        Tensor b = randomFloatTensor("b", {1000}, 42, 0.5f);
        QCOMPARE(a.fingerprint(), b.fingerprint());  // it covers dtype, dims and data, not names
        QVERIFY(std::equal(a.dataAs<float>(), a.dataAs<float>() + 1000, b.dataAs<float>()));
        for (int i = 0; i < 1000; ++i) QVERIFY(std::abs(a.dataAs<float>()[i]) <= 0.5f);
    }

    void topologicalSortIsStableAndFindsCycles() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({2}));
        ValueId a = b.op("Abs", {x}, "a", {}, "first");
        ValueId c = b.op("Neg", {a}, "c", {}, "second");
        ValueId d = b.op("Relu", {x}, "d", {}, "independent");
        b.output(c);
        b.output(d);
        Graph& g = b.graph();
        std::vector<NodeId> reversed(g.order().rbegin(), g.order().rend());
        g.setOrder(reversed);
        QVERIFY(topologicallySort(g).isOk());
        // Ready nodes keep their current relative order; a node waits only for producers.
        QCOMPARE(g.node(g.order()[0]).name, std::string("independent"));
        QCOMPARE(g.node(g.order()[1]).name, std::string("first"));
        QCOMPARE(g.node(g.order()[2]).name, std::string("second"));

        // Rewire first's input to second's output: first <-> second is now a cycle.
        g.node(g.order()[1]).inputs[0] = c;  // order()[1] is 'first'
        Status s = topologicallySort(g);
        QVERIFY(!s.isOk());
        QVERIFY2(s.message().find("cycle: 'first' (Abs) -> 'second' (Neg) -> 'first'") !=
                         std::string::npos ||
                     s.message().find("cycle: 'second' (Neg) -> 'first' (Abs) -> 'second'") !=
                         std::string::npos,
                 s.message().c_str());
    }

    // One formatter for sizes everywhere (core/units.h): a small size in a small unit, three
    // significant digits, rounding that carries into the next unit.
    void sizesReadAsPeopleWriteThem() {
        QCOMPARE(bytesText(0), std::string("0 B"));
        QCOMPARE(bytesText(400), std::string("400 B"));
        QCOMPARE(bytesText(1023), std::string("1023 B"));
        QCOMPARE(bytesText(8192), std::string("8.00 KiB"));
        QCOMPARE(bytesText(39680), std::string("38.8 KiB"));
        QCOMPARE(bytesText(458752), std::string("448 KiB"));
        QCOMPARE(bytesText(1505280), std::string("1.44 MiB"));
        QCOMPARE(bytesText(1048575), std::string("1.00 MiB"));  // not "1024 KiB"
        QCOMPARE(bytesText(1644167168.0), std::string("1.53 GiB"));
        QCOMPARE(bytesText(-2048), std::string("-2.00 KiB"));
        // Rates in decimal units, as bandwidths are quoted (the roofline's 40.0 GB/s everywhere).
        QCOMPARE(bandwidthText(850e6), std::string("850 MB/s"));
        QCOMPARE(bandwidthText(40.0e9), std::string("40.0 GB/s"));
        QCOMPARE(bandwidthText(999.7e9), std::string("1.00 TB/s"));
        QCOMPARE(bandwidthText(3.35e12), std::string("3.35 TB/s"));
        // Durations: three significant digits in the unit that fits, whole ms from a second.
        QCOMPARE(durationText(0.0005), std::string("500 ns"));
        QCOMPARE(durationText(0.09416), std::string("94.2 µs"));
        QCOMPARE(durationText(0.9999), std::string("1 ms"));
        QCOMPARE(durationText(52.28), std::string("52.3 ms"));
        QCOMPARE(durationText(1160.4), std::string("1,160 ms"));
        QCOMPARE(groupedDigits(0), std::string("0"));
        QCOMPARE(groupedDigits(999), std::string("999"));
        QCOMPARE(groupedDigits(1505280), std::string("1,505,280"));
    }
};

QTEST_GUILESS_MAIN(TestIr)
#include "tst_ir.moc"
