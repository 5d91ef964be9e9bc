// ONNX import of the hand-built fixtures: every feature the importer promises.
#include <QtTest>

#include <cstring>

#include "compiler/verifier.h"
#include "core/graph_builder.h"
#include "core/model_summary.h"
#include "core/onnx_export.h"
#include "core/onnx_import.h"
#include "test_support.h"

using namespace fsc;
using fsc::test::fixture;

namespace {

Model load(const std::string& relative) {
    auto m = importModel(fixture(relative));
    if (!m) qFatal("import of %s failed: %s", relative.c_str(), m.status().message().c_str());
    return std::move(*m);
}

const Value& valueNamed(const Graph& g, const std::string& name) {
    ValueId id = g.findValue(name);
    if (!id.valid()) qFatal("no value %s", name.c_str());
    return g.value(id);
}

}  // namespace

class TestImport : public QObject {
    Q_OBJECT
private slots:
    void everyGoodFixtureImportsAndVerifies_data() {
        test::addGoodFixtureRows();
    }
    void everyGoodFixtureImportsAndVerifies() {
        QFETCH(QString, path);
        auto m = importModel(path.toStdString());
        QVERIFY2(m.isOk(), m.status().message().c_str());
        QVERIFY2(verifyModel(*m).isOk(), verifyModel(*m).message().c_str());
    }

    void allDtypesReadFromRawAndTypedFields() {
        Model m = load("good/all_dtypes.onnx");
        const Graph& g = *m.graph;
        auto tensor = [&](const std::string& name) { return *valueNamed(g, name).initializer; };
        for (const char* base : {"float", "int8", "uint16", "int64", "float16", "double", "uint64",
                                 "complex64", "bfloat16", "bool"}) {
            Tensor typed = tensor(std::string(base) + "_typed");
            Tensor raw = tensor(std::string(base) + "_raw");
            QCOMPARE(typed.dtype(), raw.dtype());
            QCOMPARE(typed.byteSize(), raw.byteSize());
            if (std::string(base) != "bfloat16")  // the raw bfloat16 fixture holds other values
                QVERIFY2(std::memcmp(typed.data(), raw.data(), typed.byteSize()) == 0, base);
        }
        QCOMPARE(tensor("float_typed").dataAs<float>()[0], 1.5f);
        QCOMPARE(tensor("int64_typed").dataAs<int64_t>()[0], -(int64_t(1) << 40));
        QCOMPARE(tensor("uint32_typed").dataAs<uint32_t>()[0], 4000000000u);
        QCOMPARE(tensor("float16_typed").dataAs<uint16_t>()[0], uint16_t(0x3800));  // 0.5
        QCOMPARE(tensor("bfloat16_typed").dataAs<uint16_t>()[1], uint16_t(0xC040));  // -3
        QCOMPARE(tensor("complex128_typed").dataAs<double>()[3], 4.0);
        QCOMPARE(tensor("string_typed").strings().at(1), std::string("world"));
        QCOMPARE(valueNamed(g, "uint8_raw_out").type.toString(), std::string("uint8[2]"));
    }

    void ir10TypesFloat8AndInt4() {
        Model m = load("good/new_dtypes_ir10.onnx");
        QCOMPARE(m.irVersion, int64_t(10));
        const Tensor& f8 = *valueNamed(*m.graph, "f8").initializer;
        const Tensor& i4 = *valueNamed(*m.graph, "i4").initializer;
        QCOMPARE(f8.dtype(), DType::Float8E4M3FN);
        QCOMPARE(f8.byteSize(), size_t(3));
        QCOMPARE(i4.dtype(), DType::Int4);
        QCOMPARE(i4.byteSize(), size_t(2));  // three 4-bit values, packed
    }

    void constantNodesCountAsParameters() {
        Model m = load("good/constants.onnx");
        ModelSummary s = summarizeModel(m);
        QCOMPARE(s.constantNodeCount, size_t(3));
        QCOMPARE(s.parameterCount, int64_t(6 + 1 + 4));
        QCOMPARE(s.parameterBytes, int64_t(24 + 4 + 32));
    }

    void sparseInitializersKeepValuesAndIndices() {
        Model m = load("good/sparse.onnx");
        const Value& v = valueNamed(*m.graph, "sparse_w");
        QVERIFY(v.sparseInitializer);
        QCOMPARE(v.sparseInitializer->dims, (std::vector<int64_t>{3, 4}));
        QCOMPARE(v.sparseInitializer->indices.dataAs<int64_t>()[2], int64_t(11));
        QCOMPARE(v.type.toString(), std::string("sparse(float32[3,4])"));
    }

