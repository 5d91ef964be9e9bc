#include "app/gui/main_window.h"

#include <QApplication>
#include <QCursor>
#include <QMenu>
#include <QListWidget>
#include <QCloseEvent>
#include <QComboBox>
#include <QSettings>
#include <QStyleFactory>
#include <QSplitter>
#include <QLineEdit>
#include <QToolBar>
#include <QTreeWidget>
#include <QThread>
#include <QVBoxLayout>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QStatusBar>
#include <QTableView>
#include <QToolButton>
#include <QPlainTextEdit>
#include <QDateTime>
#include <QPushButton>
#include <QSortFilterProxyModel>

#include "app/gui/graph_run.h"
#include "app/gui/model_loader.h"
#include "core/model_summary.h"
#include "compiler/fused_domain.h"
#include "compiler/graph_breaks.h"
#include "compiler/pipelines.h"
#include "views/changes_panel.h"
#include "views/custom_pipeline_dialog.h"
#include "views/graph_breaks_panel.h"
#include "views/graph_canvas.h"
#include "views/run_panel.h"
#include "views/run_table_model.h"
#include "views/node_properties_view.h"
#include "views/node_search.h"
#include "views/pass_list_model.h"
#include "views/node_table_model.h"
#include "views/summary_view.h"

// The sample model is compiled into this static library; its resources must be
// registered by hand or the linker drops them.
static void initFusescopeResources() {
    Q_INIT_RESOURCE(resources);
}

namespace fsc {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      m_loader(new ModelLoader(this)),
      m_nodeTable(new NodeTableModel(this)),
      m_nodeView(new QTableView(this)),
      m_summary(new SummaryView(this)),
      m_status(new QLabel(this)),
      m_progress(new QProgressBar(this)),
      m_cancel(new QToolButton(this)) {
    m_canvas = new GraphCanvas(this);
    m_before = new GraphCanvas(this);
    m_passes = new PassListModel(this);
    m_properties = new NodePropertiesView(this);
    m_passView = new QTableView(this);
    m_pipeline = new QComboBox(this);
    m_findBar = new QToolBar(tr("Find"), this);
    m_findField = new QLineEdit(this);
    m_findCount = new QLabel(this);
    m_breaks = new GraphBreaksPanel(this);
    m_changes = new ChangesPanel(this);
    m_runPanel = new RunPanel(this);
    m_log = new QPlainTextEdit(this);
    initFusescopeResources();
    setWindowTitle(tr("Fusescope"));
    setAcceptDrops(true);
    resize(1280, 800);

    auto* panes = new QSplitter(this);
    panes->addWidget(m_before);
    panes->addWidget(m_canvas);
    m_before->hide();
    setCentralWidget(panes);
    connect(m_canvas, &GraphCanvas::viewChanged, m_before, &GraphCanvas::setTransform);
    connect(m_before, &GraphCanvas::viewChanged, m_canvas, &GraphCanvas::setTransform);
    connect(m_before, &GraphCanvas::nodeSelected, this, [this](NodeId n) { linkSelection(m_before, m_canvas, n); });
    connect(m_canvas, &GraphCanvas::nodeSelected, this, [this](NodeId node) {
        m_properties->showNode(m_canvas->shownGraphShared(), node);
        if (m_compare) linkSelection(m_canvas, m_before, node);
        // The node table follows when it lists the same graph.
        const Graph* g = m_canvas->shownGraph();
        if (!node.valid() || !g || m_nodeTable->graph() != g) return;
        const auto& order = g->order();
        const auto at = std::find(order.begin(), order.end(), node);
        if (at != order.end()) m_nodeView->selectRow(int(at - order.begin()));
    });
    connect(m_canvas, &GraphCanvas::laidOut, this, [this](double ms, int groups) {
        m_status->setText(m_shownText + tr(" · layout %1 ms (%2 groups)").arg(ms, 0, 'f', 1).arg(groups));
    });
    connect(m_canvas, &GraphCanvas::busyChanged, this, [this](bool busy) {
        if (busy && m_layoutWork < 0) m_layoutWork = beginWork(tr("Laying out"), [this] { m_canvas->cancelLayout(); });
        if (!busy && m_layoutWork >= 0) {
            endWork(m_layoutWork);
            m_layoutWork = -1;
        }
    });
    connect(m_canvas, &GraphCanvas::nodeActivated, this, [this](NodeId node) { enterSubgraph(node); });
    m_crumbBar = new QToolBar(tr("Subgraph"), this);
    m_crumbBar->setObjectName(QStringLiteral("crumbBar"));
    m_crumbBar->setToolTip(tr("Where the canvas is: the step's graph, then the If/Loop/Scan bodies opened"));
    addToolBar(Qt::TopToolBarArea, m_crumbBar);
    insertToolBarBreak(m_crumbBar);
    m_crumbBar->hide();
    createDocks();

    m_progress->setMaximumWidth(220);
    m_progress->hide();
    statusBar()->addWidget(m_status, 1);
    m_cancel->setText(tr("Cancel"));
    m_cancel->setShortcut(Qt::Key_Escape);
    m_cancel->setToolTip(tr("Stop what is under way (Esc)"));
    m_cancel->hide();
    connect(m_cancel, &QToolButton::clicked, this, &MainWindow::cancelWork);
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancel);

