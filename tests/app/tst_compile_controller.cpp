// The compile controller without the window: with no model it starts nothing; on the sample
// a compile becomes the session's (no step shown yet) and compiledReady names its pipeline;
// a second choice made while the first compiles replaces it, so only the second is reported.
#include <QSignalSpy>
#include <QTest>
#include <QWidget>

#include "app/common/session.h"
#include "app/gui/compile_controller.h"
#include "compiler/pipelines.h"
#include "views/job_runner.h"

using namespace fsc;

namespace {

// What every test drives: a controller over a session.
struct Rig {
    QWidget parent;
    JobRunner jobs;
    Session session;
    CompileController compiles{jobs, session, &parent};
};

}  // namespace

class TestCompileController : public QObject {
    Q_OBJECT
private slots:
    void nothingToCompileWithoutAModel() {
        Rig rig;
        auto& [parent, jobs, session, compiles] = rig;
        QSignalSpy logged(&compiles, &CompileController::logged);
        compiles.compileWith(QStringLiteral("O2"));
        QVERIFY(!jobs.busy());
        QVERIFY(logged.isEmpty());
    }

    void theNewestChoiceIsTheOneCompiled() {
        Rig rig;
        auto& [parent, jobs, session, compiles] = rig;
        QVERIFY(session.open(FSC_SAMPLE_MODEL));
        QSignalSpy ready(&compiles, &CompileController::compiledReady);
        compiles.compileWith(QStringLiteral("O1"));
        compiles.compileWith(QStringLiteral("O3"));
        QTRY_VERIFY_WITH_TIMEOUT(!jobs.busy(), 60000);
        QCOMPARE(ready.size(), 1);
        QCOMPARE(ready.at(0).at(0).toString(), QStringLiteral("O3"));
        QVERIFY(session.compiled());
        QCOMPARE(session.step(), -1);
        QCOMPARE(session.pipeline().passes, *pipelinePasses("O3"));
    }

    void anUnknownPipelineCompilesNothing() {
        Rig rig;
        auto& [parent, jobs, session, compiles] = rig;
        QVERIFY(session.open(FSC_SAMPLE_MODEL));
        compiles.compileWith(QStringLiteral("O9"));
        QVERIFY(!jobs.busy());
        QVERIFY(!session.compiled());
    }
};

QTEST_MAIN(TestCompileController)
#include "tst_compile_controller.moc"
