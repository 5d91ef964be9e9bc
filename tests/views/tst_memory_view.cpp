// The memory dock: peaks, the step under a time, the tensors live at a step (their bytes
// add up to the planned curve), and the widget following clicks and Left/Right.
#include <QTableWidget>
#include <QTest>

#include "views/memory_model.h"
#include "views/memory_view.h"

using namespace fsc;

namespace {

// Four steps at 0, 100, 200, 300 ns over three buffers: a (0-1), b (1-2), c (2-3).
std::shared_ptr<Trace> planned() {
    auto t = std::make_shared<Trace>();
    t->plannedBuffers = {{"a", 0, 100, 0, 1}, {"b", 100, 300, 1, 2}, {"c", 0, 50, 2, 3}};
    const char* labels[] = {"n0", "n1", "n2", "n3"};
    for (int64_t step = 0; step < 4; ++step) {
        int64_t live = 0;
        for (const PlannedBuffer& b : t->plannedBuffers)
            if (b.firstStep <= step && step <= b.lastStep) live += b.bytes;
        t->plannedMemory.push_back({step * 100, live, labels[step]});
    }
    t->measuredMemory = {{0, 500, "arena"}};
    Activity k;
    k.startNs = 0, k.endNs = 400;
    t->activities.push_back(k);
    return t;
}

}  // namespace

class TestMemoryView : public QObject {
    Q_OBJECT
private slots:
    void peaksStepsAndLiveTensors() {
        const auto t = planned();
        const MemoryPeak peak = memoryPeak(t->plannedMemory);
        QCOMPARE(peak.index, 1);  // a + b = 400 at step 1
        QCOMPARE(peak.bytes, int64_t(400));
        QCOMPARE(memoryPeak({}).index, -1);
        QCOMPARE(memorySpanEnd(*t), int64_t(400));
        QCOMPARE(plannedStepAt(*t, -1), -1);
        QCOMPARE(plannedStepAt(*t, 0), 0);
        QCOMPARE(plannedStepAt(*t, 150), 1);
        QCOMPARE(plannedStepAt(*t, 10'000), 3);
        for (int step = 0; step < 4; ++step) {
            int64_t sum = 0;
            for (const PlannedBuffer* b : liveBuffersAt(*t, step)) sum += b->bytes;
            QCOMPARE(sum, t->plannedMemory[size_t(step)].bytes);
        }
        const auto live = liveBuffersAt(*t, 2);
        QCOMPARE(live.size(), size_t(2));
        QCOMPARE(live[0]->name, std::string("b"));  // largest first
    }

    void theViewOpensAtThePeakAndFollowsTheCursor() {
        MemoryView view;
        view.resize(900, 300);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setTrace(planned());
        QVERIFY(view.headline().contains(QStringLiteral("Planned peak 400 B over 4 steps (3 intermediates)")));
        QCOMPARE(view.liveTable()->rowCount(), 2);  // the peak step: a and b
        // A click at 250 ns: step 2 (b and c).
        MemoryChart* chart = view.chart();
        QTest::mouseClick(chart, Qt::LeftButton, {}, QPoint(int(chart->xOf(250)) + 1, chart->height() / 2));
        QCOMPARE(plannedStepAt(*planned(), chart->cursorTime()), 2);
        QCOMPARE(view.liveTable()->rowCount(), 2);
        QStringList names;
        for (int r = 0; r < view.liveTable()->rowCount(); ++r) names << view.liveTable()->item(r, 0)->text();
        names.sort();
        QCOMPARE(names, (QStringList{QStringLiteral("b"), QStringLiteral("c")}));
        QTest::keyClick(chart, Qt::Key_Right);  // step 3: c alone
        QCOMPARE(view.liveTable()->rowCount(), 1);
        QCOMPARE(view.liveTable()->item(0, 0)->text(), QStringLiteral("c"));
        QTest::keyClick(chart, Qt::Key_Right);  // stays on the last step
        QCOMPARE(view.liveTable()->rowCount(), 1);
        view.setTrace(nullptr);
        QCOMPARE(view.liveTable()->rowCount(), 0);
    }
};

QTEST_MAIN(TestMemoryView)
#include "tst_memory_view.moc"
