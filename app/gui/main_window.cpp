#include "app/gui/main_window.h"

#include "app/gui/compile_controller.h"
#include "app/gui/dock_layout.h"
#include "app/gui/find_bar.h"
#include "app/gui/main_menus.h"
#include "app/gui/palette.h"
#include "app/gui/passes_panel.h"
#include "app/gui/subgraph_trail.h"
#include "app/gui/walkthrough_guide.h"
#include "app/gui/run_controller.h"
#include "app/gui/ablation_controller.h"
#include "app/gui/bisect_controller.h"
#include "app/gui/sensitivity_controller.h"
#include "app/gui/walkthrough_dock.h"

#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTableView>
#include <QThread>
#include <QToolBar>
#include <QTreeView>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "app/gui/about_dialog.h"
#include "app/gui/model_loader.h"
#include "compiler/runtime/large_block_cache.h"
#include "core/units.h"
#include "core/model_summary.h"
#include "views/changes_panel.h"
#include "views/custom_pipeline_dialog.h"
#include "views/graph_breaks_panel.h"
#include "views/graph_canvas.h"
#include "views/memory_view.h"
#include "views/node_properties_view.h"
#include "views/node_search.h"
#include "views/node_table_model.h"
#include "views/node_table_view.h"
#include "views/pass_list_model.h"
#include "views/roofline_view.h"
#include "views/run_panel.h"
#include "views/scope_outline_view.h"
#include "views/sensitivity_panel.h"
#include "views/status_line.h"
#include "views/summary_view.h"
#include "views/timeline_view.h"
#include "views/work_indicator.h"
#include "views/compact_rows.h"

// The sample model is compiled into this static library; its resources must be
// registered by hand or the linker drops them.
static void initFusescopeResources() {
    Q_INIT_RESOURCE(resources);
}

