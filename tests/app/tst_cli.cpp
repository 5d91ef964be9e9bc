// fusescope-cli as a user runs it: output, JSON layout, exit statuses, and no Qt linked.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <cmath>

#include "test_support.h"
#include "core/onnx_import.h"
#include "core/tensor_io.h"
#include "tensor_compare.h"

namespace {

QByteArray readFile(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

struct Run {
    int exitCode = -1;
    QString out;
    QString err;
};

Run cli(const QStringList& args, const QStringList& env = {}) {
    QProcess p;
    if (!env.isEmpty()) {
        QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
        for (const QString& kv : env) e.insert(kv.section('=', 0, 0), kv.section('=', 1));
        p.setProcessEnvironment(e);
    }
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

// The CLI under ASan + UBSan at -O0 runs models about 13x slower: the sanitizer build keeps
// the functions about input handling and leaves the compute-heavy ones to the plain build.
#ifdef __SANITIZE_ADDRESS__
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#define FSC_SKIP_WHEN_SANITIZED() \
    if (kSanitized) QSKIP("compute-heavy under the sanitizers; the plain builds run it")

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
        QVERIFY(r.out.contains(QStringLiteral("parameters    9,920 (38.8 KiB) in 33 initializers")));
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
        QCOMPARE(j[QStringLiteral("unknown_shape_values")].toArray().size(), 3);
        QCOMPARE(j[QStringLiteral("unknown_rank_values")].toInt(), 2);
        QCOMPARE(j[QStringLiteral("unnamed_dim_values")].toInt(), 1);
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
        // GPU-only flags on the CPU backend: a usage error naming the flag, not a silent no-op.
        for (const QStringList& flags : {QStringList{QStringLiteral("run"), QStringLiteral("--tf32")},
                                         QStringList{QStringLiteral("run"), QStringLiteral("--device-io")},
                                         QStringList{QStringLiteral("profile"), QStringLiteral("--tf32")}}) {
            r = cli(flags + QStringList{QStringLiteral(FSC_SAMPLE_MODEL)});
            QCOMPARE(r.exitCode, 64);
            QVERIFY2(r.err.contains(flags[1] + QStringLiteral(" needs --backend cuda")), qPrintable(r.err));
        }
    }

    // The walkthrough's figures are what inspect, compile (--quantize, --tp, --pp) and run
    // report (one source of truth); the page is self-contained.
    void walkthroughFiguresAreTheOtherCommandsFigures() {
        FSC_SKIP_WHEN_SANITIZED();
        const QString model = QStringLiteral(FSC_SAMPLE_MODEL);
        QTemporaryDir dir;
        const QString html = dir.filePath(QStringLiteral("walk.html"));
        // One thread count on both sides: automatic threads follow the load on the cores, and
        // a reduction split for another count rounds differently (a cosine once differed in
        // its 11th digit between the walkthrough and compile while other tests ran).
        const QStringList threads{QStringLiteral("--threads"), QStringLiteral("2")};
        Run r = cli(QStringList{QStringLiteral("walkthrough"), model, QStringLiteral("--json"), QStringLiteral("-o"), html} + threads);
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.err.contains(QStringLiteral("walkthrough: chapter 3 (3 of 10)")), qPrintable(r.err));  // progress
        const QJsonObject walk = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(walk[QStringLiteral("schema")].toString(), QStringLiteral("fusescope.walkthrough/1"));
        const QJsonArray chapters = walk[QStringLiteral("chapters")].toArray();
        QCOMPARE(chapters.size(), 10);  // every chapter, in order
        const QList<int> ids{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
        for (qsizetype i = 0; i < chapters.size(); ++i)
            QCOMPARE(chapters[i].toObject()[QStringLiteral("id")].toInt(), ids[i]);
        auto figuresOf = [&](int id) { return chapters[ids.indexOf(id)].toObject()[QStringLiteral("figures")].toObject(); };
        for (const auto& c : chapters) QVERIFY(!c.toObject()[QStringLiteral("paragraphs")].toArray().isEmpty());
        // Predict, then reveal: every chapter that applies asks first and answers with figures.
        for (const auto& c : chapters) {
            const QJsonObject chapter = c.toObject();
            if (chapter.contains(QStringLiteral("not_applicable"))) continue;
            const QString answer = chapter[QStringLiteral("answer")].toString();
            QVERIFY2(chapter[QStringLiteral("question")].toString().endsWith(QLatin1Char('?')), qPrintable(answer));
            QVERIFY2(answer.contains(QRegularExpression(QStringLiteral("[0-9]"))), qPrintable(answer));
            QVERIFY2(!answer.contains(QLatin1Char('?')), qPrintable(answer));  // no figure missing from it
        }

        // Chapter 1: the model as inspect --json describes it.
        Run inspect = cli({QStringLiteral("inspect"), model, QStringLiteral("--json")});
        QCOMPARE(inspect.exitCode, 0);
        const QJsonObject figures1 = figuresOf(1);
        QCOMPARE(figures1[QStringLiteral("model")].toObject(), QJsonDocument::fromJson(inspect.out.toUtf8()).object());
        QCOMPARE(figures1[QStringLiteral("symbolic_dims")].toArray(), QJsonArray{QStringLiteral("batch")});
        QCOMPARE(figures1[QStringLiteral("top_level_scopes")].toObject()[QStringLiteral("transformer")].toInt(), 34);

        // Chapter 3: compile --json's passes, pass for pass (timings aside).
        Run compile = cli({QStringLiteral("compile"), model, QStringLiteral("--json")});
        QCOMPARE(compile.exitCode, 0);
        const QJsonObject compiled = QJsonDocument::fromJson(compile.out.toUtf8()).object();
        const QJsonObject figures3 = figuresOf(3);
        QCOMPARE(figures3[QStringLiteral("nodes_after")].toInt(), compiled[QStringLiteral("nodes_after")].toInt());
        const QJsonArray passes = figures3[QStringLiteral("passes")].toArray();
        const QJsonArray expected = compiled[QStringLiteral("passes")].toArray();
        QCOMPARE(passes.size(), expected.size());
        for (qsizetype i = 0; i < passes.size(); ++i) {
            QJsonObject got = passes[i].toObject(), want = expected[i].toObject();
            got.remove(QStringLiteral("ms"));
            want.remove(QStringLiteral("ms"));
            QCOMPARE(got, want);
        }

        // The page: every chapter, no scripts or links out.
        QFile page(html);
        QVERIFY(page.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(page.readAll());
        QVERIFY(text.contains(QStringLiteral("<h2 id=\"chapter-1\">")) && text.contains(QStringLiteral("<h2 id=\"chapter-3\">")));
        QVERIFY(text.contains(QStringLiteral("<summary>Reveal this model's answer</summary>")));
        // Chapter 4 draws one real group as it was before fusion (the sample's attention).
        QVERIFY(text.contains(QStringLiteral("Before fusion: the 8 nodes (Transpose + Transpose + Transpose + MatMul + Div + "
                                             "Softmax + MatMul + Transpose) that became one Attention node")));
        QVERIFY(!text.contains(QStringLiteral("<th>median_ms</th>")) && !text.contains(QStringLiteral("<th>schema</th>")));
        QString offline = text;
        offline.remove(QStringLiteral("xmlns=\"http://www.w3.org/2000/svg\""));  // a namespace name, never fetched
        QVERIFY(!offline.contains(QStringLiteral("<script")) && !offline.contains(QStringLiteral("http")));

        // Chapter 2: the imported graph (inspect's node count) against the compiled one
        // (compile's), timed in the same run; the fused graph moves fewer bytes.
        const QJsonObject figures2 = figuresOf(2);
        const QJsonObject eager = figures2[QStringLiteral("eager")].toObject(), fused = figures2[QStringLiteral("compiled")].toObject();
        QCOMPARE(eager[QStringLiteral("nodes")].toInt(),
                 figures1[QStringLiteral("model")].toObject()[QStringLiteral("nodes")].toObject()[QStringLiteral("top_level")].toInt());
        QCOMPARE(fused[QStringLiteral("nodes")].toInt(), compiled[QStringLiteral("nodes_after")].toInt());
        QVERIFY(eager[QStringLiteral("kernels")].toInt() > fused[QStringLiteral("kernels")].toInt());
        QVERIFY(eager[QStringLiteral("bytes_moved")].toDouble() > fused[QStringLiteral("bytes_moved")].toDouble());
        QVERIFY(eager[QStringLiteral("median_ms")].toDouble() > 0 && fused[QStringLiteral("median_ms")].toDouble() > 0);
        QCOMPARE(figures2[QStringLiteral("speedup")].toDouble(),
                 eager[QStringLiteral("median_ms")].toDouble() / fused[QStringLiteral("median_ms")].toDouble());
        QCOMPARE(figures2[QStringLiteral("timing")].toObject()[QStringLiteral("iterations")].toInt(), 30);

        // Chapter 10: two warm-up runs, then 30 whose order
        // statistics are consistent and whose histogram holds them all.
        const QJsonObject figures10 = figuresOf(10);
        const QJsonObject warmed = figures10[QStringLiteral("with_warmup")].toObject();
        const QJsonArray warmup = figures10[QStringLiteral("warmup_runs_ms")].toArray();
        QCOMPARE(figures10[QStringLiteral("timing")].toObject()[QStringLiteral("warmup_runs")].toInt(), int(warmup.size()));
        QVERIFY(figures10[QStringLiteral("with_warmup")].toObject()[QStringLiteral("p99_note")].toString().contains(
            QStringLiteral("the p99 is the slowest run")));
        QCOMPARE(warmup.size(), 2);
        QCOMPARE(warmed[QStringLiteral("iterations")].toInt(), 30);
        auto ms = [&](const char* key) { return warmed[QLatin1String(key)].toDouble(); };
        QVERIFY(ms("min_ms") <= ms("p50_ms") && ms("p50_ms") <= ms("p90_ms") && ms("p90_ms") <= ms("p99_ms") &&
                ms("p99_ms") <= ms("max_ms"));
        int binned = 0;
        for (const auto& bin : figures10[QStringLiteral("histogram")].toArray()) binned += bin.toObject()[QStringLiteral("count")].toInt();
        QCOMPARE(binned, 30);
        QCOMPARE(figures10[QStringLiteral("without_warmup")].toObject()[QStringLiteral("iterations")].toInt(), 32);
        // One latency per pipeline per batch: chapters 2, 8 (float32) and 10 report the one
        // measurement of the compiled model, not three that could disagree.
        const double compiledMs = fused[QStringLiteral("median_ms")].toDouble();
        QCOMPARE(ms("p50_ms"), compiledMs);
        const QJsonObject float32 = figuresOf(8)[QStringLiteral("precisions")].toArray()[0].toObject();
        QCOMPARE(float32[QStringLiteral("precision")].toString(), QStringLiteral("float32"));
        QCOMPARE(float32[QStringLiteral("median_ms")].toDouble(), compiledMs);
        QVERIFY(figuresOf(8)[QStringLiteral("timing")].toObject()[QStringLiteral("float32")].toString().contains(
            QStringLiteral("chapters 2, 8 and 10")));

        // Chapter 6: the memory plan run --json reports, and its curve peaks at the bound.
        Run run = cli({QStringLiteral("run"), model, QStringLiteral("--json")});
        QCOMPARE(run.exitCode, 0);
        const QJsonObject memory = QJsonDocument::fromJson(run.out.toUtf8()).object()[QStringLiteral("memory")].toObject();
        const QJsonObject figures6 = figuresOf(6);
        const QJsonObject planned = compiled[QStringLiteral("memory")].toObject();  // compile's plan, not run
        for (const char* key : {"arena_bytes", "naive_bytes", "lower_bound_bytes"}) {
            QCOMPARE(figures6[QLatin1String(key)].toInteger(), memory[QLatin1String(key)].toInteger());
            QCOMPARE(figures6[QLatin1String(key)].toInteger(), planned[QLatin1String(key)].toInteger());
        }
        qint64 peak = 0;
        for (const auto& step : figures6[QStringLiteral("live_bytes_by_step")].toArray())
            peak = std::max(peak, step.toObject()[QStringLiteral("live_bytes")].toInteger());
        QCOMPARE(peak, memory[QStringLiteral("lower_bound_bytes")].toInteger());

        // Chapter 4: the fusion passes as compile --json records them; every kind of fused
        // group replaced nodes that moved more bytes, one launch per group left.
        const QJsonObject figures4 = figuresOf(4);
        for (const auto& entry : figures4[QStringLiteral("fusion_passes")].toArray()) {
            const QJsonObject pass = entry.toObject();
            const auto record = std::find_if(expected.begin(), expected.end(), [&](const QJsonValue& p) {
                return p.toObject()[QStringLiteral("name")] == pass[QStringLiteral("pass")];
            });
            QVERIFY2(record != expected.end(), qPrintable(pass[QStringLiteral("pass")].toString()));
            QCOMPARE(pass[QStringLiteral("nodes_after")].toInt(), (*record).toObject()[QStringLiteral("nodes_after")].toInt());
        }
        const QJsonArray kinds = figures4[QStringLiteral("by_fused_op")].toArray();
        QStringList kindNames;
        for (const auto& entry : kinds) {
            const QJsonObject k = entry.toObject();
            kindNames << k[QStringLiteral("fused_op")].toString();
            QCOMPARE(k[QStringLiteral("launches_saved")].toInt(), k[QStringLiteral("nodes_replaced")].toInt() - k[QStringLiteral("groups")].toInt());
            QVERIFY(k[QStringLiteral("bytes_after")].toDouble() < k[QStringLiteral("bytes_before")].toDouble());
            QVERIFY(k[QStringLiteral("ms_before")].toDouble() > 0 && k[QStringLiteral("ms_after")].toDouble() > 0);
        }
        QVERIFY2(kindNames.contains(QStringLiteral("Attention")), qPrintable(kindNames.join(',')));
        QVERIFY(figures4[QStringLiteral("generated_kernel")].toString().startsWith(QStringLiteral("none: ")));
        // An element-wise chain gets a generated kernel: its CUDA source is the one compile --show-kernels prints.
        const QString chain = QStringLiteral(FSC_FIXTURE_DIR "/good/elementwise.onnx");
        r = cli({QStringLiteral("walkthrough"), chain, QStringLiteral("--json"), QStringLiteral("--chapters"), QStringLiteral("4")});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject kernel = QJsonDocument::fromJson(r.out.toUtf8())
                                       .object()[QStringLiteral("chapters")][0]
                                       .toObject()[QStringLiteral("figures")]
                                       .toObject()[QStringLiteral("generated_kernel")]
                                       .toObject();
        Run shown = cli({QStringLiteral("compile"), chain, QStringLiteral("--show-kernels")});
        QCOMPARE(shown.exitCode, 0);
        QVERIFY(kernel[QStringLiteral("cuda_source")].toString().contains(QStringLiteral("__global__")));
        QVERIFY(shown.out.contains(kernel[QStringLiteral("cuda_source")].toString()));

        // Chapter 5: every compiled node has a CUDA lowering; the roofs are measured.
        const QJsonObject figures5 = figuresOf(5);
        int lowered = 0;
        for (const auto& count : figures5[QStringLiteral("cuda_backend_nodes_by_library")].toObject()) lowered += count.toInt();
        QCOMPARE(lowered, compiled[QStringLiteral("nodes_after")].toInt());
        QVERIFY(figures5[QStringLiteral("cuda_backend_nodes_by_library")].toObject().contains(QStringLiteral("cuBLASLt")));
        QVERIFY(figures5[QStringLiteral("roofs")].toObject()[QStringLiteral("ridge_flops_per_byte")].toDouble() > 0);
        for (const auto& row : figures5[QStringLiteral("slowest_nodes")].toArray())
            QVERIFY(QStringList({QStringLiteral("memory"), QStringLiteral("compute")})
                        .contains(row.toObject()[QStringLiteral("bound")].toString()));

        // Chapter 8: compile --quantize's accuracy on the same 4 generated samples.
        const QJsonArray precisions = figuresOf(8)[QStringLiteral("precisions")].toArray();
        QCOMPARE(precisions.size(), 4);
        for (int i = 1; i < 4; ++i) {
            const QJsonObject row = precisions[i].toObject();
            const QString kind = row[QStringLiteral("precision")].toString();
            QStringList args{QStringLiteral("compile"), model, QStringLiteral("--json"), QStringLiteral("--quantize"), kind,
                             QStringLiteral("--calibration-samples"), QStringLiteral("4")};
            if (kind == QStringLiteral("int8")) args << QStringLiteral("--no-sensitivity");
            Run q = cli(args + threads);
            QCOMPARE(q.exitCode, 0);
            const QJsonObject report = QJsonDocument::fromJson(q.out.toUtf8()).object()[QStringLiteral("quantization")].toObject();
            const QJsonObject error = report[report.contains(QStringLiteral("held_back_set")) ? QStringLiteral("held_back_set")
                                                                                              : QStringLiteral("calibration_set")]
                                          .toObject();
            QCOMPARE(row[QStringLiteral("cosine")].toDouble(), error[QStringLiteral("cosine")].toDouble());
            QVERIFY(row[QStringLiteral("weight_bytes")].toInteger() < precisions[0].toObject()[QStringLiteral("weight_bytes")].toInteger());
        }
        QVERIFY(!figuresOf(8)[QStringLiteral("int8_most_sensitive_layers")].toArray().isEmpty());
        for (const QJsonValue layer : figuresOf(8)[QStringLiteral("int8_most_sensitive_layers")].toArray()) {
            const QJsonObject l = layer.toObject();
            QCOMPARE(l[QStringLiteral("one_minus_cosine")].toDouble(), 1.0 - l[QStringLiteral("cosine")].toDouble());
        }

        // Chapter 9: compile --tp/--pp's collectives and simulated time.
        const QJsonArray partitions = figuresOf(9)[QStringLiteral("partitions")].toArray();
        QCOMPARE(partitions.size(), 4);
        for (const auto& entry : partitions) {
            const QJsonObject p = entry.toObject();
            const bool pipeline = p[QStringLiteral("partition")].toString() == QStringLiteral("pipeline parallel");
            const QString devices = QString::number(p[QStringLiteral("devices")].toInt());
            Run par = cli(QStringList{QStringLiteral("compile"), model, QStringLiteral("--json"),
                                      pipeline ? QStringLiteral("--pp") : QStringLiteral("--tp"), devices} +
                          threads);
            QCOMPARE(par.exitCode, 0);
            const QJsonObject parallel = QJsonDocument::fromJson(par.out.toUtf8()).object()[QStringLiteral("parallel")].toObject();
            QCOMPARE(p[QStringLiteral("all_reduces")].toInt(), parallel[QStringLiteral("all_reduces")].toInt());
            QCOMPARE(p[QStringLiteral("simulated_us")].toObject()[QStringLiteral("nvlink4")].toDouble(),
                     parallel[QStringLiteral("simulation")].toObject()[QStringLiteral("total_us")].toDouble());
        }
        QVERIFY(partitions[1].toObject()[QStringLiteral("all_reduces")].toInt() > 0);  // the sample is a transformer
        // What the pass would not split is said per partition: the sample's 10-class head does
        // not divide by 4 devices.
        const QJsonArray rejected = partitions[1].toObject()[QStringLiteral("rejected")].toArray();
        QVERIFY(!rejected.isEmpty());
        QVERIFY2(rejected[0].toObject()[QStringLiteral("reason")].toString().contains(QStringLiteral("do not divide by 4")),
                 qPrintable(QJsonDocument(rejected).toJson()));
        QVERIFY(!figuresOf(9)[QStringLiteral("rule_of_thumb")].toString().isEmpty());

        // The page draws charts inline.
        QVERIFY(text.count(QStringLiteral("<svg")) >= 6);

        // Chapter 7: compile --json's graph-break analysis, on a model with a vendor op.
        const QString breaks = QStringLiteral(FSC_FIXTURE_DIR "/good/breaks.onnx");
        r = cli({QStringLiteral("walkthrough"), breaks, QStringLiteral("--json"), QStringLiteral("--chapters"), QStringLiteral("7")});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject chapter7 = QJsonDocument::fromJson(r.out.toUtf8()).object()[QStringLiteral("chapters")][0].toObject();
        compile = cli({QStringLiteral("compile"), breaks, QStringLiteral("--json")});
        QCOMPARE(compile.exitCode, 0);
        const QJsonObject figures7 = chapter7[QStringLiteral("figures")].toObject();
        QCOMPARE(figures7[QStringLiteral("graph_breaks")].toObject(),
                 QJsonDocument::fromJson(compile.out.toUtf8()).object()[QStringLiteral("graph_breaks")].toObject());
        QVERIFY(figures7[QStringLiteral("bytes_crossing_per_run")].toInt() >= 64);  // 'r', float32[2,8]
        QCOMPARE(figures7[QStringLiteral("host_ops")].toObject()[QStringLiteral("QuickGelu")].toInt(), 1);
        QVERIFY(!chapter7.contains(QStringLiteral("not_applicable")));
        // A model that does not run on the CPU (a model-local function): chapters 2, 6 and 10
        // say why instead of failing the page.
        r = cli({QStringLiteral("walkthrough"), QStringLiteral(FSC_FIXTURE_DIR "/good/functions.onnx"), QStringLiteral("--json"),
                 QStringLiteral("--chapters"), QStringLiteral("2,6,10")});
        QCOMPARE(r.exitCode, 0);
        for (const auto& chapter : QJsonDocument::fromJson(r.out.toUtf8()).object()[QStringLiteral("chapters")].toArray())
            QVERIFY(chapter.toObject()[QStringLiteral("not_applicable")].toString().contains(
                QStringLiteral("no cpu kernel for local.fns.DoubleRelu")));
        // --iterations and --warmup reach every timed chapter.
        r = cli({QStringLiteral("walkthrough"), model, QStringLiteral("--json"), QStringLiteral("--chapters"), QStringLiteral("2,10"),
                 QStringLiteral("--iterations"), QStringLiteral("3"), QStringLiteral("--warmup"), QStringLiteral("1")});
        QCOMPARE(r.exitCode, 0);
        const QJsonArray timed = QJsonDocument::fromJson(r.out.toUtf8()).object()[QStringLiteral("chapters")].toArray();
        QCOMPARE(timed[0].toObject()[QStringLiteral("figures")][QStringLiteral("timing")][QStringLiteral("iterations")].toInt(), 3);
        QCOMPARE(timed[0].toObject()[QStringLiteral("figures")][QStringLiteral("timing")][QStringLiteral("warmup")].toInt(), 1);
        QCOMPARE(timed[1].toObject()[QStringLiteral("figures")][QStringLiteral("with_warmup")][QStringLiteral("iterations")].toInt(), 3);
        QCOMPARE(timed[1].toObject()[QStringLiteral("figures")][QStringLiteral("warmup_runs_ms")].toArray().size(), 1);
        // A --calibration that is not a folder is refused before any work, in one line.
        r = cli({QStringLiteral("walkthrough"), model, QStringLiteral("--json"), QStringLiteral("--calibration"),
                 QStringLiteral("/nonexistent/calibration")});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.trimmed() == QStringLiteral("error: /nonexistent/calibration: not a folder of calibration inputs (--calibration)"),
                 qPrintable(r.err));
        // The sample runs wholly on the GPU: the chapter says so and what model would show one.
        r = cli({QStringLiteral("walkthrough"), model, QStringLiteral("--json"), QStringLiteral("--chapters"), QStringLiteral("7")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(QJsonDocument::fromJson(r.out.toUtf8())
                    .object()[QStringLiteral("chapters")][0]
                    .toObject()[QStringLiteral("not_applicable")]
                    .toString()
                    .contains(QStringLiteral("no break")));

        // --backend cuda: the timed chapters on the (here simulated) GPU; none: one line.
        r = cli({QStringLiteral("walkthrough"), model, QStringLiteral("--json"), QStringLiteral("--backend"), QStringLiteral("cuda"),
                 QStringLiteral("--chapters"), QStringLiteral("2,5,10")},
                {QStringLiteral("FUSESCOPE_DEVICE=simulated")});
        QCOMPARE(r.exitCode, 0);
        for (const auto& chapter : QJsonDocument::fromJson(r.out.toUtf8()).object()[QStringLiteral("chapters")].toArray()) {
            const QJsonObject c = chapter.toObject();
            QVERIFY2(!c.contains(QStringLiteral("not_applicable")), qPrintable(c[QStringLiteral("not_applicable")].toString()));
            if (c[QStringLiteral("id")].toInt() != 5)
                QCOMPARE(c[QStringLiteral("figures")].toObject()[QStringLiteral("timing")].toObject()[QStringLiteral("backend")].toString(),
                         QStringLiteral("cuda"));
        }
        r = cli({QStringLiteral("walkthrough"), model, QStringLiteral("--json"), QStringLiteral("--backend"), QStringLiteral("cuda")});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.trimmed().count('\n') == 0 && r.err.contains(QStringLiteral("--backend cuda:")), qPrintable(r.err));

        // Chapters that do not exist are refused by number.
        r = cli({QStringLiteral("walkthrough"), model, QStringLiteral("--json"), QStringLiteral("--chapters"), QStringLiteral("12")});
        QCOMPARE(r.exitCode, 64);
        r = cli({QStringLiteral("walkthrough"), model});
        QCOMPARE(r.exitCode, 64);  // nowhere to write it
        r = cli({QStringLiteral("walkthrough"), QStringLiteral("/nonexistent/model.onnx"), QStringLiteral("--json")});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("error: /nonexistent/model.onnx: ")), qPrintable(r.err));
    }

