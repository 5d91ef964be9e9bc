// The GUI opens the bundled sample, shows its nodes, and survives a bad file.
#include <QtTest>

#include <sys/resource.h>
#include <unistd.h>

#include <QAbstractItemModelTester>
#include <QAction>
#include <QClipboard>
#include <QComboBox>
#include <QDialog>
#include <QDockWidget>
#include <QTextBrowser>
#include <QTextDocument>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QJsonArray>

#include <map>

#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QStandardItemModel>
#include <QStatusBar>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTreeView>
#include <QTreeWidget>

#include "app/gui/main_window.h"
#include "app/gui/compile_controller.h"
#include "app/gui/dock_layout.h"
#include "app/gui/find_bar.h"
#include "app/gui/main_menus.h"
#include "app/gui/run_controller.h"
#include "app/gui/subgraph_trail.h"
#include "views/custom_pipeline_dialog.h"
#include "compiler/backends/cuda/device.h"
#include "compiler/pass_manager.h"
#include "compiler/passes/passes.h"
#include "core/onnx_export.h"
#include "core/onnx_import.h"
#include "profiler/trace.h"
#include "test_support.h"
#include "views/graph_canvas.h"
#include "views/histogram_widget.h"
#include "views/memory_view.h"
#include "views/node_properties_view.h"
#include "views/node_table_model.h"
#include "views/pass_list_model.h"
#include "views/roofline_view.h"
#include "views/run_panel.h"
#include "views/run_table_model.h"
#include "views/sensitivity_panel.h"
#include "views/timeline_view.h"
#include "app/gui/variants_panel.h"
#include "app/gui/walkthrough_dock.h"
#include "app/walkthrough/walkthrough.h"

using namespace fsc;

namespace {
QByteArray readFile(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}
// Shows the window, opens `path` and waits until its compiled graph (O2) is laid out and
// nothing is left running in the background.
bool openCompiled(MainWindow& w, const QString& path, QSize size) {
    w.resize(size);
    w.show();
    QSignalSpy compiled(&w, &MainWindow::compiled);
    w.openModel(path);
    if (!compiled.wait(30000)) return false;
    // Laid out, and the step's other background work (graph breaks) delivered too.
    return QTest::qWaitFor(
        [&] {
            return w.canvas()->shownGraph() == w.canvas()->graph() && !w.canvas()->layingOut() && !w.workPending();
        },
        20000);
}

// Shows a step and waits until its graph is made and handed to the views, and laid out,
// its breaks found.
bool showStepAndWait(MainWindow& w, int row) {
    QSignalSpy shown(&w, &MainWindow::stepShown);
    w.showStep(row);
    return shown.wait(20000) && QTest::qWaitFor([&] { return !w.workPending(); }, 20000);
}

// The pass list's row of the first step of `pass` (0 is the imported graph); -1 if none.
int stepOfPass(const MainWindow& w, const std::string& pass) {
    const auto& passes = w.passList()->trace()->passes;
    for (size_t i = 0; i < passes.size(); ++i)
        if (passes[i].name == pass) return int(i) + 1;
    return -1;
}

}  // namespace

