// fusescope: the desktop explorer. With no argument it opens the bundled sample model.
// A .fsdb argument opens that run store's run in the Run and Timeline docks.
// `--walkthrough [--chapter N]` opens the Walkthrough dock on that chapter once the model is compiled.
// `--screenshot FILE.png [--pass NAME] [--expand-depth N] [--compare] [--run] [--dock NAME] [--colour-by precision]
//  [--walkthrough [--chapter N]]`
// opens the model, compiles it, shows the graph after the pass (default: the last), with
// --run times it on the CPU for the heat overlay, saves the window and prints the timings as
// JSON, then exits: pictures for docs and tests, and the GUI's speed figures.
#include <QAction>
#include <QApplication>
#include <QCommandLineParser>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QIcon>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTimer>

#include <cstdio>
#include <cstring>
#include <memory>

#include "app/common/build_info.h"
#include "app/profiling/heap_reuse.h"
#include "app/profiling/openmp_waiting.h"
#include "app/gui/main_window.h"
#include "app/gui/dock_layout.h"
#include "app/gui/run_controller.h"
#include "views/graph_canvas.h"
#include "views/node_properties_view.h"
#include "views/pass_list_model.h"

namespace {

// Drives one screenshot run: import -> first frame (timed) -> compile -> the requested
// step shown and laid out -> saved -> everything expanded laid out (timed) -> JSON -> quit.
struct ScreenshotRun {
    QElapsedTimer timer;
    qint64 importedAt = 0;
    double importMs = 0, firstFrameMs = -1;
    int panesLaidOut = 0;  // graph panes showing their layout when the picture was taken
    enum class Stage { Loading, Compiling, Stepping, Showing, Running, Expanding } stage = Stage::Loading;
    int step = -1;  // the step asked for (--pass)
};

void runScreenshot(fsc::MainWindow& window, const QString& model, const QString& file, const QString& pass, bool timeIt,
                   const QString& select, const QString& dock, int chapter) {
    auto run = std::make_shared<ScreenshotRun>();
    auto fail = [](const QString& message, int code) {
        std::fprintf(stderr, "error: %s\n", message.toUtf8().constData());
        QCoreApplication::exit(code);
    };
    QObject::connect(&window, &fsc::MainWindow::loadFailed, [fail](const QString& message) { fail(message, 2); });
    QObject::connect(&window, &fsc::MainWindow::modelShown, [run] {
        run->importedAt = run->timer.nsecsElapsed();
        run->importMs = double(run->importedAt) / 1e6;
        run->stage = ScreenshotRun::Stage::Compiling;
    });
    QObject::connect(&window, &fsc::MainWindow::compiled, &window, [run, &window, pass, fail] {
        int row = window.passList()->rowCount() - 1;
        if (!pass.isEmpty()) {
            row = -1;
            QStringList names{QStringLiteral("imported")};
            for (int r = 0; r < window.passList()->rowCount(); ++r) {
                const QString name = r == 0 ? QStringLiteral("imported")
                                            : QString::fromStdString(window.passList()->trace()->passes[size_t(r - 1)].name);
                if (r > 0) names << name;
                if (row < 0 && name == pass) row = r;
            }
            if (row < 0) return fail(QStringLiteral("--pass %1: not in the pipeline (%2)").arg(pass, names.join(QStringLiteral(", "))), 64);
        }
        // compiled() comes with the last step shown and laying out: the next laidOut() is its.
        // Another step is made in the background first (stepShown() follows).
        run->step = row;
        run->stage = row == window.session().step() ? ScreenshotRun::Stage::Showing : ScreenshotRun::Stage::Stepping;
        if (run->stage == ScreenshotRun::Stage::Stepping) window.showStep(row);
    });
    QObject::connect(&window, &fsc::MainWindow::stepShown, &window, [run](int step) {
        if (run->stage == ScreenshotRun::Stage::Stepping && step == run->step) run->stage = ScreenshotRun::Stage::Showing;
    });
    QObject::connect(window.canvas(), &fsc::GraphCanvas::laidOut, &window, [run, &window, file, fail, timeIt](double layoutMs, int) {
        if (run->firstFrameMs < 0) {
            window.canvas()->repaint();  // the first frame, painted now
            run->firstFrameMs = double(run->timer.nsecsElapsed() - run->importedAt) / 1e6;
        }
        if (run->stage == ScreenshotRun::Stage::Showing) {
            run->stage = ScreenshotRun::Stage::Running;
            if (timeIt) window.runs()->runShownGraph();  // the shot follows runFinished
            else emit window.runFinished(true);
        } else if (run->stage == ScreenshotRun::Stage::Expanding) {
            const QJsonObject j{{QStringLiteral("screenshot"), file},
                                {QStringLiteral("nodes"), int(window.canvas()->graph()->nodeCount())},
                                {QStringLiteral("import_ms"), run->importMs},
                                {QStringLiteral("first_frame_ms"), run->firstFrameMs},
                                {QStringLiteral("full_layout_ms"), layoutMs},
                                {QStringLiteral("panes_laid_out"), run->panesLaidOut},
                                {QStringLiteral("step"), window.session().step()},
                                {QStringLiteral("run_step"), window.session().runStep()}};
            std::printf("%s\n", QJsonDocument(j).toJson(QJsonDocument::Compact).constData());
            QCoreApplication::exit(0);
        }
    });
    QObject::connect(&window, &fsc::MainWindow::runFinished, &window, [run, &window, file, fail, select, dock, chapter](bool ok) {
        if (run->stage != ScreenshotRun::Stage::Running) return;
        if (!ok) return fail(QStringLiteral("--run: the run stopped: %1").arg(window.runs()->lastError()), 2);
        if (!select.isEmpty()) {
            const fsc::Graph* graph = window.canvas()->shownGraph();
            fsc::NodeId found;
            for (fsc::NodeId id : graph->order())
                if (QString::fromStdString(graph->node(id).name) == select) found = id;
            if (!found.valid()) return fail(QStringLiteral("--select %1: no node of that name in the graph shown").arg(select), 64);
            window.canvas()->revealNode(found);
        }
        if (!dock.isEmpty()) {
            if (!window.docks()->raiseDock(dock + QStringLiteral("Dock")))
                return fail(QStringLiteral("--dock %1: no such dock (run, timeline, memory, roofline, log, nodes, breaks, changes, sensitivity, variants, summary, properties, outline)").arg(dock), 64);
        }
        if (chapter > 0) window.showWalkthrough(chapter);  // computed in the background
        // The picture waits for the background work still under way (graph breaks, the left
        // pane's layout with --compare, a selected node's weight statistics, a walkthrough
        // chapter), or 30 s (a chapter: 300 s).
        QEventLoop settled;
        QTimer poll;
        QObject::connect(&poll, &QTimer::timeout, &settled, [&] {
            if (!window.workPending()) settled.quit();
        });
        QTimer::singleShot(chapter > 0 ? 300000 : 30000, &settled, &QEventLoop::quit);
        poll.start(5);
        settled.exec();
        {
            // A dock grown by raiseDock and the scroll areas inside it settle over a few
            // passes of the event loop; a picture taken sooner shows them half-way.
            QEventLoop layoutSettles;
            QTimer::singleShot(50, &layoutSettles, &QEventLoop::quit);
            layoutSettles.exec();
        }
        int panes = 0;
        for (fsc::GraphCanvas* pane : {window.canvas(), window.beforeCanvas()}) {
            if (!pane->isVisible()) continue;
            if (pane->layingOut()) {
                QEventLoop laidOut;
                QObject::connect(pane, &fsc::GraphCanvas::laidOut, &laidOut, &QEventLoop::quit);
                QTimer::singleShot(30000, &laidOut, &QEventLoop::quit);
                laidOut.exec();
            }
            panes += pane->showsLayout() && !pane->layingOut();
            pane->repaint();
        }
        run->panesLaidOut = panes;
        if (!window.grab().save(file)) return fail(file + QStringLiteral(": cannot write the screenshot"), 2);
        run->stage = ScreenshotRun::Stage::Expanding;
        const fsc::ScopeTree* tree = window.canvas()->scopeTree();
        if (!tree) return fail(QStringLiteral("the graph changed while the screenshot was taken"), 2);
        window.canvas()->setExpanded(fsc::expandedToDepth(*tree, 1 << 20));
    });
    run->timer.start();
    window.openModel(model);
}

// Every option, described once for the parser that answers --help (with no display) and
// the one that starts the window.
void describeCommandLine(QCommandLineParser& parser) {
    parser.setApplicationDescription(QStringLiteral("Fusescope: ONNX graph explorer and profiler. Opens a model (or a .fsdb "
                                                    "run store), compiles it pass by pass and shows the graph after each."));
    parser.addHelpOption();
    parser.addOption({{QStringLiteral("v"), QStringLiteral("version")},
                      QStringLiteral("Print the version, the git commit and the libraries in use, then exit.")});
    parser.addPositionalArgument(QStringLiteral("model"),
                                 QStringLiteral("ONNX model or .fsdb run store to open (default: the bundled sample)"));
    parser.addOption({QStringLiteral("screenshot"),
                      QStringLiteral("Save the window as FILE.png once laid out, print timings as JSON, exit."),
                      QStringLiteral("FILE.png")});
    parser.addOption({QStringLiteral("expand-depth"), QStringLiteral("Expand groups to depth N when the model opens."),
                      QStringLiteral("N")});
    parser.addOption({QStringLiteral("pass"),
                      QStringLiteral("With --screenshot: show the graph after this pass (or 'imported')."), QStringLiteral("NAME")});
    parser.addOption({QStringLiteral("compare"), QStringLiteral("Show the step before the chosen one side by side.")});
    parser.addOption({QStringLiteral("run"),
                      QStringLiteral("With --screenshot: run the graph shown on the CPU first (heat overlay).")});
    parser.addOption({QStringLiteral("select"), QStringLiteral("With --screenshot: select this node (its properties shown)."),
                      QStringLiteral("NODE")});
    parser.addOption({QStringLiteral("dock"),
                      QStringLiteral("With --screenshot --run: bring this dock to the front (run, timeline, log, ...)."),
                      QStringLiteral("NAME")});
    parser.addOption({QStringLiteral("walkthrough"),
                      QStringLiteral("Open the Walkthrough dock (Help > Walkthrough) once the model is compiled.")});
    parser.addOption({QStringLiteral("chapter"), QStringLiteral("With --walkthrough: open this chapter (1 to 10; default 1)."),
                      QStringLiteral("N")});
    parser.addOption({QStringLiteral("colour-by"), QStringLiteral("Fill nodes by op 'category' (default) or 'precision'."),
                      QStringLiteral("WHAT")});
    parser.addOption({QStringLiteral("palette"),
                      QStringLiteral("Use the 'light' or 'dark' palette (as View > Dark palette; remembered)."),
                      QStringLiteral("NAME")});
}

void setApplicationNames() {
    QCoreApplication::setApplicationName(QStringLiteral("Fusescope"));
    QCoreApplication::setOrganizationName(QStringLiteral("Fusescope"));
    QCoreApplication::setApplicationVersion(QString::fromStdString(fsc::buildInfo().version));
}

bool asksForHelpOrVersion(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        for (const char* flag : {"-h", "--help", "-?", "--help-all", "-v", "--version"})
            if (std::strcmp(argv[i], flag) == 0) return true;
    return false;
}

int printVersion() {
    std::printf("%s\n%s, Qt %s\n", fsc::versionLine("fusescope").c_str(), fsc::librariesLine().c_str(), qVersion());
    return 0;
}

// Without a display Qt would abort while starting; say why instead, or draw offscreen when
// only a screenshot is wanted.
bool chooseDisplay(int argc, char** argv) {
    if (!qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") || !qEnvironmentVariableIsEmpty("DISPLAY") ||
        !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
        return true;
    for (int i = 1; i < argc; ++i)
        if (std::strncmp(argv[i], "--screenshot", 12) == 0) {
            qputenv("QT_QPA_PLATFORM", "offscreen");
            return true;
        }
    std::fprintf(stderr, "fusescope: no display to open a window on (DISPLAY and WAYLAND_DISPLAY are unset); run it in a "
                         "desktop session, use --screenshot FILE.png, or use fusescope-cli\n");
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    fsc::boundOpenMpSpinning(argv);
    fsc::keepFreedTensorsOnHeap();
    if (asksForHelpOrVersion(argc, argv)) {
        // Answered without a display: help2man, package builders and headless servers ask.
        QCoreApplication app(argc, argv);
        setApplicationNames();
        QCommandLineParser parser;
        describeCommandLine(parser);
        parser.process(app);  // prints --help and exits
        return printVersion();
    }
    if (!chooseDisplay(argc, argv)) return 2;
    QApplication app(argc, argv);
    setApplicationNames();
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/fusescope.svg")));
    QCommandLineParser parser;
    describeCommandLine(parser);
    parser.process(app);
    const QString depth = QStringLiteral("expand-depth"), colourBy = QStringLiteral("colour-by"),
                  compare = QStringLiteral("compare"), screenshot = QStringLiteral("screenshot");

    fsc::MainWindow window;
    if (parser.isSet(depth)) {
        bool ok = false;
        const int n = parser.value(depth).toInt(&ok);
        if (!ok || n < 0) {
            std::fprintf(stderr, "fusescope: --expand-depth needs a number >= 0\n");
            return 64;
        }
        window.setInitialExpandDepth(n);
    }
    if (parser.isSet(colourBy)) {
        const QString what = parser.value(colourBy);
        if (what != QLatin1String("category") && what != QLatin1String("precision")) {
            std::fprintf(stderr, "fusescope: --colour-by needs category or precision\n");
            return 64;
        }
        if (QAction* a = window.findChild<QAction*>(QStringLiteral("precisionAction")); a && what == QLatin1String("precision"))
            a->trigger();
    }
    if (parser.isSet(QStringLiteral("palette"))) {
        const QString palette = parser.value(QStringLiteral("palette"));
        if (palette != QLatin1String("light") && palette != QLatin1String("dark")) {
            std::fprintf(stderr, "fusescope: --palette needs light or dark\n");
            return 64;
        }
        window.setDarkPalette(palette == QLatin1String("dark"));
    }
    int chapter = 0;  // the walkthrough's, 0: not asked for
    if (parser.isSet(QStringLiteral("walkthrough")) || parser.isSet(QStringLiteral("chapter"))) {
        bool ok = true;
        chapter = parser.isSet(QStringLiteral("chapter")) ? parser.value(QStringLiteral("chapter")).toInt(&ok) : 1;
        if (!ok || chapter < 1 || chapter > 10) {
            std::fprintf(stderr, "fusescope: --chapter needs a number from 1 to 10\n");
            return 64;
        }
    }
    window.show();
    if (parser.isSet(compare)) window.setCompare(true);
    const QStringList args = parser.positionalArguments();
    const QString model = args.isEmpty() ? QString::fromLatin1(fsc::MainWindow::kSamplePath) : args.first();
    if (parser.isSet(screenshot))
        runScreenshot(window, model, parser.value(screenshot), parser.value(QStringLiteral("pass")),
                      parser.isSet(QStringLiteral("run")), parser.value(QStringLiteral("select")), parser.value(QStringLiteral("dock")),
                      chapter);
    else if (model.endsWith(QLatin1String(".fsdb"), Qt::CaseInsensitive)) window.runs()->openRunStore(model);
    else window.openModel(model);
    if (chapter > 0 && !parser.isSet(screenshot)) {
        auto once = std::make_shared<QMetaObject::Connection>();
        *once = QObject::connect(&window, &fsc::MainWindow::compiled, &window, [&window, once, chapter] {
            QObject::disconnect(*once);
            window.showWalkthrough(chapter);
        });
    }
    return app.exec();
}
