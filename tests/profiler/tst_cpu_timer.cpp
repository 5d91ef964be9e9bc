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
    // A disturbed set of runs says so, with the figure that gave it away; a steady one does not.
    void disturbedRunsAreTold() {
        QVERIFY(computeStats({10, 10.2, 9.9, 10.1, 10, 10.3, 9.8, 10, 10.1, 10}).disturbed.empty());
        const SampleStats tail = computeStats({10, 10, 10, 10, 10, 10, 10, 10, 31, 40});
        QVERIFY2(tail.disturbed.find("p90 is 3.1x the median") != std::string::npos, tail.disturbed.c_str());
        // p90 within 1.5x, but the runs spread widely.
        const SampleStats spread = computeStats({6, 7, 8, 9, 10, 11, 12, 13, 14, 14});
        QVERIFY(spread.coefficientOfVariation > 0.2);
        QVERIFY2(spread.disturbed.find("vary by 26% of their mean") != std::string::npos, spread.disturbed.c_str());
        QVERIFY(computeStats({1, 50}).disturbed.empty());  // two runs say too little
        // A hundred steady runs with two outliers: the median stands, no warning.
        std::vector<double> steady(98, 0.1);
        steady.push_back(2.0), steady.push_back(3.0);
        const SampleStats outliers = computeStats(steady);
        QVERIFY(outliers.coefficientOfVariation > 0.2);
        QVERIFY2(outliers.disturbed.empty(), outliers.disturbed.c_str());
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