class TestMainWindow : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        // Settings of their own, in a folder of this process's own, so tests neither read nor
        // change a user's, nor race the other runs of this binary that ctest starts in parallel
        // (the scale-2 and screen-size runs once changed each other's remembered threads).
        QCoreApplication::setOrganizationName(QStringLiteral("FusescopeTests"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_main_window"));
        static QTemporaryDir settingsDir;
        QVERIFY(settingsDir.isValid());
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settingsDir.path());
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settingsDir.path());
        QSettings().clear();
    }

    void recentFilesAndPaletteAreKept() {
        {
            MainWindow w;
            QSignalSpy shown(&w, &MainWindow::modelShown);
            w.openModel(QStringLiteral(FSC_SAMPLE_MODEL));
            QVERIFY(shown.wait(20000));
            w.setDarkPalette(true);
            QVERIFY(qApp->palette().color(QPalette::Base).lightness() < 60);
        }
        MainWindow again;  // a later session
        QCOMPARE(recentFiles().value(0), QStringLiteral(FSC_SAMPLE_MODEL));
        QVERIFY(qApp->palette().color(QPalette::Base).lightness() < 60);
        again.setDarkPalette(false);
        QVERIFY(qApp->palette().color(QPalette::Base).lightness() > 180);
    }

    // On a real screen (run under Xvfb at 1366x768 and 1920x1080 by CTest; skipped on the
    // offscreen platform, whose screen is not a laptop's): the window and every dock stay on
    // the screen, the graph gets at least 60% of the window, with resnet50-sized tables.
    void theWindowFitsTheScreenAndTheCanvasGetsTheRoom() {
        if (QGuiApplication::platformName() != QLatin1String("xcb")) QSKIP("needs an X screen (the xvfb CTest entries)");
        QSettings().clear();
        const QRect screen = QGuiApplication::primaryScreen()->availableGeometry();
        MainWindow w;
        w.show();
        QSignalSpy compiled(&w, &MainWindow::compiled);
        w.openModel(QStringLiteral(FSC_SAMPLE_MODEL));
        QVERIFY(compiled.wait(30000));
        QVERIFY(QTest::qWaitFor([&] { return !w.workPending(); }, 20000));
        QTest::qWait(200);  // the window manager-less X server applies geometry asynchronously
        const QRect frame = w.frameGeometry();
        auto describe = [&](const QWidget* widget) {
            return QStringLiteral("%1 %2x%3 (minimum %4x%5)")
                .arg(widget->objectName())
                .arg(widget->width())
                .arg(widget->height())
                .arg(widget->minimumSizeHint().width())
                .arg(widget->minimumSizeHint().height());
        };
        // Docks behind another's tab keep isVisible() but show nothing.
        auto shown = [](const QDockWidget* dock) { return dock->isVisible() && !dock->visibleRegion().isEmpty(); };
        QString docks;
        for (QDockWidget* dock : w.findChildren<QDockWidget*>())
            if (shown(dock)) docks += describe(dock) + QStringLiteral("; ");
        const QString why = QStringLiteral("screen %1x%2, window %3x%4 (minimum %5x%6); docks: %7")
                                .arg(screen.width()).arg(screen.height()).arg(frame.width()).arg(frame.height())
                                .arg(w.minimumSizeHint().width()).arg(w.minimumSizeHint().height()).arg(docks);
        QVERIFY2(frame.width() <= screen.width() && frame.height() <= screen.height(), qPrintable(why));
        for (QDockWidget* dock : w.findChildren<QDockWidget*>()) {
            if (!shown(dock)) continue;
            const QRect r(dock->mapToGlobal(QPoint(0, 0)), dock->size());
            QVERIFY2(screen.contains(r), qPrintable(dock->objectName() + QStringLiteral(" is off the screen: ") + why));
        }
        const double share = double(w.centralWidget()->width()) * w.centralWidget()->height() /
                             (double(w.width()) * w.height());
        qInfo("the canvas has %.1f%% of a %dx%d window on a %dx%d screen (scale %.0f)", share * 100, w.width(),
              w.height(), screen.width(), screen.height(), w.devicePixelRatioF());
        if (qEnvironmentVariableIsSet("QT_SCALE_FACTOR"))
            QCOMPARE(w.devicePixelRatioF(), qEnvironmentVariable("QT_SCALE_FACTOR").toDouble());
        QVERIFY2(share >= 0.6, qPrintable(QStringLiteral("the canvas has %1% of the window; ").arg(share * 100, 0, 'f', 1) + why));

        // A user's arrangement is kept for this screen size; View > Reset layout undoes it.
        auto canvasShare = [&] {
            return double(w.centralWidget()->width()) * w.centralWidget()->height() / (double(w.width()) * w.height());
        };
        QDockWidget* passes = w.findChild<QDockWidget*>(QStringLiteral("passDock"));
        w.resizeDocks({passes}, {w.width() / 2}, Qt::Horizontal);
        QVERIFY(QTest::qWaitFor([&] { return canvasShare() < 0.5; }, 2000));
        const int widened = passes->width();
        w.close();
        MainWindow again;
        again.show();
        QDockWidget* passesAgain = again.findChild<QDockWidget*>(QStringLiteral("passDock"));
        QVERIFY(QTest::qWaitFor([&] { return std::abs(passesAgain->width() - widened) <= 8; }, 2000));
        again.findChild<QAction*>(QStringLiteral("resetLayoutAction"))->trigger();
        QVERIFY(QTest::qWaitFor([&] { return passesAgain->width() < widened / 2; }, 2000));
    }

    // F11: the docks go and the graph (both panes when comparing) takes the window; again,
    // they come back as they were.
    void graphOnlyHidesTheDocksAndBringsThemBack() {
        MainWindow w;
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.setCompare(true);
        auto shownDocks = [&] {
            int n = 0;
            for (QDockWidget* dock : w.findChildren<QDockWidget*>()) n += dock->isVisible();
            return n;
        };
        const int before = shownDocks();
        QVERIFY(before > 5);
        QAction* graphOnly = w.findChild<QAction*>(QStringLiteral("graphOnlyAction"));
        QCOMPARE(graphOnly->shortcut(), QKeySequence(Qt::Key_F11));
        graphOnly->trigger();
        QCOMPARE(shownDocks(), 0);
        QVERIFY(QTest::qWaitFor([&] { return w.centralWidget()->width() == w.width(); }, 2000));
        QVERIFY(w.beforeCanvas()->isVisible() && w.canvas()->isVisible());
        graphOnly->trigger();
        QCOMPARE(shownDocks(), before);
        // A chart asked for (a run's timeline, a walkthrough button) gets a third of the
        // window (less its tab strip) instead of its small starting height.
        QVERIFY(w.docks()->raiseDock(QStringLiteral("memoryDock")));
        QDockWidget* memory = w.findChild<QDockWidget*>(QStringLiteral("memoryDock"));
        QTest::qWaitFor([&] { return memory->height() >= w.height() * 3 / 10; }, 2000);
        QVERIFY(memory->height() >= w.height() * 3 / 10);
        QVERIFY(!w.docks()->raiseDock(QStringLiteral("noSuchDock")));
    }

    // Keyboard: with a node selected, Down walks to a node below it and Up back; with
    // nothing selected the arrows pan as before.
    void arrowKeysWalkBetweenNeighbouringNodes() {
        MainWindow w;
        QVERIFY(openCompiled(w, QStringLiteral(FSC_SAMPLE_MODEL), QSize(1280, 800)));
        GraphCanvas* canvas = w.canvas();
        const auto& layout = canvas->canvasLayout();
        NodeId first;
        double firstY = 1e18;
        for (const auto& box : layout.boxes)
            if (box.node.valid() && !box.expanded && box.rect.y < firstY) first = box.node, firstY = box.rect.y;
        QVERIFY(first.valid());
        canvas->setFocus();
        canvas->selectNode(first);
        QTest::keyClick(canvas, Qt::Key_Down);
        const NodeId below = canvas->selectedNode();
        QVERIFY(below.valid() && below != first);
        QTest::keyClick(canvas, Qt::Key_Up);
        QCOMPARE(canvas->selectedNode(), first);
        // Home fits the whole graph in the view.
        QTest::keyClick(canvas, Qt::Key_Home);
        const ViewTransform fit = ViewTransform::fit(layout.width, layout.height, canvas->width(), canvas->height());
        QCOMPARE(canvas->transform().scale, fit.scale);
        QCOMPARE(canvas->transform().dx, fit.dx);
        QCOMPARE(w.properties()->valueOf(QStringLiteral("Name")),
                 QString::fromStdString(canvas->shownGraph()->node(first).name));
    }

    // Keyboard: every menu entry has a mnemonic of its own in its menu, F6 / Shift+F6 walk
    // the panes in a cycle, View > Go to gives a dock the keys, and the canvas shows that
    // it has them.
    void theKeyboardReachesEveryActionAndPane() {
        MainWindow w;
        QVERIFY(openCompiled(w, QStringLiteral(FSC_SAMPLE_MODEL), QSize(1280, 800)));
        QList<QMenu*> menus;
        for (QAction* top : w.menuBar()->actions())
            if (top->menu()) menus << top->menu();
        for (qsizetype m = 0; m < menus.size(); ++m) {
            QSet<QChar> letters;
            for (QAction* a : menus[m]->actions()) {
                if (a->isSeparator()) continue;
                if (a->menu()) menus << a->menu();
                const QString text = a->text();
                const qsizetype amp = text.indexOf(QLatin1Char('&'));
                QVERIFY2(amp >= 0 && amp + 1 < text.size(), qPrintable(menus[m]->title() + ": " + text));
                const QChar letter = text[amp + 1].toLower();
                QVERIFY2(!letters.contains(letter), qPrintable(menus[m]->title() + ": " + text + " shares its mnemonic"));
                letters.insert(letter);
            }
        }
        QAction* next = w.findChild<QAction*>(QStringLiteral("nextPaneAction"));
        QAction* previous = w.findChild<QAction*>(QStringLiteral("previousPaneAction"));
        QCOMPARE(next->shortcut(), QKeySequence(Qt::Key_F6));
        QCOMPARE(previous->shortcut(), QKeySequence(Qt::SHIFT | Qt::Key_F6));
        w.activateWindow();
        w.canvas()->setFocus();
        QVERIFY(QTest::qWaitFor([&] { return w.canvas()->hasFocus(); }, 2000));
        const QList<QWidget*> panes = w.docks()->panes();
        QVERIFY2(panes.size() >= 4, "the canvas, the passes, the properties and a dock below");
        QCOMPARE(panes.front(), static_cast<QWidget*>(w.canvas()));
        auto paneOfFocus = [&] {
            const QWidget* focused = QApplication::focusWidget();
            for (qsizetype i = 0; i < panes.size(); ++i)
                if (focused && (panes[i] == focused || panes[i]->isAncestorOf(focused))) return i;
            return qsizetype(-1);
        };
        QList<qsizetype> visited;
        for (qsizetype i = 0; i < panes.size(); ++i) {
            next->trigger();
            visited << paneOfFocus();
        }
        QList<qsizetype> expected;
        for (qsizetype i = 1; i <= panes.size(); ++i) expected << i % panes.size();
        QCOMPARE(visited, expected);
        previous->trigger();
        QCOMPARE(paneOfFocus(), panes.size() - 1);
        // View > Go to > Timeline: the timeline comes forward with the keys.
        QMenu* go = w.findChild<QMenu*>(QStringLiteral("goToMenu"));
        QAction* timeline = nullptr;
        for (QAction* a : go->actions())
            if (QString(a->text()).remove(QLatin1Char('&')) == QLatin1String("Timeline")) timeline = a;
        QVERIFY(timeline);
        timeline->trigger();
        QVERIFY(QTest::qWaitFor([&] { return qobject_cast<TimelineView*>(QApplication::focusWidget()) != nullptr; }, 2000));
        // The canvas with the keys has a frame in the highlight colour; without them, none.
        w.canvas()->setFocus();
        QVERIFY(QTest::qWaitFor([&] { return w.canvas()->hasFocus(); }, 2000));
        const QColor highlight = w.canvas()->palette().color(QPalette::Highlight);
        const QImage focused = w.canvas()->grab().toImage();
        QCOMPARE(focused.pixelColor(1, focused.height() / 2), highlight);
        w.properties()->setFocus();
        QVERIFY(QTest::qWaitFor([&] { return !w.canvas()->hasFocus(); }, 2000));
        const QImage unfocused = w.canvas()->grab().toImage();
        QVERIFY(unfocused.pixelColor(1, unfocused.height() / 2) != highlight);
    }

    void opensTheBundledSample() {
        MainWindow w;
        QSignalSpy shown(&w, &MainWindow::modelShown);
        w.openModel(QString::fromLatin1(MainWindow::kSamplePath));
        QVERIFY(shown.wait(20000));
        QVERIFY(w.model());
        QCOMPARE(int(w.model()->graph->nodeCount()), 42);
        // The node table lists the step shown: the compiled graph once O2 is done.
        QSignalSpy compiled(&w, &MainWindow::compiled);
        QVERIFY(compiled.wait(30000));
        QCOMPARE(w.nodeTable()->rowCount(), int(w.passList()->trace()->passes.back().nodesAfter));
        QCOMPARE(w.nodeTable()
                     ->data(w.nodeTable()->index(0, NodeTableModel::OpType), Qt::DisplayRole)
                     .toString(),
                 QStringLiteral("ai.fusescope::FusedConv"));
        QVERIFY(w.windowTitle().contains(QStringLiteral("bundled sample")));
    }

    void theCanvasLaysOutAndTogglesGroups() {
        MainWindow w;
        w.resize(1000, 700);
        w.show();
        QSignalSpy compiled(&w, &MainWindow::compiled);
        QSignalSpy laidOut(w.canvas(), &GraphCanvas::laidOut);
        w.openModel(QString::fromLatin1(MainWindow::kSamplePath));
        QVERIFY(compiled.wait(30000));
        // The compiled graph (shown once compiling ends) is small: everything expanded.
        QTRY_VERIFY_WITH_TIMEOUT(
            w.canvas()->shownGraph() == w.canvas()->graph() && !w.canvas()->layingOut(), 20000);
        const CanvasLayout& all = w.canvas()->canvasLayout();
        int nodes = 0;
        for (const auto& box : all.boxes) nodes += box.node.valid();
        QCOMPARE(nodes, int(w.canvas()->shownGraph()->nodeCount()));
        laidOut.clear();
        // Collapse the first group by double-clicking its frame's title bar.
        int frame = -1;
        for (size_t i = 0; i < all.boxes.size() && frame < 0; ++i)
            if (all.boxes[i].expanded) frame = int(i);
        QVERIFY(frame >= 0);
        const int group = all.boxes[size_t(frame)].group;
        const Rect r = all.boxes[size_t(frame)].rect;
        const ViewTransform& t = w.canvas()->transform();
        const QPoint title(int(t.toScreenX(r.x + 4)), int(t.toScreenY(r.y + 4)));
        QCOMPARE(w.canvas()->boxAt(title), frame);
        QTest::mouseDClick(w.canvas(), Qt::LeftButton, {}, title);
        QVERIFY(laidOut.wait(20000));
        bool collapsed = false;
        for (const auto& box : w.canvas()->canvasLayout().boxes)
            collapsed |= box.group == group && !box.expanded;
        QVERIFY(collapsed);
        // Zoom about a point keeps that point where it was.
        const double x = t.toSceneX(300), y = t.toSceneY(200);
        QWheelEvent wheel(QPointF(300, 200), w.canvas()->mapToGlobal(QPointF(300, 200)), {},
                          QPoint(0, 240), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(w.canvas(), &wheel);
        QVERIFY(std::abs(w.canvas()->transform().toScreenX(x) - 300) < 1e-6);
        QVERIFY(std::abs(w.canvas()->transform().toScreenY(y) - 200) < 1e-6);
    }

    void screenshotOptionDrawsTheGraph() {
        // fusescope --screenshot on the sample: JSON timings, and a picture with the graph in it.
        // CTest runs this twice: offscreen, and (tst_screenshot_xvfb) on a real X server under
        // Xvfb, as a person's display would draw it.
        const QString platform =
            qEnvironmentVariable("FSC_SCREENSHOT_PLATFORM", QStringLiteral("offscreen"));
        const QString png = QStringLiteral(FSC_TEST_TMP "/sample-screenshot-%1.png").arg(platform);
        qInfo("screenshot on the '%s' platform: %s", qPrintable(platform), qPrintable(png));
        QFile::remove(png);
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), platform);
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(FSC_GUI_BINARY),
                {QStringLiteral("--screenshot"), png, QStringLiteral("--pass"),
                 QStringLiteral("imported")});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        const QJsonObject j = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
        QCOMPARE(j[QStringLiteral("nodes")].toInt(), 42);  // as imported
        for (const char* key : {"import_ms", "first_frame_ms", "full_layout_ms"})
            QVERIFY2(j[QLatin1String(key)].toDouble() > 0, key);
        QImage image(png);
        QVERIFY(!image.isNull());
        // Node fills are coloured (the window's greys are not): count clearly coloured pixels.
        int coloured = 0;
        for (int y = 0; y < image.height(); y += 2)
            for (int x = 0; x < image.width(); x += 2) {
                const QColor c = image.pixelColor(x, y);
                coloured += c.saturation() > 60 && c.value() > 120;
            }
        QVERIFY2(coloured > 500, qPrintable(QString::number(coloured)));
        QCOMPARE(j[QStringLiteral("panes_laid_out")].toInt(), 1);
        QCOMPARE(j[QStringLiteral("step")].toInt(), 0);

        // --run times the step asked for, not the compiled one shown before it.
        QProcess ran;
        ran.setProcessEnvironment(env);
        ran.start(QStringLiteral(FSC_GUI_BINARY), {QStringLiteral("--screenshot"), png, QStringLiteral("--pass"),
                                                   QStringLiteral("imported"), QStringLiteral("--run")});
        QVERIFY(ran.waitForFinished(60000));
        QCOMPARE(ran.exitCode(), 0);
        const QJsonObject r = QJsonDocument::fromJson(ran.readAllStandardOutput()).object();
        QCOMPARE(r[QStringLiteral("step")].toInt(), 0);
        QCOMPARE(r[QStringLiteral("run_step")].toInt(), 0);

        // Side by side: the picture waits for both panes' layouts (the left one once showed
        // "Laying out…" in it).
        QProcess compare;
        compare.setProcessEnvironment(env);
        compare.start(QStringLiteral(FSC_GUI_BINARY), {QStringLiteral("--screenshot"), png, QStringLiteral("--compare")});
        QVERIFY(compare.waitForFinished(60000));
        QCOMPARE(compare.exitCode(), 0);
        QCOMPARE(QJsonDocument::fromJson(compare.readAllStandardOutput()).object()[QStringLiteral("panes_laid_out")].toInt(), 2);

        // A pass that is not in the pipeline: one line naming the choices, usage exit.
        QProcess bad;
        bad.setProcessEnvironment(env);
        bad.start(QStringLiteral(FSC_GUI_BINARY),
                  {QStringLiteral("--screenshot"), png, QStringLiteral("--pass"),
                   QStringLiteral("no-such-pass")});
        QVERIFY(bad.waitForFinished(60000));
        QCOMPARE(bad.exitCode(), 64);
        QVERIFY(bad.readAllStandardError().contains(
            "--pass no-such-pass: not in the pipeline (imported, "));
    }

    void withoutADisplayItAnswersVersionAndSaysWhyNoWindow() {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (const char* name : {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"})
            env.remove(QLatin1String(name));
        QProcess version;
        version.setProcessEnvironment(env);
        version.start(QStringLiteral(FSC_GUI_BINARY), {QStringLiteral("--version")});
        QVERIFY(version.waitForFinished(30000));
        QCOMPARE(version.exitStatus(), QProcess::NormalExit);
        QCOMPARE(version.exitCode(), 0);
        const QString text = QString::fromUtf8(version.readAllStandardOutput());
        QVERIFY2(text.startsWith(QStringLiteral("fusescope 0.")) &&
                     text.contains(QStringLiteral("(commit ")),
                 qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("Qt 6.")) && text.contains(QStringLiteral("oneDNN ")),
                 qPrintable(text));

        QProcess window;  // a window cannot open: one line and status 2, not Qt's abort
        window.setProcessEnvironment(env);
        window.start(QStringLiteral(FSC_GUI_BINARY), {QStringLiteral(FSC_SAMPLE_MODEL)});
        QVERIFY(window.waitForFinished(30000));
        QCOMPARE(window.exitStatus(), QProcess::NormalExit);
        QCOMPARE(window.exitCode(), 2);
        const QByteArray err = window.readAllStandardError();
        QVERIFY2(err.startsWith("fusescope: no display") && err.count('\n') == 1, err.constData());
    }

    void aboutShowsTheVersionCommitAndLibraries() {
        MainWindow w;
        w.show();
        QAction* about = w.findChild<QAction*>(QStringLiteral("aboutAction"));
        QVERIFY(about);
        about->trigger();
        QMessageBox* box = nullptr;
        QTRY_VERIFY((box = w.findChild<QMessageBox*>(QStringLiteral("aboutDialog"))) != nullptr);
        const QString text = box->text();
        QVERIFY2(text.contains(QStringLiteral("Fusescope 0.")) &&
                     text.contains(QStringLiteral("commit ")),
                 qPrintable(text));
        for (const char* library : {"Qt", "ONNX", "oneDNN", "SQLite", "CUDA"})
            QVERIFY2(text.contains(QStringLiteral("<td>%1</td>").arg(QLatin1String(library))),
                     library);
        QVERIFY(!box->iconPixmap().isNull());  // the app's icon, from the SVG in the resources
        box->close();
    }

    void clickingANodeShowsItsProperties() {
        MainWindow w;
        QVERIFY(openCompiled(w, QString::fromLatin1(MainWindow::kSamplePath), QSize(1200, 800)));
        // The first FusedConv box (conv + bn + relu at O2).
        const CanvasLayout& layout = w.canvas()->canvasLayout();
        int fused = -1;
        for (size_t i = 0; i < layout.boxes.size() && fused < 0; ++i)
            if (layout.boxes[i].node.valid() &&
                w.canvas()->shownGraph()->node(layout.boxes[i].node).opType == "FusedConv")
                fused = int(i);
        QVERIFY(fused >= 0);
        const Rect r = layout.boxes[size_t(fused)].rect;
        const ViewTransform& t = w.canvas()->transform();
        QTest::mouseClick(
            w.canvas(), Qt::LeftButton, {},
            QPoint(int(t.toScreenX(r.centerX())), int(t.toScreenY(r.y + r.height / 2))));
        QCOMPARE(w.canvas()->selectedNode(), layout.boxes[size_t(fused)].node);
        QCOMPARE(w.properties()->valueOf(QStringLiteral("Op")),
                 QStringLiteral("ai.fusescope::FusedConv"));
        QCOMPARE(w.properties()->valueOf(QStringLiteral("Made from")),
                 QStringLiteral("3 imported nodes"));
        QVERIFY(w.properties()
                    ->valueOf(QStringLiteral("Documentation"))
                    .startsWith(QStringLiteral("activation(Conv(X, W, B) + Z)")));
        // A value cut at the dock's edge: Ctrl+C copies it whole, a double-click opens it.
        QTreeWidgetItem* doc = w.properties()->rowNamed(QStringLiteral("Documentation"));
        w.properties()->setCurrentItem(doc);
        w.properties()->findChild<QAction*>(QStringLiteral("copyValueAction"))->trigger();
        QCOMPARE(QGuiApplication::clipboard()->text(), w.properties()->fullValue(doc));
        QVERIFY(QGuiApplication::clipboard()->text().startsWith(QStringLiteral("activation(Conv(X, W, B) + Z)")));
        w.properties()->showValue(doc);
        auto* viewer = w.properties()->findChild<QDialog*>(QStringLiteral("valueViewer"));
        QVERIFY(viewer && viewer->isVisible());
        QCOMPARE(viewer->findChild<QPlainTextEdit*>()->toPlainText(), w.properties()->fullValue(doc));
        viewer->close();
        // Its weights get statistics and a histogram, computed off the GUI thread.
        QSignalSpy stats(w.properties(), &NodePropertiesView::weightStatsShown);
        QVERIFY(stats.wait(10000));
        QTreeWidgetItem* inputs = w.properties()->rowNamed(QStringLiteral("Inputs"));
        QTreeWidgetItem* weight = inputs->child(1);  // W
        QVERIFY(weight->text(1).endsWith(QStringLiteral("(weight)")));
        QStringList keys;
        for (int i = 0; i < weight->childCount(); ++i) keys << weight->child(i)->text(0);
        QCOMPARE(keys,
                 (QStringList{"elements", "min / max", "mean / std", "sparsity", "histogram"}));
        auto* chart =
            qobject_cast<HistogramWidget*>(w.properties()->itemWidget(weight->child(4), 1));
        QVERIFY(chart);
        int64_t counted = 0;
        for (int64_t bin : chart->bins()) counted += bin;
        QCOMPARE(QString::number(counted), weight->child(0)->text(1));
        // An ONNX op of the imported graph: ONNX's own documentation at the model's opset.
        QVERIFY(showStepAndWait(w, 0));
        QVERIFY(QTest::qWaitFor(
            [&] {
                return w.canvas()->shownGraph() == w.canvas()->graph() && !w.canvas()->layingOut();
            },
            20000));
        NodeId conv;
        for (NodeId id : w.canvas()->shownGraph()->order())
            if (w.canvas()->shownGraph()->node(id).opType == "Conv") conv = id;
        w.canvas()->selectNode(conv);
        QVERIFY2(w.properties()
                     ->valueOf(QStringLiteral("Documentation"))
                     .contains(QStringLiteral("convolution operator")),
                 qPrintable(w.properties()->valueOf(QStringLiteral("Documentation"))));
        QCOMPARE(w.properties()->rowNamed(QStringLiteral("Documentation"))->child(0)->text(1),
                 QStringLiteral("opset 11"));
        // A click on empty canvas clears it.
        QTest::mouseClick(w.canvas(), Qt::LeftButton, {}, QPoint(2, 2));
        QCOMPARE(w.properties()->valueOf(QStringLiteral("Op")), QString());
    }

    void findJumpsToMatchesAndExpandsTheirGroups() {
        MainWindow w;
        w.setInitialExpandDepth(0);  // everything collapsed: finding must open the groups
        w.resize(1200, 800);
        w.show();
        QSignalSpy compiled(&w, &MainWindow::compiled);
        w.openModel(QString::fromLatin1(MainWindow::kSamplePath));
        QVERIFY(compiled.wait(30000));
        QVERIFY(showStepAndWait(w, 0));  // as imported: Softmax is still a node of its own
        QTRY_VERIFY_WITH_TIMEOUT(
            w.canvas()->shownGraph() == w.canvas()->graph() && !w.canvas()->layingOut(), 20000);
        QCOMPARE(int(w.canvas()->shownGraph()->nodeCount()), 42);
        w.findBar()->find(QStringLiteral("softmax"), +1);
        const NodeId hit = w.canvas()->selectedNode();
        QVERIFY(hit.valid());
        QCOMPARE(w.canvas()->shownGraph()->node(hit).opType, std::string("Softmax"));
        QCOMPARE(w.properties()->valueOf(QStringLiteral("Op")), QStringLiteral("Softmax"));
        // Its group opens, and the node gets a box of its own, centred.
        QTRY_VERIFY_WITH_TIMEOUT(!w.canvas()->layingOut(), 20000);
        bool boxed = false;
        for (const auto& box : w.canvas()->canvasLayout().boxes) boxed |= box.node == hit;
        QVERIFY(boxed);
        w.findBar()->find(QStringLiteral("no-such-thing"), +1);
        QCOMPARE(w.canvas()->selectedNode(), hit);  // nothing found: the selection stays
    }

    void exportsTheViewAndTheWholeGraph() {
        MainWindow w;
        QVERIFY(openCompiled(w, QString::fromLatin1(MainWindow::kSamplePath), QSize(1000, 700)));
        const QString dir = QStringLiteral(FSC_TEST_TMP);
        QDir().mkpath(dir);
        QCOMPARE(w.canvas()->exportImage(dir + QStringLiteral("/view.png"), false), QString());
        QCOMPARE(QImage(dir + QStringLiteral("/view.png")).size(), w.canvas()->size());
        QCOMPARE(w.canvas()->exportImage(dir + QStringLiteral("/whole.png"), true), QString());
        const QImage whole(dir + QStringLiteral("/whole.png"));
        const CanvasLayout& layout = w.canvas()->canvasLayout();
        QCOMPARE(whole.width(), qRound(layout.width + 32));  // 1:1 with a margin
        QCOMPARE(w.canvas()->exportImage(dir + QStringLiteral("/whole.svg"), true), QString());
        const QByteArray svg = readFile(dir + QStringLiteral("/whole.svg"));
        QVERIFY(svg.contains("<svg"));
        QVERIFY(svg.contains("FusedConv"));  // labels are text in the drawing
        QVERIFY(
            !w.canvas()->exportImage(QStringLiteral("/nonexistent/dir/x.png"), false).isEmpty());
    }

    void compareMarksRemovedAndAddedAndLinksByProvenance() {
        MainWindow w;
        w.resize(1400, 800);
        w.show();
        QSignalSpy compiled(&w, &MainWindow::compiled);
        w.openModel(QString::fromLatin1(MainWindow::kSamplePath));
        QVERIFY(compiled.wait(30000));
        const int row = stepOfPass(w, "attention-fusion");
        QVERIFY(row > 0);
        const auto& passes = w.passList()->trace()->passes;
        w.setCompare(true);
        QVERIFY(showStepAndWait(w, row));
        QVERIFY(w.beforeCanvas()->isVisible());
        QTRY_VERIFY_WITH_TIMEOUT(w.canvas()->shownGraph() == w.canvas()->graph() &&
                                     !w.canvas()->layingOut() &&
                                     w.beforeCanvas()->shownGraph() == w.beforeCanvas()->graph() &&
                                     !w.beforeCanvas()->layingOut(),
                                 20000);
        const Graph& after = *w.canvas()->shownGraph();
        const Graph& before = *w.beforeCanvas()->shownGraph();
        NodeId attention, softmax;
        for (NodeId id : after.order())
            if (after.node(id).opType == "Attention") attention = id;
        for (NodeId id : before.order())
            if (before.node(id).opType == "Softmax") softmax = id;
        QVERIFY(attention.valid() && softmax.valid());
        QCOMPARE(w.canvas()->markOf(attention), GraphCanvas::Mark::Added);
        QCOMPARE(w.beforeCanvas()->markOf(softmax), GraphCanvas::Mark::Removed);
        // Selecting the fused node lights up what it was made from on the left.
        w.canvas()->selectNode(attention);
        QVERIFY(w.beforeCanvas()->isLinked(softmax));
        // Zoom on one side follows on the other.
        ViewTransform t = w.canvas()->transform();
        t.zoomAt(100, 100, 1.5);
        emit w.canvas()->viewChanged(t);
        QCOMPARE(w.beforeCanvas()->transform().scale, t.scale);
        // The step's change list says what was fused and why.
        QTreeWidgetItem* changes = w.changesList()->topLevelItem(0);
        QCOMPARE(changes->childCount(), int(passes[size_t(row - 1)].changes.size()));
        QCOMPARE(changes->child(0)->text(0), QStringLiteral("attention"));
        QVERIFY(changes->child(0)->text(2).contains(QStringLiteral("softmax(scale * Q.K^T")));
        emit w.changesList()->itemActivated(changes->child(0), 0);
        QCOMPARE(w.canvas()->selectedNode(), attention);
        // Any two steps: the imported graph on the left, the compiled one on the right.
        const int last = w.passList()->rowCount() - 1;
        QVERIFY(showStepAndWait(w, last));
        QSignalSpy restepped(&w, &MainWindow::stepShown);
        w.setCompareBase(0);
        QVERIFY(restepped.wait(20000));
        QTRY_VERIFY_WITH_TIMEOUT(w.beforeCanvas()->shownGraph() == w.beforeCanvas()->graph() &&
                                     !w.beforeCanvas()->layingOut() &&
                                     w.canvas()->shownGraph() == w.canvas()->graph() &&
                                     !w.canvas()->layingOut(),
                                 20000);
        QCOMPARE(int(w.beforeCanvas()->shownGraph()->nodeCount()), 42);  // as imported
        int removed = 0;
        for (NodeId id : w.beforeCanvas()->shownGraph()->order())
            removed += w.beforeCanvas()->markOf(id) == GraphCanvas::Mark::Removed;
        // Every node the whole pipeline dropped or replaced is marked on the left.
        int kept = 0;
        for (NodeId id : w.canvas()->shownGraph()->order())
            kept += id.index < w.beforeCanvas()->shownGraph()->nodeArenaSize() &&
                    w.canvas()->markOf(id) == GraphCanvas::Mark::None;
        QCOMPARE(removed, 42 - kept);
        w.setCompareBase(-1);
        w.setCompare(false);
        QVERIFY(!w.beforeCanvas()->isVisible());

        // Compare turned on at the last step, whose pass changed nothing: it opens on the last
        // step that changed the graph, says so, and a step that changed nothing says that too.
        QVERIFY(!w.session().stepChanged(last));
        const int changing = w.session().lastChangingStep(last);
        QVERIFY(changing > 0 && changing < last && w.session().stepChanged(changing));
        QVERIFY(showStepAndWait(w, last));
        QCOMPARE(w.changesList()->topLevelItem(0)->child(0)->text(2), QStringLiteral("this pass left the graph as it was"));
        QSignalSpy opened(&w, &MainWindow::stepShown);
        w.setCompare(true);
        QVERIFY(opened.wait(20000));
        QCOMPARE(opened.last().first().toInt(), changing);
        QVERIFY(w.logText().contains(QStringLiteral("changed nothing; showing")));
        w.setCompare(false);
    }

    // View > Compare with the compile without the selected pass: the full compile on the
    // right, the compile without attention-fusion on the left, its Softmax outlined as only
    // there and the fused Attention as only on the right; a pass that changed nothing leaves
    // two equal graphs, nothing outlined.
    void comparingWithoutAPassShowsItsVariantBesideTheFullCompile() {
        MainWindow w;
        w.resize(1400, 800);
        w.show();
        QSignalSpy compiled(&w, &MainWindow::compiled);
        w.openModel(QString::fromLatin1(MainWindow::kSamplePath));
        QVERIFY(compiled.wait(30000));
        const int row = stepOfPass(w, "attention-fusion");
        QVERIFY(row > 0);
        const int last = w.passList()->rowCount() - 1;
        auto laidOut = [&w] {
            return QTest::qWaitFor(
                [&w] {
                    return w.canvas()->shownGraph() == w.canvas()->graph() && !w.canvas()->layingOut() &&
                           w.beforeCanvas()->shownGraph() == w.beforeCanvas()->graph() &&
                           !w.beforeCanvas()->layingOut();
                },
                20000);
        };
        w.setCompareWithout(true);
        QVERIFY(w.findChild<QAction*>(QStringLiteral("compareWithoutAction"))->isChecked());
        QVERIFY(showStepAndWait(w, row));
        QVERIFY(laidOut());
        QVERIFY(w.beforeCanvas()->isVisible());
        QCOMPARE(w.session().step(), last);  // the right pane: the full compile
        QVERIFY2(w.logText().contains(QStringLiteral("Left: the compile without attention-fusion")), qPrintable(w.logText()));
        const Graph& full = *w.canvas()->shownGraph();
        const Graph& variant = *w.beforeCanvas()->shownGraph();
        NodeId attention, softmax;
        for (NodeId id : full.order())
            if (full.node(id).opType == "Attention") attention = id;
        for (NodeId id : variant.order())
            if (variant.node(id).opType == "Softmax") softmax = id;
        QVERIFY(attention.valid() && softmax.valid());
        QCOMPARE(w.canvas()->markOf(attention), GraphCanvas::Mark::Added);
        QCOMPARE(w.beforeCanvas()->markOf(softmax), GraphCanvas::Mark::Removed);
        // The pass list keeps the pass selected, though the step shown is the last.
        QTableView* passView = w.findChild<QDockWidget*>(QStringLiteral("passDock"))->findChild<QTableView*>();
        QVERIFY(passView);
        QCOMPARE(passView->currentIndex().row(), row);

        QVERIFY(!w.session().stepChanged(last));
        QVERIFY(showStepAndWait(w, last));
        QVERIFY(laidOut());
        int outlined = 0;
        for (NodeId id : w.beforeCanvas()->shownGraph()->order())
            outlined += w.beforeCanvas()->markOf(id) != GraphCanvas::Mark::None;
        for (NodeId id : w.canvas()->shownGraph()->order()) outlined += w.canvas()->markOf(id) != GraphCanvas::Mark::None;
        QCOMPARE(outlined, 0);
        QCOMPARE(w.beforeCanvas()->shownGraph()->nodeCount(), w.canvas()->shownGraph()->nodeCount());

        // The step comparison takes over from it, and off is off.
        w.setCompare(true);
        QVERIFY(!w.findChild<QAction*>(QStringLiteral("compareWithoutAction"))->isChecked());
        w.setCompare(false);
        QVERIFY(!w.beforeCanvas()->isVisible());
    }

    void aCustomPipelineCompilesTheChosenPasses() {
        MainWindow w;
        QVERIFY(openCompiled(w, QString::fromLatin1(MainWindow::kSamplePath), QSize(1200, 800)));
        w.compiles()->chooseCustomPipeline();
        CustomPipelineDialog* dialog = w.compiles()->customPipelineDialog();
        QVERIFY(dialog);
        dialog->preset(QStringLiteral("O1"));
        dialog->setChecked("eliminate-common-subexpressions", false);
        dialog->setChecked("attention-fusion", true);  // an O2 pass added to O1
        const std::vector<std::string> chosen = dialog->passes();
        QVERIFY(std::find(chosen.begin(), chosen.end(), "eliminate-common-subexpressions") ==
                chosen.end());
        QCOMPARE(chosen.back(), std::string("attention-fusion"));
        QSignalSpy compiled(&w, &MainWindow::compiled);
        dialog->accept();
        QVERIFY(compiled.wait(30000));
        QCOMPARE(compiled.first().first().toString(), QStringLiteral("custom"));
        const auto& passes = w.passList()->trace()->passes;
        QCOMPARE(passes.size(), chosen.size());
        for (size_t i = 0; i < passes.size(); ++i) QCOMPARE(passes[i].name, chosen[i]);
        QVERIFY(w.logText().contains(QStringLiteral("Compiling with custom")));
    }

    void graphBreaksAreListedAndRevealTheirNode() {
        // domains.onnx: one op the CUDA table lacks, so one break and two regions.
        MainWindow w;
        QVERIFY(openCompiled(w, QStringLiteral(FSC_FIXTURE_DIR "/good/domains.onnx"),
                             QSize(1200, 800)));
        QCOMPARE(w.breaksList()->topLevelItemCount(), 1);
        QTreeWidgetItem* item = w.breaksList()->topLevelItem(0);
        QCOMPARE(item->text(0), QStringLiteral("unsupported-op"));
        QVERIFY(item->text(2).contains(QStringLiteral("runs on the CPU")));
        emit w.breaksList()->itemActivated(item, 0);
        QVERIFY(w.canvas()->selectedNode().valid());
        QCOMPARE(
            QString::fromStdString(w.canvas()->shownGraph()->node(w.canvas()->selectedNode()).name),
            item->text(1));
    }

    void aBreakEdgeSaysWhyAndEdgesNameTheirTensors() {
        // breaks.onnx: Relu (device) -> com.microsoft QuickGelu (CPU): 'r' is copied to the host.
        MainWindow w;
        QVERIFY(
            openCompiled(w, QStringLiteral(FSC_FIXTURE_DIR "/good/breaks.onnx"), QSize(1200, 800)));
        const CanvasLayout& layout = w.canvas()->canvasLayout();
        QCOMPARE(layout.edges.size(), layout.edgeInfo.size());
        int copied = -1;
        for (size_t e = 0; e < layout.edgeInfo.size(); ++e)
            if (w.canvas()->shownGraph()->value(layout.edgeInfo[e].value).name == "r")
                copied = int(e);
        QVERIFY(copied >= 0);
        // The breaks arrive from their own background job, beside the layout's.
        QTRY_VERIFY2_WITH_TIMEOUT(w.canvas()->edgeText(copied).contains(
                                      QStringLiteral("graph break: 'r' (64 bytes) is copied to the host")),
                                  qPrintable(w.canvas()->edgeText(copied)), 10000);
        QVERIFY2(w.canvas()->edgeText(copied).contains(QStringLiteral("float32[2,8]")),
                 qPrintable(w.canvas()->edgeText(copied)));
        // The tooltip finds the edge under the pointer: a point along its first leg.
        const auto& path = layout.edges[size_t(copied)];
        const ViewTransform& t = w.canvas()->transform();
        const QPointF middle(t.toScreenX((path[0].x + path[1].x) / 2),
                             t.toScreenY((path[0].y + path[1].y) / 2));
        QCOMPARE(w.canvas()->edgeAt(middle), copied);
        QCOMPARE(w.canvas()->edgeAt(QPointF(-50, -50)), -1);
    }

    void runTimesEveryNodeHeatsTheCanvasAndJumpsToRows() {
        MainWindow w;
        QVERIFY(openCompiled(w, QString::fromLatin1(MainWindow::kSamplePath), QSize(1400, 900)));
        QVERIFY(!w.canvas()->hasHeat());
        w.runPanel()->setIterations(3);
        QCOMPARE(w.runPanel()->threads(), 0);  // automatic unless the user chose
        w.runPanel()->setThreads(1);
        QSignalSpy finished(&w, &MainWindow::runFinished);
        w.runs()->runShownGraph();
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.first().first().toBool(), true);
        // The run used the threads asked for, and the choice outlives the window.
        QVERIFY2(w.runPanel()->summary().contains(QStringLiteral(", 1 thread;")), qPrintable(w.runPanel()->summary()));
        QCOMPARE(QSettings().value(QStringLiteral("run/threads")).toInt(), 1);
        const Graph* shown = w.canvas()->shownGraph();
        RunTableModel* table = w.runPanel()->table();
        QAbstractItemModelTester tester(table,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(table->rowCount(),
                 int(shown->nodeCount()));  // every node of the compiled sample ran once per run
        double shares = 0;
        for (int r = 0; r < table->rowCount(); ++r) {
            shares += table->data(table->index(r, RunTableModel::Share), RunTableModel::SortRole)
                          .toDouble();
            QCOMPARE(
                table->data(table->index(r, RunTableModel::Launches), Qt::DisplayRole).toString(),
                QStringLiteral("3"));
        }
        QVERIFY(std::abs(shares - 1.0) < 1e-9);
        QVERIFY(w.canvas()->hasHeat());
        // Nothing left under way: the status bar's progress and Cancel are gone.
        QVERIFY(!w.statusBar()->findChild<QProgressBar*>()->isVisible());
        QVERIFY(w.runPanel()->summary().contains(QStringLiteral("random, seed 0")));
        QVERIFY(w.logText().contains(QStringLiteral("Ran '")));
        // Sorted by time, largest first; a click on a row selects its node on the canvas.
        QSortFilterProxyModel* sorted = w.runPanel()->sortedTable();
        const double first =
            sorted->data(sorted->index(0, RunTableModel::Milliseconds), RunTableModel::SortRole)
                .toDouble();
        const double last =
            sorted
                ->data(sorted->index(sorted->rowCount() - 1, RunTableModel::Milliseconds),
                       RunTableModel::SortRole)
                .toDouble();
        QVERIFY(first >= last);
        w.runPanel()->tableView()->sortByColumn(RunTableModel::Node, Qt::AscendingOrder);
        const QModelIndex row = sorted->index(2, RunTableModel::Node);
        emit w.runPanel()->tableView()->activated(row);
        QVERIFY(w.canvas()->selectedNode().valid());
        QCOMPARE(QString::fromStdString(shown->node(w.canvas()->selectedNode()).name),
                 sorted->data(row).toString());
        // The same run on the timeline: a lane of kernels; selecting a node on the canvas selects
        // its launches there, and a click on a block selects its node on the canvas.
        QVERIFY(w.lastTrace());
        TimelineView* timeline = w.timeline();
        QCOMPARE(timeline->trace(), w.lastTrace());
        QVERIFY(!timeline->lanes().empty());
        QCOMPARE(timeline->selectedNode(), int64_t(w.canvas()->selectedNode().index));
        timeline->resize(1200, 300);
        // Lanes: the iterations (host ranges) first, then the executor's kernels.
        QCOMPARE(timeline->lanes().front().title, std::string("iterations (host clock)"));
        QCOMPARE(timeline->lanes().front().activities.size(), size_t(3));
        const int kernelLane = 1;
        QCOMPARE(timeline->lanes()[kernelLane].title, std::string("CPU executor"));
        const Activity& firstKernel =
            w.lastTrace()->activities[size_t(timeline->lanes()[kernelLane].activities.front())];
        // Zoomed onto that kernel alone, so the click cannot land on a neighbour.
        timeline->setScale(TimeScale::fit(firstKernel.startNs, firstKernel.endNs,
                                          timeline->width() - TimelineView::kGutter));
        const double x =
            TimelineView::kGutter +
            timeline->scale().toX(double(firstKernel.startNs + firstKernel.endNs) / 2.0);
        QTest::mouseClick(timeline, Qt::LeftButton, {},
                          QPoint(int(x), timeline->laneMiddle(kernelLane)));
        QCOMPARE(w.canvas()->selectedNode().index, uint32_t(firstKernel.node));
        // Heat by achieved FLOP/s: a node's is its cost-model FLOPs over its median time, a
        // collapsed group's its nodes' summed FLOPs over their summed medians.
        const NodeId hottest = w.canvas()->selectedNode();
        w.setHeatUnit(HeatUnit::FlopsPerSecond);
        QCOMPARE(w.canvas()->heatUnit(), HeatUnit::FlopsPerSecond);
        {
            const auto stats = computeNodeStats(*w.lastTrace());
            const NodeStat* conv = nullptr;
            for (const NodeStat& s : stats)
                if (!conv && w.lastTrace()->findNode(s.node)->flops > 0) conv = &s;
            QVERIFY(conv);
            // Per iteration, over the median iteration's time, as every per-node figure.
            const double expected = w.lastTrace()->findNode(conv->node)->flops * double(conv->launches) /
                                    double(w.lastTrace()->iterations) / (double(conv->medianNs) / 1e9);
            QVERIFY(std::abs(w.canvas()->heatOfNode(NodeId{uint32_t(conv->node)}) - expected) <=
                    1e-6 * expected);
            QVERIFY(std::abs(conv->flopsPerSecond - expected) <=
                    1e-6 * expected);  // the same figure the report prints
        }
        w.setHeatUnit(HeatUnit::Share);
        QVERIFY(w.canvas()->heatOfNode(hottest) >= 0);
        QVERIFY(w.lastTrace()->peakFlopsPerSecond > 0 && w.lastTrace()->peakBytesPerSecond > 0);
        // The selected node's kernels in the properties: its launches, three iterations' worth.
        w.canvas()->revealNode(hottest);
        QTreeWidgetItem* kernels =
            w.properties()->rowNamed(QStringLiteral("Kernels in the last run"));
        QVERIFY(kernels);
        QCOMPARE(kernels->childCount(), 1);
        QVERIFY2(kernels->child(0)->text(1).startsWith(QStringLiteral("3 launches")),
                 qPrintable(kernels->child(0)->text(1)));
        // The roofline: a dot per node with FLOPs, under measured roofs; a click on one selects its
        // node.
        RooflineView* roofline = w.rooflineView();
        QVERIFY(roofline->roofline().hasRoofs);
        QVERIFY(roofline->roofline().points.size() > 10);
        roofline->resize(800, 400);
        const RooflinePoint& dot = roofline->roofline().points.back();
        // Dots may overlap: the node expected is the one nearest the pixel actually clicked.
        const QPoint at = roofline->pointOf(dot).toPoint();
        QVERIFY(roofline->nodeAt(at) >= 0);
        QTest::mouseClick(roofline, Qt::LeftButton, {}, at);
        QCOMPARE(int64_t(w.canvas()->selectedNode().index), roofline->nodeAt(at));
        QCOMPARE(roofline->selectedNode(), int64_t(w.canvas()->selectedNode().index));
        // The memory dock: the planned arena of this run, the peak step's tensors listed.
        QVERIFY(w.memoryView()->headline().startsWith(QStringLiteral("Planned peak")));
        QVERIFY(!w.lastTrace()->plannedBuffers.empty());
        QVERIFY(w.memoryView()->liveTable()->rowCount() > 0);
        // Another step has other node ids: no heat there, and back again on the step that ran.
        const int ran = w.passList()->rowCount() - 1;
        QVERIFY(showStepAndWait(w, 0));
        QVERIFY(!w.canvas()->hasHeat());
        QVERIFY(showStepAndWait(w, ran));
        QVERIFY(w.canvas()->hasHeat());
    }

    void theSensitivityDockMeasuresEachLayerAndFindsIt() {
        MainWindow w;
        QVERIFY(openCompiled(w, QString::fromLatin1(MainWindow::kSamplePath), QSize(1200, 800)));
        QVERIFY(showStepAndWait(w, 0));  // as imported: every Conv, MatMul and Gemm is still plain
        QTRY_VERIFY_WITH_TIMEOUT(
            w.canvas()->shownGraph() == w.canvas()->graph() && !w.canvas()->layingOut(), 20000);
        auto* button =
            w.sensitivityPanel()->findChild<QPushButton*>(QStringLiteral("measureSensitivity"));
        QVERIFY(button);
        button->click();
        QVERIFY(!button->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(button->isEnabled(), 60000);
        QStandardItemModel* table = w.sensitivityPanel()->model();
        QCOMPARE(table->rowCount(), 8);  // 1 Conv, 6 MatMul, 1 Gemm
        QVERIFY2(w.logText().contains(QStringLiteral("All 8 layers in INT8: cosine")),
                 qPrintable(w.logText()));
        QVERIFY(w.logText().contains(QStringLiteral("generated")));
        // Worst first, and a click finds the node on the canvas.
        for (int r = 1; r < table->rowCount(); ++r)
            QVERIFY(
                table->item(r - 1, SensitivityPanel::Cosine)->data(Qt::DisplayRole).toDouble() <=
                table->item(r, SensitivityPanel::Cosine)->data(Qt::DisplayRole).toDouble());
        QTableView* view = w.sensitivityPanel()->view();
        const QString name = table->item(2, SensitivityPanel::Node)->text();
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {},
                          view->visualRect(table->index(2, SensitivityPanel::Node)).center());
        QTRY_VERIFY(w.canvas()->selectedNode().valid());
        QCOMPARE(
            QString::fromStdString(w.canvas()->shownGraph()->node(w.canvas()->selectedNode()).name),
            name);
    }

    // Run > Compare variants: the Variants dock lists every ONNX node in each precision, the
    // canvas is heated by the variant chosen, and a click on a row finds the group holding it.
    void theVariantsDockComparesAndHeatsTheCanvas() {
        MainWindow w;
        QVERIFY(openCompiled(w, QString::fromLatin1(MainWindow::kSamplePath), QSize(1200, 800)));
        QTRY_VERIFY_WITH_TIMEOUT(w.canvas()->shownGraph() && !w.canvas()->layingOut(), 20000);
        auto* button = w.variantsPanel()->findChild<QPushButton*>(QStringLiteral("compareVariants"));
        QVERIFY(button);
        w.findChild<QAction*>(QStringLiteral("compareVariantsAction"))->trigger();
        QVERIFY(!button->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(button->isEnabled(), 120000);
        QVERIFY2(w.logText().contains(QStringLiteral("Compare: cpu/fp32")), qPrintable(w.logText()));
        QStandardItemModel* table = w.variantsPanel()->model();
        QCOMPARE(table->rowCount(), int(w.session().model()->graph->nodeCount()));
        QVERIFY(w.canvas()->hasHeat());
        QCOMPARE(w.canvas()->heatUnit(), HeatUnit::TimeRatio);
        w.variantsPanel()->heatChoice()->setCurrentIndex(1);
        QCOMPARE(w.canvas()->heatUnit(), HeatUnit::RelativeError);
        QTableView* view = w.variantsPanel()->view();
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, view->visualRect(table->index(0, 0)).center());
        QTRY_VERIFY(w.canvas()->selectedNode().valid());
        // Another step shown keeps the overlay, mapped onto its nodes; the run's heat replaces it.
        QVERIFY(showStepAndWait(w, 0));
        QCOMPARE(w.canvas()->heatUnit(), HeatUnit::RelativeError);
        const Graph& imported = *w.canvas()->graph();
        int heated = 0;
        for (NodeId id : imported.order()) heated += w.canvas()->heatOfNode(id) > 0;
        QVERIFY2(heated > int(imported.nodeCount()) / 2, qPrintable(QString::number(heated)));
        w.applyRunHeat();
        QVERIFY(!w.canvas()->hasHeat());  // nothing has run
    }

    void aPartitionedGraphIsSimulatedWithALanePerDevice() {
        // The sample split for 2 devices by tensor-parallel, as the CLI writes it.
        auto sample = importModel(FSC_SAMPLE_MODEL);
        QVERIFY(sample);
        std::vector<std::unique_ptr<Pass>> passes;
        passes.push_back(passes::tensorParallel(2));
        auto split = compileModel(*sample, std::move(passes));
        QVERIFY(split);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("tp2.onnx"));
        QVERIFY(exportModel(split->model, path.toStdString()).isOk());
        MainWindow w;
        QVERIFY(!w.runs()->simulate(w.canvas()->shownGraph(), QStringLiteral("nvlink4")));  // nothing shown yet
        QVERIFY(openCompiled(w, path, QSize(1200, 800)));
        QVERIFY(w.runs()->simulate(w.canvas()->shownGraph(), QStringLiteral("pcie5")));
        const Trace* trace = w.timeline()->trace();
        QVERIFY(trace);
        QCOMPARE(trace->backend, std::string("simulated"));
        QVERIFY(trace->device.find("PCIe 5") != std::string::npos);
        QStringList titles;
        for (const TimelineLane& lane : w.timeline()->lanes())
            titles << QString::fromStdString(lane.title);
        QVERIFY2(titles.contains(QStringLiteral("device 0 (simulated)")) &&
                     titles.contains(QStringLiteral("device 1 (simulated)")) &&
                     titles.contains(QStringLiteral("device 1 communication (simulated)")),
                 qPrintable(titles.join(QLatin1Char(','))));
        QVERIFY(w.logText().contains(
            QStringLiteral("Simulated (not measured) on 2 devices over PCIe 5")));
    }

    // The Run dock's CUDA choice runs on the device (here the simulated one, which executes
    // every launch with its CPU twin) and the trace says so.
    void aCudaRunUsesTheDevice() {
        qputenv("FUSESCOPE_DEVICE", "simulated");
        MainWindow w;
        QVERIFY(openCompiled(w, QString::fromLatin1(MainWindow::kSamplePath), QSize(1200, 800)));
        w.runPanel()->setIterations(2);
        w.runPanel()->setCudaSelected(true);
        QCOMPARE(w.runPanel()->runButton()->text(), QStringLiteral("Run on GPU"));
        QSignalSpy finished(&w, &MainWindow::runFinished);
        w.runs()->runShownGraph();
        const bool done = finished.wait(120000);
        qunsetenv("FUSESCOPE_DEVICE");
        QVERIFY(done);
        QCOMPARE(finished.first().first().toBool(), true);
        QVERIFY(w.lastTrace());
        QCOMPARE(QString::fromStdString(w.lastTrace()->backend), QStringLiteral("cuda"));
        // Choosing the GPU compiled the model again for it, as `profile --backend cuda` does
        // (channels-last leaves float32 convolutions NCHW there), and the run timed that graph.
        QCOMPARE(std::string(w.session().pipeline().target.name()), std::string("cuda"));
        for (const PassReport& p : w.session().compiled()->passes)
            if (p.name == "channels-last") QCOMPARE(p.counters.matched, 0);
        QCOMPARE(w.session().runStep(), w.session().stepCount() - 1);
        QVERIFY(!w.findChild<QMessageBox*>(QStringLiteral("cpuFallbackDialog")));
        QVERIFY2(w.logText().contains(QStringLiteral("simulated")), qPrintable(w.logText()));
    }

    // One target, one compiled graph, whichever entry point compiles it: the window (its Run
    // dock's backend), `run` and `walkthrough` give the same passes and nodes for the CPU and
    // for the CUDA backend (the simulated device), and the two targets' pipelines differ.
    void everyEntryPointCompilesTheSameGraphForATarget() {
        qputenv("FUSESCOPE_DEVICE", "simulated");
        auto cli = [](const QStringList& args) {
            QProcess p;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("FUSESCOPE_DEVICE"), QStringLiteral("simulated"));
            p.setProcessEnvironment(env);
            p.start(QStringLiteral(FSC_CLI_PATH), args);
            p.waitForFinished(120000);
            const QByteArray out = p.readAllStandardOutput();
            if (p.exitCode() != 0 || out.isEmpty())
                qWarning("%s %s: exit %d, %s", FSC_CLI_PATH, qPrintable(args.join(QLatin1Char(' '))), p.exitCode(),
                         p.readAllStandardError().constData());
            return QJsonDocument::fromJson(out).object();
        };
        std::map<QString, int> passesByBackend;
        for (const QString backend : {QStringLiteral("cpu"), QStringLiteral("cuda")}) {
            MainWindow w;
            QVERIFY(openCompiled(w, QStringLiteral(FSC_SAMPLE_MODEL), QSize(1200, 800)));
            if (backend == QLatin1String("cuda")) {
                QSignalSpy compiled(&w, &MainWindow::compiled);
                w.runPanel()->setCudaSelected(true);
                QVERIFY(compiled.wait(30000));
            }
            QCOMPARE(QString::fromLatin1(w.session().pipeline().target.name()), backend);
            const auto& passes = w.session().compiled()->passes;
            const QJsonObject walkthrough = cli({QStringLiteral("walkthrough"), QStringLiteral(FSC_SAMPLE_MODEL),
                                                 QStringLiteral("--backend"), backend, QStringLiteral("--chapters"),
                                                 QStringLiteral("3"), QStringLiteral("--json")});
            const QJsonObject chapter =
                walkthrough.value(QStringLiteral("chapters")).toArray().at(0).toObject().value(QStringLiteral("figures")).toObject();
            QStringList shown, walked;
            for (const PassReport& pass : passes) shown << QString::fromStdString(pass.name);
            for (const QJsonValue& pass : chapter[QStringLiteral("passes")].toArray())
                walked << pass.toObject()[QStringLiteral("name")].toString();
            QCOMPARE(walked, shown);
            QCOMPARE(chapter[QStringLiteral("nodes_after")].toInt(), int(passes.back().nodesAfter));
            const QJsonObject run = cli({QStringLiteral("run"), QStringLiteral(FSC_SAMPLE_MODEL), QStringLiteral("--backend"),
                                         backend, QStringLiteral("--iterations"), QStringLiteral("1"),
                                         QStringLiteral("--json")});
            QCOMPARE(run[QStringLiteral("backend")].toString(), backend);
            QCOMPARE(run[QStringLiteral("nodes")].toInt(), int(passes.back().nodesAfter));
            passesByBackend[backend] = int(passes.size());
        }
        qunsetenv("FUSESCOPE_DEVICE");
        QCOMPARE(passesByBackend[QStringLiteral("cuda")], passesByBackend[QStringLiteral("cpu")]);  // one pipeline
    }

    // Without a usable GPU (this machine in CI has none) the CUDA choice still runs: on the
    // CPU, with a dialog that says why, and nothing is lost.
    void aCudaRunWithoutAGpuFallsBackToTheCpuAndSaysWhy() {
        if (openCudaDevice())
            QSKIP("this machine has a CUDA device; the fallback is for machines without one");
        MainWindow w;
        QVERIFY(openCompiled(w, QString::fromLatin1(MainWindow::kSamplePath), QSize(1200, 800)));
        w.runPanel()->setIterations(2);
        QSignalSpy finished(&w, &MainWindow::runFinished);
        w.findChild<QAction*>(QStringLiteral("runGpuAction"))
            ->trigger();  // the Run menu's GPU entry
        QVERIFY(w.runPanel()->cudaSelected());
        auto* dialog = w.findChild<QMessageBox*>(QStringLiteral("cpuFallbackDialog"));
        QVERIFY(dialog);
        QVERIFY2(dialog->text().contains(QStringLiteral("runs on the CPU instead")),
                 qPrintable(dialog->text()));
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.first().first().toBool(), true);
        QVERIFY(w.lastTrace());
        QCOMPARE(QString::fromStdString(w.lastTrace()->backend), QStringLiteral("cpu"));
        QVERIFY(w.canvas()->hasHeat());
        QVERIFY2(w.logText().contains(QStringLiteral("running on the CPU instead")),
                 qPrintable(w.logText()));
        dialog->close();
    }

    void aRunCanBeCancelledAndReportsWhy() {
        MainWindow w;
        QVERIFY(openCompiled(w, QString::fromLatin1(MainWindow::kSamplePath), QSize(1200, 800)));
        w.runPanel()->setIterations(10000);
        QSignalSpy finished(&w, &MainWindow::runFinished);
        w.runs()->runShownGraph();
        QVERIFY(!w.runPanel()->runButton()->isEnabled());
        QVERIFY(w.statusBar()->findChild<QProgressBar*>()->isVisible());
        QTest::qWait(50);
        w.cancelWork();
        QVERIFY(finished.wait(30000));
        QCOMPARE(finished.first().first().toBool(), false);
        QVERIFY2(w.logText().contains(QStringLiteral("Run stopped")), qPrintable(w.logText()));
        QVERIFY(w.runPanel()->runButton()->isEnabled());
        QVERIFY(!w.canvas()->hasHeat());
    }

    void opensARunStoreMadeByTheCli() {
        QTemporaryDir dir;
        const QString store = dir.filePath(QStringLiteral("runs.fsdb"));
        for (int i = 0; i < 2; ++i) {  // two runs: the second is the one asked for
            QProcess cli;
            cli.start(QStringLiteral(FSC_CLI_BINARY),
                      {QStringLiteral("profile"), QStringLiteral(FSC_SAMPLE_MODEL),
                       QStringLiteral("-o"), store, QStringLiteral("--iterations"),
                       QString::number(2 + i), QStringLiteral("--threads"), QStringLiteral("1")});
            QVERIFY(cli.waitForFinished(60000));
            QCOMPARE(cli.exitCode(), 0);
        }
        MainWindow w;
        w.resize(1200, 800);
        w.show();
        // Read in the background; runStoreOpened(ok) says how it went.
        QSignalSpy opened(&w, &MainWindow::runStoreOpened);
        auto open = [&](const QString& path, int64_t run) {
            opened.clear();
            w.runs()->openRunStore(path, run);
            return opened.wait(20000) && opened.first().first().toBool();
        };
        QVERIFY(open(store, 2));
        QVERIFY(w.lastTrace());
        QCOMPARE(w.lastTrace()->iterations, 3);
        QVERIFY(!w.timeline()->lanes().empty());
        QVERIFY(w.runPanel()->table()->rowCount() > 0);
        QVERIFY(w.runPanel()->summary().contains(QStringLiteral("over 3 iterations")));
        QVERIFY(w.logText().contains(QStringLiteral("Opened run 2")));
        // Not a run store: an error in the log (and a dialog), the session goes on.
        QVERIFY(!open(QStringLiteral(FSC_SAMPLE_MODEL), 1));
        QVERIFY(w.logText().contains(QStringLiteral("error:")));
        QCOMPARE(w.lastTrace()->iterations, 3);
        QVERIFY(!open(store, 99));
        QCOMPARE(opened.count(), 1);
    }

    void subgraphsOpenAsBreadcrumbs() {
        // nested.onnx: Loop > If > If > Scan, four levels.
        MainWindow w;
        QVERIFY(
            openCompiled(w, QStringLiteral(FSC_FIXTURE_DIR "/good/nested.onnx"), QSize(1200, 800)));
        auto waitLaidOut = [&] {
            return QTest::qWaitFor(
                [&] {
                    return w.canvas()->shownGraph() == w.canvas()->graph() &&
                           !w.canvas()->layingOut();
                },
                20000);
        };
        auto nodeOf = [&](const std::string& op) {
            for (NodeId id : w.canvas()->shownGraph()->order())
                if (w.canvas()->shownGraph()->node(id).opType == op) return id;
            return NodeId{};
        };
        const Graph* top = w.canvas()->shownGraph();
        const NodeId loop = nodeOf("Loop");
        QVERIFY(loop.valid());
        QVERIFY(!w.subgraphs()->enter(nodeOf("NoSuchOp")));
        // Double-clicking the Loop opens its body (its only graph attribute).
        const ViewTransform& t = w.canvas()->transform();
        for (const auto& box : w.canvas()->canvasLayout().boxes)
            if (box.node == loop)
                QTest::mouseDClick(w.canvas(), Qt::LeftButton, {},
                                   QPoint(int(t.toScreenX(box.rect.centerX())),
                                          int(t.toScreenY(box.rect.y + box.rect.height / 2))));
        QVERIFY(waitLaidOut());
        QCOMPARE(w.subgraphs()->breadcrumb().size(), 2);
        QVERIFY(w.subgraphs()->breadcrumb().last().startsWith(QStringLiteral("Loop '/outer/Loop' › body")));
        QVERIFY(w.canvas()->shownGraph() != top);
        QCOMPARE(w.nodeTable()->graph(), w.canvas()->shownGraph());
        // An If has two branches: named explicitly here (a menu asks a person).
        const NodeId branch = nodeOf("If");
        QVERIFY(branch.valid());
        QVERIFY(w.subgraphs()->enter(branch, QStringLiteral("else_branch")));
        QVERIFY(waitLaidOut());
        QCOMPARE(w.subgraphs()->breadcrumb().size(), 3);
        QVERIFY(w.subgraphs()->breadcrumb().last().endsWith(QStringLiteral("› else_branch")));
        // Back one level, then to the top: the step's graph again.
        w.subgraphs()->upTo(1);
        QVERIFY(waitLaidOut());
        QCOMPARE(w.subgraphs()->breadcrumb().size(), 2);
        QSignalSpy stepShown(&w, &MainWindow::stepShown);  // the step's graph, made again
        w.subgraphs()->upTo(0);
        QVERIFY(stepShown.wait(20000));
        QVERIFY(waitLaidOut());
        QCOMPARE(w.subgraphs()->breadcrumb().size(), 1);
        QCOMPARE(int(w.canvas()->shownGraph()->nodeCount()),
                 int(w.passList()->trace()->passes.back().nodesAfter));
        // Inside a body, a node of the step's graph picked elsewhere (a list of the step's
        // nodes) takes the canvas back to the step's graph and selects it there.
        QVERIFY(w.subgraphs()->enter(loop));
        QVERIFY(waitLaidOut());
        QCOMPARE(w.subgraphs()->breadcrumb().size(), 2);
        QSignalSpy backToStep(&w, &MainWindow::stepShown);
        w.selection().selectStepNode(loop);
        QVERIFY(backToStep.wait(20000));
        QVERIFY(waitLaidOut());
        QCOMPARE(w.subgraphs()->breadcrumb().size(), 1);
        QCOMPARE(w.canvas()->shownGraph(), top);  // the same graph: the step was not made again
        QCOMPARE(w.canvas()->selectedNode(), loop);
    }

    void outlineShowsAndRevealsGroups() {
        MainWindow w;
        // The imported sample: conv_block, to_tokens, transformer, head groups.
        w.setInitialExpandDepth(0);
        QVERIFY(openCompiled(w, QString::fromLatin1(MainWindow::kSamplePath), QSize(1200, 800)));
        QVERIFY(showStepAndWait(w, 0));
        QVERIFY(QTest::qWaitFor(
            [&] {
                return w.canvas()->shownGraph() == w.canvas()->graph() && !w.canvas()->layingOut();
            },
            20000));
        QAbstractItemModel* outline = w.outline()->model();
        QVERIFY(outline->rowCount() >= 3);
        QModelIndex transformer;
        for (int r = 0; r < outline->rowCount(); ++r)
            if (outline->index(r, 0).data().toString() == QStringLiteral("transformer"))
                transformer = outline->index(r, 0);
        QVERIFY(transformer.isValid());
        QVERIFY(outline->rowCount(transformer) > 0);
        // A click on a nested group expands what holds it and centres it. (A group of one
        // node is drawn as the node: take one with several.)
        QModelIndex attn;
        for (int r = 0; r < outline->rowCount(transformer); ++r)
            if (outline->index(r, 0, transformer).data().toString() == QStringLiteral("attn"))
                attn = outline->index(r, 0, transformer);
        QVERIFY(attn.isValid());
        const int group = attn.data(Qt::UserRole).toInt();
        emit w.outline()->clicked(attn);
        QVERIFY(QTest::qWaitFor(
            [&] {
                for (const auto& box : w.canvas()->canvasLayout().boxes)
                    if (box.group == group && !box.node.valid()) return true;
                return false;
            },
            20000));
    }

    void aFusedElementwiseShowsItsCudaSource() {
        MainWindow w;
        QVERIFY(openCompiled(w, QStringLiteral(FSC_FIXTURE_DIR "/good/elementwise.onnx"),
                             QSize(1000, 700)));
        NodeId fused;
        for (NodeId id : w.canvas()->shownGraph()->order())
            if (w.canvas()->shownGraph()->node(id).opType == "FusedElementwise") fused = id;
        QVERIFY(fused.valid());
        QSignalSpy generated(w.properties(), &NodePropertiesView::generatedKernelShown);
        w.canvas()->selectNode(fused);
        QVERIFY(generated.wait(20000));  // generated off the GUI thread
        QVERIFY(w.properties()
                    ->valueOf(QStringLiteral("CUDA kernel"))
                    .startsWith(QStringLiteral("fsc_ew_")));
        auto* source = w.properties()->findChild<QPlainTextEdit*>(QStringLiteral("cudaSource"));
        QVERIFY(source);
        QVERIFY(source->toPlainText().contains(QStringLiteral("__global__ void fsc_ew_")));
    }

    void constantsShowOnDemand() {
        // constants.onnx as imported: three Constant nodes feeding one Add.
        MainWindow w;
        QVERIFY(openCompiled(w, QStringLiteral(FSC_FIXTURE_DIR "/good/constants.onnx"),
                             QSize(1000, 700)));
        QVERIFY(showStepAndWait(w, 0));
        QVERIFY(QTest::qWaitFor(
            [&] {
                return w.canvas()->shownGraph() == w.canvas()->graph() && !w.canvas()->layingOut();
            },
            20000));
        auto nodeBoxes = [&] {
            int n = 0;
            for (const auto& box : w.canvas()->canvasLayout().boxes) n += box.node.valid();
            return n;
        };
        QCOMPARE(nodeBoxes(), 1);  // the Add
        w.findChild<QAction*>(QStringLiteral("constantsAction"))->trigger();
        QVERIFY(
            QTest::qWaitFor([&] { return !w.canvas()->layingOut() && nodeBoxes() == 4; }, 20000));
        w.findChild<QAction*>(QStringLiteral("constantsAction"))->trigger();
        QVERIFY(
            QTest::qWaitFor([&] { return !w.canvas()->layingOut() && nodeBoxes() == 1; }, 20000));
    }

    void minimapClickCentresTheView() {
        MainWindow w;
        QVERIFY(openCompiled(w, QString::fromLatin1(MainWindow::kSamplePath), QSize(1200, 800)));
        ViewTransform zoomed;
        zoomed.scale = 4;  // far larger than the window: the minimap shows
        w.canvas()->setTransform(zoomed);
        const QSize size = w.canvas()->size();
        const double fromW = std::min(180.0, size.width() * 0.25),
                     fromH = std::min(140.0, size.height() * 0.3);
        const QPoint centre(int(size.width() - 10 - fromW / 2),
                            int(size.height() - 10 - fromH / 2));
        QTest::mouseClick(w.canvas(), Qt::LeftButton, {}, centre);
        // The middle of the minimap is the middle of the graph, now in the middle of the view.
        const ViewTransform& t = w.canvas()->transform();
        const CanvasLayout& layout = w.canvas()->canvasLayout();
        QVERIFY(std::abs(t.toSceneX(size.width() / 2.0) - layout.width / 2) <
                layout.width * 0.05 + 5);
        QVERIFY(std::abs(t.toSceneY(size.height() / 2.0) - layout.height / 2) <
                layout.height * 0.05 + 5);
        QVERIFY(!w.canvas()->selectedNode().valid());  // the click selected nothing behind it
    }

    void compilingFillsThePassListAndShowsEachStep() {
        MainWindow w;
        QSignalSpy compiled(&w, &MainWindow::compiled);
        QSignalSpy laidOut(w.canvas(), &GraphCanvas::laidOut);
        w.openModel(QString::fromLatin1(MainWindow::kSamplePath));
        QVERIFY(compiled.wait(30000));
        QCOMPARE(compiled.at(0).at(0).toString(), QStringLiteral("O2"));
        const int rows = w.passList()->rowCount();
        QCOMPARE(rows, int(w.passList()->trace()->passes.size()) + 1);
        QVERIFY(laidOut.wait(20000) || !laidOut.isEmpty());
        QTRY_COMPARE_WITH_TIMEOUT(int(w.canvas()->graph()->nodeCount()),
                                  int(w.passList()->trace()->passes.back().nodesAfter), 20000);
        QVERIFY(showStepAndWait(w, 0));  // back to the imported graph
        QTRY_COMPARE_WITH_TIMEOUT(int(w.canvas()->graph()->nodeCount()), 42, 20000);
        QAbstractItemModelTester tester(w.passList(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
    }

    // Help > Walkthrough: every chapter computed on the model shown (the sample, then a model
    // with control flow), its charts drawn, chapter 4's button picking the fused node on the
    // canvas, and the export writing the same chapters as the handout page.
    void theWalkthroughOpensEveryChapterAndExports() {
        MainWindow w;
        QVERIFY(openCompiled(w, QString::fromLatin1(MainWindow::kSamplePath), {1400, 900}));
        WalkthroughDock* dock = w.walkthrough();
        QSignalSpy shown(dock, &WalkthroughDock::chapterShown);
        for (int id = 1; id <= 10; ++id) {
            shown.clear();
            w.showWalkthrough(id);
            QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), 60000);  // a kept chapter is shown at once
            QCOMPARE(shown.last().at(0).toInt(), id);
            QVERIFY2(shown.last().at(1).toBool(), qPrintable(QStringLiteral("chapter %1").arg(id)));
            const QString title = QString::fromUtf8(walkthroughContents()[size_t(id - 1)].title);
            QVERIFY2(dock->page()->toPlainText().contains(title), qPrintable(title));
            QVERIFY(dock->page()->toPlainText().contains(QStringLiteral("This model")));
        }
        QVERIFY(w.findChild<QDockWidget*>(QStringLiteral("walkthroughDock"))->isVisible());
        // Chapter 9's chart is a picture the page shows, not SVG text.
        const QImage chart = dock->page()->document()->resource(QTextDocument::ImageResource,
                                                                QUrl(QStringLiteral("walkthrough-chart:9/0"))).value<QImage>();
        QVERIFY(chart.width() > 100 && chart.height() > 20);

        // Chapter 4's button shows its slowest group's fused node, selected on the compiled graph.
        w.showWalkthrough(4);
        QVERIFY(dock->actionButton()->isVisible());
        QVERIFY(showStepAndWait(w, 0));  // the button must bring the compiled step back
        dock->actionButton()->click();
        QTRY_VERIFY_WITH_TIMEOUT(w.session().step() == w.session().stepCount() - 1 && w.selection().node().valid(), 20000);
        const Graph* graph = w.canvas()->shownGraph();
        QCOMPARE(QString::fromStdString(graph->node(w.selection().node()).domain), QStringLiteral("ai.fusescope"));

        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("walk.html"));
        QSignalSpy exported(dock, &WalkthroughDock::exported);
        dock->exportHtml(path);
        QVERIFY(exported.wait(60000));
        QVERIFY2(exported.at(0).at(0).toBool(), qPrintable(exported.at(0).at(1).toString()));
        const QString page = QString::fromUtf8(readFile(path));
        QCOMPARE(page.count(QStringLiteral("<h2 id=\"chapter-")), 10);

        // A model with control flow: every chapter computes or says why it does not apply.
        QVERIFY(openCompiled(w, QStringLiteral(FSC_FIXTURE_DIR "/good/nested.onnx"), {1400, 900}));
        for (int id = 1; id <= 10; ++id) {
            shown.clear();
            w.showWalkthrough(id);
            QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), 60000);  // a kept chapter is shown at once
            QVERIFY2(shown.last().at(1).toBool(), qPrintable(QStringLiteral("nested.onnx chapter %1").arg(id)));
        }
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
        QCOMPARE(int(w.model()->graph->nodeCount()), 42);
        QVERIFY(!w.loading());
    }

    // A model larger than the memory left: the 2.4 GB of the huge fixture's weights under an
    // address-space limit 1 GB above what the process uses. A dialog says so, the model shown
    // stays, and a run of it still works.
    void aModelTooLargeForMemoryKeepsTheSession() {
#if defined(__SANITIZE_ADDRESS__)
        QSKIP("ASan reserves the address space the limit would count");
#endif
        MainWindow w;
        QVERIFY(openCompiled(w, QString::fromLatin1(MainWindow::kSamplePath), QSize(1200, 800)));
        const Model* before = w.model();
        QSignalSpy failed(&w, &MainWindow::loadFailed);
        rlimit old{};
        QVERIFY(getrlimit(RLIMIT_AS, &old) == 0);
        long pages = 0;
        QFile statm(QStringLiteral("/proc/self/statm"));
        QVERIFY(statm.open(QIODevice::ReadOnly));
        pages = statm.readAll().split(' ').value(0).toLong();
        const rlim_t used = rlim_t(pages) * rlim_t(sysconf(_SC_PAGESIZE));
        rlimit tight{used + (rlim_t(1) << 30), old.rlim_max};
        QVERIFY(setrlimit(RLIMIT_AS, &tight) == 0);
        w.openModel(QString::fromStdString(test::fixture("good/huge/model.onnx").string()));
        const bool reported = failed.wait(120000);
        setrlimit(RLIMIT_AS, &old);  // before anything that may return early
        QVERIFY(reported);
        const QString message = failed.at(0).at(0).toString();
        QVERIFY2(message.contains(QStringLiteral("out of memory")) && message.contains(QStringLiteral("huge")),
                 qPrintable(message));
        QVERIFY(!message.contains(QLatin1Char('\n')));
        QVERIFY(w.findChild<QMessageBox*>());
        QCOMPARE(w.model(), before);
        QVERIFY(!w.loading());
        w.runPanel()->setIterations(2);
        QSignalSpy finished(&w, &MainWindow::runFinished);
        w.runs()->runShownGraph();
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.first().first().toBool(), true);
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
        QCOMPARE(int(w.model()->graph->nodeCount()), 42);
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
