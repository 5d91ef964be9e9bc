// Graph-break analysis: the capability table format, placement of nodes, regions, and a
// break with its reason for each kind (unsupported op, data-dependent shape, shape
// computed on the device, control flow on the host, device-to-host copy).
#include <QTest>

#include "compiler/backends/cuda/cuda_provider.h"
#include "compiler/graph_breaks.h"
#include "core/graph_builder.h"
#include "pass_test_support.h"

using namespace fsc;
using namespace fsc::test;

namespace {

CapabilityTable table(const std::string& text) {
    auto t = CapabilityTable::parse(text, "test-table");
    if (!t) qFatal("%s", t.status().message().c_str());
    return *t;
}

int countKind(const GraphBreakReport& r, BreakKind kind) {
    int n = 0;
    for (const GraphBreak& b : r.breaks) n += b.kind == kind;
    return n;
}

const GraphBreak* firstOf(const GraphBreakReport& r, BreakKind kind) {
    for (const GraphBreak& b : r.breaks)
        if (b.kind == kind) return &b;
    return nullptr;
}

}  // namespace

class TestGraphBreaks : public QObject {
    Q_OBJECT
private slots:
    void builtinCudaTableParses() {
        const CapabilityTable& cuda = cudaCapabilities();
        QVERIFY(cuda.size() > 60);
        QVERIFY(cuda.find("", "MatMul"));
        QVERIFY(cuda.find("ai.onnx", "MatMul"));
        QVERIFY(cuda.find("ai.fusescope", "Attention"));
        QVERIFY(cuda.find("ai.fusescope", "FusedElementwise"));
        QVERIFY(!cuda.find("", "LSTM"));
        QVERIFY(cuda.find("", "NonZero")->dataDependentShape);
        QVERIFY(cuda.find("", "Reshape")->shapeInputs.count(1));
        QVERIFY(cuda.find("", "If")->hostControlFlow);
    }

    void tableErrorsNameTheLine() {
        auto dtype = CapabilityTable::parse("# ok\nMatMul float32\nRelu floaty\n", "t.txt");
        QVERIFY(!dtype.isOk());
        QCOMPARE(dtype.status().message(), std::string("t.txt:3: unknown dtype 'floaty'"));
        auto flag = CapabilityTable::parse("Relu * fast\n", "t.txt");
        QCOMPARE(flag.status().message(), std::string("t.txt:1: unknown flag 'fast'"));
        auto twice = CapabilityTable::parse("Relu *\nRelu float32\n", "t.txt");
        QCOMPARE(twice.status().message(), std::string("t.txt:2: Relu is listed twice"));
        auto bare = CapabilityTable::parse("Relu\n", "t.txt");
        QCOMPARE(bare.status().message(), std::string("t.txt:1: Relu has no dtype column"));
        auto missing = CapabilityTable::load("/nonexistent/caps.txt");
        QVERIFY(missing.status().message().find("/nonexistent/caps.txt") != std::string::npos);
    }

