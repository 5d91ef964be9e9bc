// The walkthrough's timing warning: a chapter whose timed runs spread too far says so, with
// the same sentence run and profile print, in its JSON, its HTML and (through the HTML) the
// GUI's dock; steady runs say nothing.
#include <QTest>

#include <set>
#include <sstream>

#include "app/walkthrough/walkthrough.h"
#include "app/walkthrough/walkthrough_chapters.h"
#include "app/walkthrough/walkthrough_figures.h"
#include "profiler/cpu_timer.h"

using namespace fsc;

class TestWalkthrough : public QObject {
    Q_OBJECT
private slots:
    void aDisturbedSideWarns() {
        TimedSide steady, disturbed;
        steady.samplesMs = {1.0, 1.01, 0.99, 1.0, 1.02, 1.0};
        disturbed.samplesMs = {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 9.0, 12.0};
        QVERIFY(timingWarningOf({&steady}).empty());
        const std::string why = computeStats(disturbed.samplesMs).disturbed;
        QVERIFY(!why.empty());
        QCOMPARE(timingWarningOf({&steady, &disturbed}), why);
        QCOMPARE(timingWarningOf({&disturbed, &steady}), why);
    }

    void theWarningIsShownWhereTheChapterIs() {
        WalkthroughChapter c;
        c.id = 10;
        c.title = "Benchmarking";
        c.figures = {{"median_ms", 1.0}};
        const nlohmann::json clean = walkthroughJson({c}, "m.onnx");
        QVERIFY(!clean["chapters"][0].contains("timing_warning"));
        QVERIFY(walkthroughChapterHtml(c, {}).find("class=\"warning\"") == std::string::npos);
        c.timingWarning = "p90 9.0 ms is 9.0x the median <1.0 ms>";
        const nlohmann::json warned = walkthroughJson({c}, "m.onnx");
        QCOMPARE(warned["chapters"][0]["timing_warning"].get<std::string>(), c.timingWarning);
        const std::string html = walkthroughChapterHtml(c, {});
        QVERIFY(html.find("<p class=\"warning\">Warning: p90 9.0 ms is 9.0x the median &lt;1.0 ms&gt;</p>") !=
                std::string::npos);
        // Above the figures, where a reader looks before trusting them.
        QVERIFY(html.find("class=\"warning\"") < html.find("<table"));
    }