    void subgraphsNestFourLevelsAndReadOuterValues() {
        Model m = load("good/nested.onnx");
        ModelSummary s = summarizeModel(m);
        QCOMPARE(s.nodeCount, size_t(1));
        QCOMPARE(s.totalNodeCount, size_t(10));
        QCOMPARE(s.subgraphCount, size_t(6));
        QCOMPARE(s.maxSubgraphDepth, 4);
        const Node& loop = m.graph->node(m.graph->order()[0]);
        const Graph& body = *loop.attribute("body")->g;
        // The innermost Scan reads `init` and `x` from the top graph: each enclosing
        // subgraph lists them as outer-scope values.
        const Graph& then2 = *body.node(body.order()[0]).attribute("then_branch")->g;
        QCOMPARE(then2.value(then2.findValue("init")).kind, Value::Kind::OuterScope);
        QCOMPARE(body.value(body.findValue("x")).kind, Value::Kind::OuterScope);
        QCOMPARE(body.value(body.findValue("cond")).kind, Value::Kind::GraphInput);
    }

    void opsetsOfSeveralDomains() {
        Model m = load("good/domains.onnx");
        QCOMPARE(m.opsetVersion(""), int64_t(17));
        QCOMPARE(m.opsetVersion("ai.onnx"), int64_t(17));
        QCOMPARE(m.opsetVersion("com.microsoft"), int64_t(1));
        QCOMPARE(m.opsetVersion("ai.onnx.ml"), int64_t(3));
        QCOMPARE(m.opsetVersion("nope"), int64_t(-1));
        QCOMPARE(m.graph->node(m.graph->order()[0]).domain, std::string("com.microsoft"));
    }