    void unsupportedOpSplitsRegionsWithCopies() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({4, 8}));
        ValueId a = b.op("MatMul", {x, b.initializer(randomFloatTensor("w", {8, 8}, 1))}, "a", {}, "mm");
        ValueId s = b.op("Softplus", {a}, "s", {}, "softplus");
        b.output(b.op("Relu", {s}, "y", {}, "relu"));
        Model m = withInferredTypes(b);
        const auto r = findGraphBreaks(*m.graph, table("MatMul float32\nRelu float32\n"));
        QCOMPARE(int(r.regions.size()), 3);
        QCOMPARE(r.regions[1].placement, Placement::Host);
        QCOMPARE(r.deviceNodes, 2);
        QCOMPARE(r.hostNodes, 1);
        const GraphBreak* op = firstOf(r, BreakKind::UnsupportedOp);
        QVERIFY(op);
        QCOMPARE(m.graph->node(op->node).name, std::string("softplus"));
        QCOMPARE(op->reason, std::string("Softplus is not in the device's capability table: it runs on the CPU"));
        QCOMPARE(op->fromRegion, 0);
        QCOMPARE(op->toRegion, 1);
        const GraphBreak* copy = firstOf(r, BreakKind::DeviceToHostCopy);
        QVERIFY(copy);
        QCOMPARE(copy->bytes, int64_t(4 * 8 * 4));
        QCOMPARE(copy->reason, std::string("'a' (128 bytes) is copied to the host for Softplus 'softplus'"));

        // A dtype the table does not list for an op also falls back.
        const auto f64 = findGraphBreaks(*m.graph, table("MatMul float64\nRelu float32\nSoftplus *\n"));
        QCOMPARE(firstOf(f64, BreakKind::UnsupportedOp)->reason,
                 std::string("MatMul has no device kernel for float32: it runs on the CPU"));
    }

    void dataDependentShapesNeedHostSyncs() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({4, 8}));
        ValueId r = b.op("Relu", {x}, "r", {}, "relu");
        ValueId nz = b.op("NonZero", {r}, "nz", {}, "nonzero");
        b.output(b.op("Transpose", {nz}, "t", {}, "transpose"));
        // A Reshape whose target is computed from data on the device, and one whose target
        // is shape arithmetic the host does itself.
        ValueId sum = b.op("ReduceSum", {r}, "sum", {fsc::intAttr("keepdims", 0)}, "sum");
        ValueId target = b.op("Cast", {b.op("Unsqueeze", {sum, b.initializer(int64Tensor("ax", {1}, {0}))}, "u", {}, "unsq")},
                              "target", {fsc::intAttr("to", 7)}, "cast");
        b.output(b.op("Reshape", {r, target}, "computed", {}, "reshape_computed"));
        ValueId shape = b.op("Shape", {x}, "shape", {}, "shape");
        ValueId flat = b.op("ReduceProd", {shape}, "flat", {intsAttr("axes", {0})}, "prod");
        b.output(b.op("Reshape", {r, flat}, "known", {}, "reshape_known"));
        Model m = withInferredTypes(b);
        const auto rep = findGraphBreaks(*m.graph, cudaCapabilities());
        QCOMPARE(countKind(rep, BreakKind::DataDependentShape), 2);
        QCOMPARE(rep.hostShapeNodes, 2);  // Shape and ReduceProd over int64
        bool nonzero = false, computed = false;
        for (const GraphBreak& br : rep.breaks) {
            const std::string node = m.graph->node(br.node).name;
            if (node == "nonzero") nonzero = br.reason.find("depends on its data") != std::string::npos;
            if (node == "reshape_computed")
                computed = br.reason.find("input 1 ('target') is a shape computed on the device by Cast 'cast'") != std::string::npos;
            QVERIFY(node != "reshape_known");
        }
        QVERIFY(nonzero);
        QVERIFY(computed);
    }

    void hostControlFlow() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({4}));
        b.output(b.op("Relu", {b.op("Abs", {x}, "a", {}, "abs")}, "y", {}, "relu"));
        Model m = withInferredTypes(b);
        const auto r = findGraphBreaks(*m.graph, table("Abs * host-control-flow\nRelu *\n"));
        const GraphBreak* cf = firstOf(r, BreakKind::HostControlFlow);
        QVERIFY(cf);
        QVERIFY(cf->reason.find("control flow") != std::string::npos);
        QCOMPARE(int(r.regions.size()), 2);
    }

    // A partitioned graph's collectives are communication steps: no region cut, no copy, no
    // "not in the capability table" (compile --tp 2 once listed 9 breaks for 3 collectives).
    void collectivesAreCommunicationNotBreaks() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({4, 8}));
        ValueId a = b.op("MatMul", {x, b.initializer(randomFloatTensor("w", {8, 8}, 1))}, "a", {}, "mm");
        ValueId sum = b.node("AllReduce", {a}, {"sum"}, {}, "reduce", "ai.fusescope")[0];
        b.output(b.op("Relu", {sum}, "y", {}, "relu"));
        Model m = b.buildModel();
        for (ValueId v : {a, sum, m.graph->outputs[0]})
            m.graph->value(v).type = ValueType::tensor(DType::Float32, Shape::ofSizes({4, 8}));
        const auto r = findGraphBreaks(*m.graph, table("MatMul float32\nRelu float32\n"));
        QCOMPARE(int(r.breaks.size()), 0);
        QCOMPARE(int(r.regions.size()), 1);
        QCOMPARE(r.deviceNodes, 2);
        QCOMPARE(int(r.communication.size()), 1);
        QCOMPARE(m.graph->node(r.communication[0].node).name, std::string("reduce"));
        QCOMPARE(r.communication[0].bytes, int64_t(4 * 8 * 4));
    }

    void fusedGraphsHaveNoBreaksOnCuda() {
        // The whole O2 output of a transformer block runs on the device.
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({2, 4, 8}));
        ValueId h = b.op("MatMul", {x, b.initializer(randomFloatTensor("w1", {8, 8}, 12))}, "h");
        b.output(b.op("Add", {x, b.op("Sigmoid", {h}, "s")}, "y"));
        Model m = withInferredTypes(b);
        const auto r = findGraphBreaks(*compileWith(m, {"elementwise-fusion"}).model.graph, cudaCapabilities());
        QCOMPARE(int(r.breaks.size()), 0);
        QCOMPARE(int(r.regions.size()), 1);
    }
};

QTEST_APPLESS_MAIN(TestGraphBreaks)
#include "tst_graph_breaks.moc"
