// The run controller without the window: with nothing compiled it starts no job and says so;
// on the sample it profiles the step shown, makes the run the session's and the selection's
// run graph, fills the Run dock and reports it; a run store holding that run opens back into
// the session as a stored run; a store that is not one fails with one line and a dialog.
#include <QDir>
#include <QSignalSpy>
#include <QTest>
#include <QApplication>
#include <QMessageBox>
#include <QTimer>
#include <QWidget>

#include "app/common/session.h"
#include "app/gui/run_controller.h"
#include "compiler/pipelines.h"
#include "profiler/run_store.h"
#include "profiler/trace.h"
#include "views/job_runner.h"
#include "views/run_panel.h"
#include "views/selection.h"

using namespace fsc;

namespace {

// Closes the first modal or non-modal message box that opens (the error dialog).
void closeMessageBoxSoon() {
    QTimer::singleShot(200, [] {
        for (QWidget* w : QApplication::topLevelWidgets())
            if (auto* box = qobject_cast<QMessageBox*>(w)) box->close();
    });
}

// What every test drives: a controller over a session, a selection and a Run dock.
struct Rig {
    QWidget parent;
    JobRunner jobs;
    Session session;
    Selection selection;
    RunPanel panel;
    RunController runs{jobs, session, selection, panel, &parent};
};

}  // namespace

class TestRunController : public QObject {
    Q_OBJECT
private slots:
    void nothingToRunBeforeACompile() {
        Rig rig;
        auto& [parent, jobs, session, selection, panel, runs] = rig;
        QSignalSpy status(&runs, &RunController::statusMessage);
        runs.runShownGraph();
        QCOMPARE(status.size(), 1);
        QVERIFY(!jobs.busy());
    }

    void runsTheStepShownThenReadsItBackFromAStore() {
        Rig rig;
        auto& [parent, jobs, session, selection, panel, runs] = rig;
        panel.setIterations(3);
        panel.setThreads(1);
        QVERIFY(session.open(FSC_SAMPLE_MODEL));
        QVERIFY(session.compile({.passes = *pipelinePasses("O2")}));
        const int last = session.stepCount() - 1;
        session.setStep(last, session.snapshotAt(last)->materialize());
        QSignalSpy finished(&runs, &RunController::finished);
        QSignalSpy shown(&runs, &RunController::runShown);
        runs.runShownGraph();
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 60000);
        QVERIFY2(finished.at(0).at(0).toBool(), qPrintable(runs.lastError()));
        QCOMPARE(shown.size(), 1);
        QCOMPARE(shown.at(0).at(1).toBool(), false);  // of the step shown, not a store
        QVERIFY(session.run());
        QCOMPARE(session.runStep(), session.step());
        QVERIFY(session.runMatchesStep());
        QVERIFY(session.stepGraph());
        QCOMPARE(selection.runGraph(), session.stepGraph());
        QCOMPARE(session.run()->iterations, 3);

        const QString path = QDir(FSC_TEST_TMP).filePath(QStringLiteral("run_controller.fsdb"));
        QDir().mkpath(FSC_TEST_TMP);
        QFile::remove(path);
        {
            auto store = RunStore::open(path.toStdString());
            QVERIFY(store);
            QVERIFY((*store)->addRun(*session.run()));
        }
        QSignalSpy opened(&runs, &RunController::storeOpened);
        runs.openRunStore(path);
        QTRY_COMPARE_WITH_TIMEOUT(opened.size(), 1, 30000);
        QVERIFY(opened.at(0).at(0).toBool());
        QCOMPARE(shown.size(), 2);
        QCOMPARE(shown.at(1).at(1).toBool(), true);
        QCOMPARE(session.runStep(), -1);  // a stored run belongs to no step shown
        QVERIFY(!session.runMatchesStep());
        QVERIFY(!selection.runGraph());
    }

    // A run on a target the graph shown was not compiled for waits for that compile, then
    // times the graph compiled for it.
    void aRunWaitsForTheCompileOfTheChosenTarget() {
        qputenv("FUSESCOPE_DEVICE", "simulated");
        Rig rig;
        auto& [parent, jobs, session, selection, panel, runs] = rig;
        panel.setIterations(2);
        QVERIFY(session.open(FSC_SAMPLE_MODEL));
        QVERIFY(session.compile({.passes = *pipelinePasses("O2")}));  // for the CPU
        session.setStep(session.stepCount() - 1, session.snapshotAt(session.stepCount() - 1)->materialize());
        const Target cuda = runs.chooseBackend(true);
        qunsetenv("FUSESCOPE_DEVICE");
        QCOMPARE(std::string(cuda.name()), std::string("cuda"));
        QSignalSpy status(&runs, &RunController::statusMessage);
        QSignalSpy finished(&runs, &RunController::finished);
        runs.runShownGraph();
        QVERIFY(!jobs.busy());
        QCOMPARE(status.size(), 1);
        QVERIFY(status.at(0).at(0).toString().startsWith(QStringLiteral("Compiling for the cuda first")));
        QVERIFY(session.compile({.passes = *pipelinePasses("O2"), .target = cuda}));
        session.setStep(session.stepCount() - 1, session.snapshotAt(session.stepCount() - 1)->materialize());
        runs.runIfWaiting();
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 60000);
        QVERIFY2(finished.at(0).at(0).toBool(), qPrintable(runs.lastError()));
        QCOMPARE(session.run()->backend, std::string("cuda"));
        runs.runIfWaiting();  // nothing waits any more
        QVERIFY(!jobs.busy());
    }

    void aFileThatIsNotAStoreFailsWithOneLine() {
        Rig rig;
        auto& [parent, jobs, session, selection, panel, runs] = rig;
        QSignalSpy opened(&runs, &RunController::storeOpened);
        QSignalSpy logged(&runs, &RunController::logged);
        closeMessageBoxSoon();
        runs.openRunStore(QStringLiteral(FSC_SAMPLE_MODEL));  // an ONNX file, not SQLite
        QTRY_COMPARE_WITH_TIMEOUT(opened.size(), 1, 30000);
        QVERIFY(!opened.at(0).at(0).toBool());
        QVERIFY(!logged.isEmpty());
        const QString line = logged.last().at(0).toString();
        QVERIFY2(line.startsWith(QStringLiteral("error: ")) && !line.contains(QLatin1Char('\n')), qPrintable(line));
        QVERIFY(!session.run());
    }
};

QTEST_MAIN(TestRunController)
#include "tst_run_controller.moc"