    // Opset 18 (torch's dynamo exporter) is newer than libonnx 1.12 knows: its ReduceMean
    // takes axes as an input, which the newest schema libonnx has refuses. That node goes to
    // our rules, ONNX infers the rest (it used to skip the whole model: every shape unknown);
    // the same node at opset 17 is malformed and still stops ONNX's inference.
    void opsetNewerThanLibonnxKeepsItsShapes_data() {
        QTest::addColumn<int>("opset");
        QTest::newRow("opset 18: ReduceMean's axes an input") << 18;
        QTest::newRow("opset 17: the same node is malformed") << 17;
    }
    void opsetNewerThanLibonnxKeepsItsShapes() {
        QFETCH(int, opset);
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({2, 8, 7, 7}));
        ValueId c = b.op("Conv", {x, b.initializer(randomFloatTensor("w", {8, 8, 3, 3}, 1))}, "c", {intsAttr("pads", {1, 1, 1, 1})});
        ValueId mean = b.op("ReduceMean", {c, b.initializer(int64Tensor("axes", {2}, {-1, 2}))}, "mean", {intAttr("keepdims", 0)});
        b.output(b.op("Relu", {mean}, "y"));
        auto bytes = exportModelToBytes(b.buildModel(opset));
        QVERIFY(bool(bytes));
        auto m = importModelFromBytes(bytes->data(), bytes->size(), "opset.onnx");
        QVERIFY(bool(m));
        const Graph& g = *m->graph;
        std::string warnings;
        for (const std::string& w : m->warnings) warnings += w + "\n";
        if (opset == 18) {
            QCOMPARE(valueNamed(g, "c").type.shape, Shape::ofSizes({2, 8, 7, 7}));
            QCOMPARE(valueNamed(g, "mean").type.shape, Shape::ofSizes({2, 8}));
            QCOMPARE(valueNamed(g, "y").type.shape, Shape::ofSizes({2, 8}));
            QVERIFY2(warnings.find("left these ops of opset 18 to Fusescope's own rules: ReduceMean") != std::string::npos,
                     warnings.c_str());
        } else {
            QVERIFY2(warnings.find("ONNX shape inference skipped") != std::string::npos, warnings.c_str());
        }
    }

    void irVersions3To10_data() {
        QTest::addColumn<int>("ir");
        for (int ir = 3; ir <= 10; ++ir) QTest::newRow(qPrintable(QString::number(ir))) << ir;
    }
    void irVersions3To10() {
        QFETCH(int, ir);
        Model m = load("good/ir" + std::to_string(ir) + ".onnx");
        QCOMPARE(m.irVersion, int64_t(ir));
        const Value& w = valueNamed(*m.graph, "w");
        QVERIFY(w.initializer);
        // IR 3 lists initializers as inputs too, yet they are constants (overridable from IR 4).
        QVERIFY(!w.isGraphInput && w.kind == Value::Kind::Initializer);
        QCOMPARE(m.graph->inputs.size(), size_t(1));
        QCOMPARE(summarizeModel(m).inputs.size(), size_t(1));
        QCOMPARE(valueNamed(*m.graph, "y").type.toString(), std::string("float32[1,4]"));
    }

    void metadataAndDocStrings() {
        Model m = load("good/metadata.onnx");
        QCOMPARE(m.docString, std::string("a model with metadata"));
        QCOMPARE(m.modelVersion, int64_t(42));
        QCOMPARE(m.domain, std::string("org.example"));
        QCOMPARE(m.producerName, std::string("fusescope-fixtures"));
        QCOMPARE(m.metadata.size(), size_t(2));
    }

    void symbolicDimsNamedUnnamedAndAbsent() {
        Model m = load("good/symbolic.onnx");
        QCOMPARE(valueNamed(*m.graph, "x").type.toString(), std::string("float32[batch,?,8]"));
        // ONNX's inference names the dim it cannot size, as onnx.shape_inference does.
        QCOMPARE(valueNamed(*m.graph, "y").type.toString(), std::string("float32[batch,unk__0,8]"));
        QCOMPARE(valueNamed(*m.graph, "z").type.toString(), std::string("float32?"));
        ModelSummary s = summarizeModel(m);
        // Inputs first, then node outputs; an unnamed dim or no shape both count as unknown.
        QCOMPARE(s.unknownShapeValues, (std::vector<std::string>{"x", "z", "w"}));
        QCOMPARE(s.unknownRankValues, int64_t(2));  // z and w
        QCOMPARE(s.unnamedDimValues, int64_t(1));   // x
    }

    // Exporter styles where symbols used to be lost: after tf2onnx's Reshape(-1, ...) every
    // Conv showed '?' for the batch; in paddle2onnx's, the spatial dims after each Conv.
    // Every value now keeps or gets a symbol, as ONNX's own inference gives.
    void symbolsSurviveExporterStyles_data() {
        QTest::addColumn<QString>("file");
        QTest::newRow("tf2onnx") << QStringLiteral("styles/tf2onnx_nhwc.onnx");
        QTest::newRow("paddle2onnx") << QStringLiteral("styles/paddle_dynamic.onnx");
        QTest::newRow("spox") << QStringLiteral("styles/spox_nested_if.onnx");
    }
    void symbolsSurviveExporterStyles() {
        QFETCH(QString, file);
        Model m = load(file.toStdString());
        const ModelSummary s = summarizeModel(m);
        QVERIFY2(s.unknownShapeValues.empty(), s.unknownShapeValues.empty() ? "" : s.unknownShapeValues.front().c_str());
        if (file.contains(QStringLiteral("tf2onnx"))) {
            const ValueType& conv = valueNamed(*m.graph, "conv2d:0").type;
            QVERIFY(conv.shape[0].isSymbolic());
            QCOMPARE(conv.shape[0], valueNamed(*m.graph, "pool_nhwc:0").type.shape[0]);  // one batch symbol
        }
    }

    void unsortedNodesAreSorted() {
        Model m = load("good/unsorted.onnx");
        const Graph& g = *m.graph;
        QCOMPARE(g.node(g.order()[0]).name, std::string("/u/first"));
        QCOMPARE(g.node(g.order()[1]).name, std::string("/u/second"));
        QCOMPARE(g.node(g.order()[2]).name, std::string("/u/third"));
    }

    void externalDataIsMappedAtItsOffset() {
        Model m = load("good/external/model.onnx");
        const Tensor& w1 = *valueNamed(*m.graph, "w1").initializer;
        const Tensor& w2 = *valueNamed(*m.graph, "w2").initializer;
        QCOMPARE(w1.dataAs<float>()[11], 11.0f);
        QCOMPARE(w2.dataAs<float>()[3], 3.0f);
    }

    void modelsOver2GBLoadThroughExternalData() {
        QElapsedTimer timer;
        timer.start();
        Model m = load("good/huge/model.onnx");
        ModelSummary s = summarizeModel(m);
        QCOMPARE(s.parameterBytes, int64_t(2400000000));
        QCOMPARE(valueNamed(*m.graph, "big").initializer->byteSize(), size_t(2400000000));
        qInfo("2.4 GB model imported in %lld ms (mapped, not read)", timer.elapsed());
    }

    void localFunctionsAreKept() {
        Model m = load("good/functions.onnx");
        QCOMPARE(m.functions.size(), size_t(1));
        const Function& f = m.functions[0];
        QCOMPARE(f.name, std::string("DoubleRelu"));
        QCOMPARE(f.domain, std::string("local.fns"));
        QCOMPARE(f.body->nodeCount(), size_t(2));
        QCOMPARE(f.body->inputs.size(), size_t(1));
    }

    void sampleModelHasConvAndTransformerBlocks() {
        auto m = importModel(FSC_SAMPLE_MODEL);
        QVERIFY2(m.isOk(), m.status().message().c_str());
        ModelSummary s = summarizeModel(*m);
        QCOMPARE(s.opHistogram.at("Conv"), size_t(1));
        QCOMPARE(s.opHistogram.at("Softmax"), size_t(1));
        QCOMPARE(s.opHistogram.at("LayerNormalization"), size_t(2));
        QVERIFY(s.unknownShapeValues.empty());
        QCOMPARE(s.outputs.at(0).type.toString(), std::string("float32[batch,10]"));
    }
};

QTEST_GUILESS_MAIN(TestImport)
#include "tst_import.moc"