    createActions();
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    if (settings.value(QStringLiteral("view/dark"), false).toBool()) setDarkPalette(true);
    connect(m_loader, &ModelLoader::loaded, this, &MainWindow::showModel);
    connect(m_loader, &ModelLoader::failed, this, &MainWindow::showError);
    connect(m_loader, &ModelLoader::cancelled, this, [this](const QString& path) {
        endWork(m_loadWork);
        m_status->setText(tr("Loading %1 cancelled").arg(path));
        log(m_status->text());
    });
}

QDockWidget* MainWindow::addDock(const QString& title, const QString& name, QWidget* widget, Qt::DockWidgetArea area) {
    auto* dock = new QDockWidget(title, this);
    dock->setObjectName(name);  // saveState() keys docks by name
    dock->setWidget(widget);
    addDockWidget(area, dock);
    return dock;
}

void MainWindow::reveal(NodeId node) {
    if (!m_subgraphs.empty()) {  // the lists name nodes of the step's graph: go back there first
        upTo(0);
        connect(m_canvas, &GraphCanvas::laidOut, this, [this, node] { reveal(node); }, Qt::SingleShotConnection);
        return;
    }
    if (m_canvas->shownGraph() && node.index < m_canvas->shownGraph()->nodeArenaSize()) m_canvas->revealNode(node);
}

bool MainWindow::enterSubgraph(NodeId node, const QString& attribute) {
    const Graph* graph = m_canvas->shownGraph();
    if (!graph || !node.valid() || node.index >= graph->nodeArenaSize()) return false;
    const Node& n = graph->node(node);
    std::vector<std::pair<QString, std::shared_ptr<const Graph>>> bodies;
    for (const Attribute& a : n.attributes) {
        if (a.g) bodies.push_back({QString::fromStdString(a.name), a.g});
        for (size_t i = 0; i < a.graphs.size(); ++i)
            bodies.push_back({QStringLiteral("%1[%2]").arg(QString::fromStdString(a.name)).arg(i), a.graphs[i]});
    }
    if (bodies.empty()) return false;
    if (attribute.isEmpty() && bodies.size() > 1) {  // If: which branch?
        QMenu menu(this);
        for (const auto& [name, body] : bodies)
            menu.addAction(name, this, [this, node, name = name] { enterSubgraph(node, name); });
        menu.exec(QCursor::pos());
        return true;
    }
    auto body = std::find_if(bodies.begin(), bodies.end(), [&](const auto& b) { return attribute.isEmpty() || b.first == attribute; });
    if (body == bodies.end()) return false;
    // Not this step's graph: marks, regions, breaks and heat (keyed by its ids) stay behind.
    m_canvas->setMarks({});
    m_canvas->setRegions({}, {});
    m_canvas->setBreakValues({});
    m_canvas->setHeat({});
    m_subgraphs.push_back({QStringLiteral("%1 '%2' › %3").arg(QString::fromStdString(n.opType), QString::fromStdString(n.name), body->first),
                           body->second});
    m_canvas->setGraph(body->second, 1 << 20);
    m_nodeTable->setGraph(body->second);
    rebuildBreadcrumb();
    log(tr("Opened the subgraph %1 (%2 nodes)").arg(breadcrumb().join(QStringLiteral(" › "))).arg(body->second->nodeCount()));
    return true;
}

void MainWindow::upTo(int level) {
    if (level < 0 || size_t(level) >= m_subgraphs.size() + 1) return;
    if (level == 0) {
        m_subgraphs.clear();
        rebuildBreadcrumb();
        if (m_passes->snapshotAt(m_step)) {
            showStep(m_step);
        } else if (m_model) {  // not compiled yet: the imported graph
            const std::shared_ptr<const Graph> graph(m_model, m_model->graph.get());
            m_canvas->setGraph(graph, m_initialDepth >= 0 ? m_initialDepth : 1);
            m_nodeTable->setGraph(graph);
        }
        return;
    }
    m_subgraphs.resize(size_t(level));
    m_canvas->setGraph(m_subgraphs.back().graph, 1 << 20);
    m_nodeTable->setGraph(m_subgraphs.back().graph);
    rebuildBreadcrumb();
}

QStringList MainWindow::breadcrumb() const {
    QStringList out{tr("graph")};
    for (const Crumb& c : m_subgraphs) out << c.label;
    return out;
}

void MainWindow::rebuildBreadcrumb() {
    m_crumbBar->clear();
    const QStringList crumbs = breadcrumb();
    for (int i = 0; i < crumbs.size(); ++i) {
        if (i > 0) m_crumbBar->addSeparator();
        QAction* a = m_crumbBar->addAction(crumbs[i], this, [this, i] { upTo(i); });
        a->setEnabled(i + 1 < crumbs.size());  // the current level is where one is
    }
    if (crumbs.size() > 1)
        m_crumbBar->addAction(tr("Up"), this, [this] { upTo(int(m_subgraphs.size()) - 1); })
            ->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Up));
    m_crumbBar->setVisible(crumbs.size() > 1);
}