    // The options several commands share are declared once (app/cli/cli_app.cpp): each
    // command refuses a bad value with the same words and status 64.
    void sharedOptionsSayTheSameEverywhere() {
        const QString model = QStringLiteral(FSC_SAMPLE_MODEL);
        for (const char* command : {"run", "profile", "compile"}) {
            Run r = cli({QString::fromLatin1(command), model, QStringLiteral("--dim"), QStringLiteral("batch")});
            QCOMPARE(r.exitCode, 64);
            QVERIFY2(r.err.contains(QStringLiteral("--dim: needs NAME=VALUE with VALUE >= 1")), qPrintable(r.err));
            QVERIFY2(r.err.startsWith(QStringLiteral("fusescope-cli ") + QString::fromLatin1(command) + QStringLiteral(": ")),
                     qPrintable(r.err));
            // A dim of 0 is refused as the flag is read, naming it.
            r = cli({QString::fromLatin1(command), model, QStringLiteral("--dim"), QStringLiteral("batch=0")});
            QCOMPARE(r.exitCode, 64);
            QVERIFY2(r.err.contains(QStringLiteral("--dim: needs NAME=VALUE with VALUE >= 1")), qPrintable(r.err));
            // A name no input has is an error that lists the names they have, not ignored.
            r = cli({QString::fromLatin1(command), model, QStringLiteral("--dim"), QStringLiteral("nosuch=3")});
            QCOMPARE(r.exitCode, 2);
            QVERIFY2(r.err.contains(QStringLiteral("no input has a dim named 'nosuch' (their named dims: batch)")),
                     qPrintable(r.err));
            r = cli({QString::fromLatin1(command), model, QStringLiteral("--passes"), QStringLiteral("a"),
                     QStringLiteral("--pipeline"), QStringLiteral("O1")});
            QCOMPARE(r.exitCode, 64);
            QVERIFY2(r.err.contains(QStringLiteral("give --pipeline or --passes, not both")), qPrintable(r.err));
        }
        for (const char* command : {"run", "profile", "walkthrough", "compile"}) {
            Run r = cli({QString::fromLatin1(command), model, QStringLiteral("--threads"), QStringLiteral("0")});
            QCOMPARE(r.exitCode, 64);
            QVERIFY2(r.err.contains(QStringLiteral("--threads: needs a number >= 1")), qPrintable(r.err));
        }
        // Help is generated from the same declarations, groups as written.
        Run help = cli({QStringLiteral("profile"), QStringLiteral("--help")});
        QCOMPARE(help.exitCode, 0);
        for (const char* line : {"usage: fusescope-cli profile MODEL [options]", "  --threads N", "  --dim NAME=VALUE",
                                 "compilation (run before profiling):", "  -o,--store RUN.fsdb"})
            QVERIFY2(help.out.contains(QLatin1String(line)), line);
    }

