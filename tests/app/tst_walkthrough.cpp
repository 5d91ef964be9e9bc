// The walkthrough's timing warning: a chapter whose timed runs spread too far says so, with
// the same sentence run and profile print, in its JSON, its HTML and (through the HTML) the
// GUI's dock; steady runs say nothing.
#include <QTest>

#include "app/common/walkthrough.h"
#include "app/common/walkthrough_chapters.h"
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
};

QTEST_GUILESS_MAIN(TestWalkthrough)
#include "tst_walkthrough.moc"
