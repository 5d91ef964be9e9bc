// The canvas's first view and its fit: a graph that fits readably is shown whole, a large
// one starts readable at its inputs; a fit never magnifies.
#include <QTest>

#include "views/view_transform.h"

using namespace fsc;

class TestViewTransform : public QObject {
    Q_OBJECT
private slots:
    void aSmallTopLevelIsShownWhole() {
        const ViewTransform t = ViewTransform::start(800, 900, 1000, 600);
        const ViewTransform fit = ViewTransform::fit(800, 900, 1000, 600);
        QCOMPARE(t.scale, fit.scale);
        QVERIFY(t.scale >= ViewTransform::kReadableScale);
        // All of it in the view.
        QVERIFY(t.toScreenY(0) >= 0 && t.toScreenY(900) <= 600);
        QVERIFY(t.toScreenX(0) >= 0 && t.toScreenX(800) <= 1000);
    }

    void aLargeGraphStartsReadableAtItsInputs() {
        const ViewTransform t = ViewTransform::start(600, 20000, 1000, 600);
        QCOMPARE(t.scale, 1.0);          // readable, not shrunk to a sliver
        QCOMPARE(t.toScreenY(0), 24.0);  // the top (the inputs) in view, after the margin
    }

    void aFitNeverMagnifies() {
        QCOMPARE(ViewTransform::fit(100, 100, 1000, 1000).scale, 1.0);
        QVERIFY(ViewTransform::fit(4000, 100, 1000, 1000).scale < 0.25);
    }
};

QTEST_APPLESS_MAIN(TestViewTransform)
#include "tst_view_transform.moc"
