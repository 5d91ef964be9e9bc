// Import -> export -> import gives the same graph, and ONNX's checker accepts the export.
#include <QtTest>

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include "compiler/verifier.h"
#include "core/graph_builder.h"
#include "core/onnx_export.h"
#include "core/onnx_import.h"
#include "core/shape_inference.h"
#include "core/text_printer.h"
#include "test_support.h"

using namespace fsc;

class TestRoundTrip : public QObject {
    Q_OBJECT
private slots:
    void roundTripKeepsTheTextDump_data() {
        test::addGoodFixtureRows();
        QTest::newRow("sample") << QStringLiteral(FSC_SAMPLE_MODEL);
    }
    void roundTripKeepsTheTextDump() {
        QFETCH(QString, path);
        auto first = importModel(path.toStdString());
        QVERIFY2(first.isOk(), first.status().message().c_str());
        auto bytes = exportModelToBytes(*first);
        QVERIFY2(bytes.isOk(), bytes.status().message().c_str());
        auto second = importModelFromBytes(bytes->data(), bytes->size(), "exported.onnx");
        QVERIFY2(second.isOk(), second.status().message().c_str());
        QVERIFY(verifyModel(*second).isOk());
        QCOMPARE(QString::fromStdString(printModel(*second)),
                 QString::fromStdString(printModel(*first)));

        // libonnx 1.12 checks IR <= 8 and opset <= 17; newer files are checked by the
        // round trip above only.
        if (first->irVersion > 8 || first->opsetVersion("") > 17) return;
        // Some fixtures are valid IR but not checker-clean on purpose (an input without
        // a shape, say); the export must be exactly as acceptable as the original.
        onnx::ModelProto original;
        QVERIFY(original.ParseFromString(test::readAll(path).toStdString()));
        try {
            onnx::checker::check_model(original);
        } catch (const std::exception&) {
            return;
        }
        onnx::ModelProto proto;
        QVERIFY(proto.ParseFromString(*bytes));
        try {
            onnx::checker::check_model(proto);
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
    }

    // The text form is what golden tests and the pass diff read: changes to it (or to
    // what import infers) must be deliberate. FSC_UPDATE_GOLDEN=1 rewrites the files.
    void textDumpMatchesGolden_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("golden");
        QTest::newRow("sample") << QStringLiteral(FSC_SAMPLE_MODEL) << QStringLiteral("sample.txt");
        QTest::newRow("nested") << QString::fromStdString(test::fixture("good/nested.onnx").string())
                                << QStringLiteral("nested.txt");
    }
    void textDumpMatchesGolden() {
        QFETCH(QString, model);
        QFETCH(QString, golden);
        auto m = importModel(model.toStdString());
        QVERIFY2(m.isOk(), m.status().message().c_str());
        const QString path = QStringLiteral(FSC_GOLDEN_DIR "/") + golden;
        const QString dump = QString::fromStdString(printModel(*m));
        if (qEnvironmentVariableIsSet("FSC_UPDATE_GOLDEN")) {
            QFile out(path);
            QVERIFY(out.open(QIODevice::WriteOnly | QIODevice::Truncate));
            out.write(dump.toUtf8());
        }
        QCOMPARE(dump, QString::fromUtf8(test::readAll(path)));
    }

    // Before IR 4 every initializer had to be listed among the graph's inputs too; a pass that
    // adds a weight to such a model (an opset-7 export) must not make it fail the checker.
    void irThreeModelListsItsInitializersAsInputs() {
        GraphBuilder b;
        const ValueId x = b.input("x", DType::Float32, Shape::ofSizes({2, 3}));
        const ValueId w = b.initializer(floatTensor("w", {2, 3}, {1, 2, 3, 4, 5, 6}));
        b.output(b.op("Add", {x, w}, "y"));
        fillUnknownTypes(b.graph());
        const Model model = b.buildModel(7, 3);
        auto bytes = exportModelToBytes(model);
        QVERIFY2(bytes.isOk(), bytes.status().message().c_str());
        onnx::ModelProto proto;
        QVERIFY(proto.ParseFromString(*bytes));
        QCOMPARE(proto.graph().input_size(), 2);
        QCOMPARE(proto.graph().input(1).name(), std::string("w"));
        QCOMPARE(proto.graph().input(1).type().tensor_type().shape().dim(1).dim_value(), int64_t(3));
        try {
            onnx::checker::check_model(proto);
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
        // Read back, the weight is a constant again, not an input to feed: IR 3 had no
        // overridable initializers (ONNX Runtime overrides one only from IR 4 on).
        auto back = importModelFromBytes(bytes->data(), bytes->size(), "ir3.onnx");
        QVERIFY2(back.isOk(), back.status().message().c_str());
        QCOMPARE(back->graph->inputs.size(), size_t(1));
        const Value& weight = back->graph->value(back->graph->findValue("w"));
        QVERIFY(weight.kind == Value::Kind::Initializer && !weight.isGraphInput && weight.initializer);
    }

    void exportWithExternalDataReimports() {
        auto m = importModel(FSC_SAMPLE_MODEL);
        QVERIFY(m.isOk());
        QDir().mkpath(QStringLiteral(FSC_TEST_TMP "/ext"));
        const std::string out = FSC_TEST_TMP "/ext/sample_ext.onnx";
        ExportOptions options;
        options.externalData = ExportOptions::ExternalData::Always;
        options.externalThresholdBytes = 256;
        QVERIFY(exportModel(*m, out, options).isOk());
        QVERIFY(QFileInfo(QString::fromStdString(out + ".data")).size() > 30000);
        QVERIFY(QFileInfo(QString::fromStdString(out)).size() < 20000);
        auto back = importModel(out);
        QVERIFY2(back.isOk(), back.status().message().c_str());
        QCOMPARE(QString::fromStdString(printModel(*back)), QString::fromStdString(printModel(*m)));
    }
};

QTEST_GUILESS_MAIN(TestRoundTrip)
#include "tst_roundtrip.moc"
