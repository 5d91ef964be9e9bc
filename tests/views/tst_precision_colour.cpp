// Precision colouring: which precision each node of an INT8- or float16-compiled graph is
// given, and the canvas filling boxes by it when asked.
#include <QTest>

#include "compiler/pass_manager.h"
#include "compiler/passes/passes.h"
#include "core/graph_builder.h"
#include "views/graph_canvas.h"
#include "views/job_runner.h"
#include "views/op_category.h"
#include "views/precision_colour.h"

using namespace fsc;

namespace {

// x -> Conv -> Relu -> MatMul(w) -> y
Model convNet() {
    GraphBuilder b;
    ValueId x = b.input("x", DType::Float32, Shape::ofSizes({1, 2, 4, 4}));
    ValueId w = b.initializer(randomFloatTensor("w", {4, 2, 3, 3}, 1, 0.5f));
    ValueId c = b.op("Conv", {x, w}, "c", {intsAttr("pads", {1, 1, 1, 1})}, "conv");
    ValueId r = b.op("Relu", {c}, "r", {}, "relu");
    ValueId m = b.initializer(randomFloatTensor("m", {4, 3}, 2, 0.5f));
    ValueId y = b.op("MatMul", {r, m}, "y", {}, "mm");
    b.output(y);
    Model model = b.buildModel(17);
    model.graph->value(c).type = ValueType::tensor(DType::Float32, Shape::ofSizes({1, 4, 4, 4}));
    model.graph->value(r).type = ValueType::tensor(DType::Float32, Shape::ofSizes({1, 4, 4, 4}));
    model.graph->value(y).type = ValueType::tensor(DType::Float32, Shape::ofSizes({1, 4, 4, 3}));
    return model;
}

Graph compiled(std::unique_ptr<Pass> a, std::unique_ptr<Pass> b = nullptr) {
    std::vector<std::unique_ptr<Pass>> passes;
    passes.push_back(std::move(a));
    if (b) passes.push_back(std::move(b));
    auto r = compileModel(convNet(), std::move(passes));
    if (!r) qFatal("%s", r.status().message().c_str());
    return *r->model.graph;
}

const Node& byOp(const Graph& g, const std::string& op) {
    for (NodeId id : g.order())
        if (g.node(id).opType == op) return g.node(id);
    qFatal("no %s", op.c_str());
}

}  // namespace

class TestPrecisionColour : public QObject {
    Q_OBJECT
private slots:
    void int8AndFloatNodesAreTold() {
        const Graph g = compiled(passes::quantizeInt8(), passes::foldQdq());
        QCOMPARE(nodePrecision(g, byOp(g, "QLinearConv")), NodePrecision::Int8);
        QCOMPARE(nodePrecision(g, byOp(g, "QuantizeLinear")), NodePrecision::Int8);
        QCOMPARE(nodePrecision(g, byOp(g, "MatMulInteger")), NodePrecision::Int8);
        QCOMPARE(nodePrecision(g, byOp(g, "Mul")), NodePrecision::Float32);  // the float scale
        const Graph half = compiled(passes::convertToFloat16());
        QCOMPARE(nodePrecision(half, byOp(half, "Conv")), NodePrecision::Float16);
        const Graph brain = compiled(passes::convertToBFloat16());
        QCOMPARE(nodePrecision(brain, byOp(brain, "Conv")), NodePrecision::BFloat16);
        QVERIFY(nodePrecisionColor(NodePrecision::Int8) != nodePrecisionColor(NodePrecision::Float32));
        QCOMPARE(QString::fromLatin1(nodePrecisionName(NodePrecision::Float16)), QStringLiteral("float16"));
    }

    void canvasFillsByPrecisionWhenAsked() {
        auto g = std::make_shared<const Graph>(compiled(passes::quantizeInt8(), passes::foldQdq()));
        JobRunner jobs;
        GraphCanvas canvas(jobs);
        canvas.resize(600, 400);
        canvas.setGraph(g, 2);
        const Node& conv = byOp(*g, "QLinearConv");
        QCOMPARE(canvas.nodeFill(*g, conv), QColor::fromRgb(QRgb(opCategoryColor(opCategory(conv.domain, conv.opType)))));
        canvas.setColouring(GraphCanvas::Colouring::Precision);
        QCOMPARE(canvas.nodeFill(*g, conv), QColor::fromRgb(QRgb(nodePrecisionColor(NodePrecision::Int8))));
        const QImage shot = canvas.grab().toImage();  // paints with the legend, no crash
        QVERIFY(!shot.isNull());
    }
};

QTEST_MAIN(TestPrecisionColour)
#include "tst_precision_colour.moc"