void MainWindow::createDocks() {
    auto reveal = [this](NodeId node) { this->reveal(node); };
    QDockWidget* summary = addDock(tr("Model"), QStringLiteral("summaryDock"), m_summary, Qt::LeftDockWidgetArea);
    m_summary->setMinimumWidth(340);
    // Properties share the left column with the summary and come forward on a selection.
    QDockWidget* properties = addDock(tr("Properties"), QStringLiteral("propertiesDock"), m_properties, Qt::LeftDockWidgetArea);
    tabifyDockWidget(summary, properties);
    summary->raise();
    connect(m_canvas, &GraphCanvas::nodeSelected, properties, [properties](NodeId node) {
        if (node.valid()) properties->raise();
    });

    // Passes: pipeline choice, then the graph after each step.
    for (const char* level : {"O0", "O1", "O2", "O3"}) m_pipeline->addItem(QString::fromLatin1(level));
    m_pipeline->addItem(kCustomPipeline);
    m_pipeline->setToolTip(tr("The compiler pipeline: O0..O3, or a custom list of passes"));
    m_pipeline->setCurrentText(QStringLiteral("O2"));
    m_passView->setModel(m_passes);
    m_passView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_passView->setSelectionMode(QAbstractItemView::SingleSelection);
    m_passView->verticalHeader()->hide();
    m_passView->horizontalHeader()->setStretchLastSection(true);
    auto* passPanel = new QWidget(this);
    auto* passLayout = new QVBoxLayout(passPanel);
    passLayout->setContentsMargins(0, 0, 0, 0);
    passLayout->addWidget(m_pipeline);
    passLayout->addWidget(m_passView);
    passPanel->setMinimumWidth(460);
    addDock(tr("Passes"), QStringLiteral("passDock"), passPanel, Qt::RightDockWidgetArea);
    connect(m_pipeline, &QComboBox::currentTextChanged, this, &MainWindow::compileWith);
    connect(m_passView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) { showStep(current.row()); });
    // Any two steps side by side: a step's context menu makes it the left pane.
    m_passView->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_passView, &QWidget::customContextMenuRequested, this, [this](const QPoint& at) {
        const int row = m_passView->indexAt(at).row();
        if (row < 0) return;
        QMenu menu(this);
        menu.addAction(tr("Compare: show this step on the left"), this, [this, row] { setCompareBase(row); });
        menu.addAction(tr("Compare: the step before on the left"), this, [this] { setCompareBase(-1); });
        menu.exec(m_passView->viewport()->mapToGlobal(at));
    });

    // Bottom: nodes, graph breaks, changes, run, log as tabs.
    m_nodeView->setModel(m_nodeTable);
    m_nodeView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_nodeView->verticalHeader()->hide();
    m_nodeView->horizontalHeader()->setStretchLastSection(true);
    m_nodeView->horizontalHeader()->setResizeContentsPrecision(200);  // fast on 6,000-node graphs
    m_nodeView->setAlternatingRowColors(true);
    QDockWidget* nodes = addDock(tr("Nodes"), QStringLiteral("nodesDock"), m_nodeView, Qt::BottomDockWidgetArea);
    connect(m_nodeView, &QTableView::activated, this, [this](const QModelIndex& index) {
        const Graph* g = m_nodeTable->graph();
        if (g && g == m_canvas->shownGraph() && index.row() < int(g->order().size()))
            m_canvas->revealNode(g->order()[size_t(index.row())]);
    });
    QDockWidget* breaks = addDock(tr("Graph breaks"), QStringLiteral("breaksDock"), m_breaks, Qt::BottomDockWidgetArea);
    connect(m_breaks, &GraphBreaksPanel::nodeActivated, this, reveal);
    connect(m_breaks, &GraphBreaksPanel::titleChanged, breaks, &QDockWidget::setWindowTitle);
    QDockWidget* changes = addDock(tr("Changes"), QStringLiteral("changesDock"), m_changes, Qt::BottomDockWidgetArea);
    connect(m_changes, &ChangesPanel::nodeActivated, this, reveal);
    connect(m_changes, &ChangesPanel::titleChanged, changes, &QDockWidget::setWindowTitle);
    QDockWidget* run = addDock(tr("Run"), QStringLiteral("runDock"), m_runPanel, Qt::BottomDockWidgetArea);
    connect(m_runPanel, &RunPanel::runRequested, this, &MainWindow::runShownGraph);
    connect(m_runPanel, &RunPanel::nodeActivated, this, reveal);
    m_log->setReadOnly(true);
    m_log->setMaximumBlockCount(5000);
    QDockWidget* logDock = addDock(tr("Log"), QStringLiteral("logDock"), m_log, Qt::BottomDockWidgetArea);
    tabifyDockWidget(nodes, breaks);
    tabifyDockWidget(breaks, changes);
    tabifyDockWidget(changes, run);
    tabifyDockWidget(run, logDock);
    nodes->raise();
}

