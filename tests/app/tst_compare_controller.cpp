// N-way compare in the GUI without the window: before a compile nothing starts; on the
// compiled sample the controller compares cpu/fp32 with float16, bfloat16 and INT8 and the
// Variants panel shows every ONNX node with numbers that sort as numbers; the overlay heats a
// node by its variant's time over the baseline's (a group by its largest), or by its error.
#include <QComboBox>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTableView>
#include <QTest>

#include "app/common/session.h"
#include "app/gui/compare_controller.h"
#include "app/gui/variants_panel.h"
#include "compiler/pipelines.h"
#include "views/job_runner.h"

using namespace fsc;

namespace {

// Three ONNX nodes of `g` in two variants: the baseline 1 ms each, the other 2, 3 and 0.5 ms.
VariantComparison planted(const Graph& g) {
    VariantComparison c;
    c.variants = {{.label = "cpu/fp32"}, {.label = "cpu/fp16"}};
    const double candidateMs[] = {2.0, 3.0, 0.5};
    for (int i = 0; i < 3; ++i) {
        const Node& n = g.node(g.order()[size_t(i)]);
        CompareRow row{n.name, n.opType, std::vector<NodeCell>(2)};
        row.cells[0] = {.ran = true, .group = n.name, .groupSize = 1, .ms = 1.0, .error = 0};
        row.cells[1] = {.ran = true,
                        .group = n.name,
                        .groupSize = 1,
                        .ms = candidateMs[i],
                        .error = 1e-3 * (i + 1)};
        c.rows.push_back(row);
    }
    return c;
}

// The bundled sample compiled at O2 on one CPU thread.
bool openCompiledSample(Session& session) {
    PipelineSpec spec{.passes = *pipelinePasses("O2")};
    spec.target.threads = 1;
    return bool(session.open(FSC_SAMPLE_MODEL)) && bool(session.compile(spec));
}

}  // namespace

class TestCompareController : public QObject {
    Q_OBJECT
private slots:
    void nothingToCompareBeforeACompile() {
        JobRunner jobs;
        CompareController controller(jobs);
        QSignalSpy status(&controller, &CompareController::statusMessage);
        Session session;
        QVERIFY(CompareController::variantsOf(session).empty());
        QVERIFY(!controller.compare(session));
        QCOMPARE(status.size(), 1);
        QVERIFY(!jobs.busy());
    }

    void theSampleInEveryPrecisionFillsThePanel() {
        JobRunner jobs;
        CompareController controller(jobs);
        QSignalSpy finished(&controller, &CompareController::finished);
        QSignalSpy started(&controller, &CompareController::started);
        Session session;
        QVERIFY(openCompiledSample(session));
        const std::vector<CompareVariant> variants = CompareController::variantsOf(session);
        QCOMPARE(variants.size(), size_t(4));  // a CPU compile: its own target is the baseline's
        QCOMPARE(variants.front().label, std::string("cpu/fp32"));
        QCOMPARE(variants.back().pipeline.precision, Precision::Int8);
        QVERIFY(controller.compare(session, 1));
        QCOMPARE(started.size(), 1);
        QTRY_VERIFY_WITH_TIMEOUT(!jobs.busy(), 120000);
        QCOMPARE(finished.size(), 1);
        const auto comparison =
            finished.first().at(0).value<std::shared_ptr<const VariantComparison>>();
        QVERIFY(comparison);
        QCOMPARE(comparison->variants.size(), size_t(4));
        QCOMPARE(comparison->rows.size(), session.model()->graph->nodeCount());
        QVERIFY(comparison->variants[1].outputError > 0);

        VariantsPanel panel;
        QSignalSpy heat(&panel, &VariantsPanel::heatChanged);
        panel.showResult(comparison);
        QCOMPARE(heat.size(), 1);
        QCOMPARE(panel.model()->rowCount(), int(comparison->rows.size()));
        QCOMPARE(panel.model()->columnCount(),
                 2 + 4 + 3);  // a time per variant, an error but for the baseline
        QCOMPARE(panel.heatChoice()->count(),
                 2 * 3);  // time and error of each variant but the baseline
        QCOMPARE(panel.heatVariant(), size_t(1));
        QCOMPARE(panel.heatMeasure(), CompareController::Measure::TimeRatio);
        QCOMPARE(panel.heatOver(), size_t(0));  // the baseline's time, until another is chosen
        QCOMPARE(panel.overChoice()->count(), 4);
        panel.overChoice()->setCurrentIndex(2);
        QCOMPARE(heat.size(), 2);
        QCOMPARE(panel.heatOver(), size_t(2));
        panel.heatChoice()->setCurrentIndex(1);
        QCOMPARE(heat.size(), 3);
        QCOMPARE(panel.heatMeasure(), CompareController::Measure::Error);
        QVERIFY(!panel.overChoice()->isEnabled());  // errors are against the baseline
        // The baseline's time column sorts by the number, slowest first.
        const int column = 2;
        panel.view()->sortByColumn(column, Qt::DescendingOrder);
        for (int r = 1; r < panel.model()->rowCount(); ++r)
            QVERIFY(panel.model()->item(r - 1, column)->data(VariantsPanel::kSortRole).toDouble() >=
                    panel.model()->item(r, column)->data(VariantsPanel::kSortRole).toDouble());

        const CompareController::Overlay compiled =
            CompareController::overlayFor(*session.compiledModel()->graph, *comparison, 1,
                                          CompareController::Measure::TimeRatio, 0);
        QCOMPARE(compiled.heat.unit, HeatUnit::TimeRatio);
        QVERIFY(compiled.nodesHeated > 0);
        const CompareController::Overlay imported = CompareController::overlayFor(
            *session.model()->graph, *comparison, 1, CompareController::Measure::Error, 0);
        QCOMPARE(imported.heat.unit, HeatUnit::RelativeError);
        QVERIFY(imported.nodesHeated > compiled.nodesHeated);  // the imported graph has more nodes
    }

