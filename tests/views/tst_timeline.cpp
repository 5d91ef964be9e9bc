// The timeline's maths: lanes per stream and depth, time <-> pixel zoom and pan, blocks
// merged to at most about one per pixel (100,000 kernels stay cheap to draw), range
// aggregates and hit testing; and the widget's click-to-node and range selection.
#include <QSignalSpy>
#include <QTest>

#include "views/timeline_model.h"
#include "views/timeline_view.h"

using namespace fsc;

namespace {

// `n` back-to-back kernels of 1 us on stream 0, node i % 7; one nested launch; one copy.
std::shared_ptr<Trace> kernels(int n) {
    auto t = std::make_shared<Trace>();
    t->backend = "cuda";
    t->iterations = 1;
    for (int64_t id = 0; id < 7; ++id) t->nodes.push_back({id, "node" + std::to_string(id), "Relu", "Relu.float32", {}, 0, 0});
    for (int i = 0; i < n; ++i) {
        Activity a;
        a.name = "k";
        a.node = i % 7;
        a.startNs = int64_t(i) * 1000;
        a.endNs = a.startNs + 900;
        t->activities.push_back(a);
    }
    Activity nested;
    nested.node = -1;
    nested.depth = 1;
    nested.startNs = 100, nested.endNs = 200;
    t->activities.push_back(nested);
    Activity copy;
    copy.kind = ActivityKind::Memcpy;
    copy.stream = 1;
    copy.startNs = 0, copy.endNs = 5000;
    t->activities.push_back(copy);
    return t;
}

}  // namespace

class TestTimeline : public QObject {
    Q_OBJECT
private slots:
    void lanesPerStreamDepthAndCopies() {
        const auto t = kernels(10);
        const auto lanes = buildTimelineLanes(*t);
        QCOMPARE(lanes.size(), size_t(3));
        QCOMPARE(lanes[0].title, std::string("stream 0"));
        QCOMPARE(lanes[0].activities.size(), size_t(10));
        QCOMPARE(lanes[1].title, std::string("stream 0 · in control flow, depth 1"));
        QCOMPARE(lanes[2].title, std::string("copies, stream 1"));
    }

    void hostRangesNestOnLanesOfTheirOwnAboveTheKernels() {
        auto t = kernels(3);
        auto range = [&](const char* name, int64_t start, int64_t end) {
            Activity a;
            a.kind = ActivityKind::Range;
            a.name = name;
            a.stream = -1;
            a.startNs = start, a.endNs = end;
            t->activities.push_back(a);
        };
        range("iteration 0", 0, 10000);
        range("node0", 100, 900);
        range("node1", 1000, 1900);
        range("iteration 1", 10000, 20000);
        const auto lanes = buildTimelineLanes(*t);
        QCOMPARE(lanes.size(), size_t(5));
        QCOMPARE(lanes[0].title, std::string("host ranges (NVTX)"));
        QCOMPARE(lanes[0].activities.size(), size_t(2));  // the iterations, back to back
        QCOMPARE(lanes[1].title, std::string("host ranges, level 2"));
        QCOMPARE(lanes[1].activities.size(), size_t(2));  // the nodes inside them
        QCOMPARE(lanes[2].title, std::string("stream 0"));
    }