MainWindow::~MainWindow() {
    if (m_compileCancel) m_compileCancel->store(true);
    if (m_runCancel) m_runCancel->store(true);
    for (QThread* thread : m_compileThreads) thread->wait();
    if (m_runThread) m_runThread->wait();
}

QTreeWidget* MainWindow::breaksList() const {
    return m_breaks;
}

QTreeWidget* MainWindow::changesList() const {
    return m_changes;
}

void MainWindow::createActions() {
    // Find bar (Ctrl+F): Enter or F3 for the next match, Shift+F3 for the previous, Esc hides.
    m_findBar->setObjectName(QStringLiteral("findBar"));
    m_findField->setPlaceholderText(tr("Find node, op or tensor"));
    m_findField->setClearButtonEnabled(true);
    m_findField->setMaximumWidth(320);
    m_findBar->addWidget(m_findField);
    m_findBar->addAction(tr("Previous"), this, [this] { find(m_findField->text(), -1); })->setShortcut(QKeySequence::FindPrevious);
    m_findBar->addAction(tr("Next"), this, [this] { find(m_findField->text(), +1); })->setShortcut(QKeySequence::FindNext);
    m_findBar->addWidget(m_findCount);
    QAction* close = m_findBar->addAction(tr("Close"), m_findBar, &QToolBar::hide);
    close->setShortcut(Qt::Key_Escape);
    close->setShortcutContext(Qt::WidgetWithChildrenShortcut);  // Esc also cancels work elsewhere
    addToolBar(Qt::TopToolBarArea, m_findBar);
    m_findBar->hide();
    connect(m_findField, &QLineEdit::returnPressed, this, [this] { find(m_findField->text(), +1); });

    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(tr("&Open model…"), this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open ONNX model"), {},
                                                          tr("ONNX models (*.onnx);;All files (*)"));
        if (!path.isEmpty()) openModel(path);
    });
    open->setShortcut(QKeySequence::Open);
    file->addAction(tr("Open &sample"), this, [this] { openModel(QString::fromLatin1(kSamplePath)); });
    m_recentMenu = file->addMenu(tr("Open &recent"));
    rebuildRecentMenu();
    file->addSeparator();
    auto exportTo = [this](bool whole) {
        const QString path = QFileDialog::getSaveFileName(this, whole ? tr("Export the whole graph") : tr("Export the view"),
                                                          {}, tr("PNG image (*.png);;SVG drawing (*.svg)"));
        if (path.isEmpty()) return;
        const QString error = m_canvas->exportImage(path, whole);
        if (!error.isEmpty()) {
            log(tr("error: %1").arg(error));
            auto* box = new QMessageBox(QMessageBox::Warning, tr("Could not export"), error, QMessageBox::Ok, this);
            box->setAttribute(Qt::WA_DeleteOnClose);
            box->open();
        } else {
            m_status->setText(tr("Saved %1").arg(path));
            log(m_status->text());
        }
    };
    file->addAction(tr("Export &view as PNG/SVG…"), this, [exportTo] { exportTo(false); });
    file->addAction(tr("Export &whole graph as PNG/SVG…"), this, [exportTo] { exportTo(true); });
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), qApp, &QApplication::quit);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    edit->addAction(tr("&Find…"), this, [this] {
        m_findBar->show();
        m_findField->setFocus();
        m_findField->selectAll();
    })->setShortcut(QKeySequence::Find);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addAction(tr("&Fit to window"), m_canvas, &GraphCanvas::fitToView);
    QAction* dark = view->addAction(tr("&Dark palette"), this, &MainWindow::setDarkPalette);
    dark->setCheckable(true);
    dark->setChecked(QSettings().value(QStringLiteral("view/dark"), false).toBool());
    QAction* compare = view->addAction(tr("&Compare with the step before"), this, &MainWindow::setCompare);
    compare->setCheckable(true);
    compare->setObjectName(QStringLiteral("compareAction"));
    compare->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_D));
    view->addSeparator();
    auto expandTo = [this](int depth) {
        if (m_canvas->scopeTree()) m_canvas->setExpanded(expandedToDepth(*m_canvas->scopeTree(), depth));
    };
    view->addAction(tr("&Collapse all"), this, [expandTo] { expandTo(0); });
    for (int depth = 1; depth <= 4; ++depth)
        view->addAction(tr("Expand to depth &%1").arg(depth), this, [expandTo, depth] { expandTo(depth); })
            ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_0 + depth)));
    view->addAction(tr("&Expand all"), this, [expandTo] { expandTo(1 << 20); })
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    view->addSeparator();
    QAction* heat = view->addAction(tr("Run &heat overlay"), this, [this](bool on) {
        m_canvas->setHeat(on && m_runStep == m_step && m_subgraphs.empty() ? m_runShare : std::vector<double>{});
    });
    heat->setCheckable(true);
    heat->setChecked(true);
    heat->setObjectName(QStringLiteral("heatAction"));
    heat->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_H));

    QMenu* runMenu = menuBar()->addMenu(tr("&Run"));
    QAction* run = runMenu->addAction(tr("&Run the graph shown on the CPU"), this, &MainWindow::runShownGraph);
    run->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    runMenu->addAction(tr("&Cancel"), this, &MainWindow::cancelWork);

    QToolBar* tools = addToolBar(tr("Main"));
    tools->setObjectName(QStringLiteral("mainToolBar"));
    tools->addAction(open);
    tools->addAction(tr("Fit"), m_canvas, &GraphCanvas::fitToView)->setToolTip(tr("Fit the graph to the window (F)"));
    tools->addAction(compare);
    tools->addAction(run);
    tools->addAction(heat);
    for (QAction* a : tools->actions())
        if (!a->shortcut().isEmpty()) a->setToolTip(QStringLiteral("%1 (%2)").arg(a->text().remove(QLatin1Char('&')), a->shortcut().toString()));
}

