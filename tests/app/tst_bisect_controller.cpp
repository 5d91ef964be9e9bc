// The bisection controller without the window: before a compile it starts nothing; on the
// compiled sample it bisects float16 against cpu/fp32 and reports the result; its overlay
// heats every node of the step shown by its group's error (an imported node by the group
// made from it) and outlines the first jumps.
#include <QSignalSpy>
#include <QTest>

#include "app/common/session.h"
#include "app/gui/bisect_controller.h"
#include "compiler/pipelines.h"
#include "views/job_runner.h"

using namespace fsc;

class TestBisectController : public QObject {
    Q_OBJECT
private slots:
    void nothingToBisectBeforeACompile() {
        JobRunner jobs;
        BisectController controller(jobs);
        QSignalSpy status(&controller, &BisectController::statusMessage);
        Session session;
        QVERIFY(!controller.bisect(session, QStringLiteral("fp16")));
        QCOMPARE(status.size(), 1);
        QVERIFY(!jobs.busy());
    }

    void float16OfTheSampleHeatsTheCompiledAndTheImportedGraph() {
        JobRunner jobs;
        BisectController controller(jobs);
        QSignalSpy finished(&controller, &BisectController::finished);
        Session session;
        QVERIFY(session.open(FSC_SAMPLE_MODEL));
        PipelineSpec spec{.passes = *pipelinePasses("O2")};
        spec.target.threads = 1;
        QVERIFY(session.compile(spec));
        QVERIFY(!controller.bisect(session, QStringLiteral("fp8")));
        QVERIFY(controller.bisect(session, QStringLiteral("fp16")));
        QTRY_VERIFY_WITH_TIMEOUT(!jobs.busy(), 60000);
        QCOMPARE(finished.size(), 1);
        const auto report = finished.first().at(0).value<std::shared_ptr<const BisectReport>>();
        QVERIFY(report);
        QCOMPARE(report->candidate, std::string("cpu/fp16"));
        QVERIFY(report->outputError > 0 && report->outputError < 1e-2);
        const BisectController::Overlay compiled =
            BisectController::overlayFor(*session.compiledModel()->graph, *report);
        QCOMPARE(compiled.heat.unit, HeatUnit::RelativeError);
        QVERIFY(compiled.nodesHeated >= int(report->groups.size()) / 2);
        const BisectController::Overlay imported =
            BisectController::overlayFor(*session.model()->graph, *report);
        QVERIFY(imported.nodesHeated >
                compiled.nodesHeated);  // each group heats every node it was made from
    }

    void firstJumpsAreOutlinedOnEveryNodeOfTheirGroup() {
        Session session;
        QVERIFY(session.open(FSC_SAMPLE_MODEL));
        const Graph& g = *session.model()->graph;
        BisectReport report;
        GroupError group;
        group.node = "fused";
        group.onnxNodes = {g.node(g.order()[0]).name, g.node(g.order()[1]).name};
        group.error = 0.25;
        group.jump = group.firstJump = true;
        report.groups = {group};
        report.firstJumps = {0};
        const BisectController::Overlay overlay = BisectController::overlayFor(g, report);
        QCOMPARE(overlay.firstJumps, 2);
        QCOMPARE(overlay.marks[g.order()[0].index], GraphCanvas::Mark::FirstJump);
        QCOMPARE(overlay.heat.values[g.order()[1].index], 0.25);
        QCOMPARE(overlay.heat.values[g.order()[2].index], 0.0);
    }

    // Rerun unfused, the group's ONNX nodes show their own errors and only the op that jumps
    // inside it is outlined; the group's node in the compiled step keeps the group's outline.
    void insideTheFirstJumpEachNodeShowsItsOwnError() {
        Session session;
        QVERIFY(session.open(FSC_SAMPLE_MODEL));
        const Graph& g = *session.model()->graph;
        const std::string a = g.node(g.order()[0]).name, b = g.node(g.order()[1]).name;
        BisectReport report;
        GroupError group;
        group.node = "fused";
        group.onnxNodes = {a, b};
        group.error = 0.25;
        group.jump = group.firstJump = true;
        report.groups = {group};
        report.firstJumps = {0};
        report.insideGroup = "fused";
        GroupError quiet, loud;
        quiet.node = a;
        quiet.error = 1e-4;
        loud.node = b;
        loud.error = 0.25;
        loud.inputError = 1e-4;
        loud.jump = loud.firstJump = true;
        report.inside = {quiet, loud};
        const BisectController::Overlay overlay = BisectController::overlayFor(g, report);
        QCOMPARE(overlay.heat.values[g.order()[0].index], 1e-4);
        QCOMPARE(overlay.heat.values[g.order()[1].index], 0.25);
        QCOMPARE(overlay.marks[g.order()[0].index], GraphCanvas::Mark::None);
        QCOMPARE(overlay.marks[g.order()[1].index], GraphCanvas::Mark::FirstJump);
        QCOMPARE(overlay.firstJumps, 1);
    }
};

QTEST_MAIN(TestBisectController)
#include "tst_bisect_controller.moc"