namespace fsc {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      m_nodeView(new NodeTableView(this)),
      m_nodeTable(m_nodeView->nodes()),
      m_summary(new SummaryView(this)),
      m_status(new StatusLine(this)),
      m_work(new WorkIndicator(m_jobs, this)) {
    m_canvas = new GraphCanvas(m_jobs, this);
    m_findBar = new FindBar(*m_canvas, this);
    m_before = new GraphCanvas(m_jobs, this);
    m_docks = new DockLayout(*this, *m_canvas, *m_before);
    m_passes = new PassesPanel(m_selection, this);
    m_properties = new NodePropertiesView(m_jobs, this);
    m_properties->setKernelSource([](const Graph& graph, NodeId node) -> Result<GeneratedKernelText> {
        auto kernel = Session::generatedKernel(graph, node);
        if (!kernel) return kernel.status();
        return GeneratedKernelText{kernel->first, kernel->second};
    });
    m_breaks = new GraphBreaksPanel(this);
    m_changes = new ChangesPanel(this);
    m_runPanel = new RunPanel(this);
    m_timeline = new TimelineView(this);
    m_memory = new MemoryView(this);
    m_rooflineView = new RooflineView(this);
    m_log = new QPlainTextEdit(this);
    initFusescopeResources();
    setWindowTitle(tr("Fusescope"));
    setAcceptDrops(true);

    auto* panes = new QSplitter(this);
    panes->addWidget(m_before);
    panes->addWidget(m_canvas);
    m_before->hide();
    setCentralWidget(panes);
    connect(m_canvas, &GraphCanvas::viewChanged, m_before, &GraphCanvas::setTransform);
    connect(m_before, &GraphCanvas::viewChanged, m_canvas, &GraphCanvas::setTransform);
    // Every view publishes what its user picks to the selection and follows it; the window
    // only adds what needs the session (a node's kernels in the run) or the window's state
    // (leaving an If/Loop/Scan body to show a node of the step's graph).
    m_canvas->setSelection(&m_selection);
    m_before->setSelection(&m_selection);
    m_properties->setSelection(&m_selection);
    connect(&m_selection, &Selection::nodeSelected, this, &MainWindow::followSelection);
    connect(&m_selection, &Selection::stepSelected, this, [this](int step) {
        if (!m_showingStep) startStep(step);
    });
    connect(&m_selection, &Selection::runNodeElsewhere, this, [this] {
        m_status->setText(tr("That run's graph is not the one shown: show the step that ran to find its nodes"));
    });
    connect(m_canvas, &GraphCanvas::laidOut, this, [this](double ms, int groups) {
        m_status->setText(m_shownText +
                          tr(" · layout %1 ms (%2 groups)").arg(ms, 0, 'f', 1).arg(groups));
    });
    m_trail = new SubgraphTrail(*m_canvas, *m_nodeTable, this);
    connect(m_canvas, &GraphCanvas::nodeActivated, m_trail, [this](NodeId node) { m_trail->enter(node); });
    connect(m_trail, &SubgraphTrail::logged, this, &MainWindow::log);
    connect(m_trail, &SubgraphTrail::backToStep, this, &MainWindow::showStepGraph);
    addToolBar(Qt::TopToolBarArea, m_trail);
    insertToolBarBreak(m_trail);
    createDocks();

    statusBar()->addWidget(m_status, 1);
    statusBar()->addPermanentWidget(m_work);

    createActions();
    m_docks->keepDefaultAndRestore();
    if (darkPaletteChosen()) applyPalette(true);
}

QDockWidget* MainWindow::addDock(const QString& title, const QString& name, QWidget* widget,
                                 Qt::DockWidgetArea area, bool shrinkable) {
    auto* dock = new QDockWidget(title, this);
    dock->setObjectName(name);  // saveState() keys docks by name
    if (shrinkable) {
        // Charts and panels want 130-220 pixels of height; in a scroll area the tab strip
        // below the canvas can start shorter than that and scroll instead.
        auto* scroll = new QScrollArea(dock);
        scroll->setWidget(widget);
        scroll->setWidgetResizable(true);
        scroll->setFrameShape(QFrame::NoFrame);
        widget = scroll;
    }
    dock->setWidget(widget);
    addDockWidget(area, dock);
    return dock;
}

void MainWindow::createDocks() {
    QDockWidget* summary =
        addDock(tr("Model"), QStringLiteral("summaryDock"), m_summary, Qt::LeftDockWidgetArea);
    m_outline = new ScopeOutlineView(*m_canvas, this);
    QDockWidget* outline =
        addDock(tr("Outline"), QStringLiteral("outlineDock"), m_outline, Qt::LeftDockWidgetArea);
    tabifyDockWidget(summary, outline);
    // Properties share the left column with the summary and come forward on a selection.
    QDockWidget* properties = addDock(tr("Properties"), QStringLiteral("propertiesDock"),
                                      m_properties, Qt::LeftDockWidgetArea);
    tabifyDockWidget(outline, properties);
    summary->raise();

    // The left column: the passes and the outline as tabs above, the model and the
    // properties below; two tabs each, so their titles fit a laptop's narrow column.
    QDockWidget* passes = addDock(tr("Passes"), QStringLiteral("passDock"), m_passes, Qt::LeftDockWidgetArea);
    splitDockWidget(passes, summary, Qt::Vertical);  // takes the summary out of its tabs: put them back
    tabifyDockWidget(passes, outline);
    tabifyDockWidget(summary, properties);
    passes->raise();
    summary->raise();
    m_compiles = new CompileController(m_jobs, m_session, this);
    connect(m_passes, &PassesPanel::pipelineChosen, m_compiles, &CompileController::compileWith);
    connect(m_passes, &PassesPanel::compareBaseRequested, this, &MainWindow::setCompareBase);
    connect(m_compiles, &CompileController::compiledReady, this, &MainWindow::showCompiled);
    connect(m_compiles, &CompileController::customChosen, this,
            [this] { m_passes->showPipeline(CompileController::kCustomPipeline); });
    connect(m_compiles, &CompileController::logged, this, &MainWindow::log);
    connect(m_compiles, &CompileController::statusMessage, m_status, &StatusLine::setText);

    // Bottom: nodes, graph breaks, changes, run, log as tabs.
    QDockWidget* nodes =
        addDock(tr("Nodes"), QStringLiteral("nodesDock"), m_nodeView, Qt::BottomDockWidgetArea);
    m_nodeView->setSelection(&m_selection);
    QDockWidget* breaks = addDock(tr("Graph breaks"), QStringLiteral("breaksDock"), m_breaks,
                                  Qt::BottomDockWidgetArea);
    m_breaks->setSelection(&m_selection);
    connect(m_breaks, &GraphBreaksPanel::titleChanged, breaks, &QDockWidget::setWindowTitle);
    QDockWidget* changes =
        addDock(tr("Changes"), QStringLiteral("changesDock"), m_changes, Qt::BottomDockWidgetArea);
    m_changes->setSelection(&m_selection);
    connect(m_changes, &ChangesPanel::titleChanged, changes, &QDockWidget::setWindowTitle);
    QDockWidget* run =
        addDock(tr("Run"), QStringLiteral("runDock"), m_runPanel, Qt::BottomDockWidgetArea, true);
    m_runs = new RunController(m_jobs, m_session, m_selection, *m_runPanel, this);
    connect(m_runPanel, &RunPanel::runRequested, m_runs, &RunController::runShownGraph);
    connect(m_runs, &RunController::runShown, this, &MainWindow::showRunTrace);
    // The Run dock's backend is the compile's target: the graph shown is the one a run times.
    connect(m_runPanel, &RunPanel::backendChosen, this, [this](bool cuda) {
        const Backend before = m_compiles->target().backend;
        m_compiles->setTarget(m_runs->chooseBackend(cuda));
        if (m_compiles->target().backend != before) m_compiles->compileWith(m_passes->pipeline());
    });
    connect(this, &MainWindow::compiled, m_runs, &RunController::runIfWaiting);
    connect(m_runs, &RunController::simulated, this, [this](std::shared_ptr<const Trace> trace) {
        m_timeline->setTrace(std::move(trace));
        m_docks->raiseDock(QStringLiteral("timelineDock"));
    });
    connect(m_runs, &RunController::finished, this, &MainWindow::runFinished);
    connect(m_runs, &RunController::storeOpened, this, &MainWindow::runStoreOpened);
    connect(m_runs, &RunController::logged, this, &MainWindow::log);
    connect(m_runs, &RunController::statusMessage, m_status, &StatusLine::setText);
    m_runPanel->setSelection(&m_selection);
    QDockWidget* timeline = addDock(tr("Timeline"), QStringLiteral("timelineDock"), m_timeline,
                                    Qt::BottomDockWidgetArea, true);
    m_timeline->setSelection(&m_selection);
    QDockWidget* roofline = addDock(tr("Roofline"), QStringLiteral("rooflineDock"), m_rooflineView,
                                    Qt::BottomDockWidgetArea, true);
    m_rooflineView->setSelection(&m_selection);
    QDockWidget* memory =
        addDock(tr("Memory"), QStringLiteral("memoryDock"), m_memory, Qt::BottomDockWidgetArea, true);
    m_memory->setSelection(&m_selection);
    m_sensitivity = new SensitivityPanel(this);
    QDockWidget* sensitivity = addDock(tr("INT8 sensitivity"), QStringLiteral("sensitivityDock"),
                                       m_sensitivity, Qt::BottomDockWidgetArea, true);
    m_sensitivityController = new SensitivityController(m_jobs, *m_sensitivity, this);
    connect(m_sensitivity, &SensitivityPanel::measureRequested, this,
            [this] { m_sensitivityController->measure(m_session); });
    connect(m_sensitivityController, &SensitivityController::logged, this, &MainWindow::log);
    connect(m_sensitivityController, &SensitivityController::statusMessage, m_status, &StatusLine::setText);
    m_ablation = new AblationController(m_jobs, *m_passes->model(), this);
    connect(m_ablation, &AblationController::logged, this, &MainWindow::log);
    connect(m_ablation, &AblationController::statusMessage, m_status, &StatusLine::setText);
    m_bisect = new BisectController(m_jobs, this);
    connect(m_bisect, &BisectController::logged, this, &MainWindow::log);
    connect(m_bisect, &BisectController::statusMessage, m_status, &StatusLine::setText);
    connect(m_bisect, &BisectController::finished, this, [this](std::shared_ptr<const BisectReport> report) {
        m_bisection = std::move(report);
        m_overlay = Overlay::Bisection;
        showBisection();
    });
    QDockWidget* variants = addVariantsDock();
    m_sensitivity->setSelection(&m_selection);
    connect(m_sensitivity, &SensitivityPanel::nodeMissing, this, [this](const QString& name) {
        m_status->setText(tr("'%1' is not in the graph shown (it was measured on another step)").arg(name));
    });
    m_log->setReadOnly(true);
    m_log->setMaximumBlockCount(5000);
    QDockWidget* logDock =
        addDock(tr("Log"), QStringLiteral("logDock"), m_log, Qt::BottomDockWidgetArea);
    tabifyDockWidget(nodes, breaks);
    tabifyDockWidget(breaks, changes);
    tabifyDockWidget(changes, run);
    tabifyDockWidget(run, timeline);
    tabifyDockWidget(timeline, memory);
    tabifyDockWidget(memory, roofline);
    tabifyDockWidget(memory, logDock);
    tabifyDockWidget(roofline, sensitivity);
    tabifyDockWidget(sensitivity, variants);
    nodes->raise();

    // Help > Walkthrough: under the passes, which chapter 3 steps through; hidden until asked.
    m_walkthrough = new WalkthroughDock(m_jobs, this);
    QDockWidget* walkthrough = addDock(tr("Walkthrough"), QStringLiteral("walkthroughDock"), m_walkthrough,
                                       Qt::RightDockWidgetArea);
    walkthrough->hide();
    m_guide = new WalkthroughGuide(*this, *m_walkthrough);
    connect(m_walkthrough, &WalkthroughDock::exported, this, [this](bool ok, const QString& message) {
        log(ok ? message : tr("error: %1").arg(message));
        m_status->setText(message);
        if (ok) return;
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Could not export the walkthrough"), message,
                                    QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    });
}

MainWindow::~MainWindow() {
    m_jobs.shutdown();  // every job's thread has ended before the views go
}

QTreeWidget* MainWindow::breaksList() const {
    return m_breaks;
}

QTreeWidget* MainWindow::changesList() const {
    return m_changes;
}

void MainWindow::createActions() {
    addToolBar(Qt::TopToolBarArea, m_findBar);

    m_menus = new MainMenus(*this);
}

void MainWindow::log(const QString& line) {
    m_log->appendPlainText(QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss  ")) +
                           line);
}

PassListModel* MainWindow::passList() const { return m_passes->model(); }

QString MainWindow::logText() const {
    return m_log->toPlainText();
}

void MainWindow::ablatePasses() {
    m_ablation->ablate(m_session);
}

void MainWindow::bisectNumerics(const QString& candidate) {
    m_bisect->bisect(m_session, candidate);
}

void MainWindow::cancelWork() {
    m_work->cancelAll();
}

bool MainWindow::loading() const {
    return m_jobs.busy(this, kLoadJob);
}

void MainWindow::setDarkPalette(bool dark) { applyPalette(dark); }

void MainWindow::showEvent(QShowEvent* event) {
    QMainWindow::showEvent(event);
    m_docks->shown();
}

void MainWindow::closeEvent(QCloseEvent* event) {
    m_docks->save();
    QMainWindow::closeEvent(event);
}

void MainWindow::openModel(const QString& path) {
    if (loading()) return;
    m_status->setText(tr("Loading %1…").arg(path));
    log(m_status->text());
    JobRunner::Options options;
    options.dropOnCancel = true;  // parsing cannot stop midway: a new file may open at once
    options.onDropped = [this, path] {
        m_status->setText(tr("Loading %1 cancelled").arg(path));
        log(m_status->text());
    };
    m_jobs.start(
        this, kLoadJob, tr("Loading"), [path](const JobRunner::Control&) { return loadModelFile(path); },
        [this, path](Result<Model> model) {
            if (!model) return showError(QString::fromStdString(model.status().message()));
            showModel(std::make_shared<const Model>(std::move(*model)), path);
        },
        options);
}

void MainWindow::cancelLoading() {
    m_jobs.cancel(this, kLoadJob);
}

void MainWindow::showModel(std::shared_ptr<const Model> model, const QString& path) {
    m_canvas->clearHeat();
    m_runPanel->clearTimes(tr("No run yet: Run times every node of the graph shown."));
    m_session.setModel(model);  // a run shown before timed another model
    LargeBlockCache::releaseHeld();  // the blocks the last model's large tensors left
    m_jobs.discard(this, kStepJob);
    m_compiledPipeline = QString();
    const std::shared_ptr<const Graph> imported(model, model->graph.get());
    m_showingStep = true;  // no step until it compiles; until then the lists name the imported graph
    m_selection.selectStep(-1);
    m_showingStep = false;
    m_selection.setStepGraph(imported);
    m_selection.selectNode(nullptr, NodeId{});
    updateRunGraph();
    const ModelSummary summary = summarizeModel(*model);
    m_nodeTable->setGraph(std::shared_ptr<const Graph>(model, model->graph.get()));
    m_nodeView->resizeColumnsToContents();
    const int depth = m_initialDepth >= 0                  ? m_initialDepth
                      : model->graph->nodeCount() <= 300 ? (1 << 20)
                                                           : 1;
    m_canvas->setGraph(std::shared_ptr<const Graph>(model, model->graph.get()), depth);
    const QString shown = path == QLatin1String(kSamplePath) ? tr("bundled sample") : path;
    m_summary->showSummary(summary, shown);
    setWindowTitle(tr("%1 — Fusescope").arg(shown));
    m_shownText = tr("%1: %2 nodes, %3 parameters, IR %4")
                      .arg(shown)
                      .arg(QString::fromStdString(groupedDigits(uint64_t(summary.totalNodeCount))))
                      .arg(QString::fromStdString(groupedDigits(uint64_t(summary.parameterCount))))
                      .arg(summary.irVersion);
    m_status->setText(m_shownText);
    log(tr("Opened %1").arg(m_shownText));
    for (const std::string& warning : model->warnings)
        log(tr("import note: %1").arg(QString::fromStdString(warning)));
    m_passes->setTrace(nullptr);
    m_properties->setOpsets(model->opsetImports);
    m_compiles->compileWith(m_passes->pipeline());
    emit modelShown(path);
}

void MainWindow::showError(const QString& message) {
    m_status->setText(tr("Could not open the model"));
    log(tr("error: %1").arg(message));
    // Window-modal and non-blocking: the session (and any model shown) stays usable.
    auto* box = new QMessageBox(QMessageBox::Critical, tr("Could not open the model"), message,
                                QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
    emit loadFailed(message);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const auto urls = event->mimeData()->urls();
    if (urls.isEmpty() || !urls.first().isLocalFile()) return;
    const QString path = urls.first().toLocalFile();
    if (path.endsWith(QLatin1String(".fsdb"), Qt::CaseInsensitive))
        m_runs->openRunStore(path);
    else
        openModel(path);
}

}  // namespace fsc