    // A run opens on one iteration, not all of them with their gaps (a CPU run once showed
    // 16 s with no kernel visible); the CPU's host lane is its iterations, not NVTX.
    void opensOnOneIterationWithLanesNamedForWhatTheyAre() {
        auto t = std::make_shared<Trace>();
        t->backend = "cpu";
        for (int i = 0; i < 3; ++i) {
            const int64_t base = i * 1'000'000'000LL;  // a second apart
            const int64_t length = i == 1 ? 5000 : i == 2 ? 9000 : 1000;
            Activity range;
            range.kind = ActivityKind::Range, range.name = "iteration " + std::to_string(i);
            range.startNs = base, range.endNs = base + length, range.iteration = i, range.stream = -1;
            Activity k;
            k.name = "k", k.node = 0, k.startNs = base, k.endNs = base + length, k.iteration = i;
            t->activities.push_back(range);
            t->activities.push_back(k);
        }
        QCOMPARE(oneIterationSpan(*t), (std::pair<int64_t, int64_t>{1'000'000'000LL, 1'000'005'000LL}));  // the median
        QCOMPARE(wholeRunSpan(*t).second, 2'000'009'000LL);
        QCOMPARE(buildTimelineLanes(*t).front().title, std::string("iterations (host clock)"));
        TimelineView view;
        view.resize(1150, 200);
        view.setTrace(t);
        const double one = view.scale().nsPerPixel;
        QVERIFY2(one * (view.width() - TimelineView::kGutter) < 10'000, qPrintable(QString::number(one)));
        QTest::keyClick(&view, Qt::Key_F, Qt::ShiftModifier);
        QVERIFY(view.scale().nsPerPixel > one * 100'000);
        QTest::keyClick(&view, Qt::Key_F);
        QCOMPARE(view.scale().nsPerPixel, one);
    }

    void scaleZoomsAboutAPointAndPans() {
        TimeScale s = TimeScale::fit(0, 1000000, 1000);
        QVERIFY(s.toX(0) > 0 && s.toX(1000000) < 1000);
        const double at = s.toNs(300);
        s.zoomAt(300, 4);
        QVERIFY(std::abs(s.toNs(300) - at) < 1e-6);
        const double per = s.nsPerPixel;
        s.pan(50);
        QCOMPARE(s.nsPerPixel, per);
        QVERIFY(std::abs(s.toNs(350) - at) < 1e-6);
    }

    void blocksMergeBelowAPixel() {
        const auto t = kernels(100000);
        const auto lanes = buildTimelineLanes(*t);
        // All 100,000 kernels in 1,000 pixels: about one block per pixel, covering them all.
        const TimeScale all = TimeScale::fit(0, 100000 * 1000, 1000);
        const auto blocks = visibleBlocks(*t, lanes[0], all, 1000);
        QVERIFY2(blocks.size() <= 1001, qPrintable(QString::number(blocks.size())));
        int covered = 0;
        for (const auto& b : blocks) covered += b.count;
        QCOMPARE(covered, 100000);
        // Zoomed in to 10 kernels across the width: each a block of its own, wide.
        TimeScale close;
        close.startNs = 50000000, close.nsPerPixel = 10;
        const auto few = visibleBlocks(*t, lanes[0], close, 1000);
        QVERIFY(few.size() >= 10 && few.size() <= 11);
        for (const auto& b : few) QCOMPARE(b.count, 1);
        QVERIFY(few[1].x1 - few[1].x0 > 80);
    }

    void rangeAggregatesAndHits() {
        const auto t = kernels(20);
        const RangeSummary r = summarizeRange(*t, 2500, 5500);
        // Kernels 2 (clipped 2500..2900), 3, 4, 5 (5000..5500) and the copy (2500..5000).
        QCOMPARE(r.activities, int64_t(5));
        QCOMPARE(r.busyNs, int64_t(400 + 900 + 900 + 500 + 2500));
        QCOMPARE(r.topNodes.size(), size_t(4));
        QCOMPARE(r.topNodes[0].second, int64_t(900));
        const auto lanes = buildTimelineLanes(*t);
        QCOMPARE(activityAt(*t, lanes[0], 3450, 1), 3);
        QCOMPARE(activityAt(*t, lanes[0], 3950, 1), -1);  // the gap between kernels
    }

    void clicksSelectNodesAndShiftDragSelectsARange() {
        TimelineView view;
        view.resize(1150, 200);
        view.show();
        view.setTrace(kernels(20));
        QSignalSpy picked(&view, &TimelineView::nodeSelected);
        // Kernel 3 (node 3) sits at 3000..3900 ns.
        const int x = TimelineView::kGutter + int(view.scale().toX(3450));
        QTest::mouseClick(&view, Qt::LeftButton, {}, QPoint(x, view.laneMiddle(0)));
        QCOMPARE(picked.count(), 1);
        QCOMPARE(picked.first().first().toLongLong(), 3LL);
        QCOMPARE(view.selectedNode(), 3LL);
        QSignalSpy ranged(&view, &TimelineView::rangeSelected);
        const int from = TimelineView::kGutter + int(view.scale().toX(1000)), to = TimelineView::kGutter + int(view.scale().toX(8000));
        QTest::mousePress(&view, Qt::LeftButton, Qt::ShiftModifier, QPoint(from, view.laneMiddle(0)));
        QTest::mouseMove(&view, QPoint(to, view.laneMiddle(0)));
        QTest::mouseRelease(&view, Qt::LeftButton, Qt::ShiftModifier, QPoint(to, view.laneMiddle(0)));
        QVERIFY(ranged.count() >= 1);
        QVERIFY(view.range().activities >= 7);
        // W zooms in about the middle; F fits again.
        const double before = view.scale().nsPerPixel;
        QTest::keyClick(&view, Qt::Key_W);
        QVERIFY(view.scale().nsPerPixel < before);
        QTest::keyClick(&view, Qt::Key_F);
        QCOMPARE(view.scale().nsPerPixel, before);
    }

    void aFittedRunStaysWholeWhenResizedAZoomedOneStays() {
        // A dock fills the trace while hidden and narrow: once shown wide, the run still fills it.
        TimelineView view;
        view.resize(200, 200);
        view.setTrace(kernels(20));
        const double narrow = view.scale().nsPerPixel;
        view.resize(1150, 200);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(view.scale().nsPerPixel < narrow / 4);
        const double wholeAtWidth = view.scale().nsPerPixel;
        QTest::keyClick(&view, Qt::Key_W);  // zoomed by hand: a resize leaves that zoom alone
        const double zoomed = view.scale().nsPerPixel;
        QVERIFY(zoomed < wholeAtWidth);
        view.resize(600, 200);
        QTest::qWait(20);
        QCOMPARE(view.scale().nsPerPixel, zoomed);
    }
};

QTEST_MAIN(TestTimeline)
#include "tst_timeline.moc"
