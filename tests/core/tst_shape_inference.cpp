// Shape inference: ONNX's own first, our rules for what it leaves, symbolic dims kept.
#include <QtTest>

#include "core/graph_builder.h"
#include "core/onnx_export.h"
#include "core/onnx_import.h"
#include "core/shape_inference.h"
#include "test_support.h"

using namespace fsc;

namespace {
std::string typeOf(const Model& m, const std::string& name) {
    return m.graph->value(m.graph->findValue(name)).type.toString();
}
}  // namespace

class TestShapeInference : public QObject {
    Q_OBJECT
private slots:
    void onnxInferenceFillsIntermediatesAndKeepsSymbols() {
        auto m = importModel(FSC_SAMPLE_MODEL);
        QVERIFY(m.isOk());
        QCOMPARE(typeOf(*m, "/transformer/attn/Softmax_output_0"), std::string("float32[batch,4,64,64]"));
        QCOMPARE(typeOf(*m, "/to_tokens/Transpose_output_0"), std::string("float32[batch,64,32]"));
    }

    void withoutInferenceIntermediatesStayUnknown() {
        ImportOptions options;
        options.inferShapes = false;
        auto m = importModel(FSC_SAMPLE_MODEL, options);
        QVERIFY(m.isOk());
        QCOMPARE(typeOf(*m, "/transformer/attn/Softmax_output_0"), std::string("?"));
    }

    void ourRulesCoverOtherDomains() {
        auto m = importModel(test::fixture("good/domains.onnx"));
        QVERIFY(m.isOk());
        // ONNX does not know com.microsoft::Gelu; the pass-through rule gives its shape,
        // and ONNX's Relu inference then continues from it.
        QCOMPARE(typeOf(*m, "g"), std::string("float32[batch,8]"));
        QCOMPARE(typeOf(*m, "y"), std::string("float32[batch,8]"));
    }

    void broadcastRuleForCustomElementwise() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape({Dim::symbolic("n"), Dim::known(1), Dim::known(8)}));
        ValueId y = b.input("y", DType::Float32, Shape({Dim::known(5), Dim::known(8)}));
        b.node("BiasAdd", {x, y}, {"z"}, {}, "custom", "com.microsoft");
        fillUnknownTypes(b.graph());
        const Graph& g = b.graph();
        QCOMPARE(g.value(g.findValue("z")).type.toString(), std::string("float32[n,5,8]"));
    }

    void mergeNeverOverridesKnownDims() {
        ValueType declared = ValueType::tensor(DType::Float32, Shape({Dim::symbolic("b"), Dim()}));
        mergeType(declared, ValueType::tensor(DType::Float32, Shape::ofSizes({1, 7})));
        QCOMPARE(declared.toString(), std::string("float32[b,7]"));
        ValueType unknown;
        mergeType(unknown, ValueType::tensor(DType::Int64, Shape::ofSizes({3})));
        QCOMPARE(unknown.toString(), std::string("int64[3]"));
        ValueType mismatch = ValueType::tensor(DType::Float32, Shape::ofSizes({2}));
        mergeType(mismatch, ValueType::tensor(DType::Float32, Shape::ofSizes({2, 2})));
        QCOMPARE(mismatch.toString(), std::string("float32[2]"));
    }

    void subgraphValuesGetTypes() {
        auto m = importModel(test::fixture("good/nested.onnx"));
        QVERIFY(m.isOk());
        const Graph& body = *m->graph->node(m->graph->order()[0]).attribute("body")->g;
        QCOMPARE(body.value(body.findValue("carry_out")).type.toString(), std::string("float32[4]"));
    }
};

QTEST_GUILESS_MAIN(TestShapeInference)
#include "tst_shape_inference.moc"
