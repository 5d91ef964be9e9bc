// The GUI opens the bundled sample, shows its nodes, and survives a bad file.
#include <QtTest>

#include "app/gui/main_window.h"
#include "views/node_table_model.h"
#include "test_support.h"

using namespace fsc;

class TestMainWindow : public QObject {
    Q_OBJECT
private slots:
    void opensTheBundledSample() {
        MainWindow w;
        QSignalSpy shown(&w, &MainWindow::modelShown);
        w.openModel(QString::fromLatin1(MainWindow::kSamplePath));
        QVERIFY(shown.wait(20000));
        QVERIFY(w.model());
        QCOMPARE(w.nodeTable()->rowCount(), 42);
        QCOMPARE(w.nodeTable()->data(w.nodeTable()->index(0, NodeTableModel::OpType), Qt::DisplayRole).toString(),
                 QStringLiteral("Conv"));
        QVERIFY(w.windowTitle().contains(QStringLiteral("bundled sample")));
    }

    void aBadFileKeepsTheSessionAndReports() {
        MainWindow w;
        QSignalSpy shown(&w, &MainWindow::modelShown);
        QSignalSpy failed(&w, &MainWindow::loadFailed);
        w.openModel(QStringLiteral(FSC_SAMPLE_MODEL));
        QVERIFY(shown.wait(20000));
        const Model* before = w.model();
        w.openModel(QStringLiteral(FSC_FIXTURE_DIR "/bad/cycle.onnx"));
        QVERIFY(failed.wait(20000));
        QVERIFY(failed.at(0).at(0).toString().contains(QStringLiteral("has a cycle")));
        QCOMPARE(w.model(), before);  // the model shown before is still there
        QCOMPARE(w.nodeTable()->rowCount(), 42);
        QVERIFY(!w.loading());
    }

    void cancellingDropsTheLoadAndAllowsANewOne() {
        MainWindow w;
        QSignalSpy shown(&w, &MainWindow::modelShown);
        w.openModel(QString::fromStdString(test::fixture("good/huge/model.onnx").string()));
        QVERIFY(w.loading());
        w.cancelLoading();
        QVERIFY(!w.loading());
        w.openModel(QStringLiteral(FSC_SAMPLE_MODEL));
        QVERIFY(shown.wait(20000));
        QTest::qWait(200);  // the cancelled load finishing late must not replace the sample
        QCOMPARE(shown.count(), 1);
        QCOMPARE(shown.at(0).at(0).toString(), QStringLiteral(FSC_SAMPLE_MODEL));
        QCOMPARE(w.nodeTable()->rowCount(), 42);
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