void MainWindow::log(const QString& line) {
    m_log->appendPlainText(QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss  ")) + line);
}

QString MainWindow::logText() const {
    return m_log->toPlainText();
}

int MainWindow::beginWork(const QString& label, std::function<void()> cancel) {
    const int id = m_nextWork++;
    m_work[id] = {label, std::move(cancel), -1};
    showWork();
    return id;
}

void MainWindow::setWorkProgress(int id, int percent) {
    auto it = m_work.find(id);
    if (it == m_work.end() || it->second.percent == percent) return;
    it->second.percent = percent;
    showWork();
}

void MainWindow::endWork(int id) {
    m_work.erase(id);
    showWork();
}

void MainWindow::showWork() {
    // The newest work is the one shown; Cancel stops all of it.
    if (m_work.empty()) {
        m_progress->hide();
        m_cancel->hide();
        return;
    }
    const Work& w = m_work.rbegin()->second;
    if (w.percent < 0) m_progress->setRange(0, 0);  // no fractions known: a busy indicator
    else {
        m_progress->setRange(0, 100);
        m_progress->setValue(w.percent);
    }
    m_progress->setFormat(w.label + QStringLiteral(" %p%"));
    m_progress->setTextVisible(w.percent >= 0);
    m_progress->setToolTip(w.label);
    m_progress->show();
    m_cancel->show();
}

void MainWindow::cancelWork() {
    const auto work = m_work;  // a cancel may end its work at once
    for (const auto& [id, w] : work)
        if (w.cancel) w.cancel();
}

bool MainWindow::loading() const {
    return m_loader->busy();
}

QStringList MainWindow::recentFiles() const {
    return QSettings().value(QStringLiteral("files/recent")).toStringList();
}

void MainWindow::rememberRecent(const QString& path) {
    if (path.startsWith(QLatin1Char(':'))) return;  // the bundled sample has its own entry
    QStringList recent = recentFiles();
    recent.removeAll(path);
    recent.prepend(path);
    while (recent.size() > 10) recent.removeLast();
    QSettings().setValue(QStringLiteral("files/recent"), recent);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
    if (!m_recentMenu) return;
    m_recentMenu->clear();
    const QStringList recent = recentFiles();
    for (const QString& path : recent) m_recentMenu->addAction(path, this, [this, path] { openModel(path); });
    m_recentMenu->setEnabled(!recent.isEmpty());
}

void MainWindow::setDarkPalette(bool dark) {
    QSettings().setValue(QStringLiteral("view/dark"), dark);
    if (!dark) {
        qApp->setPalette(qApp->style()->standardPalette());
        return;
    }
    QPalette p;
    p.setColor(QPalette::Window, QColor(0x2b, 0x2b, 0x2e));
    p.setColor(QPalette::WindowText, QColor(0xe6, 0xe6, 0xe6));
    p.setColor(QPalette::Base, QColor(0x1f, 0x1f, 0x22));
    p.setColor(QPalette::AlternateBase, QColor(0x33, 0x33, 0x38));
    p.setColor(QPalette::Text, QColor(0xe6, 0xe6, 0xe6));
    p.setColor(QPalette::Button, QColor(0x3a, 0x3a, 0x40));
    p.setColor(QPalette::ButtonText, QColor(0xe6, 0xe6, 0xe6));
    p.setColor(QPalette::Highlight, QColor(0x3d, 0x8e, 0xe6));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Mid, QColor(0x55, 0x55, 0x5c));
    p.setColor(QPalette::Dark, QColor(0x8a, 0x8a, 0x92));  // edges: light on the dark canvas
    p.setColor(QPalette::PlaceholderText, QColor(0x90, 0x90, 0x98));
    p.setColor(QPalette::ToolTipBase, QColor(0x33, 0x33, 0x38));
    p.setColor(QPalette::ToolTipText, QColor(0xe6, 0xe6, 0xe6));
    qApp->setPalette(p);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    QMainWindow::closeEvent(event);
}

