// The profiler's trace model without a GPU: node stats (total, self, shares, achieved
// rates), the Chrome trace JSON Perfetto opens (its structure read back here), CSV, and
// the SQLite run store (round trip, comparison, a newer schema refused, a bad file).
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <fstream>

#include <sqlite3.h>

#include "profiler/report_charts.h"
#include "profiler/chrome_trace.h"
#include "profiler/csv_report.h"
#include "profiler/html_report.h"
#include "profiler/run_store.h"
#include "profiler/trace.h"

using namespace fsc;

namespace {

Activity kernel(int64_t node, int64_t start, int64_t end, int iteration, int depth = 0, const std::string& name = "k") {
    Activity a;
    a.name = name;
    a.node = node;
    a.startNs = start;
    a.endNs = end;
    a.iteration = iteration;
    a.depth = depth;
    return a;
}

// Two iterations of: conv (node 3, 600 ns), a Loop (node 5, 400 ns) with a 100-ns body
// launch inside it, relu (node 7, 200 ns).
Trace sample() {
    Trace t;
    t.model = "m.onnx";
    t.pipeline = "O2";
    t.backend = "cpu";
    t.device = "test CPU";
    t.iterations = 2;
    t.startedAt = "2026-11-22T00:00:00Z";
    t.unprofiledMs = 1.0;
    t.profiledMs = 1.05;
    t.passes = {{"conv-bn-fusion", 10, 9, 0.5, 1, 0}};
    t.nodes = {{3, "conv", "Conv", "Conv.float32.direct", {"conv", "bn"}, 6e6, 3e3},
               {5, "loop", "Loop", "Loop.any", {"loop"}, 0, 0},
               {7, "relu", "Relu", "Relu.float32", {"relu"}, 1e3, 8e3}};
    for (int i = 0; i < 2; ++i) {
        const int64_t base = i * 2000;
        t.activities.push_back(kernel(3, base, base + 600, i, 0, "Conv.float32.direct"));
        t.activities.push_back(kernel(-1, base + 700, base + 800, i, 1, "Add.float32 (body/add)"));
        t.activities.push_back(kernel(5, base + 600, base + 1000, i, 0, "Loop.any"));
        t.activities.push_back(kernel(7, base + 1000, base + 1200, i, 0, "Relu.float32"));
    }
    t.plannedMemory = {{0, 4096, "conv"}, {600, 8192, "loop"}, {1000, 4096, "relu"}};
    t.measuredMemory = {{0, 8192, "arena"}};
    t.plannedBuffers = {{"conv_out", 0, 4096, 0, 1}, {"loop_out", 4096, 4096, 1, 2}};
    t.peakFlopsPerSecond = 2e11, t.peakBytesPerSecond = 3e10, t.peaksSource = "measured";
    return t;
}

}  // namespace

class TestTrace : public QObject {
    Q_OBJECT
private slots:
    // A profiled run slower by less than the runs' own spread, or faster, is noise and says so.
    void overheadWithinTheSpreadIsCalledNoise() {
        Trace t = sample();  // 1.05 against 1.0: 5%
        QCOMPARE(QString::fromStdString(t.overheadText()), QStringLiteral("overhead 5.0%"));
        t.unprofiledSpreadPercent = 12;
        QCOMPARE(QString::fromStdString(t.overheadText()),
                 QStringLiteral("overhead within noise (measured 5.0%, while unprofiled runs spread 12.0%)"));
        t.unprofiledSpreadPercent = -1;
        t.profiledMs = 0.91;
        QVERIFY(QString::fromStdString(t.overheadText()).startsWith(QStringLiteral("overhead within noise (measured -9.0%")));
        t.profiledMs = -1;
        QCOMPARE(QString::fromStdString(t.overheadText()), QStringLiteral("overhead not measured"));
        // Disturbed runs: no percentage at all (it once read "spread 23650.3%").
        t.profiledMs = 1.078;
        t.unprofiledSpreadPercent = 23650.3;
        t.timingWarning = "the timed runs spread widely";
        QCOMPARE(QString::fromStdString(t.overheadText()),
                 QStringLiteral("overhead not measurable: the timed runs were disturbed"));
    }