    void aCancelledCompareSaysSoAndShowsNothing() {
        JobRunner jobs;
        CompareController controller(jobs);
        QSignalSpy finished(&controller, &CompareController::finished);
        QSignalSpy stopped(&controller, &CompareController::stopped);
        Session session;
        QVERIFY(openCompiledSample(session));
        QVERIFY(controller.compare(session, 1));
        jobs.cancelAll();
        QTRY_VERIFY_WITH_TIMEOUT(!jobs.busy(), 60000);
        QCOMPARE(finished.size(), 0);
        QCOMPARE(stopped.size(), 1);
        QVERIFY2(stopped.first().at(0).toString().contains(QStringLiteral("cancel")),
                 qPrintable(stopped.first().at(0).toString()));
    }

    void aNodeIsHeatedByItsRatioOrItsError() {
        Session session;
        QVERIFY(session.open(FSC_SAMPLE_MODEL));
        const Graph& g = *session.model()->graph;
        const VariantComparison c = planted(g);
        const CompareController::Overlay time =
            CompareController::overlayFor(g, c, 1, CompareController::Measure::TimeRatio, 0);
        QCOMPARE(time.nodesHeated, 3);
        QCOMPARE(time.heat.values[g.order()[0].index], 2.0);
        QCOMPARE(time.heat.values[g.order()[1].index], 3.0);
        QCOMPARE(time.heat.values[g.order()[2].index], 0.5);
        QCOMPARE(time.heat.values[g.order()[3].index], 0.0);
        const CompareController::Overlay error =
            CompareController::overlayFor(g, c, 1, CompareController::Measure::Error, 0);
        QCOMPARE(error.heat.values[g.order()[2].index], 3e-3);
        // The baseline against itself: every ratio 1; over the other variant: its inverse.
        const CompareController::Overlay self =
            CompareController::overlayFor(g, c, 0, CompareController::Measure::TimeRatio, 0);
        QCOMPARE(self.heat.values[g.order()[1].index], 1.0);
        const CompareController::Overlay inverse =
            CompareController::overlayFor(g, c, 0, CompareController::Measure::TimeRatio, 1);
        QCOMPARE(inverse.heat.values[g.order()[0].index], 0.5);
        QCOMPARE(inverse.heat.values[g.order()[2].index], 2.0);
        // An index past the variants heats nothing.
        QCOMPARE(CompareController::overlayFor(g, c, 7, CompareController::Measure::Error, 0)
                     .nodesHeated,
                 0);
        QCOMPARE(CompareController::overlayFor(g, c, 1, CompareController::Measure::TimeRatio, 9)
                     .nodesHeated,
                 0);
    }
};

QTEST_MAIN(TestCompareController)
#include "tst_compare_controller.moc"