void MainWindow::openModel(const QString& path) {
    if (m_loader->busy()) return;
    m_status->setText(tr("Loading %1…").arg(path));
    log(m_status->text());
    m_loadWork = beginWork(tr("Loading"), [this] { cancelLoading(); });
    m_loader->load(path);
}

void MainWindow::cancelLoading() {
    m_loader->cancel();
}

void MainWindow::showModel(std::shared_ptr<const Model> model, const QString& path) {
    endWork(m_loadWork);
    m_runStep = -1;  // the run timed another model
    m_runShare.clear();
    m_canvas->setHeat({});
    m_runPanel->clearTimes(tr("No run yet: Run times every node of the graph shown."));
    m_model = std::move(model);
    const ModelSummary summary = summarizeModel(*m_model);
    m_nodeTable->setGraph(std::shared_ptr<const Graph>(m_model, m_model->graph.get()));
    m_nodeView->resizeColumnsToContents();
    const int depth = m_initialDepth >= 0 ? m_initialDepth : m_model->graph->nodeCount() <= 300 ? (1 << 20) : 1;
    m_canvas->setGraph(std::shared_ptr<const Graph>(m_model, m_model->graph.get()), depth);
    const QString shown = path == QLatin1String(kSamplePath) ? tr("bundled sample") : path;
    m_summary->showSummary(summary, shown);
    setWindowTitle(tr("%1 — Fusescope").arg(shown));
    m_shownText = tr("%1: %2 nodes, %3 parameters, IR %4")
                      .arg(shown)
                      .arg(summary.totalNodeCount)
                      .arg(summary.parameterCount)
                      .arg(summary.irVersion);
    m_status->setText(m_shownText);
    log(tr("Opened %1").arg(m_shownText));
    for (const std::string& warning : m_model->warnings) log(tr("import note: %1").arg(QString::fromStdString(warning)));
    m_passes->setTrace(nullptr);
    m_properties->setOpsets(m_model->opsetImports);
    rememberRecent(path);
    compileWith(m_pipeline->currentText());
    emit modelShown(path);
}

void MainWindow::compileWith(const QString& pipeline) {
    if (pipeline == kCustomPipeline) {
        if (!m_customPasses.empty()) {  // chosen before: compile with it, Passes > Custom… changes it
            compilePasses(tr("custom"), m_customPasses);
            return;
        }
        chooseCustomPipeline();
        return;
    }
    auto passes = pipelinePasses(pipeline.toStdString());
    if (passes) compilePasses(pipeline, *passes);
}

void MainWindow::chooseCustomPipeline() {
    auto* dialog = new CustomPipelineDialog(this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    if (!m_customPasses.empty()) {
        for (int i = 0; i < dialog->list()->count(); ++i) dialog->list()->item(i)->setCheckState(Qt::Unchecked);
        for (const std::string& name : m_customPasses) dialog->setChecked(name, true);
    }
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        m_customPasses = dialog->passes();
        m_pipeline->blockSignals(true);
        m_pipeline->setCurrentText(kCustomPipeline);
        m_pipeline->blockSignals(false);
        compilePasses(tr("custom"), m_customPasses);
    });
    m_customDialog = dialog;
    dialog->open();
}

void MainWindow::compilePasses(const QString& pipeline, const std::vector<std::string>& passes) {
    if (!m_model) return;
    if (m_compileCancel) m_compileCancel->store(true);  // a newer choice replaces a running compile
    m_compileCancel = std::make_shared<std::atomic<bool>>(false);
    const quint64 generation = ++m_compileGeneration;
    auto model = m_model;
    auto cancel = m_compileCancel;
    const std::vector<std::string> names = passes;
    log(tr("Compiling with %1: %2 passes").arg(pipeline).arg(names.size()));
    if (m_compileWork >= 0) endWork(m_compileWork);
    const int work = m_compileWork = beginWork(tr("Compiling %1").arg(pipeline), [cancel] { cancel->store(true); });
    QThread* thread = QThread::create([this, model, cancel, names, generation, pipeline, work] {
        CompileOptions options;
        options.cancel = cancel.get();
        options.progress = [this, work](size_t index, size_t count, const std::string&) {
            const int percent = int(100 * index / std::max<size_t>(1, count));
            QMetaObject::invokeMethod(this, [this, work, percent] { setWorkProgress(work, percent); });
        };
        auto result = compileModel(*model, names, options);
        std::shared_ptr<const CompileTrace> trace;
        QString error;
        if (result) trace = std::make_shared<const CompileTrace>(std::move(result->trace));
        else error = QString::fromStdString(result.status().message());
        QMetaObject::invokeMethod(this, [this, trace, error, generation, pipeline, work] {
            endWork(work);
            if (work == m_compileWork) m_compileWork = -1;
            if (generation != m_compileGeneration) return;  // replaced
            if (!trace) {
                m_status->setText(tr("Compiling with %1 stopped: %2").arg(pipeline, error));
                log(m_status->text());
                return;
            }
            log(tr("Compiled with %1: %2 passes in %3 ms, %4 -> %5 nodes")
                    .arg(pipeline).arg(trace->passes.size()).arg(trace->totalMilliseconds, 0, 'f', 1)
                    .arg(trace->imported ? trace->imported->nodeCount() : 0)
                    .arg(trace->passes.empty() ? 0 : trace->passes.back().nodesAfter));
            m_passes->setTrace(trace);
            m_passView->resizeColumnsToContents();
            m_passView->selectRow(m_passes->rowCount() - 1);  // the compiled graph
            emit compiled(pipeline);
        });
    });
    m_compileThreads.append(thread);
    connect(thread, &QThread::finished, this, [this, thread] {
        m_compileThreads.removeOne(thread);
        thread->deleteLater();
    });
    thread->start();
}

