#include "app/gui/main_menus.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QFileDialog>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QToolBar>

#include "app/gui/about_dialog.h"
#include "app/gui/dock_layout.h"
#include "app/gui/find_bar.h"
#include "app/gui/main_window.h"
#include "app/gui/palette.h"
#include "app/gui/run_controller.h"
#include "app/gui/walkthrough_dock.h"
#include "views/graph_canvas.h"
#include "views/run_panel.h"
#include "views/scope_tree.h"
#include "views/status_line.h"

namespace fsc {

namespace {

const QString kRecentKey = QStringLiteral("files/recent");

}  // namespace

QStringList recentFiles() { return QSettings().value(kRecentKey).toStringList(); }

MainMenus::MainMenus(MainWindow& w) : QObject(&w), m_window(w) {
    QMenu* file = w.menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(tr("&Open model…"), &w, [&w] {
        const QString path = QFileDialog::getOpenFileName(
            &w, tr("Open ONNX model"), {}, tr("ONNX models (*.onnx);;All files (*)"));
        if (!path.isEmpty()) w.openModel(path);
    });
    open->setShortcut(QKeySequence::Open);
    file->addAction(tr("Open &sample"), &w,
                    [&w] { w.openModel(QString::fromLatin1(MainWindow::kSamplePath)); });
    file->addAction(tr("Open run s&tore (.fsdb)…"), w.runs(), &RunController::chooseRunStore);
    m_recent = file->addMenu(tr("Open &recent"));
    rebuildRecent();
    file->addSeparator();
    auto exportTo = [&w](bool whole) {
        const QString path = QFileDialog::getSaveFileName(
            &w, whole ? tr("Export the whole graph") : tr("Export the view"), {},
            tr("PNG image (*.png);;SVG drawing (*.svg)"));
        if (path.isEmpty()) return;
        const QString error = w.canvas()->exportImage(path, whole);
        if (!error.isEmpty()) {
            w.log(tr("error: %1").arg(error));
            auto* box = new QMessageBox(QMessageBox::Warning, tr("Could not export"), error,
                                        QMessageBox::Ok, &w);
            box->setAttribute(Qt::WA_DeleteOnClose);
            box->open();
        } else {
            w.statusLine()->setText(tr("Saved %1").arg(path));
            w.log(w.statusLine()->text());
        }
    };
    file->addAction(tr("Export &view as PNG/SVG…"), &w, [exportTo] { exportTo(false); });
    file->addAction(tr("Export walkt&hrough as HTML…"), &w, [&w] {
        const QString path = QFileDialog::getSaveFileName(&w, tr("Export the walkthrough"), {}, tr("HTML page (*.html)"));
        if (!path.isEmpty()) w.walkthrough()->exportHtml(path);
    });
    file->addAction(tr("Export &whole graph as PNG/SVG…"), &w, [exportTo] { exportTo(true); });
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), qApp, &QApplication::quit);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* edit = w.menuBar()->addMenu(tr("&Edit"));
    edit->addAction(tr("&Find…"), w.findBar(), &FindBar::open)->setShortcut(QKeySequence::Find);

    QMenu* view = w.menuBar()->addMenu(tr("&View"));
    view->addAction(tr("&Fit to window"), w.canvas(), &GraphCanvas::fitToView);
    QAction* graphOnly = view->addAction(tr("&Graph only"), w.docks(), &DockLayout::setGraphOnly);
    graphOnly->setObjectName(QStringLiteral("graphOnlyAction"));
    graphOnly->setCheckable(true);
    graphOnly->setShortcut(QKeySequence(Qt::Key_F11));
    graphOnly->setToolTip(tr("Hide every dock, so the graph (or both panes of a comparison) takes the window"));
    QAction* reset = view->addAction(tr("&Reset layout"), w.docks(), &DockLayout::reset);
    reset->setObjectName(QStringLiteral("resetLayoutAction"));
    reset->setToolTip(tr("The docks where they start: passes and properties on the left, tables below, small"));
    QAction* dark = view->addAction(tr("&Dark palette"), &w, [](bool on) { applyPalette(on); });
    dark->setCheckable(true);
    dark->setChecked(darkPaletteChosen());
    QAction* constants = view->addAction(tr("Show &constants"), &w, [&w](bool on) {
        w.canvas()->setShowConstants(on);
        w.beforeCanvas()->setShowConstants(on);
    });
    constants->setCheckable(true);
    constants->setObjectName(QStringLiteral("constantsAction"));
    constants->setToolTip(tr("Constant nodes and Identities of weights, hidden by default"));
    QAction* compare =
        view->addAction(tr("Co&mpare with the step before"), &w, &MainWindow::setCompare);
    compare->setCheckable(true);
    compare->setObjectName(QStringLiteral("compareAction"));
    compare->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_D));
    QAction* without = view->addAction(tr("Compare with the compile &without the selected pass"), &w,
                                       &MainWindow::setCompareWithout);
    without->setCheckable(true);
    without->setObjectName(QStringLiteral("compareWithoutAction"));
    without->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_D));
    without->setToolTip(tr("The full compile on the right; on the left, the compile without the pass selected in "
                           "the Passes list (every step of it, as ablation leaves it out)"));
    w.docks()->addPaneNavigation(view);
    view->addSeparator();
    auto expandTo = [&w](int depth) {
        if (w.canvas()->scopeTree())
            w.canvas()->setExpanded(expandedToDepth(*w.canvas()->scopeTree(), depth));
    };
    view->addAction(tr("Co&llapse all"), &w, [expandTo] { expandTo(0); });
    for (int depth = 1; depth <= 4; ++depth)
        view->addAction(tr("Expand to depth &%1").arg(depth), &w,
                        [expandTo, depth] { expandTo(depth); })
            ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_0 + depth)));
    view->addAction(tr("&Expand all"), &w, [expandTo] { expandTo(1 << 20); })
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    QAction* precision = view->addAction(tr("Colour by &precision"), &w, [&w](bool on) {
        const auto colouring =
            on ? GraphCanvas::Colouring::Precision : GraphCanvas::Colouring::OpCategory;
        w.canvas()->setColouring(colouring);
        w.beforeCanvas()->setColouring(colouring);
    });
    precision->setCheckable(true);
    precision->setObjectName(QStringLiteral("precisionAction"));
    precision->setToolTip(
        tr("Fill nodes by the precision they compute in (int8, float16, bfloat16, float32) instead "
           "of op category"));
    view->addSeparator();
    QAction* heat = view->addAction(tr("Run &heat overlay"), &w, [&w] { w.applyRunHeat(); });
    heat->setCheckable(true);
    heat->setChecked(true);
    heat->setObjectName(QStringLiteral("heatAction"));
    heat->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_H));
    QMenu* heatShows = view->addMenu(tr("Heat &shows"));
    auto* heatUnits = new QActionGroup(&w);
    int number = 0;
    for (HeatUnit unit : {HeatUnit::Share, HeatUnit::Milliseconds, HeatUnit::BytesPerSecond,
                          HeatUnit::FlopsPerSecond}) {
        QAction* a = heatShows->addAction(QStringLiteral("&%1  %2").arg(++number).arg(tr(heatTitle(unit))), &w,
                                          [&w, unit] { w.setHeatUnit(unit); });
        a->setCheckable(true);
        a->setChecked(unit == w.heatUnit());
        a->setData(int(unit));
        heatUnits->addAction(a);
    }

    QMenu* runMenu = w.menuBar()->addMenu(tr("&Run"));
    QAction* run = runMenu->addAction(tr("&Run the graph shown"), w.runs(), &RunController::runShownGraph);
    run->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    run->setToolTip(tr("On the CPU or the CUDA GPU, as chosen in the Run dock"));
    QAction* runCpu = runMenu->addAction(tr("Run on the &CPU"), &w, [&w] {
        w.runPanel()->setCudaSelected(false);
        w.runs()->runShownGraph();
    });
    runCpu->setObjectName(QStringLiteral("runCpuAction"));
    QAction* runGpu = runMenu->addAction(tr("Run on the CUDA &GPU"), &w, [&w] {
        w.runPanel()->setCudaSelected(true);
        w.runs()->runShownGraph();
    });
    runGpu->setObjectName(QStringLiteral("runGpuAction"));
    runGpu->setToolTip(tr(
        "What the CUDA capability table claims runs on the first GPU, timed by CUPTI; the rest on "
        "the CPU with explicit copies. Without a usable GPU the run goes to the CPU and says "
        "why."));
    QAction* simulate = runMenu->addAction(tr("&Simulate the partitioned graph on its devices"),
                                           &w, [&w] { w.runs()->simulate(w.canvas()->shownGraph(), QStringLiteral("nvlink4")); });
    simulate->setObjectName(QStringLiteral("simulateAction"));
    simulate->setToolTip(
        tr("For a graph after tensor-parallel or pipeline-parallel: one Timeline lane per device, "
           "node "
           "times from the cost model, communication from an NVLink 4 model (simulated, not "
           "measured)"));
    QMenu* over = runMenu->addMenu(tr("Simulate &over"));
    for (const auto& [key, label] :
         {std::pair{"nvlink4", "&NVLink 4"}, std::pair{"pcie5", "&PCIe 5 x16"},
          std::pair{"ndr", "&InfiniBand NDR"}})
        over->addAction(tr(label), &w,
                        [&w, key = QString::fromLatin1(key)] { w.runs()->simulate(w.canvas()->shownGraph(), key); });
    QAction* ablate = runMenu->addAction(tr("&Ablate passes"), &w, &MainWindow::ablatePasses);
    ablate->setObjectName(QStringLiteral("ablateAction"));
    ablate->setToolTip(tr("Each pass of the compile shown left out in turn and timed against the full pipeline "
                          "(5 alternating rounds); the Passes list's Effect column says what each bought"));
    QMenu* bisect = runMenu->addMenu(tr("&Bisect numerics against the CPU in float32"));
    bisect->setToolTip(tr("Where the candidate's numbers leave the reference's: the graph heated by each group's "
                          "relative error, the first groups whose error jumps outlined"));
    for (const auto& [key, label] : {std::pair{"fp16", "&float16"}, std::pair{"bf16", "&bfloat16"}, std::pair{"int8", "&INT8"},
                                     std::pair{"target", "this &target in float32"}}) {
        QAction* a = bisect->addAction(tr(label), &w, [&w, key = QString::fromLatin1(key)] { w.bisectNumerics(key); });
        a->setObjectName(QStringLiteral("bisect_%1").arg(QString::fromLatin1(key)));
    }
    QAction* variants = runMenu->addAction(tr("Compare &variants node by node"), &w, &MainWindow::compareVariants);
    variants->setObjectName(QStringLiteral("compareVariantsAction"));
    variants->setToolTip(tr("The compile in float32 on the CPU, on its target and in float16, bfloat16 and INT8: "
                            "every ONNX node's time and error in the Variants dock, the graph heated by one of them"));
    runMenu->addAction(tr("Ca&ncel the work under way"), &w, &MainWindow::cancelWork);

    QMenu* help = w.menuBar()->addMenu(tr("&Help"));
    QAction* walk = help->addAction(tr("&Walkthrough: this model, from ONNX to kernels"), &w, [&w] { w.showWalkthrough(); });
    walk->setObjectName(QStringLiteral("walkthroughMenuAction"));
    QAction* about =
        help->addAction(tr("&About Fusescope"), &w, [&w] { showAboutDialog(&w); });
    about->setObjectName(QStringLiteral("aboutAction"));
    about->setMenuRole(QAction::AboutRole);

    QToolBar* tools = w.addToolBar(tr("Main"));
    tools->setObjectName(QStringLiteral("mainToolBar"));
    tools->addAction(open);
    tools->addAction(tr("Fit"), w.canvas(), &GraphCanvas::fitToView)
        ->setToolTip(tr("Fit the graph to the window (F)"));
    tools->addAction(compare);
    tools->addAction(run);
    tools->addAction(heat);
    for (QAction* a : tools->actions())
        if (!a->shortcut().isEmpty())
            a->setToolTip(QStringLiteral("%1 (%2)").arg(a->text().remove(QLatin1Char('&')),
                                                        a->shortcut().toString()));

    connect(&w, &MainWindow::modelShown, this, &MainMenus::remember);
}

void MainMenus::remember(const QString& path) {
    if (path.startsWith(QLatin1Char(':'))) return;  // the bundled sample has its own entry
    QStringList recent = recentFiles();
    recent.removeAll(path);
    recent.prepend(path);
    while (recent.size() > 10) recent.removeLast();
    QSettings().setValue(kRecentKey, recent);
    rebuildRecent();
}

void MainMenus::rebuildRecent() {
    m_recent->clear();
    const QStringList recent = recentFiles();
    // Numbered, so the keyboard picks one with its digit; a path's own '&' is kept as text.
    for (qsizetype i = 0; i < recent.size(); ++i) {
        const QString& path = recent[i];
        QString label = QString(path).replace(QLatin1Char('&'), QLatin1String("&&"));
        if (i < 9) label = QStringLiteral("&%1  %2").arg(i + 1).arg(label);
        m_recent->addAction(label, &m_window, [this, path] { m_window.openModel(path); });
    }
    m_recent->setEnabled(!recent.isEmpty());
}

}  // namespace fsc
