// Timing statistics report measured samples (nearest rank), never interpolated ones.
#include <QtTest>

#include <thread>

#include "profiler/cpu_timer.h"

using namespace fsc;

class TestCpuTimer : public QObject {
    Q_OBJECT
private slots:
    void statsUseNearestRank() {
        SampleStats s = computeStats({5, 1, 4, 2, 3, 10, 9, 8, 7, 6});
        QCOMPARE(s.count, size_t(10));
        QCOMPARE(s.min, 1.0);
        QCOMPARE(s.median, 5.0);
        QCOMPARE(s.p90, 9.0);
        QCOMPARE(s.max, 10.0);
    }
    void emptySamplesGiveZeros() {
        SampleStats s = computeStats({});
        QCOMPARE(s.count, size_t(0));
        QCOMPARE(s.median, 0.0);
    }
    void stopwatchAdvances() {
        Stopwatch w;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        QVERIFY(w.elapsedMs() >= 5.0);
    }
};

QTEST_GUILESS_MAIN(TestCpuTimer)
#include "tst_cpu_timer.moc"