    // The handout's figures read as a person writes them: keys as words, units on values,
    // separators on counts, shares as percentages, no schema names or empty fields.
    void figuresReadAsPeopleWriteThem() {
        QCOMPARE(figureLabel("median_ms"), std::string("Median"));
        QCOMPARE(figureLabel("bytes_moved"), std::string("Bytes moved"));
        QCOMPARE(figureLabel("ms_before"), std::string("Time before"));
        QCOMPARE(figureValueText("ms_before", 0.0518), std::string("51.8 µs"));
        QCOMPARE(figureLabel("conv_block/Add"), std::string("conv_block/Add"));  // data, not a schema key
        QCOMPARE(figureValueText("median_ms", 0.09416), std::string("94.2 µs"));
        QCOMPARE(figureValueText("p90_ms", 2.5), std::string("2.5 ms"));
        QCOMPARE(figureValueText("total_ms", 1160.4), std::string("1,160 ms"));
        QCOMPARE(figureValueText("arena_bytes", 40960), std::string("40.0 KiB"));
        QCOMPARE(figureValueText("flops", 2073216.0), std::string("2,073,216"));
        QCOMPARE(figureValueText("intermediates", 14), std::string("14"));  // "buffers: 56", not "56.00"
        QCOMPARE(figureValueText("share_of_time", 0.528989), std::string("52.9%"));
        QCOMPARE(figureValueText("speedup", 1.8358), std::string("1.84x"));
        QCOMPARE(figureValueText("one_minus_cosine", 1.6587e-05), std::string("1.66e-05"));
        QCOMPARE(figureValueText("peak_bytes_per_second", 47909220093.0), std::string("47.9 GB/s"));
        // The sensitivity ranking stays visible once formatted (chapter 8's cosines all printed 1).
        std::set<std::string> cosines, gaps;
        for (double c : {0.99998341, 0.99999615, 0.99999872, 0.99999882}) {
            cosines.insert(figureValueText("cosine", c));
            gaps.insert(figureValueText("one_minus_cosine", 1 - c));
        }
        QCOMPARE(cosines.size(), size_t(4));
        QCOMPARE(gaps.size(), size_t(4));
        nlohmann::json figures = {{"schema", "fusescope.inspect/1"},
                                  {"median_ms", 0.09416},
                                  {"warnings", nlohmann::json::array()},
                                  {"op_histogram", {{"MatMul", 8}}},
                                  {"simulated_us", {{"nvlink4", 10.14}}}};
        std::ostringstream out;
        writeFiguresHtml(out, figures);
        const std::string html = out.str();
        QVERIFY2(html.find("schema") == std::string::npos && html.find("Warnings") == std::string::npos, html.c_str());
        QVERIFY(html.find("<th>Median</th><td><span class=\"n\">94.2 µs</span>") != std::string::npos);
        QVERIFY(html.find("<th>MatMul</th><td><span class=\"n\">8</span>") != std::string::npos);
        QVERIFY(html.find("<th>nvlink4</th><td><span class=\"n\">10.1 µs</span>") != std::string::npos);
        QVERIFY(html.find("median_ms") == std::string::npos);
        // Many fields of a few items: a row per field, the items headed by their name.
        nlohmann::json wide = nlohmann::json::array();
        for (const char* name : {"tensor parallel", "pipeline parallel"})
            wide.push_back({{"all_reduces", 2}, {"bubble_fraction", 0.5}, {"devices", 2}, {"partition", name},
                            {"stage_balance", 1.0}, {"total_us", 10.0}, {"weight_bytes", 2048}, {"zeros", 0}});
        std::ostringstream wideOut;
        writeFiguresHtml(wideOut, {{"partitions", wide}});
        const std::string transposed = wideOut.str();
        QVERIFY2(transposed.find("<tr><th>Partition</th><th>tensor parallel</th><th>pipeline parallel</th></tr>") !=
                     std::string::npos,
                 transposed.c_str());
        QVERIFY(transposed.find("<tr><th>Bubble fraction</th><td><span class=\"n\">50%</span></td>") != std::string::npos);
        // Headed by the item's name field even where another text field sorts first.
        nlohmann::json kinds = nlohmann::json::array();
        kinds.push_back({{"bytes_saved", 1024}, {"example", "/conv1/Conv"}, {"fused_op", "FusedConv"}, {"groups", 49},
                         {"launches_saved", 65}, {"ms_after", 17.5}, {"ms_before", 21.6}, {"nodes_replaced", 114}});
        std::ostringstream kindsOut;
        writeFiguresHtml(kindsOut, {{"by_fused_op", kinds}});
        QVERIFY2(kindsOut.str().find("<tr><th>Fused op</th><th>FusedConv</th></tr>") != std::string::npos, kindsOut.str().c_str());
        // A table of items leads with their name; a pass's "ms" reads as its time.
        nlohmann::json passes = nlohmann::json::array();
        passes.push_back({{"applied", 23}, {"matched", 23}, {"ms", 0.272}, {"name", "eliminate-no-ops"}, {"nodes_after", 672}});
        std::ostringstream passesOut;
        writeFiguresHtml(passesOut, {{"passes", passes}});
        QVERIFY2(passesOut.str().find("<tr><th>Name</th><th>Applied</th><th>Matched</th><th>Time</th><th>Nodes after</th></tr>") !=
                     std::string::npos,
                 passesOut.str().c_str());
        // A long series shows its start and says where the rest is; a table of 30 rows stays whole.
        nlohmann::json steps = nlohmann::json::array();
        for (int i = 0; i < 204; ++i) steps.push_back({{"step", i}, {"live_bytes", 1024 * i}});
        std::ostringstream stepsOut;
        writeFiguresHtml(stepsOut, {{"live_bytes_by_step", steps}});
        const std::string stepsHtml = stepsOut.str();
        QVERIFY(stepsHtml.find(">9</span></td>") != std::string::npos && stepsHtml.find(">10</span></td>") == std::string::npos);
        QVERIFY2(stepsHtml.find("<td colspan=\"2\">and 194 more rows (walkthrough --json gives them all)</td>") != std::string::npos,
                 stepsHtml.c_str());
        steps.erase(steps.begin() + 30, steps.end());
        std::ostringstream thirty;
        writeFiguresHtml(thirty, {{"live_bytes_by_step", steps}});
        QVERIFY(thirty.str().find(">29</span></td>") != std::string::npos && thirty.str().find("more rows") == std::string::npos);
    }

    // Predict, then reveal: the question comes first, the page hides this model's answer
    // until asked, the dock (no <details>) shows it after the question; the JSON carries both.
    void eachChapterAsksBeforeItAnswers() {
        WalkthroughChapter c;
        c.id = 6;
        c.title = "Memory planning";
        c.figures = {{"arena_bytes", 40960}, {"naive_bytes", 139392}, {"lower_bound_bytes", 40960}, {"intermediates", 14}};
        addPrediction(c);
        QVERIFY(!c.question.empty());
        QCOMPARE(c.answer, std::string("The plan needs 40.0 KiB for 14 intermediate tensors, against 136 KiB with a buffer "
                                       "each (3.4x less); no plan can use less than 40.0 KiB, the most alive at one step."));
        const std::string page = walkthroughChapterHtml(c, {});
        QVERIFY(page.find("Predict first:") < page.find("<details"));
        QVERIFY(page.find("<details") < page.find("<table"));
        const std::string dock = walkthroughChapterHtml(c, [](size_t) { return std::string("chart:0"); });
        QVERIFY(dock.find("<details") == std::string::npos && dock.find("On this model: The plan needs") != std::string::npos);
        const nlohmann::json j = walkthroughJson({c}, "m.onnx");
        QCOMPARE(j["chapters"][0]["answer"].get<std::string>(), c.answer);
        // A chapter that does not apply asks nothing.
        WalkthroughChapter na;
        na.id = 7;
        na.notApplicable = "no GPU";
        addPrediction(na);
        QVERIFY(na.question.empty() && na.answer.empty());
    }
};

QTEST_GUILESS_MAIN(TestWalkthrough)
#include "tst_walkthrough.moc"