void MainWindow::setCompareBase(int row) {
    m_compareBase = row;
    if (!m_compare) setCompare(true);
    else if (m_step >= 0) showStep(m_step);
    if (QAction* compare = findChild<QAction*>(QStringLiteral("compareAction"))) compare->setChecked(true);
}

void MainWindow::setCompare(bool on) {
    m_compare = on;
    m_before->setVisible(on);
    if (m_step >= 0) showStep(m_step);
}

// Nodes of `to` that share an origin with `node` of `from` (provenance both ways).
void MainWindow::linkSelection(GraphCanvas* from, GraphCanvas* to, NodeId node) {
    const Graph* a = from->shownGraph();
    const Graph* b = to->shownGraph();
    if (!a || !b || !node.valid()) {
        to->setLinked({});
        return;
    }
    auto originsOf = [](const Graph& g, NodeId n) {
        const Node& x = g.node(n);
        return x.origins.empty() ? std::vector<NodeId>{n} : x.origins;
    };
    const std::vector<NodeId> mine = originsOf(*a, node);
    std::vector<NodeId> linked;
    for (NodeId m : b->order()) {
        for (NodeId o : originsOf(*b, m))
            if (std::find(mine.begin(), mine.end(), o) != mine.end()) {
                linked.push_back(m);
                break;
            }
    }
    to->setLinked(linked);
}

void MainWindow::showStep(int row) {
    auto snapshot = m_passes->snapshotAt(row);
    if (!snapshot) return;
    m_step = row;
    if (!m_subgraphs.empty()) {
        m_subgraphs.clear();
        rebuildBreadcrumb();
    }
    m_findHits.clear();  // ids belong to the graph they were found in
    const int depth = m_initialDepth >= 0 ? m_initialDepth : snapshot->nodeCount() <= 300 ? (1 << 20) : 1;
    std::shared_ptr<const Graph> graph = snapshot->materialize();
    m_nodeTable->setGraph(graph);
    m_canvas->setGraph(graph, depth);
    std::vector<GraphCanvas::Mark> after, before;
    const int base = m_compareBase >= 0 && m_compareBase != row ? m_compareBase : row - 1;
    if (m_compare && base >= 0 && m_passes->snapshotAt(base)) {
        // Snapshots of one compile share node ids: live on one side only = removed / added.
        std::shared_ptr<const Graph> previous = m_passes->snapshotAt(base)->materialize();
        const size_t n = std::max(graph->nodeArenaSize(), previous->nodeArenaSize());
        std::vector<bool> liveBefore(n), liveAfter(n);
        for (NodeId id : previous->order()) liveBefore[id.index] = true;
        for (NodeId id : graph->order()) liveAfter[id.index] = true;
        before.assign(n, GraphCanvas::Mark::None);
        after.assign(n, GraphCanvas::Mark::None);
        for (size_t i = 0; i < n; ++i) {
            if (liveBefore[i] && !liveAfter[i]) before[i] = GraphCanvas::Mark::Removed;
            if (liveAfter[i] && !liveBefore[i]) after[i] = GraphCanvas::Mark::Added;
        }
        m_before->setGraph(previous, depth);
    }
    m_before->setMarks(std::move(before));
    m_canvas->setMarks(std::move(after));
    showBreaks(*graph);
    m_changes->showPass(m_passes->trace() && row > 0 ? &m_passes->trace()->passes[size_t(row - 1)] : nullptr, *graph);
    // The heat overlay belongs to the step that ran (node ids differ between steps).
    const QAction* heat = findChild<QAction*>(QStringLiteral("heatAction"));
    m_canvas->setHeat(row == m_runStep && (!heat || heat->isChecked()) ? m_runShare : std::vector<double>{});
}

void MainWindow::find(const QString& query, int step) {
    const Graph* graph = m_canvas->shownGraph();
    if (!graph) return;
    if (query != m_findQuery || m_findHits.empty()) {  // a new search
        m_findQuery = query;
        m_findHits = findNodes(*graph, query.toStdString());
        m_findIndex = step > 0 ? -1 : 0;
    }
    if (m_findHits.empty()) {
        m_findCount->setText(query.isEmpty() ? QString() : tr("no match"));
        return;
    }
    const int n = int(m_findHits.size());
    m_findIndex = ((m_findIndex + step) % n + n) % n;
    m_findCount->setText(tr("%1 of %2").arg(m_findIndex + 1).arg(n));
    m_canvas->revealNode(m_findHits[size_t(m_findIndex)]);
}

