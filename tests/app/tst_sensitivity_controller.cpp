// The INT8 sensitivity controller without the window: on the sample compiled and shown as
// imported it measures every Conv, MatMul and Gemm and fills its panel, logging the summary;
// with no compile it says there is nothing to measure and starts no job.
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTest>

#include "app/common/session.h"
#include "app/gui/sensitivity_controller.h"
#include "compiler/pipelines.h"
#include "views/job_runner.h"
#include "views/sensitivity_panel.h"

using namespace fsc;

class TestSensitivityController : public QObject {
    Q_OBJECT
private slots:
    void nothingToMeasureBeforeACompile() {
        JobRunner jobs;
        SensitivityPanel panel;
        SensitivityController controller(jobs, panel);
        QSignalSpy status(&controller, &SensitivityController::statusMessage);
        Session session;
        QVERIFY(!controller.measure(session));
        QCOMPARE(status.size(), 1);
        QVERIFY(!jobs.busy());
    }

    void measuresEveryLayerOfTheStepShown() {
        JobRunner jobs;
        SensitivityPanel panel;
        SensitivityController controller(jobs, panel);
        QSignalSpy logged(&controller, &SensitivityController::logged);
        Session session;
        QVERIFY(session.open(FSC_SAMPLE_MODEL));
        QVERIFY(session.compile({.passes = *pipelinePasses("O2")}));
        session.setStep(0);  // as imported: every Conv, MatMul and Gemm is still plain
        QVERIFY(controller.measure(session));
        QTRY_VERIFY_WITH_TIMEOUT(!jobs.busy(), 60000);
        QCOMPARE(panel.model()->rowCount(), 8);  // 1 Conv, 6 MatMul, 1 Gemm
        QVERIFY(logged.size() >= 2);
        const QString summary = logged.last().at(0).toString();
        QVERIFY2(summary.contains(QStringLiteral("INT8 sensitivity of 'imported': All 8 layers in INT8: cosine")),
                 qPrintable(summary));
    }
};

QTEST_MAIN(TestSensitivityController)
#include "tst_sensitivity_controller.moc"
