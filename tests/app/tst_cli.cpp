// fusescope-cli as a user runs it: output, JSON layout, exit statuses, and no Qt linked.
#include <QtTest>

#include "test_support.h"

namespace {

struct Run {
    int exitCode = -1;
    QString out;
    QString err;
};

Run cli(const QStringList& args) {
    QProcess p;
    p.start(QStringLiteral(FSC_CLI_PATH), args);
    Run r;
    if (!p.waitForFinished(60000)) {
        p.kill();
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

}  // namespace

class TestCli : public QObject {
    Q_OBJECT
private slots:
    void linksNoQt() {
        QProcess ldd;
        ldd.start(QStringLiteral("ldd"), {QStringLiteral(FSC_CLI_PATH)});
        QVERIFY(ldd.waitForFinished());
        const QString libs = QString::fromUtf8(ldd.readAllStandardOutput());
        QVERIFY2(libs.contains(QStringLiteral("libonnx")), qPrintable(libs));
        QVERIFY2(!libs.contains(QStringLiteral("libQt")), qPrintable(libs));
    }

    void inspectPrintsTheSummary() {
        Run r = cli({QStringLiteral("inspect"), QStringLiteral(FSC_SAMPLE_MODEL)});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.contains(QStringLiteral("IR version    8")));
        QVERIFY(r.out.contains(QStringLiteral("input         image  float32[batch,3,16,16]")));
        QVERIFY(r.out.contains(QStringLiteral("nodes         42 top level, 42 including subgraphs")));
        QVERIFY(r.out.contains(QStringLiteral("parameters    9920 (39.8 kB) in 33 initializers")));
        QVERIFY(r.err.isEmpty());
    }

    void inspectJsonHasTheDocumentedLayout() {
        Run r = cli({QStringLiteral("inspect"), QStringLiteral("--json"),
                     QString::fromStdString(fsc::test::fixture("good/nested.onnx").string())});
        QCOMPARE(r.exitCode, 0);
        QJsonParseError error;
        const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8(), &error).object();
        QCOMPARE(error.error, QJsonParseError::NoError);
        QCOMPARE(j[QStringLiteral("schema")].toString(), QStringLiteral("fusescope.inspect/1"));
        QCOMPARE(j[QStringLiteral("ir_version")].toInt(), 8);
        QCOMPARE(j[QStringLiteral("opsets")].toArray().at(0).toObject()[QStringLiteral("domain")].toString(),
                 QStringLiteral("ai.onnx"));
        QCOMPARE(j[QStringLiteral("nodes")].toObject()[QStringLiteral("top_level")].toInt(), 1);
        QCOMPARE(j[QStringLiteral("nodes")].toObject()[QStringLiteral("total")].toInt(), 10);
        QCOMPARE(j[QStringLiteral("subgraphs")].toObject()[QStringLiteral("count")].toInt(), 6);
        QCOMPARE(j[QStringLiteral("subgraphs")].toObject()[QStringLiteral("max_depth")].toInt(), 4);
        QCOMPARE(j[QStringLiteral("op_histogram")].toObject()[QStringLiteral("If")].toInt(), 2);
        const QJsonObject input = j[QStringLiteral("inputs")].toArray().at(0).toObject();
        QCOMPARE(input[QStringLiteral("name")].toString(), QStringLiteral("x"));
        QCOMPARE(input[QStringLiteral("dtype")].toString(), QStringLiteral("float32"));
        QCOMPARE(input[QStringLiteral("shape")].toArray(), (QJsonArray{3, 4}));
        for (const char* key : {"file", "producer", "outputs", "parameters", "functions",
                                "unknown_shape_values", "warnings"})
            QVERIFY2(j.contains(QLatin1String(key)), key);
    }

    void jsonShapesUseNamesAndNulls() {
        Run r = cli({QStringLiteral("inspect"), QStringLiteral("--json"),
                     QString::fromStdString(fsc::test::fixture("good/symbolic.onnx").string())});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
        const QJsonArray inputs = j[QStringLiteral("inputs")].toArray();
        QCOMPARE(inputs.at(0).toObject()[QStringLiteral("shape")].toArray(),
                 (QJsonArray{QStringLiteral("batch"), QJsonValue(), 8}));
        QVERIFY(inputs.at(1).toObject()[QStringLiteral("shape")].isNull());
        QCOMPARE(j[QStringLiteral("unknown_shape_values")].toArray().size(), 4);
    }

    void badModelsExitWithStatus2AndOneLine_data() {
        QTest::addColumn<QString>("file");
        const QJsonObject cases = fsc::test::badCases();
        for (auto it = cases.begin(); it != cases.end(); ++it) QTest::newRow(qPrintable(it.key())) << it.key();
        QTest::newRow("missing") << QStringLiteral("does-not-exist.onnx");
    }
    void badModelsExitWithStatus2AndOneLine() {
        QFETCH(QString, file);
        const QString path = QStringLiteral(FSC_FIXTURE_DIR "/bad/") + file;
        Run r = cli({QStringLiteral("inspect"), path});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.out.isEmpty());
        QCOMPARE(r.err.count(QLatin1Char('\n')), 1);
        QVERIFY2(r.err.startsWith(QStringLiteral("error: ") + path + QStringLiteral(": ")), qPrintable(r.err));
    }

    void usageErrorsAreTold() {
        Run r = cli({QStringLiteral("inspect")});
        QCOMPARE(r.exitCode, 64);
        QVERIFY(r.err.contains(QStringLiteral("inspect needs exactly one MODEL")));
        r = cli({QStringLiteral("inspect"), QStringLiteral("--jsn"), QStringLiteral(FSC_SAMPLE_MODEL)});
        QCOMPARE(r.exitCode, 64);
        QVERIFY(r.err.contains(QStringLiteral("unknown option --jsn")));
        r = cli({QStringLiteral("frobnicate")});
        QCOMPARE(r.exitCode, 64);
    }

    void exportThenDumpMatches() {
        QDir().mkpath(QStringLiteral(FSC_TEST_TMP));
        const QString out = QStringLiteral(FSC_TEST_TMP "/cli_export.onnx");
        QCOMPARE(cli({QStringLiteral("export"), QStringLiteral(FSC_SAMPLE_MODEL), out}).exitCode, 0);
        Run a = cli({QStringLiteral("dump"), QStringLiteral(FSC_SAMPLE_MODEL)});
        Run b = cli({QStringLiteral("dump"), out});
        QCOMPARE(a.exitCode, 0);
        QCOMPARE(b.out, a.out);
    }

    void devicesAnswersWithOrWithoutAGpu() {
        Run r = cli({QStringLiteral("devices")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains(QStringLiteral("cuda:0")) || r.out.contains(QStringLiteral("no CUDA device: ")),
                 qPrintable(r.out));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