void MainWindow::showBreaks(const Graph& graph) {
    const GraphBreakReport report = findGraphBreaks(graph, CapabilityTable::cuda());
    std::vector<int> region(graph.nodeArenaSize(), -1);
    std::vector<bool> host(graph.nodeArenaSize(), false);
    for (const GraphRegion& r : report.regions)
        for (NodeId id : r.nodes) {
            region[id.index] = r.index;
            host[id.index] = r.placement == Placement::Host;
        }
    std::vector<QString> breakValues(graph.valueCount());
    for (const GraphBreak& b : report.breaks)
        if (b.value.valid() && b.value.index < breakValues.size())
            breakValues[b.value.index] = QString::fromStdString(b.reason);
    m_canvas->setRegions(std::move(region), std::move(host));
    m_canvas->setBreakValues(std::move(breakValues));
    m_breaks->showReport(graph, report);
}

void MainWindow::runShownGraph() {
    if (m_runThread || !m_model || m_step < 0) {
        if (!m_model || m_step < 0) m_status->setText(tr("Nothing to run yet: open a model and let it compile"));
        return;
    }
    auto snapshot = m_passes->snapshotAt(m_step);
    if (!snapshot) return;
    GraphRunRequest request;
    request.graph = snapshot->materialize();
    request.opsets = m_model->opsetImports;
    if (m_model->opsetVersion(kFusescopeDomain) < 0) request.opsets.push_back({kFusescopeDomain, 1});
    request.feeds = m_runPanel->feedOptions();
    request.warmup = m_runPanel->warmup();
    request.iterations = m_runPanel->iterations();
    const int step = m_step;
    const QString stepName = m_passes->data(m_passes->index(step, 0), Qt::DisplayRole).toString();
    m_runCancel = std::make_shared<std::atomic<bool>>(false);
    auto cancel = m_runCancel;
    const int work = beginWork(tr("Running"), [cancel] { cancel->store(true); });
    m_runPanel->setRunning(true);
    log(tr("Running the graph after '%1' on the CPU: %2 warm-up + %3 timed iterations")
            .arg(stepName).arg(request.warmup).arg(request.iterations));
    m_runThread = QThread::create([this, request, cancel, work, step, stepName] {
        auto lastPercent = std::make_shared<int>(-1);
        auto record = runGraph(request, cancel.get(), [this, work, lastPercent](int64_t done, int64_t total) {
            const int percent = int(100 * done / std::max<int64_t>(1, total));
            if (percent == *lastPercent) return;  // one message per percent, not per node
            *lastPercent = percent;
            QMetaObject::invokeMethod(this, [this, work, percent] { setWorkProgress(work, percent); });
        });
        QMetaObject::invokeMethod(this, [this, record = std::move(record), work, step, stepName] {
            endWork(work);
            m_runPanel->setRunning(false);
            if (!record) {
                const QString why = QString::fromStdString(record.status().message());
                m_status->setText(tr("Run stopped: %1").arg(why));
                log(m_status->text());
                emit runFinished(false);
                return;
            }
            m_runStep = step;
            showRun(*record);
            log(tr("Ran '%1': %2").arg(stepName, m_runPanel->summary()));
            emit runFinished(true);
        });
    });
    connect(m_runThread, &QThread::finished, this, [this] {
        m_runThread->deleteLater();
        m_runThread = nullptr;
    });
    m_runThread->start();
}

void MainWindow::showRun(const GraphRunRecord& record) {
    m_runShare = record.shareByNode();
    const QString summary = tr("median %1 ms, p90 %2 ms over %3 iterations on %4 CPU threads; arena %5 MiB; "
                               "inputs: %6")
                                .arg(record.latency.median, 0, 'f', 3)
                                .arg(record.latency.p90, 0, 'f', 3)
                                .arg(record.iterations)
                                .arg(record.threads)
                                .arg(double(record.arenaBytes) / (1024.0 * 1024.0), 0, 'f', 2)
                                .arg(QString::fromStdString([&] {
                                    std::string all;
                                    for (const std::string& in : record.inputs) all += (all.empty() ? "" : "; ") + in;
                                    return all;
                                }()));
    m_runPanel->showTimes(summary, record.nodes, record.topLevelNs, record.iterations);
    if (auto* dock = findChild<QDockWidget*>(QStringLiteral("runDock"))) dock->raise();
    if (m_step == m_runStep && m_subgraphs.empty()) {
        const QAction* heat = findChild<QAction*>(QStringLiteral("heatAction"));
        if (!heat || heat->isChecked()) m_canvas->setHeat(m_runShare);
    }
}

void MainWindow::showError(const QString& message) {
    endWork(m_loadWork);
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
    if (!urls.isEmpty() && urls.first().isLocalFile()) openModel(urls.first().toLocalFile());
}

}  // namespace fsc
