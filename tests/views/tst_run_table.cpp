// The run table's rows, sorting and node ids, and the heat colour ramp of the overlay.
#include <QAbstractItemModelTester>
#include <QSortFilterProxyModel>
#include <QTest>

#include "profiler/node_stats.h"
#include "views/heat_scale.h"
#include "views/run_table_model.h"

using namespace fsc;

class TestRunTable : public QObject {
    Q_OBJECT
private slots:
    void rowsCarryTimesSharesAndNodes() {
        NodeStatsCollector stats;
        for (int run = 0; run < 3; ++run) {
            // The third run was disturbed: the median per iteration ignores it, a mean would not.
            const int64_t disturbed = run == 2 ? 40 : 1;
            stats.add(NodeId{3}, "conv", "Conv", "Conv.float32.direct", 0, 3'000'000 * disturbed, run);
            stats.add(NodeId{7}, "relu", "Relu", "Relu.float32", 0, 1'000'000, run);
            stats.add(NodeId{1}, "inner_add", "Add", "Add.float32", 1, 500'000, run);  // inside a Loop
        }
        RunTableModel table;
        QAbstractItemModelTester tester(&table, QAbstractItemModelTester::FailureReportingMode::QtTest);
        table.setTimes(stats.sorted(), stats.topLevelMedianNs());
        QCOMPARE(table.rowCount(), 3);
        QCOMPARE(table.data(table.index(0, RunTableModel::Node), Qt::DisplayRole).toString(), QStringLiteral("conv"));
        QCOMPARE(table.data(table.index(0, RunTableModel::Milliseconds), Qt::DisplayRole).toString(), QStringLiteral("3.000"));
        QCOMPARE(table.data(table.index(0, RunTableModel::Share), RunTableModel::SortRole).toDouble(), 0.75);
        QCOMPARE(table.data(table.index(0, RunTableModel::Share), Qt::DisplayRole).toString(), QStringLiteral("75.0%"));
        QCOMPARE(table.data(table.index(0, RunTableModel::Launches), Qt::DisplayRole).toString(), QStringLiteral("3"));
        QCOMPARE(table.data(table.index(0, RunTableModel::Node), RunTableModel::NodeRole).toUInt(), 3u);
        // A nested launch: indented, no share (its Loop's time holds it), no node of the main graph.
        QCOMPARE(table.data(table.index(2, RunTableModel::Node), Qt::DisplayRole).toString(), QStringLiteral("  inner_add"));
        QCOMPARE(table.data(table.index(2, RunTableModel::Share), RunTableModel::SortRole).toDouble(), 0.0);
        QVERIFY(!table.data(table.index(2, RunTableModel::Node), RunTableModel::NodeRole).isValid());

        // Sorting by number, not by text ("10.000" < "9.000" as strings).
        for (int run = 0; run < 3; ++run) stats.add(NodeId{9}, "big", "MatMul", "MatMul.float32", 0, 20'000'000, run);
        table.setTimes(stats.sorted(), stats.topLevelMedianNs());
        QSortFilterProxyModel sorted;
        sorted.setSourceModel(&table);
        sorted.setSortRole(RunTableModel::SortRole);
        sorted.sort(RunTableModel::Milliseconds, Qt::AscendingOrder);
        QCOMPARE(sorted.data(sorted.index(3, RunTableModel::Node)).toString(), QStringLiteral("big"));
        QCOMPARE(sorted.data(sorted.index(2, RunTableModel::Node)).toString(), QStringLiteral("conv"));
        table.clear();
        QCOMPARE(table.rowCount(), 0);
    }

    void heatValuesReadInTheirUnits() {
        QCOMPARE(formatHeat(HeatUnit::Share, 0.125), std::string("12.5%"));
        QCOMPARE(formatHeat(HeatUnit::Milliseconds, 3.2), std::string("3.2 ms"));
        QCOMPARE(formatHeat(HeatUnit::BytesPerSecond, 45.1e9), std::string("45.1 GB/s"));
        QCOMPARE(formatHeat(HeatUnit::FlopsPerSecond, 1.234e12), std::string("1.23 TFLOP/s"));
        QCOMPARE(formatHeat(HeatUnit::FlopsPerSecond, 5e9), std::string("5.0 GFLOP/s"));
        QCOMPARE(formatHeat(HeatUnit::TimeRatio, 2.345), std::string("2.35x"));
        QVERIFY(heatTakesLargest(HeatUnit::TimeRatio) && heatTakesLargest(HeatUnit::RelativeError));
        QVERIFY(!heatTakesLargest(HeatUnit::Milliseconds));
    }

    void heatRunsFromPaleToDark() {
        QCOMPARE(heatColor(0.0), 0xffffccu);
        QCOMPARE(heatColor(1.0), 0x800026u);
        QCOMPARE(heatColor(-3.0), heatColor(0.0));  // clamped
        QCOMPARE(heatColor(7.0), heatColor(1.0));
        QCOMPARE(heatColor(std::nan("")), heatColor(0.0));
        // Darker (by luma) as time grows.
        auto luma = [](unsigned c) { return 0.299 * (c >> 16) + 0.587 * ((c >> 8) & 0xff) + 0.114 * (c & 0xff); };
        for (int i = 1; i <= 20; ++i) QVERIFY(luma(heatColor(i / 20.0)) < luma(heatColor((i - 1) / 20.0)));
    }
};

QTEST_GUILESS_MAIN(TestRunTable)
#include "tst_run_table.moc"
