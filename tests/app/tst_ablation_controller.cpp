// The ablation controller without the window: before a compile it says there is nothing to
// ablate and starts no job; on the compiled sample it fills the pass list's Effect column,
// one verdict per pass of the pipeline; a cancel stops it and leaves the column empty.
#include <QSignalSpy>
#include <QTest>

#include "app/common/session.h"
#include "app/gui/ablation_controller.h"
#include "compiler/pipelines.h"
#include "views/job_runner.h"
#include "views/pass_list_model.h"

using namespace fsc;

namespace {

Session compiledSample() {
    Session session;
    if (Status s = session.open(FSC_SAMPLE_MODEL); !s) qFatal("%s", s.message().c_str());
    PipelineSpec spec{.passes = *pipelinePasses("O2")};
    spec.target.threads = 1;
    if (Status s = session.compile(spec); !s) qFatal("%s", s.message().c_str());
    return session;
}

QString effectOfRow(const PassListModel& model, int row) {
    return model.data(model.index(row, PassListModel::Effect), Qt::DisplayRole).toString();
}

// The compiled sample's pass list with a controller on it.
struct Rig {
    JobRunner jobs;
    PassListModel passes;
    Session session = compiledSample();
    AblationController controller{jobs, passes};
    Rig() { passes.setTrace(session.compiled()); }
};

}  // namespace

class TestAblationController : public QObject {
    Q_OBJECT
private slots:
    void nothingToAblateBeforeACompile() {
        JobRunner jobs;
        PassListModel passes;
        AblationController controller(jobs, passes);
        QSignalSpy status(&controller, &AblationController::statusMessage);
        Session session;
        QVERIFY(!controller.ablate(session));
        QCOMPARE(status.size(), 1);
        QVERIFY(!jobs.busy());
    }

    void everyPassGetsAVerdict() {
        Rig rig;
        PassListModel& passes = rig.passes;
        QSignalSpy logged(&rig.controller, &AblationController::logged);
        QVERIFY(rig.controller.ablate(rig.session, 1));
        QTRY_VERIFY_WITH_TIMEOUT(!rig.jobs.busy(), 120000);
        QVERIFY(passes.hasEffects());
        for (int row = 1; row < passes.rowCount(); ++row) QVERIFY2(!effectOfRow(passes, row).isEmpty(), qPrintable(QString::number(row)));
        QVERIFY(effectOfRow(passes, 0).isEmpty());  // the imported graph is no pass
        QVERIFY2(logged.last().at(0).toString().startsWith(QStringLiteral("Ablation done")), qPrintable(logged.last().at(0).toString()));
        // A new compile's list starts without verdicts.
        passes.setTrace(rig.session.compiled());
        QVERIFY(!passes.hasEffects());
    }

    void aCancelStopsItAndFillsNothing() {
        Rig rig;
        QSignalSpy logged(&rig.controller, &AblationController::logged);
        QVERIFY(rig.controller.ablate(rig.session, 50));
        rig.jobs.cancelAll();
        QTRY_VERIFY_WITH_TIMEOUT(!rig.jobs.busy(), 60000);
        QVERIFY(!rig.passes.hasEffects());
        QVERIFY2(logged.last().at(0).toString().startsWith(QStringLiteral("Ablation stopped")), qPrintable(logged.last().at(0).toString()));
    }
};

QTEST_MAIN(TestAblationController)
#include "tst_ablation_controller.moc"