    void versionNamesTheCommitAndTheLibraries() {
        Run r = cli({QStringLiteral("--version")});
        QCOMPARE(r.exitCode, 0);
        const QStringList lines = r.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 2);
        // The first line is what help2man and bug reports read: program, version, commit.
        QVERIFY2(QRegularExpression(QStringLiteral("^fusescope-cli \\d+\\.\\d+\\.\\d+ \\(commit ([0-9a-f]{12}(-modified)?|unknown)\\)$"))
                     .match(lines[0])
                     .hasMatch(),
                 qPrintable(lines[0]));
        for (const char* library : {"ONNX 1.", "protobuf ", "oneDNN ", "SQLite 3.", "CUDA "})
            QVERIFY2(lines[1].contains(QLatin1String(library)), qPrintable(lines[1]));
    }

    // Every command answers --help with its usage on stdout and status 0 (the man page and
    // the bash completion are generated from these).
    void everyCommandHasHelp_data() {
        QTest::addColumn<QString>("command");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("inspect") << "inspect" << "--json";
        QTest::newRow("dump") << "dump" << "--no-infer";
        QTest::newRow("export") << "export" << "--external-data";
        QTest::newRow("compile") << "compile" << "--pipeline";
        QTest::newRow("run") << "run" << "--iterations";
        QTest::newRow("profile") << "profile" << "--trace";
        QTest::newRow("devices") << "devices" << "CUDA devices";
    }
    void everyCommandHasHelp() {
        QFETCH(QString, command);
        QFETCH(QString, mentions);
        Run r = cli({command, QStringLiteral("--help")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.startsWith(QStringLiteral("usage: fusescope-cli ") + command), qPrintable(r.out));
        QVERIFY2(r.out.contains(mentions), qPrintable(r.out));
        // Every command's help ends with the exit statuses, even one with a footer of its own.
        QVERIFY2(r.out.contains(QStringLiteral("exit with status 2")), qPrintable(r.out));
        QVERIFY(r.err.isEmpty());
    }

    // Without --iterations a run times enough runs for a median, after a warm-up: one cold run
    // once reported 42 ms for a model that takes 0.17.
    void runDefaultsToAWarmupAndAMedian() {
        Run r = cli({QStringLiteral("run"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--json")});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject lat = QJsonDocument::fromJson(r.out.toUtf8()).object()[QStringLiteral("latency_ms")].toObject();
        QCOMPARE(lat[QStringLiteral("warmup")].toInt(), 1);
        QVERIFY(lat[QStringLiteral("iterations_automatic")].toBool());
        QVERIFY2(lat[QStringLiteral("iterations")].toInt() >= 3, qPrintable(r.out));
        QCOMPARE(lat[QStringLiteral("samples")].toArray().size(), lat[QStringLiteral("iterations")].toInt());
        Run text = cli({QStringLiteral("run"), QStringLiteral(FSC_SAMPLE_MODEL)});
        QVERIFY2(text.out.contains(QStringLiteral("iterations (automatic) after 1 warm-up")), qPrintable(text.out));
    }

    void exportThenDumpMatches() {
        QDir().mkpath(QStringLiteral(FSC_TEST_TMP));
        const QString out = QStringLiteral(FSC_TEST_TMP "/cli_export.onnx");
        QCOMPARE(cli({QStringLiteral("export"), QStringLiteral(FSC_SAMPLE_MODEL), out}).exitCode, 0);
        Run a = cli({QStringLiteral("dump"), QStringLiteral(FSC_SAMPLE_MODEL)});
        Run b = cli({QStringLiteral("dump"), out});
        QCOMPARE(a.exitCode, 0);
        QCOMPARE(b.out, a.out);
        // Over its own input: refused, the model left as it was (export and compile -o alike).
        const QByteArray before = readFile(out);
        for (const QStringList& args : {QStringList{QStringLiteral("export"), out, out},
                                        QStringList{QStringLiteral("compile"), out, QStringLiteral("-o"), out}}) {
            Run self = cli(args);
            QCOMPARE(self.exitCode, 2);
            QVERIFY2(self.err.contains(QStringLiteral("cli_export.onnx: is the model being read; write to another file")),
                     qPrintable(self.err));
            QCOMPARE(readFile(out), before);
        }
        // A file that cannot be written: the system's reason.
        Run nowhere = cli({QStringLiteral("export"), out, QStringLiteral("/nonexistent/dir/x.onnx")});
        QCOMPARE(nowhere.exitCode, 2);
        QVERIFY2(nowhere.err.contains(QStringLiteral("/nonexistent/dir/x.onnx: cannot write the model (No such file or directory)")),
                 qPrintable(nowhere.err));
    }

    void devicesAnswersWithOrWithoutAGpu() {
        Run r = cli({QStringLiteral("devices")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains(QStringLiteral("cuda:0")) || r.out.contains(QStringLiteral("no CUDA device: ")),
                 qPrintable(r.out));
    }
    // ---- run -------------------------------------------------------------------------

    void runPrintsOutputsLatencyAndMemoryPlan() {
        Run r = cli({QStringLiteral("run"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--json"),
                     QStringLiteral("--iterations"), QStringLiteral("3"), QStringLiteral("--warmup"),
                     QStringLiteral("1"), QStringLiteral("--profile")});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(j[QStringLiteral("schema")].toString(), QStringLiteral("fusescope.run/1"));
        const QJsonObject out = j[QStringLiteral("outputs")].toArray()[0].toObject();
        QCOMPARE(out[QStringLiteral("name")].toString(), QStringLiteral("logits"));
        QCOMPARE(out[QStringLiteral("shape")].toArray().size(), 2);
        QVERIFY(out[QStringLiteral("min")].toDouble() <= out[QStringLiteral("mean")].toDouble());
        QVERIFY(out[QStringLiteral("mean")].toDouble() <= out[QStringLiteral("max")].toDouble());
        const QJsonObject lat = j[QStringLiteral("latency_ms")].toObject();
        QCOMPARE(lat[QStringLiteral("iterations")].toInt(), 3);
        QVERIFY(lat[QStringLiteral("median")].toDouble() > 0);
        QVERIFY(lat[QStringLiteral("p90")].toDouble() >= lat[QStringLiteral("median")].toDouble());
        const QJsonArray samples = lat[QStringLiteral("samples")].toArray();  // the timed runs only
        QCOMPARE(samples.size(), 3);
        for (const QJsonValue& s : samples) {
            QVERIFY(s.toDouble() >= lat[QStringLiteral("min")].toDouble());
            QVERIFY(s.toDouble() <= lat[QStringLiteral("max")].toDouble());
        }
        const QJsonObject mem = j[QStringLiteral("memory")].toObject();
        QVERIFY(mem[QStringLiteral("arena_bytes")].toDouble() <= mem[QStringLiteral("naive_bytes")].toDouble());
        QVERIFY(mem[QStringLiteral("arena_bytes")].toDouble() >= mem[QStringLiteral("lower_bound_bytes")].toDouble());
        const QJsonArray profile = j[QStringLiteral("profile")].toArray();
        // Every node of the compiled graph (O2 by default), fewer than the sample's 42.
        QCOMPARE(j[QStringLiteral("pipeline")].toString(), QStringLiteral("O2"));
        QCOMPARE(profile.size(), j[QStringLiteral("nodes")].toInt());
        QVERIFY(profile.size() < 42);
        double share = 0;
        for (const auto& row : profile) share += row.toObject()[QStringLiteral("share")].toDouble();
        QVERIFY(std::fabs(share - 1.0) < 1e-6);
        QVERIFY(profile[0].toObject()[QStringLiteral("kernel")].toString().count(QLatin1Char('.')) == 2);
    }

    void compileExplainsEveryPass() {
        Run r = cli({QStringLiteral("compile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--pipeline"),
                     QStringLiteral("O1"), QStringLiteral("--explain")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.startsWith(QStringLiteral("pipeline O1: ")), qPrintable(r.out));
        QVERIFY(r.out.contains(QStringLiteral("eliminate-no-ops")));
        QVERIFY(r.out.contains(QStringLiteral("eliminate-dead-code")));
        QVERIFY(r.out.contains(QStringLiteral("matched ")));

        Run j = cli({QStringLiteral("compile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--json")});
        QCOMPARE(j.exitCode, 0);
        const QJsonObject o = QJsonDocument::fromJson(j.out.toUtf8()).object();
        QCOMPARE(o[QStringLiteral("schema")].toString(), QStringLiteral("fusescope.compile/1"));
        QCOMPARE(o[QStringLiteral("nodes_before")].toInt(), 42);
        QVERIFY(o[QStringLiteral("nodes_after")].toInt() < 42);
        QVERIFY(o[QStringLiteral("ops_before")].toObject().contains(QStringLiteral("Conv")));
        QVERIFY(!o[QStringLiteral("passes")].toArray().isEmpty());
        QVERIFY(o[QStringLiteral("passes")].toArray()[0].toObject().contains(QStringLiteral("ms")));
        // The sample's O2 graph runs on the CUDA table in one region.
        const QJsonObject breaks = o[QStringLiteral("graph_breaks")].toObject();
        QCOMPARE(breaks[QStringLiteral("backend")].toString(), QStringLiteral("cuda capabilities.txt"));
        QCOMPARE(breaks[QStringLiteral("regions")].toArray().size(), 1);
        QCOMPARE(breaks[QStringLiteral("host_nodes")].toInt(), 0);

        // A table without Conv: every Conv falls back to the CPU, each break with its reason.
        const QString caps = QStringLiteral(FSC_TEST_TMP "/no-conv-caps.txt");
        QFile f(caps);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("# no convolutions\nMatMul float32\nai.fusescope::FusedMatMul float32\nRelu float32\n");
        f.close();
        Run custom = cli({QStringLiteral("compile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--explain"),
                          QStringLiteral("--capabilities"), caps});
        QCOMPARE(custom.exitCode, 0);
        QVERIFY2(custom.out.contains(QStringLiteral("graph breaks (") + caps), qPrintable(custom.out));
        QVERIFY(custom.out.contains(QStringLiteral("[unsupported-op]")));
        QVERIFY(custom.out.contains(QStringLiteral("[device-to-host-copy]")));
        Run badCaps = cli({QStringLiteral("compile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--capabilities"),
                           QStringLiteral("/nonexistent/caps.txt")});
        QCOMPARE(badCaps.exitCode, 2);
        QVERIFY(badCaps.err.contains(QStringLiteral("/nonexistent/caps.txt: cannot open the capability table")));
    }

    void compileShowsTheGeneratedKernels() {
        // elementwise.onnx: Add(bias) -> Tanh -> Mul -> Sigmoid, fused into one node at O2.
        QTemporaryDir cache;
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("FUSESCOPE_KERNEL_CACHE"), cache.path());
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(FSC_CLI_PATH), {QStringLiteral("compile"), QStringLiteral(FSC_FIXTURE_DIR "/good/elementwise.onnx"),
                                               QStringLiteral("--show-kernels")});
        QVERIFY(p.waitForFinished(60000));
        const QString out = QString::fromUtf8(p.readAllStandardOutput());
        QCOMPARE(p.exitCode(), 0);
        QVERIFY2(out.contains(QStringLiteral("1 distinct generated CUDA kernel(s) for 1 node(s); NVRTC ")), qPrintable(out));
        QVERIFY(out.contains(QStringLiteral("(float32), node '/ew/Sigmoid/FusedElementwise'")));
        QVERIFY(out.contains(QStringLiteral("extern \"C\" __global__ void fsc_ew_")));
        // Add(bias) -> Tanh -> Mul -> Sigmoid as calls of the device's op table, which it carries.
        for (const char* op : {"Add", "Tanh", "Mul", "Sigmoid"})
            QVERIFY2(out.contains(QStringLiteral("ewApply(EwCode::%1, ").arg(QLatin1String(op))), op);
        QVERIFY(out.contains(QStringLiteral("FSC_HD float ewApply(EwCode op, float x, float y)")));
        if (out.contains(QStringLiteral("NVRTC unavailable"))) return;  // the source is still shown
        QVERIFY(out.contains(QStringLiteral("bytes of PTX for compute_90, ")));
        QVERIFY(!QDir(cache.path()).entryList({QStringLiteral("*.ptx")}).isEmpty());
    }

    // The same chain at two places is one kernel, printed once with the nodes that use it.
    void compileGroupsIdenticalKernels() {
        Run r = cli({QStringLiteral("compile"), QStringLiteral(FSC_FIXTURE_DIR "/good/repeated_chains.onnx"),
                     QStringLiteral("--show-kernels")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains(QStringLiteral("1 distinct generated CUDA kernel(s) for 2 node(s)")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("2 nodes: '/ew1/Sigmoid/FusedElementwise', '/ew2/Sigmoid/FusedElementwise'")),
                 qPrintable(r.out));
        QCOMPARE(r.out.count(QStringLiteral("extern \"C\" __global__ void fsc_ew_")), 1);
    }

    void profileStoresTracesAndCompares() {
        FSC_SKIP_WHEN_SANITIZED();
        QTemporaryDir dir;
        const QString store = dir.path() + QStringLiteral("/runs.fsdb"), trace = dir.path() + QStringLiteral("/t.json");
        Run r = cli({QStringLiteral("profile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--iterations"), QStringLiteral("3"),
                     QStringLiteral("-o"), store, QStringLiteral("--trace"), trace, QStringLiteral("--csv"), dir.path() + QStringLiteral("/csv")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains(QStringLiteral("profiler overhead ")), qPrintable(r.out));
        QVERIFY(r.out.contains(QStringLiteral("stored as run 1 in ")));
        QVERIFY(r.out.contains(QStringLiteral("(ai.fusescope::")));  // fused nodes in the table
        const QJsonObject t = QJsonDocument::fromJson(readFile(trace)).object();
        QVERIFY(!t[QStringLiteral("traceEvents")].toArray().isEmpty());
        QCOMPARE(t[QStringLiteral("metadata")].toObject()[QStringLiteral("iterations")].toInt(), 3);
        QVERIFY(QFile::exists(dir.path() + QStringLiteral("/csv/kernels.csv")));
        // A second run at O1, then the two compared node by node.
        QCOMPARE(cli({QStringLiteral("profile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--iterations"), QStringLiteral("2"),
                      QStringLiteral("--pipeline"), QStringLiteral("O1"), QStringLiteral("-o"), store}).exitCode, 0);
        Run list = cli({QStringLiteral("profile"), QStringLiteral("--list"), store});
        QCOMPARE(list.exitCode, 0);
        QVERIFY(list.out.contains(QStringLiteral(" O2 ")) && list.out.contains(QStringLiteral(" O1 ")));
        Run compare = cli({QStringLiteral("profile"), QStringLiteral("--compare"), store, QStringLiteral("1"), QStringLiteral("2")});
        QCOMPARE(compare.exitCode, 0);
        QVERIFY(compare.out.contains(QStringLiteral("run 1 ms   run 2 ms")));
        QVERIFY(!compare.out.contains(QStringLiteral("note: ")));  // one model: nothing to warn of
        // The same two runs in N-way compare, by the ONNX nodes their nodes were made from: every
        // node of the sample a row, the O2 run's fused groups shared by their nodes, no errors.
        Run nway = cli({QStringLiteral("compare"), QStringLiteral("--runs"), store, QStringLiteral("1,2"), QStringLiteral("--json"),
                        QStringLiteral("--baseline"), QStringLiteral("2")});
        QCOMPARE(nway.exitCode, 0);
        const QJsonObject n = QJsonDocument::fromJson(nway.out.toUtf8()).object();
        QCOMPARE(n[QStringLiteral("baseline")].toString(), QStringLiteral("run 2"));
        QCOMPARE(n[QStringLiteral("variants")].toArray().size(), 2);
        QVERIFY(n[QStringLiteral("variants")][0][QStringLiteral("output_error")].isNull());
        const QJsonArray nodeRows = n[QStringLiteral("rows")].toArray();
        QVERIFY2(nodeRows.size() >= 40, qPrintable(QString::number(nodeRows.size())));  // the sample's 42, but folded ones
        int shared = 0;
        for (const QJsonValue row : nodeRows) {
            const QJsonArray cells = row[QStringLiteral("variants")].toArray();
            QVERIFY(cells[1][QStringLiteral("error")].isNull());
            shared += cells[0][QStringLiteral("group_size")].toInt() > 1;
        }
        QVERIFY(shared > 0);
        Run nwayText = cli({QStringLiteral("compare"), QStringLiteral("--runs"), store, QStringLiteral("1,2")});
        QCOMPARE(nwayText.exitCode, 0);
        QVERIFY2(nwayText.out.contains(QStringLiteral("times only (a stored run keeps no outputs)")), qPrintable(nwayText.out));
        for (const QStringList& bad : {QStringList{QStringLiteral("--runs"), store, QStringLiteral("1")},
                                       QStringList{QStringLiteral("--runs"), store, QStringLiteral("1,x")},
                                       QStringList{QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--runs"), store, QStringLiteral("1,2")},
                                       QStringList{QStringLiteral("--runs"), store, QStringLiteral("1,2"), QStringLiteral("--baseline"),
                                                   QStringLiteral("5")}}) {
            Run refused = cli(QStringList{QStringLiteral("compare")} + bad);
            QCOMPARE(refused.exitCode, 64);
            QCOMPARE(refused.err.trimmed().count(QLatin1Char('\n')), 1);  // the reason, then where the options are
        }
        Run absent = cli({QStringLiteral("compare"), QStringLiteral("--runs"), store, QStringLiteral("1,9")});
        QCOMPARE(absent.exitCode, 2);
        QVERIFY2(absent.err.contains(QStringLiteral("runs.fsdb: no run 9")), qPrintable(absent.err));
        // A run of another model: the comparison says the nodes are matched by name only.
        QCOMPARE(cli({QStringLiteral("profile"), QStringLiteral(FSC_FIXTURE_DIR "/good/elementwise.onnx"), QStringLiteral("--iterations"),
                      QStringLiteral("1"), QStringLiteral("-o"), store}).exitCode, 0);
        Run across = cli({QStringLiteral("profile"), QStringLiteral("--compare"), store, QStringLiteral("1"), QStringLiteral("3")});
        QCOMPARE(across.exitCode, 0);
        QVERIFY2(across.out.contains(QStringLiteral("note: run 1 is of ")) &&
                     across.out.contains(QStringLiteral("only nodes of the same name are compared")),
                 qPrintable(across.out));
        // Reading commands never create files: a missing store is an error, and stays missing;
        // a file that is not a store is refused and left as it was.
        const QString nowhere = dir.path() + QStringLiteral("/nosuch.fsdb");
        for (const QStringList& reading : {QStringList{QStringLiteral("--list"), nowhere},
                                           QStringList{QStringLiteral("--compare"), nowhere, QStringLiteral("1"), QStringLiteral("2")}}) {
            Run none = cli(QStringList{QStringLiteral("profile")} + reading);
            QCOMPARE(none.exitCode, 2);
            QVERIFY2(none.err.contains(QStringLiteral("nosuch.fsdb: no such run store")), qPrintable(none.err));
            QVERIFY(!QFile::exists(nowhere));
        }
        const QString notAStore = dir.path() + QStringLiteral("/t.json");
        const QByteArray before = readFile(notAStore);
        Run wrong = cli({QStringLiteral("profile"), QStringLiteral("--list"), notAStore});
        QCOMPARE(wrong.exitCode, 2);
        QVERIFY2(wrong.err.contains(QStringLiteral("t.json: ")), qPrintable(wrong.err));
        QCOMPARE(readFile(notAStore), before);
        // Bad input: one line, status 2; usage: 64.
        Run missing = cli({QStringLiteral("profile"), QStringLiteral("--compare"), store, QStringLiteral("1"), QStringLiteral("9")});
        QCOMPARE(missing.exitCode, 2);
        QVERIFY(missing.err.contains(QStringLiteral("runs.fsdb: no run 9")));
        Run badStore = cli({QStringLiteral("profile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--iterations"), QStringLiteral("1"),
                            QStringLiteral("-o"), QStringLiteral("/nonexistent/dir/runs.fsdb")});
        QCOMPARE(badStore.exitCode, 2);
        QVERIFY(badStore.err.contains(QStringLiteral("/nonexistent/dir/runs.fsdb: cannot open the run store")));
        QCOMPARE(cli({QStringLiteral("profile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--iterations"), QStringLiteral("0")}).exitCode, 64);
    }

    void compileDumpsEveryPassAndTheTrace() {
        const QString dir = QStringLiteral(FSC_TEST_TMP "/compile-dump");
        QDir(dir).removeRecursively();
        Run r = cli({QStringLiteral("compile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--passes"),
                     QStringLiteral("eliminate-no-ops,eliminate-dead-code"), QStringLiteral("--dump-dir"), dir});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(QFile::exists(dir + QStringLiteral("/00-imported.onnx")));
        QVERIFY(QFile::exists(dir + QStringLiteral("/01-eliminate-no-ops.onnx")));
        QVERIFY(QFile::exists(dir + QStringLiteral("/02-eliminate-dead-code.onnx")));
        const QJsonObject trace = QJsonDocument::fromJson(readFile(dir + QStringLiteral("/trace.json"))).object();
        QCOMPARE(trace[QStringLiteral("schema")].toString(), QStringLiteral("fusescope.compile-trace/1"));
        QCOMPARE(trace[QStringLiteral("pipeline")].toString(), QStringLiteral("custom"));
        const QJsonArray provenance = trace[QStringLiteral("provenance")].toArray();
        QCOMPARE(provenance.size(), trace[QStringLiteral("nodes_after")].toInt());
        QVERIFY(!provenance[0].toObject()[QStringLiteral("origins")].toArray().isEmpty());
        QVERIFY(trace[QStringLiteral("graph_breaks")].toObject().contains(QStringLiteral("breaks")));
        // Each dump re-imports (fusescope-cli inspect reads it).
        Run again = cli({QStringLiteral("inspect"), dir + QStringLiteral("/02-eliminate-dead-code.onnx")});
        QCOMPARE(again.exitCode, 0);
    }

    // The dumps share one weights file, each weight once: resnet50's 25 dumps were 2.4 GB.
    // --dump-self-contained gives each its own copy; both run to the same outputs.
    void compileDumpsShareTheirWeights() {
        const QString shared = QStringLiteral(FSC_TEST_TMP "/dump-shared"), own = QStringLiteral(FSC_TEST_TMP "/dump-own");
        QDir(shared).removeRecursively();
        QDir(own).removeRecursively();
        const QStringList passes = {QStringLiteral("--passes"), QStringLiteral("eliminate-no-ops,eliminate-dead-code,conv-bn-fusion")};
        QCOMPARE(cli(QStringList{QStringLiteral("compile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--dump-dir"), shared} + passes).exitCode, 0);
        QCOMPARE(cli(QStringList{QStringLiteral("compile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--dump-dir"), own,
                                 QStringLiteral("--dump-self-contained")} + passes).exitCode, 0);
        auto onnxBytes = [](const QString& dir) {
            qint64 total = 0;
            for (const QFileInfo& f : QDir(dir).entryInfoList({QStringLiteral("*.onnx")})) total += f.size();
            return total;
        };
        const qint64 weights = QFileInfo(shared + QStringLiteral("/weights.bin")).size();
        QVERIFY(weights > 0);
        QVERIFY(!QFile::exists(own + QStringLiteral("/weights.bin")));
        // Four graphs with their own weights against four graphs and the weights once.
        QVERIFY2(onnxBytes(shared) + weights < onnxBytes(own) / 2,
                 qPrintable(QStringLiteral("%1 + %2 against %3").arg(onnxBytes(shared)).arg(weights).arg(onnxBytes(own))));
        QVERIFY(weights < QFileInfo(QStringLiteral(FSC_SAMPLE_MODEL)).size() * 2);
        for (const QString& dir : {shared, own}) {
            Run r = cli({QStringLiteral("run"), dir + QStringLiteral("/03-conv-bn-fusion.onnx"), QStringLiteral("--iterations"),
                         QStringLiteral("1"), QStringLiteral("--output-dir"), dir + QStringLiteral("/out")});
            QCOMPARE(r.exitCode, 0);
        }
        QCOMPARE(readFile(shared + QStringLiteral("/out/output_0.pb")), readFile(own + QStringLiteral("/out/output_0.pb")));
        Run lone = cli({QStringLiteral("compile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--dump-self-contained")});
        QCOMPARE(lone.exitCode, 64);
        QVERIFY(lone.err.contains(QStringLiteral("--dump-self-contained needs --dump-dir")));
    }

    void compileRejectsBadChoicesWithOneLine() {
        Run unknown = cli({QStringLiteral("compile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--disable"),
                           QStringLiteral("no-such-pass")});
        QCOMPARE(unknown.exitCode, 64);
        QVERIFY(unknown.err.contains(QStringLiteral("unknown pass 'no-such-pass'")));
        Run missing = cli({QStringLiteral("compile"), QStringLiteral("/nonexistent/model.onnx")});
        QCOMPARE(missing.exitCode, 2);
        QVERIFY(missing.err.startsWith(QStringLiteral("error: ")));
        QCOMPARE(missing.err.count(QLatin1Char('\n')), 1);
        Run list = cli({QStringLiteral("compile"), QStringLiteral("--list-passes")});
        QCOMPARE(list.exitCode, 0);
        QVERIFY(list.out.contains(QStringLiteral("fold-shape-computation")));
    }

    // compile reports the arena run lays out, for the same generated inputs, on every model
    // that runs (it once said naive 188,544 B where run said 139,392).
    void compileAndRunReportOneMemoryPlan() {
        FSC_SKIP_WHEN_SANITIZED();
        QStringList models = {QStringLiteral(FSC_SAMPLE_MODEL)};
        for (const QString& f : QDir(QStringLiteral(FSC_FIXTURE_DIR "/good")).entryList({QStringLiteral("*.onnx")}))
            models << QStringLiteral(FSC_FIXTURE_DIR "/good/") + f;
        int compared = 0;
        for (const QString& model : models) {
            for (const char* pipeline : {"O2", "O3"}) {
                Run compiled = cli({QStringLiteral("compile"), model, QStringLiteral("--pipeline"), QLatin1String(pipeline),
                                    QStringLiteral("--json")});
                if (compiled.exitCode != 0) continue;
                const QJsonObject planned = QJsonDocument::fromJson(compiled.out.toUtf8()).object()[QStringLiteral("memory")].toObject();
                if (planned.contains(QStringLiteral("error"))) continue;
                Run ran = cli({QStringLiteral("run"), model, QStringLiteral("--pipeline"), QLatin1String(pipeline),
                               QStringLiteral("--json"), QStringLiteral("--iterations"), QStringLiteral("1")});
                QCOMPARE(ran.exitCode, 0);
                const QJsonObject memory = QJsonDocument::fromJson(ran.out.toUtf8()).object()[QStringLiteral("memory")].toObject();
                for (const char* key : {"arena_bytes", "naive_bytes", "lower_bound_bytes"})
                    QVERIFY2(planned[QLatin1String(key)].toInteger() == memory[QLatin1String(key)].toInteger(),
                             qPrintable(model + QLatin1Char(' ') + QLatin1String(pipeline) + QLatin1Char(' ') + QLatin1String(key)));
                ++compared;
            }
        }
        QVERIFY2(compared >= 30, qPrintable(QString::number(compared)));
        Run text = cli({QStringLiteral("compile"), QStringLiteral(FSC_SAMPLE_MODEL)});
        QVERIFY2(text.out.contains(QStringLiteral("memory plan for image float32[1,3,16,16]: arena ")), qPrintable(text.out));
    }

    void compileQuantizesToFloat16BeforeTheMemoryPasses() {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("half.onnx"));
        Run r = cli({QStringLiteral("compile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--pipeline"), QStringLiteral("O3"),
                     QStringLiteral("--quantize"), QStringLiteral("fp16"), QStringLiteral("--json"), QStringLiteral("-o"), out});
        QCOMPARE(r.exitCode, 0);
        QStringList order;
        for (const QJsonValue p : QJsonDocument::fromJson(r.out.toUtf8()).object()[QStringLiteral("passes")].toArray())
            order << p.toObject()[QStringLiteral("name")].toString();
        QVERIFY2(order.indexOf(QStringLiteral("fp16-conversion")) >= 0 &&
                     order.indexOf(QStringLiteral("fp16-conversion")) < order.indexOf(QStringLiteral("schedule-for-memory")),
                 qPrintable(order.join(QLatin1Char(','))));
        // The written model runs, with its weights in float16.
        Run dump = cli({QStringLiteral("dump"), out});
        QCOMPARE(dump.exitCode, 0);
        QVERIFY(dump.out.contains(QStringLiteral("= float16[")));
        QCOMPARE(cli({QStringLiteral("run"), out, QStringLiteral("--pipeline"), QStringLiteral("O0")}).exitCode, 0);
        QVERIFY(r.out.contains(QStringLiteral("\"quantization\"")));
        Run keepAlone = cli({QStringLiteral("compile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--keep-fp32"), QStringLiteral("Softmax")});
        QCOMPARE(keepAlone.exitCode, 64);
    }

    void compileQuantizesToInt8WithMeasuredAccuracy() {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("int8.onnx"));
        Run r = cli({QStringLiteral("compile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--quantize"), QStringLiteral("int8"),
                     QStringLiteral("--per-channel"), QStringLiteral("--calibrator"), QStringLiteral("entropy"),
                     QStringLiteral("--calibration-samples"), QStringLiteral("6"), QStringLiteral("--json"), QStringLiteral("-o"), out});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QStringList order;
        for (const QJsonValue p : j[QStringLiteral("passes")].toArray()) order << p.toObject()[QStringLiteral("name")].toString();
        // After conv-bn folding, before the fusions that would hide Conv/MatMul/Gemm.
        // (O2's own qdq-folding, for an export already in the QDQ form, runs before both.)
        QVERIFY2(order.indexOf(QStringLiteral("qdq-folding")) < order.indexOf(QStringLiteral("conv-bn-fusion")) &&
                     order.indexOf(QStringLiteral("conv-bn-fusion")) < order.indexOf(QStringLiteral("int8-quantization")) &&
                     order.indexOf(QStringLiteral("int8-quantization")) + 1 == order.lastIndexOf(QStringLiteral("qdq-folding")) &&
                     order.lastIndexOf(QStringLiteral("qdq-folding")) < order.indexOf(QStringLiteral("matmul-add-fusion")),
                 qPrintable(order.join(QLatin1Char(','))));
        const QJsonObject q = j[QStringLiteral("quantization")].toObject();
        QCOMPARE(q[QStringLiteral("generated_data")].toBool(), true);
        QVERIFY(q[QStringLiteral("data")].toString().contains(QStringLiteral("generated: 6")));
        QCOMPARE(q[QStringLiteral("calibration_set")].toObject()[QStringLiteral("samples")].toInt(), 5);
        QCOMPARE(q[QStringLiteral("held_back_set")].toObject()[QStringLiteral("samples")].toInt(), 1);
        const double cosine = q[QStringLiteral("held_back_set")].toObject()[QStringLiteral("cosine")].toDouble();
        QVERIFY(cosine > 0.99 && cosine < 1.0);
        QCOMPARE(q[QStringLiteral("sensitivity")].toArray().size(), 8);  // 1 Conv, 6 MatMul, 1 Gemm
        // The written model holds integer ops (each MatMul's chain fused: integer-matmul-fusion) and runs.
        Run dump = cli({QStringLiteral("dump"), out});
        QVERIFY(dump.out.contains(QStringLiteral("MatMulIntegerToFloat(")));
        QVERIFY(dump.out.contains(QStringLiteral("= int8[")));
        QCOMPARE(cli({QStringLiteral("run"), out, QStringLiteral("--pipeline"), QStringLiteral("O0")}).exitCode, 0);

        // Text: the data source is said, the table is there; exclusions keep nodes in float;
        // 7-bit weights are said where asked for.
        Run text = cli({QStringLiteral("compile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--quantize"), QStringLiteral("int8"),
                        QStringLiteral("--exclude"), QStringLiteral("/head/fc/Gemm"), QStringLiteral("--reduce-range"),
                        QStringLiteral("--explain")});
        QCOMPARE(text.exitCode, 0);
        QVERIFY(text.out.contains(QStringLiteral("weight 7-bit per tensor")));

        // Without VNNI (oneDNN held to AVX2 stands in for such a CPU), 8-bit weights earn a note
        // that 7-bit ones would run faster; --reduce-range makes none.
        const QStringList noVnni{QStringLiteral("ONEDNN_MAX_CPU_ISA=AVX2")};
        const QStringList int8Json{QStringLiteral("compile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--quantize"),
                                   QStringLiteral("int8"), QStringLiteral("--no-sensitivity"),
                                   QStringLiteral("--calibration-samples"), QStringLiteral("2"), QStringLiteral("--json")};
        auto advice = [](const Run& run) {
            return QJsonDocument::fromJson(run.out.toUtf8()).object()[QStringLiteral("quantization")].toObject()[QStringLiteral("advice")].toString();
        };
        Run eightBit = cli(int8Json, noVnni);
        QCOMPARE(eightBit.exitCode, 0);
#if defined(__x86_64__) || defined(__i386__)
        if (__builtin_cpu_supports("avx2")) QVERIFY2(advice(eightBit).contains(QStringLiteral("--reduce-range")), qPrintable(eightBit.out));
#endif
        Run sevenBit = cli(int8Json + QStringList{QStringLiteral("--reduce-range")}, noVnni);
        QCOMPARE(sevenBit.exitCode, 0);
        QVERIFY(advice(sevenBit).isEmpty());
        QVERIFY(text.out.contains(QStringLiteral("measured on generated: 16")));
        QVERIFY(text.out.contains(QStringLiteral("per-layer sensitivity")));
        QVERIFY(text.out.contains(QStringLiteral("excluded by '/head/fc/Gemm'")));

        // Bad input: a calibration folder that is not there, a calibrator we do not have.
        Run missing = cli({QStringLiteral("compile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--quantize"), QStringLiteral("int8"),
                           QStringLiteral("--calibration"), dir.filePath(QStringLiteral("none"))});
        QCOMPARE(missing.exitCode, 2);
        QVERIFY(missing.err.contains(dir.filePath(QStringLiteral("none"))));
        QCOMPARE(missing.err.count(QLatin1Char('\n')), 1);
        Run calibrator = cli({QStringLiteral("compile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--quantize"), QStringLiteral("int8"),
                              QStringLiteral("--calibrator"), QStringLiteral("magic")});
        QCOMPARE(calibrator.exitCode, 64);
        Run orphan = cli({QStringLiteral("compile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--per-channel")});
        QCOMPARE(orphan.exitCode, 64);
        Run orphanRange = cli({QStringLiteral("compile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--reduce-range")});
        QCOMPARE(orphanRange.exitCode, 64);
    }

    void compilePartitionsAndSimulatesDevices() {
        Run tp = cli({QStringLiteral("compile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--tp"), QStringLiteral("2"),
                      QStringLiteral("--json")});
        QCOMPARE(tp.exitCode, 0);
        const QJsonObject p = QJsonDocument::fromJson(tp.out.toUtf8()).object()[QStringLiteral("parallel")].toObject();
        QCOMPARE(p[QStringLiteral("all_reduces")].toInt(), 2);  // attention and MLP
        // [batch, 64 tokens, 32 features] float32 per all-reduce, the symbolic batch counted as 1.
        QCOMPARE(p[QStringLiteral("all_reduce_bytes")].toDouble(), 2.0 * 64 * 32 * 4);
        QCOMPARE(p[QStringLiteral("all_gathers")].toInt(), 1);  // the 10-class head, 5 per device
        QVERIFY(p[QStringLiteral("single_device_mean_relative_difference")].toDouble() < 1e-5);
        const QJsonObject sim = p[QStringLiteral("simulation")].toObject();
        QCOMPARE(sim[QStringLiteral("simulated")].toBool(), true);
        QCOMPARE(sim[QStringLiteral("interconnect")].toString(), QStringLiteral("NVLink 4"));

        Run pp = cli({QStringLiteral("compile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--pp"), QStringLiteral("2"),
                      QStringLiteral("--microbatches"), QStringLiteral("4"), QStringLiteral("--schedule"), QStringLiteral("gpipe"),
                      QStringLiteral("--interconnect"), QStringLiteral("pcie5")});
        QCOMPARE(pp.exitCode, 0);
        QVERIFY(pp.out.contains(QStringLiteral("simulated on 2 x")));
        QVERIFY(pp.out.contains(QStringLiteral("PCIe 5")));
        QVERIFY(pp.out.contains(QStringLiteral("4 micro-batches, at most 4 in flight")));

        // The trace of a pipeline-parallel compile names the Send/Recv nodes the pass added
        // (they were once looked up in the imported graph, past its end: a crash).
        const QString dump = QStringLiteral(FSC_TEST_TMP "/pp-dump");
        QDir(dump).removeRecursively();
        Run dumped = cli({QStringLiteral("compile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--pp"), QStringLiteral("2"),
                          QStringLiteral("--dump-dir"), dump});
        QCOMPARE(dumped.exitCode, 0);
        const QJsonArray provenance =
            QJsonDocument::fromJson(readFile(dump + QStringLiteral("/trace.json"))).object()[QStringLiteral("provenance")].toArray();
        int sends = 0;
        for (const QJsonValue& node : provenance) {
            if (node[QStringLiteral("op")].toString() != QStringLiteral("ai.fusescope.Send")) continue;
            ++sends;
            QVERIFY(!node[QStringLiteral("origins")].toArray().isEmpty());  // the producer of what it sends
            QVERIFY(!node[QStringLiteral("origins")][0][QStringLiteral("name")].toString().isEmpty());
        }
        QVERIFY(sends > 0);

        // A dynamic-batch export: the heads' Reshape targets are computed at run time from
        // Shape(q); attention splits by heads too (it was rejected: MLPs only, 2 AllReduces).
        Run dynamic = cli({QStringLiteral("compile"), QStringLiteral(FSC_FIXTURE_DIR "/styles/torch_dynamic_attention.onnx"),
                           QStringLiteral("--tp"), QStringLiteral("2"), QStringLiteral("--verify"), QStringLiteral("--json"),
                           QStringLiteral("--dim"), QStringLiteral("batch=3"), QStringLiteral("--dim"), QStringLiteral("sequence=5")});
        QCOMPARE(dynamic.exitCode, 0);
        const QJsonObject dp = QJsonDocument::fromJson(dynamic.out.toUtf8()).object()[QStringLiteral("parallel")].toObject();
        QCOMPARE(dp[QStringLiteral("all_reduces")].toInt(), 4);  // attention and MLP in each of 2 layers
        QVERIFY(dp[QStringLiteral("single_device_mean_relative_difference")].toDouble() < 1e-5);

        // More stages than the graph has nodes: refused with the largest useful number (it
        // printed 100 empty stages and "bubbles 100.0%").
        Run tooMany = cli({QStringLiteral("compile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--pp"), QStringLiteral("100")});
        QCOMPARE(tooMany.exitCode, 2);
        QVERIFY2(tooMany.err.contains(QStringLiteral("100 pipeline stages asked for, but the graph has 20 nodes to place: at most 20 stages")),
                 qPrintable(tooMany.err));
        // A split that splits nothing says why where the partition is reported, not only under --explain.
        Run three = cli({QStringLiteral("compile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--tp"), QStringLiteral("3")});
        QCOMPARE(three.exitCode, 0);
        QVERIFY2(three.out.contains(QStringLiteral("nothing was split across 3 devices: a column block of 32 does not divide by 3")),
                 qPrintable(three.out));
        Run threeJson = cli({QStringLiteral("compile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--tp"), QStringLiteral("3"),
                             QStringLiteral("--json")});
        QVERIFY(QJsonDocument::fromJson(threeJson.out.toUtf8())
                    .object()[QStringLiteral("parallel")].toObject()[QStringLiteral("not_split")].toString()
                    .startsWith(QStringLiteral("nothing was split across 3 devices")));
        QCOMPARE(cli({QStringLiteral("compile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--tp"), QStringLiteral("0")}).exitCode, 64);
        QCOMPARE(cli({QStringLiteral("compile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--interconnect"), QStringLiteral("wifi")}).exitCode, 64);
        QCOMPARE(cli({QStringLiteral("compile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--tp"), QStringLiteral("2"),
                      QStringLiteral("--pp"), QStringLiteral("2")}).exitCode, 64);
    }

    // Under an address-space limit a run planned too large says what it asked for and exits 2
    // (it was a segmentation fault); so do the importer and the profiler.
    void outOfMemoryIsAReasonNotASignal_data() {
        QTest::addColumn<QString>("command");
        QTest::addColumn<QString>("expected");
        // The first convolution's output alone (1.3 GB) is over the limit, whatever the threads
        // (at batch 20000 one thread fitted where two, with a second malloc arena, did not).
        QTest::newRow("run, activations") << QStringLiteral("run %1 --dim batch=40000")
                                          << QStringLiteral("planned for batch=40000");
        QTest::newRow("run, the input itself") << QStringLiteral("run %1 --dim batch=2000000")
                                               << QStringLiteral("out of memory: ");
        // The first convolution's output (1.83 GiB) cannot fit: at batch 20000 it could, and the
        // profile computed convolutions for minutes before its MaxPool ran out.
        QTest::newRow("profile") << QStringLiteral("profile %1 --dim batch=60000 --iterations 1 --warmup 0")
                                 << QStringLiteral("out of memory: 1.83 GiB");
        // 2.24 GiB of external weights, mapped: no address space left for them.
        QTest::newRow("inspect, weights") << QStringLiteral("inspect " FSC_FIXTURE_DIR "/good/huge/model.onnx")
                                          << QStringLiteral("huge.bin': out of memory: 2.24 GiB to map the file");
    }
    void outOfMemoryIsAReasonNotASignal() {
#ifdef __SANITIZE_ADDRESS__
        QSKIP("AddressSanitizer reserves more address space than the limit allows");
#endif
        QFETCH(QString, command);
        QFETCH(QString, expected);
        QProcess p;
        const QString line = QStringLiteral("ulimit -v 1000000; exec '%1' ").arg(QStringLiteral(FSC_CLI_PATH)) +
                             (command.contains(QStringLiteral("%1")) ? command.arg(QStringLiteral(FSC_SAMPLE_MODEL)) : command);
        p.start(QStringLiteral("bash"), {QStringLiteral("-c"), line});
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QCOMPARE(p.exitCode(), 2);
        QVERIFY2(err.contains(expected), qPrintable(err));
        QCOMPARE(err.count(QLatin1Char('\n')), 1);
    }

    // Symbolic height and width: generated inputs are 224 x 224 (1 x 1 fails the stride-2
    // MaxPool without pads), for run, profile and compile's checks alike.
    void generatedInputsFitTheKernels() {
        const QString model = QStringLiteral(FSC_FIXTURE_DIR "/styles/conv_symbolic_hw.onnx");
        Run run = cli({QStringLiteral("run"), model});
        QCOMPARE(run.exitCode, 0);
        QVERIFY2(run.out.contains(QStringLiteral("float32[1,3,224,224]")), qPrintable(run.out));
        QCOMPARE(cli({QStringLiteral("profile"), model, QStringLiteral("--iterations"), QStringLiteral("1")}).exitCode, 0);
        QCOMPARE(cli({QStringLiteral("compile"), model, QStringLiteral("--tp"), QStringLiteral("2")}).exitCode, 0);
        QCOMPARE(cli({QStringLiteral("compile"), model, QStringLiteral("--quantize"), QStringLiteral("fp16")}).exitCode, 0);

        // Sizes the kernels reject: one line naming the node, the sizes and the flag.
        Run small = cli({QStringLiteral("run"), model, QStringLiteral("--dim"), QStringLiteral("height=1")});
        QCOMPARE(small.exitCode, 2);
        QVERIFY2(small.err.contains(QStringLiteral("'/pool/MaxPool' (MaxPool)")), qPrintable(small.err));
        QVERIFY2(small.err.contains(QStringLiteral("width=224")) && small.err.contains(QStringLiteral("--dim NAME=VALUE")),
                 qPrintable(small.err));
        QCOMPARE(small.err.count(QLatin1Char('\n')), 1);
    }

    // Audio models: raw samples [batch, samples] into a strided Conv1d front end, once at the
    // top and once inside an If's branches. Generated inputs take the smallest length the
    // windows accept (176 = 7 strides of 16 and a 64-sample window; 400 for the If's larger
    // branch), so every check runs without --dim.
    void generatedSignalsFitTheirConvFrontEnds_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("input");
        QTest::newRow("front end") << QStringLiteral("torch_audio_frontend.onnx") << QStringLiteral("float32[1,176]");
        QTest::newRow("inside If") << QStringLiteral("audio_if_frontend.onnx") << QStringLiteral("float32[1,400]");
    }
    void generatedSignalsFitTheirConvFrontEnds() {
        QFETCH(QString, model);
        QFETCH(QString, input);
        const QString path = QStringLiteral(FSC_FIXTURE_DIR "/styles/") + model;
        Run run = cli({QStringLiteral("run"), path, QStringLiteral("--iterations"), QStringLiteral("1")});
        QCOMPARE(run.exitCode, 0);
        QVERIFY2(run.out.contains(input), qPrintable(run.out));
        for (const QStringList& check : {QStringList{QStringLiteral("--tp"), QStringLiteral("2")},
                                         QStringList{QStringLiteral("--pp"), QStringLiteral("2")},
                                         QStringList{QStringLiteral("--quantize"), QStringLiteral("int8"),
                                                     QStringLiteral("--calibration-samples"), QStringLiteral("4")}}) {
            Run r = cli(QStringList{QStringLiteral("compile"), path} + check);
            QVERIFY2(r.exitCode == 0, qPrintable(check.join(QLatin1Char(' ')) + QStringLiteral(": ") + r.err));
        }
        // One sample short of the windows is refused with the sizes named.
        Run shorter = cli({QStringLiteral("run"), path, QStringLiteral("--dim"), QStringLiteral("samples=100")});
        QCOMPARE(shorter.exitCode, 2);
    }

    // The walkthrough runs on the inputs run would take: --dim sizes its chapters' runs (the
    // memory plan of chapter 6 is run's for the same sizes), an unknown dim name is refused.
    void walkthroughTakesRunsInputs() {
        const QString model = QStringLiteral(FSC_FIXTURE_DIR "/styles/conv_symbolic_hw.onnx");
        Run small = cli({QStringLiteral("walkthrough"), model, QStringLiteral("--json"), QStringLiteral("--chapters"),
                         QStringLiteral("6"), QStringLiteral("--dim"), QStringLiteral("height=64"), QStringLiteral("--dim"),
                         QStringLiteral("width=64")});
        QCOMPARE(small.exitCode, 0);
        const QJsonObject figures =
            QJsonDocument::fromJson(small.out.toUtf8()).object()[QStringLiteral("chapters")].toArray()[0].toObject()[QStringLiteral("figures")].toObject();
        Run run = cli({QStringLiteral("run"), model, QStringLiteral("--json"), QStringLiteral("--iterations"), QStringLiteral("1"),
                       QStringLiteral("--dim"), QStringLiteral("height=64"), QStringLiteral("--dim"), QStringLiteral("width=64")});
        QCOMPARE(run.exitCode, 0);
        const QJsonObject memory = QJsonDocument::fromJson(run.out.toUtf8()).object()[QStringLiteral("memory")].toObject();
        QCOMPARE(figures[QStringLiteral("arena_bytes")].toInteger(), memory[QStringLiteral("arena_bytes")].toInteger());
        Run wrong = cli({QStringLiteral("walkthrough"), model, QStringLiteral("--json"), QStringLiteral("--dim"), QStringLiteral("nosuch=3")});
        QCOMPARE(wrong.exitCode, 2);
        QVERIFY2(wrong.err.contains(QStringLiteral("nosuch")), qPrintable(wrong.err));
    }

    // A check that fails still leaves what was compiled, and says so; compile takes --dim
    // and --input-dir like run.
    void compileChecksTakeInputsAndKeepTheResult() {
        const QString model = QStringLiteral(FSC_FIXTURE_DIR "/styles/conv_symbolic_hw.onnx");
        const QString out = QStringLiteral(FSC_TEST_TMP "/check-kept.onnx");
        QFile::remove(out);
        Run failed = cli({QStringLiteral("compile"), model, QStringLiteral("--pp"), QStringLiteral("2"), QStringLiteral("--dim"),
                          QStringLiteral("height=2"), QStringLiteral("-o"), out});
        QCOMPARE(failed.exitCode, 2);
        QVERIFY2(failed.err.contains(QStringLiteral("check failed (the compiled graph was written to ")), qPrintable(failed.err));
        QVERIFY(failed.err.contains(QStringLiteral("MaxPool")));
        QCOMPARE(failed.err.count(QLatin1Char('\n')), 1);
        QVERIFY(QFile::exists(out));
        QCOMPARE(cli({QStringLiteral("inspect"), out}).exitCode, 0);

        const QString dir = QStringLiteral(FSC_TEST_TMP "/check-inputs");
        QDir(dir).removeRecursively();
        QDir().mkpath(dir);
        std::vector<float> image(size_t(2 * 3 * 40 * 48), 0.25f);
        std::string bytes(reinterpret_cast<const char*>(image.data()), image.size() * sizeof(float));
        const size_t size = bytes.size();
        const fsc::Tensor input("input", fsc::DType::Float32, {2, 3, 40, 48}, fsc::makeBuffer(std::move(bytes)), 0, size);
        QVERIFY(fsc::writeTensorProtoFile((dir + QStringLiteral("/input_0.pb")).toStdString(), input).isOk());
        Run given = cli({QStringLiteral("compile"), model, QStringLiteral("--quantize"), QStringLiteral("fp16"),
                         QStringLiteral("--input-dir"), dir, QStringLiteral("--json")});
        QCOMPARE(given.exitCode, 0);
        const QJsonObject q = QJsonDocument::fromJson(given.out.toUtf8()).object()[QStringLiteral("quantization")].toObject();
        QVERIFY2(q[QStringLiteral("data")].toString().startsWith(dir), qPrintable(given.out.left(2000)));
        QCOMPARE(cli({QStringLiteral("compile"), model, QStringLiteral("--dim")}).exitCode, 64);
    }

    void runAtO0ProfilesEveryImportedNode() {
        Run r = cli({QStringLiteral("run"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--json"),
                     QStringLiteral("--pipeline"), QStringLiteral("O0"), QStringLiteral("--profile")});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(j[QStringLiteral("profile")].toArray().size(), 42);
        Run bad = cli({QStringLiteral("run"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--pipeline"),
                       QStringLiteral("O9")});
        QCOMPARE(bad.exitCode, 64);
        QVERIFY(bad.err.contains(QStringLiteral("unknown pipeline 'O9'")));
    }

    void runIsDeterministicForASeed() {
        auto run = [](const char* seed) {
            return cli({QStringLiteral("run"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--json"),
                        QStringLiteral("--seed"), QLatin1String(seed)});
        };
        auto meanOf = [](const Run& r) {
            return QJsonDocument::fromJson(r.out.toUtf8()).object()[QStringLiteral("outputs")].toArray()[0].toObject()[QStringLiteral("mean")].toDouble();
        };
        QCOMPARE(meanOf(run("5")), meanOf(run("5")));
        QVERIFY(meanOf(run("5")) != meanOf(run("6")));
    }

    void runReadsAndWritesOnnxTestData() {
        const QString dir = QStringLiteral(FSC_ONNX_TESTDATA "/node/test_relu");
        if (!QFileInfo::exists(dir)) QSKIP("libonnx-testdata is not installed");
        QTemporaryDir out;
        Run r = cli({QStringLiteral("run"), dir + QStringLiteral("/model.onnx"), QStringLiteral("--input-dir"),
                     dir + QStringLiteral("/test_data_set_0"), QStringLiteral("--output-dir"), out.path()});
        QCOMPARE(r.exitCode, 0);
        auto ours = fsc::readTensorProtoFile((out.path() + QStringLiteral("/output_0.pb")).toStdString());
        auto want = fsc::readTensorProtoFile((dir + QStringLiteral("/test_data_set_0/output_0.pb")).toStdString());
        QVERIFY(ours.isOk() && want.isOk());
        QCOMPARE(ours->dims(), want->dims());
        QCOMPARE(QByteArray(reinterpret_cast<const char*>(ours->data()), int(ours->byteSize())),
                 QByteArray(reinterpret_cast<const char*>(want->data()), int(want->byteSize())));
        // The same input as .npy through --input NAME=FILE.
        Run missing = cli({QStringLiteral("run"), dir + QStringLiteral("/model.onnx"), QStringLiteral("--input-dir"), out.path()});
        QCOMPARE(missing.exitCode, 2);
        QVERIFY2(missing.err.contains(QStringLiteral("input_0.pb: missing (input 'x' is input 0)")), qPrintable(missing.err));
    }

    void runRejectsBadInputsWithOneLine() {
        const QString model = QStringLiteral(FSC_SAMPLE_MODEL);
        Run wrongName = cli({QStringLiteral("run"), model, QStringLiteral("--input"), QStringLiteral("nope=x.npy")});
        QCOMPARE(wrongName.exitCode, 2);
        QVERIFY2(wrongName.err.contains(QStringLiteral("the model has no input named 'nope' (inputs: image)")), qPrintable(wrongName.err));
        QCOMPARE(wrongName.err.count(QLatin1Char('\n')), 1);

        // A .npy of the wrong dtype, then of the wrong rank.
        QTemporaryDir tmp;
        auto writeNpy = [&](const QString& name, const char* descr, const char* shape, int bytes) {
            QByteArray header = QByteArray("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
            while ((10 + header.size() + 1) % 64) header += ' ';
            header += '\n';
            QByteArray file("\x93NUMPY\x01\x00", 8);
            file += char(header.size() & 0xff);
            file += char(header.size() >> 8);
            file += header + QByteArray(bytes, '\0');
            QFile f(tmp.path() + QLatin1Char('/') + name);
            f.open(QIODevice::WriteOnly);
            f.write(file);
            return f.fileName();
        };
        const QString ints = writeNpy(QStringLiteral("ints.npy"), "<i8", "(1, 3, 16, 16)", 8 * 768);
        Run wrongType = cli({QStringLiteral("run"), model, QStringLiteral("--input"), QStringLiteral("image=") + ints});
        QCOMPARE(wrongType.exitCode, 2);
        QVERIFY2(wrongType.err.contains(QStringLiteral("input 'image': expected float32[batch,3,16,16], got int64[1,3,16,16] (wrong dtype)")), qPrintable(wrongType.err));
        const QString flat = writeNpy(QStringLiteral("flat.npy"), "<f4", "(768,)", 4 * 768);
        Run wrongRank = cli({QStringLiteral("run"), model, QStringLiteral("--input"), QStringLiteral("image=") + flat});
        QCOMPARE(wrongRank.exitCode, 2);
        QVERIFY2(wrongRank.err.contains(QStringLiteral("got float32[768] (wrong rank)")), qPrintable(wrongRank.err));
        const QString truncated = writeNpy(QStringLiteral("short.npy"), "<f4", "(1, 3, 16, 16)", 100);
        Run shortFile = cli({QStringLiteral("run"), model, QStringLiteral("--input"), QStringLiteral("image=") + truncated});
        QCOMPARE(shortFile.exitCode, 2);
        QVERIFY2(shortFile.err.contains(QStringLiteral("short.npy: holds 100 data bytes, shape needs 3072")), qPrintable(shortFile.err));
        // Headers whose numbers do not parse (the reader once let std::stoll throw on them).
        for (const char* shape : {"(1, three, 16, 16)", "(99999999999999999999, 3)", "(1, -3)"}) {
            const QString odd = writeNpy(QStringLiteral("odd.npy"), "<f4", shape, 16);
            Run r = cli({QStringLiteral("run"), model, QStringLiteral("--input"), QStringLiteral("image=") + odd});
            QCOMPARE(r.exitCode, 2);
            QVERIFY2(r.err.contains(QStringLiteral("odd.npy: shape ")) && r.err.contains(QStringLiteral("is not a list of sizes")),
                     qPrintable(r.err));
            QCOMPARE(r.err.count(QLatin1Char('\n')), 1);
        }
        const QString wide = writeNpy(QStringLiteral("wide.npy"), "<f99999999999999999999", "(1,)", 4);
        Run wideType = cli({QStringLiteral("run"), model, QStringLiteral("--input"), QStringLiteral("image=") + wide});
        QCOMPARE(wideType.exitCode, 2);
        QVERIFY2(wideType.err.contains(QStringLiteral("is not supported")), qPrintable(wideType.err));

        Run usage = cli({QStringLiteral("run"), model, QStringLiteral("--iterations"), QStringLiteral("zero")});
        QCOMPARE(usage.exitCode, 64);
        Run bad = cli({QStringLiteral("run"), QStringLiteral(FSC_FIXTURE_DIR "/bad/truncated.onnx")});
        QCOMPARE(bad.exitCode, 2);
        QVERIFY(bad.err.contains(QStringLiteral("truncated.onnx")));
    }

    void runNamesUnsupportedOpsAndMissingGpu() {
        const QString tfidf = QStringLiteral(FSC_ONNX_TESTDATA "/node/test_tfidfvectorizer_tf_only_bigrams_skip0/model.onnx");
        if (QFileInfo::exists(tfidf)) {
            Run r = cli({QStringLiteral("run"), tfidf});
            QCOMPARE(r.exitCode, 2);
            QVERIFY2(r.err.contains(QStringLiteral("model.onnx: node '' (TfIdfVectorizer): no cpu kernel for TfIdfVectorizer at opset")), qPrintable(r.err));
        }
        Run cuda = cli({QStringLiteral("run"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--backend"), QStringLiteral("cuda")});
        QCOMPARE(cuda.exitCode, 2);
        QVERIFY2(cuda.err.contains(QStringLiteral("--backend cuda:")) && cuda.err.contains(QStringLiteral("use --backend cpu")), qPrintable(cuda.err));
        Run badFlag = cli({QStringLiteral("run"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--cuda-graphs"), QStringLiteral("maybe")});
        QCOMPARE(badFlag.exitCode, 64);
    }

    // run --backend cuda on the simulated device, with its flags in combination, on every
    // good fixture: exit 0 or one line with exit 2, never a signal; the JSON says where each
    // node ran and what was copied.
    void cudaRunsOnEveryFixture_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QStringList>("flags");
        QStringList models = fsc::test::goodFixtures();
        models << QStringLiteral(FSC_SAMPLE_MODEL);
        // Under the sanitizers: the plain run and the captured-and-replayed one.
        const QList<QStringList> allCombos{
            {},
            {QStringLiteral("--cuda-graphs"), QStringLiteral("off")},
            {QStringLiteral("--iterations"), QStringLiteral("3"), QStringLiteral("--warmup"), QStringLiteral("1")},
            {QStringLiteral("--profile"), QStringLiteral("--pipeline"), QStringLiteral("O0")},
            {QStringLiteral("--pipeline"), QStringLiteral("O3"), QStringLiteral("--iterations"), QStringLiteral("2"),
             QStringLiteral("--cuda-graphs"), QStringLiteral("on")},
            {QStringLiteral("--device-io"), QStringLiteral("--iterations"), QStringLiteral("3")}};
        const QList<QStringList> combos = kSanitized ? QList<QStringList>{allCombos[0], allCombos[4]} : allCombos;
        for (const QString& m : models)
            for (const QStringList& c : combos)
                QTest::newRow(qPrintable(QFileInfo(m).fileName() + " " + c.join(' '))) << m << c;
    }
    // Every fixture runs with --backend cuda on the simulated device: exit 0 with the CPU's
    // outputs, or, for the fixtures listed with the words of their refusal, exit 2 with that
    // one-line reason (the CPU backend, which runs what the device does not, refuses them).
    void cudaRunsOnEveryFixture() {
        QFETCH(QString, path);
        QFETCH(QStringList, flags);
        const QString name = QFileInfo(path).fileName();
        QTemporaryDir dir;
        const QString outputs = dir.filePath(QStringLiteral("cuda"));
        QStringList args{QStringLiteral("run"), path, QStringLiteral("--backend"), QStringLiteral("cuda"), QStringLiteral("--json"),
                         QStringLiteral("--output-dir"), outputs};
        Run r = cli(args + flags, {QStringLiteral("FUSESCOPE_DEVICE=simulated")});
        if (const auto refused = fsc::test::fixturesTheCpuRefuses().find(name.toStdString());
            refused != fsc::test::fixturesTheCpuRefuses().end()) {
            QCOMPARE(r.exitCode, 2);
            QVERIFY2(r.err.trimmed().count('\n') == 0 && r.err.startsWith(QStringLiteral("error: ")), qPrintable(r.err));
            QVERIFY2(r.err.contains(QString::fromStdString(refused->second)), qPrintable(r.err));
            return;
        }
        QVERIFY2(r.exitCode == 0, qPrintable(QStringLiteral("exit %1: %2").arg(r.exitCode).arg(r.err)));
        const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
        const QJsonObject device = j[QStringLiteral("device")].toObject();
        QCOMPARE(device[QStringLiteral("name")].toString(), QStringLiteral("simulated device"));
        QVERIFY(device[QStringLiteral("simulated")].toBool());
        const int onDevice = device[QStringLiteral("steps_on_device")].toInt();
        const int fallbacks = device[QStringLiteral("cpu_fallbacks")].toArray().size();
        // Host-side control flow by design: nested.onnx's top-level If; repeated_graph_output's
        // If and the Greater (no device kernel) that decides it.
        if (name == QStringLiteral("nested.onnx")) QCOMPARE(fallbacks, 1);
        else if (name == QStringLiteral("repeated_graph_output.onnx")) QCOMPARE(fallbacks, 2);
        // Sequences live on the host: SequenceEmpty, the Loop growing one, and the two conversions.
        else if (name == QStringLiteral("sequence_loop.onnx")) QCOMPARE(fallbacks, 4);
        // The graph-break fixtures: com.microsoft.QuickGelu has a CPU kernel and no device one.
        else if (name == QStringLiteral("breaks.onnx") || name == QStringLiteral("domains.onnx")) QCOMPARE(fallbacks, 1);
        else QVERIFY2(onDevice > 0 && fallbacks == 0, qPrintable(QStringLiteral("%1 on the device, %2 fallbacks").arg(onDevice).arg(fallbacks)));
        const bool replayed = device[QStringLiteral("cuda_graph_replayed")].toBool();
        if (flags.contains(QStringLiteral("off")) || flags.contains(QStringLiteral("--profile"))) QVERIFY(!replayed);
        // Two runs with graphs on and every step on the device: the second replays, but for
        // fixtures whose outputs are constants (outside the arena, so capture declines).
        const bool constantOutputs = name == QStringLiteral("all_dtypes.onnx") || name == QStringLiteral("constants.onnx");
        if (flags.contains(QStringLiteral("O3")) && fallbacks == 0 && !constantOutputs) QVERIFY(replayed);
        // Device-resident: nothing crosses to the host inside the timed runs when all is on the device.
        if (flags.contains(QStringLiteral("--device-io"))) {
            QCOMPARE(j[QStringLiteral("timing")].toString(), QStringLiteral("device-resident"));
            if (fallbacks == 0 && !constantOutputs)
                QCOMPARE(device[QStringLiteral("last_run_copies")].toObject()[QStringLiteral("count")].toInt(), 0);
        }

        // The same outputs as the CPU backend on the same (seeded) inputs. The CPU runs once
        // per fixture (the flags above change only the device's run), into a folder kept for its rows.
        QString& cpuOutputs = m_cpuOutputs[path];
        if (cpuOutputs.isEmpty()) {
            const QString folder = m_cpuOutputsDir.filePath(QString::number(m_cpuOutputs.size()));
            Run cpu = cli({QStringLiteral("run"), path, QStringLiteral("--output-dir"), folder});
            QVERIFY2(cpu.exitCode == 0, qPrintable(cpu.err));
            cpuOutputs = folder;
        }
        const QStringList files = QDir(cpuOutputs).entryList({QStringLiteral("*.pb")}, QDir::Files, QDir::Name);
        QVERIFY(!files.isEmpty());
        QCOMPARE(QDir(outputs).entryList({QStringLiteral("*.pb")}, QDir::Files, QDir::Name), files);
        // Which files hold sequences, the graph's output types say (the bytes cannot).
        auto model = fsc::importModel(path.toStdString());
        QVERIFY(model);
        const fsc::Graph& graph = *model->graph;
        auto same = [&](const QString& f, const fsc::Tensor& want, const fsc::Tensor& got) {
            QCOMPARE(int(got.dtype()), int(want.dtype()));
            QVERIFY(got.dims() == want.dims());
            auto a = fsc::tensorFromConstant(want);
            auto b = fsc::tensorFromConstant(got);
            QVERIFY(a && b);
            const double worst = fsc::test::worstRelativeError(*a, *b);
            QVERIFY2(worst <= 1e-4, qPrintable(QStringLiteral("%1: worst relative error %2").arg(f).arg(worst)));
        };
        for (const QString& f : files) {
            const std::string wantFile = (cpuOutputs + '/' + f).toStdString(), gotFile = (outputs + '/' + f).toStdString();
            const size_t index = f.mid(7).chopped(3).toUInt();  // output_N.pb
            QVERIFY(index < graph.outputs.size());
            if (graph.value(graph.outputs[index]).type.kind == fsc::ValueType::Kind::Sequence) {
                auto want = fsc::readSequenceProtoFile(wantFile);
                auto got = fsc::readSequenceProtoFile(gotFile);
                QVERIFY(want && got);
                QCOMPARE(got->elements.size(), want->elements.size());
                for (size_t e = 0; e < got->elements.size(); ++e) same(f, want->elements[e], got->elements[e]);
                continue;
            }
            auto want = fsc::readTensorProtoFile(wantFile);
            auto got = fsc::readTensorProtoFile(gotFile);
            QVERIFY(want && got);
            same(f, *want, *got);
        }
    }

    // profile --backend cuda stores a CUDA run and writes its report.
    void cudaProfileIsStored() {
        QTemporaryDir dir;
        const QString store = dir.filePath(QStringLiteral("runs.fsdb")), report = dir.filePath(QStringLiteral("r.html"));
        Run r = cli({QStringLiteral("profile"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--backend"), QStringLiteral("cuda"),
                     QStringLiteral("--iterations"), QStringLiteral("3"), QStringLiteral("--store"), store,
                     QStringLiteral("--report"), report},
                    {QStringLiteral("FUSESCOPE_DEVICE=simulated")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains(QStringLiteral("backend cuda (simulated device)")), qPrintable(r.out));
        QVERIFY(QFileInfo(report).size() > 1000);
        Run list = cli({QStringLiteral("profile"), QStringLiteral("--list"), store});
        QVERIFY2(list.out.contains(QStringLiteral("cuda")), qPrintable(list.out + list.err));
    }

private:
    QTemporaryDir m_cpuOutputsDir;
    QHash<QString, QString> m_cpuOutputs;  // fixture -> the CPU backend's outputs for it
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