    void nodeStatsTotalSelfAndRates() {
        const Trace t = sample();
        const auto stats = computeNodeStats(t);
        QCOMPARE(stats.size(), size_t(3));
        QCOMPARE(stats[0].node, int64_t(3));  // largest first
        QCOMPARE(stats[0].totalNs, int64_t(1200));
        QCOMPARE(stats[0].launches, int64_t(2));
        QCOMPARE(stats[0].share, 1200.0 / 2400.0);
        // 6e6 FLOPs in 600 ns per iteration: 1e13 FLOP/s; 3e3 bytes: 5e9 B/s.
        QCOMPARE(stats[0].flopsPerSecond, 1e13);
        QCOMPARE(stats[0].bytesPerSecond, 5e9);
        QCOMPARE(stats[0].arithmeticIntensity, 2000.0);
        // The Loop's own time leaves out the body launch inside it.
        QCOMPARE(stats[1].node, int64_t(5));
        QCOMPARE(stats[1].totalNs, int64_t(800));
        QCOMPARE(stats[1].selfNs, int64_t(600));
        QCOMPARE(t.overheadPercent(), 5.0);
        QCOMPARE(stats[0].medianNs, int64_t(600));
        QCOMPARE(stats[1].medianNs, int64_t(400));
    }

    // Per-node figures use the headline's statistic: one disturbed iteration moves a mean (and
    // once put one node at 61% of a run), not the median.
    void nodeStatsArePerIterationMedians() {
        Trace t = sample();
        t.iterations = 3;
        const int64_t base = 4000;
        t.activities.push_back(kernel(3, base, base + 60'000, 2, 0, "Conv.float32.direct"));  // disturbed
        t.activities.push_back(kernel(5, base + 60'000, base + 60'400, 2, 0, "Loop.any"));
        // relu did not run in the third iteration: it counts 0 there.
        const auto stats = computeNodeStats(t);
        QCOMPARE(stats[0].node, int64_t(3));
        QCOMPARE(stats[0].medianNs, int64_t(600));
        QCOMPARE(stats[0].p90Ns, int64_t(60'000));
        QCOMPARE(stats[0].totalNs, int64_t(61'200));
        QCOMPARE(stats[2].node, int64_t(7));
        QCOMPARE(stats[2].medianNs, int64_t(200));
        QCOMPARE(stats[0].share, 600.0 / 1200.0);
        QCOMPARE(stats[0].flopsPerSecond, 1e13);  // 6e6 FLOPs in the median's 600 ns
    }

    void chromeTraceHasTracksFlowsCountersAndNodeArgs() {
        const Trace t = sample();
        QJsonParseError error;
        const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(chromeTraceJson(t)), &error);
        QCOMPARE(error.error, QJsonParseError::NoError);
        const QJsonArray events = doc.object()[QStringLiteral("traceEvents")].toArray();
        int kernels = 0, nodes = 0, flowsOut = 0, flowsIn = 0, counters = 0, iterations = 0;
        QStringList threads;
        for (const QJsonValue& v : events) {
            const QJsonObject e = v.toObject();
            const QString ph = e[QStringLiteral("ph")].toString(), cat = e[QStringLiteral("cat")].toString();
            if (ph == QLatin1String("M") && e[QStringLiteral("name")] == QStringLiteral("thread_name"))
                threads << e[QStringLiteral("args")].toObject()[QStringLiteral("name")].toString();
            if (ph == QLatin1String("X") && cat == QLatin1String("kernel")) {
                ++kernels;
                QVERIFY(e.contains(QStringLiteral("ts")) && e.contains(QStringLiteral("dur")));
                const QJsonObject args = e[QStringLiteral("args")].toObject();
                if (e[QStringLiteral("name")] == QStringLiteral("Conv.float32.direct")) {
                    QCOMPARE(args[QStringLiteral("node")].toInt(), 3);
                    QCOMPARE(args[QStringLiteral("node_name")].toString(), QStringLiteral("conv"));
                    QCOMPARE(args[QStringLiteral("origins")].toArray().size(), 2);
                    QCOMPARE(e[QStringLiteral("dur")].toDouble(), 0.6);  // microseconds
                }
            }
            if (ph == QLatin1String("X") && cat == QLatin1String("node")) ++nodes;
            if (ph == QLatin1String("X") && cat == QLatin1String("iteration")) ++iterations;
            if (ph == QLatin1String("s")) ++flowsOut;
            if (ph == QLatin1String("f")) ++flowsIn;
            if (ph == QLatin1String("C")) ++counters;
        }
        QCOMPARE(kernels, 8);
        QCOMPARE(nodes, 6);  // main-graph launches only
        QCOMPARE(flowsOut, 6);
        QCOMPARE(flowsIn, 6);
        QCOMPARE(counters, 4);  // three planned samples, one measured
        QCOMPARE(iterations, 2);
        QVERIFY(threads.contains(QStringLiteral("plan nodes")) && threads.contains(QStringLiteral("executor")));
        QCOMPARE(doc.object()[QStringLiteral("metadata")].toObject()[QStringLiteral("profiler_overhead_percent")].toDouble(), 5.0);
    }

    void csvQuotesAndCounts() {
        Trace t = sample();
        t.nodes[0].name = "conv, \"main\"";
        const std::string nodes = nodeCsv(t);
        QVERIFY(nodes.find("\"conv, \"\"main\"\"\"") != std::string::npos);
        QCOMPARE(std::count(nodes.begin(), nodes.end(), '\n'), 4L);  // header + 3 nodes
        const std::string kernels = kernelCsv(t);
        QCOMPARE(std::count(kernels.begin(), kernels.end(), '\n'), 9L);  // header + 8
        QTemporaryDir dir;
        QVERIFY(writeCsvReports(t, (dir.path() + QStringLiteral("/csv")).toStdString()));
        QVERIFY(QFile::exists(dir.path() + QStringLiteral("/csv/nodes.csv")));
    }

    void htmlReportIsSelfContainedAndEscaped() {
        Trace t = sample();
        t.nodes[2].name = "relu<script>";
        ReportExtras extras;
        extras.graphSvg = "<svg id=\"graph\"></svg>";
        extras.breaks = {{"unsupported-op", "relu<script>", "no CUDA kernel", 0.25}};
        extras.software = {{"Fusescope", "test"}};
        const std::string html = htmlReport(t, extras);
        for (const char* section : {"<h2>Pipeline", "<h2>Graph, coloured", "<h2>Top nodes", "<h2>Top kernels", "<h2>Graph breaks",
                                    "<h2>Memory", "<h2>Roofline", "<h2>Software"})
            QVERIFY2(html.find(section) != std::string::npos, section);
        QVERIFY(html.find("relu&lt;script&gt;") != std::string::npos);
        QVERIFY(html.find("relu<script>") == std::string::npos);
        QVERIFY(html.find("<svg id=\"graph\">") != std::string::npos);
        QVERIFY(html.find("5.0%") != std::string::npos);  // the overhead
        QVERIFY(html.find("planned peak 8.00 KiB") != std::string::npos);
        for (const char* fetch : {"src=\"http", "href=\"http", "url(http", "@import"})  // nothing to fetch
            QVERIFY2(html.find(fetch) == std::string::npos, fetch);
    }

    // The charts the report and the walkthrough draw: the arena as buffers over time, one
    // block per buffer at its offset; a histogram's axes with whole counts and bin edges.
    void chartsDrawTheirAxes() {
        const std::vector<PlannedBuffer> buffers = {{"a", 0, 4096, 0, 1}, {"b<1>", 4096, 2048, 1, 2}, {"c", 0, 4096, 2, 3}};
        const std::string arena = arenaLayoutSvg(buffers, 4, 6144);
        size_t rects = 0;
        for (size_t at = arena.find("<rect"); at != std::string::npos; at = arena.find("<rect", at + 1)) ++rects;
        QCOMPARE(rects, size_t(3));
        QVERIFY(arena.find("b&lt;1&gt;: 2.00 KiB at offset 4.00 KiB, steps 1 to 2") != std::string::npos);
        QVERIFY(arena.find(">6.00 KiB</text>") != std::string::npos && arena.find(">0 B</text>") != std::string::npos);
        const std::string histogram = columnChartSvg({15, 3, 0, 1}, "iteration time", "runs", {"1 ms", "2 ms", "3 ms", "4 ms", "5 ms"});
        QVERIFY2(histogram.find(">15 runs</text>") != std::string::npos, histogram.c_str());  // not "15.00 runs"
        QVERIFY(histogram.find(">7 runs</text>") != std::string::npos);                     // half, whole
        QVERIFY(histogram.find(">1 ms</text>") != std::string::npos && histogram.find(">5 ms</text>") != std::string::npos);
    }

    void runStoreRoundTripAndCompare() {
        QTemporaryDir dir;
        const std::string path = (dir.path() + QStringLiteral("/runs.fsdb")).toStdString();
        int64_t first = 0, second = 0;
        {
            auto store = RunStore::open(path);
            QVERIFY(store);
            auto id = (*store)->addRun(sample());
            QVERIFY2(id, id ? "" : id.status().message().c_str());
            first = *id;
            Trace faster = sample();
            for (Activity& a : faster.activities)
                if (a.node == 3) a.endNs = a.startNs + 300;  // conv twice as fast
            second = *(*store)->addRun(faster);
        }
        auto store = RunStore::open(path);  // reopened: the file holds it all
        QVERIFY(store);
        const auto runs = (*store)->runs();
        QVERIFY(runs);
        QCOMPARE(runs->size(), size_t(2));
        QCOMPARE((*runs)[0].model, std::string("m.onnx"));
        const auto loaded = (*store)->loadTrace(first);
        QVERIFY(loaded);
        const Trace original = sample();
        QCOMPARE(loaded->activities.size(), original.activities.size());
        QCOMPARE(loaded->nodes.size(), original.nodes.size());
        QCOMPARE(loaded->nodes[0].origins, original.nodes[0].origins);
        QCOMPARE(loaded->passes.size(), size_t(1));
        QCOMPARE(loaded->plannedMemory.size(), size_t(3));
        QCOMPARE(loaded->measuredMemory.size(), size_t(1));
        QCOMPARE(loaded->plannedBuffers.size(), size_t(2));
        QCOMPARE(loaded->peakFlopsPerSecond, 2e11);
        QCOMPARE(loaded->peakBytesPerSecond, 3e10);
        QCOMPARE(loaded->peaksSource, std::string("measured"));
        QCOMPARE(loaded->plannedBuffers[1].name, std::string("loop_out"));
        QCOMPARE(loaded->plannedBuffers[1].offset, int64_t(4096));
        QCOMPARE(loaded->plannedBuffers[1].lastStep, int64_t(2));
        // Read back in start order: conv, the Loop, the body launch inside it, relu.
        QCOMPARE(loaded->activities[1].name, std::string("Loop.any"));
        QCOMPARE(loaded->activities[2].depth, 1);
        QCOMPARE(loaded->activities[2].node, int64_t(-1));
        QCOMPARE(computeNodeStats(*loaded)[0].totalNs, computeNodeStats(original)[0].totalNs);
        // Per node, run 2 against run 1: conv 0.6 us faster per iteration, the rest equal.
        const auto deltas = (*store)->compareRuns(first, second);
        QVERIFY(deltas);
        QCOMPARE((*deltas)[0].name, std::string("conv"));
        QVERIFY(std::abs((*deltas)[0].deltaMs() + 0.0003) < 1e-12);
        QVERIFY(!(*store)->compareRuns(first, 99));
        QVERIFY(!(*store)->loadTrace(99));
    }

    void badFilesAndNewerSchemasAreRefused() {
        QTemporaryDir dir;
        const QString text = dir.path() + QStringLiteral("/notes.fsdb");
        {
            std::ofstream f(text.toStdString());
            f << "these are not the runs you are looking for\n";
        }
        const auto bad = RunStore::open(text.toStdString());
        QVERIFY(!bad);
        QVERIFY2(bad.status().message().find("notes.fsdb") != std::string::npos, bad.status().message().c_str());
        const std::string newer = (dir.path() + QStringLiteral("/newer.fsdb")).toStdString();
        {
            auto store = RunStore::open(newer);
            QVERIFY(store);
        }
        {
            // A later Fusescope wrote this file.
            sqlite3* db = nullptr;
            QCOMPARE(sqlite3_open(newer.c_str(), &db), SQLITE_OK);
            QCOMPARE(sqlite3_exec(db, "UPDATE meta SET value = '2' WHERE key = 'schema_version'", nullptr, nullptr, nullptr), SQLITE_OK);
            sqlite3_close(db);
        }
        const auto refused = RunStore::open(newer);
        QVERIFY(!refused);
        QVERIFY2(refused.status().message().find("schema 2 is newer than this Fusescope reads (1)") != std::string::npos,
                 refused.status().message().c_str());
        QVERIFY(!RunStore::open("/nonexistent/dir/runs.fsdb"));
    }
};

QTEST_GUILESS_MAIN(TestTrace)
#include "tst_trace.moc"
