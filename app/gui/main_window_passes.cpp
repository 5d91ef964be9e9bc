// MainWindow, the compiler's side: a compile (CompileController makes it) shown step by step,
// comparing two steps, graph breaks, and opening If/Loop/Scan bodies.
#include "compiler/backends/cuda/cuda_provider.h"
#include "app/gui/main_window.h"
#include "app/gui/main_window_shown_step.h"
#include "app/gui/dock_layout.h"
#include "app/gui/find_bar.h"
#include "app/gui/passes_panel.h"
#include "app/gui/subgraph_trail.h"
#include "app/gui/walkthrough_guide.h"
#include "app/gui/run_controller.h"

#include <QAction>
#include <QComboBox>
#include <QCursor>
#include <QDockWidget>
#include <QListWidget>
#include <QMenu>
#include <QStatusBar>
#include <QLabel>
#include <QTableView>
#include <QToolBar>

#include <utility>

#include "compiler/graph_breaks.h"
#include "compiler/pipelines.h"
#include "views/status_line.h"
#include "views/changes_panel.h"
#include "views/graph_breaks_panel.h"
#include "views/graph_canvas.h"
#include "views/node_table_model.h"
#include "views/pass_list_model.h"
#include "views/work_indicator.h"
#include "app/gui/walkthrough_dock.h"

namespace fsc {

void MainWindow::followSelection() {
    const NodeId node = m_selection.node();
    if (!node.valid()) return;
    if (auto* properties = findChild<QDockWidget*>(QStringLiteral("propertiesDock"))) properties->raise();
    if (m_selection.graph() == m_session.stepGraph() && m_trail->inBody()) {
        m_trail->upTo(0);  // the lists name nodes of the step's graph: the canvas reveals it once back there
        return;
    }
    if (m_selection.isOfRun()) showNodeKernels(node);
}

void MainWindow::showStepGraph() {
    if (m_session.snapshotAt(m_session.step())) {
        showStep(m_session.step());
    } else if (const auto& model = m_session.model()) {  // not compiled yet: the imported graph
        const std::shared_ptr<const Graph> graph(model, model->graph.get());
        m_canvas->setGraph(graph, m_initialDepth >= 0 ? m_initialDepth : 1);
        m_nodeTable->setGraph(graph);
    }
}

void MainWindow::showCompiled(const QString& pipeline) {
    updateRunGraph();
    m_showingStep = true;
    m_selection.selectStep(-1);  // the rows are new: none is current yet
    m_showingStep = false;
    m_passes->setTrace(m_session.compiled());
    m_withoutPass.clear();  // compiles of the previous model or pipeline
    m_compiledPipeline = pipeline;  // compiled() follows once its graph is shown
    showStep(m_passes->model()->rowCount() - 1);
}

void MainWindow::setCompareBase(int row) {
    m_compareBase = row;
    if (!m_compare) setCompare(true);
    else if (m_session.step() >= 0) showStep(m_session.step());
    if (QAction* compare = findChild<QAction*>(QStringLiteral("compareAction"))) compare->setChecked(true);
}

void MainWindow::setCompare(bool on) {
    if (on && m_compareWithout) {  // one comparison at a time
        m_compareWithout = false;
        if (QAction* without = findChild<QAction*>(QStringLiteral("compareWithoutAction"))) without->setChecked(false);
    }
    m_compare = on;
    m_before->setVisible(on);
    if (m_session.step() < 0) return;
    // A comparison of a step that changed nothing shows one graph twice: open it on the last
    // step that changed the graph instead (the compiled graph's last pass often changes nothing).
    int row = m_session.step();
    if (on && m_compareBase < 0 && !m_session.stepChanged(row)) {
        row = m_session.lastChangingStep(row);
        if (row != m_session.step())
            log(tr("Compare: %1 changed nothing; showing %2, the last step that changed the graph")
                    .arg(QString::fromStdString(m_session.stepLabel(m_session.step())),
                         QString::fromStdString(m_session.stepLabel(row))));
    }
    showStep(row);
}

void MainWindow::showStep(int row) {
    m_showingStep = true;  // the pass list follows the selection; the step is started here
    m_selection.selectStep(row);
    m_showingStep = false;
    startStep(row);
}

void MainWindow::startStep(int row) {
    if (m_compareWithout) return startStepWithout(row);
    auto snapshot = m_session.snapshotAt(row);
    if (!snapshot) return;
    const int base = m_compare ? m_session.compareBaseFor(row, m_compareBase) : -1;
    // The step shown again (a comparison turned on, a body left) keeps its graph: what is
    // selected in it stays selected.
    std::shared_ptr<const Graph> known = row == m_session.step() ? m_session.stepGraph() : nullptr;
    m_jobs.start(
        this, kStepJob, QString(),
        [row, snapshot, known, baseSnapshot = m_session.snapshotAt(base),
         trace = m_session.compiled()](const JobRunner::Control&) {
            ShownStep s{row, snapshot, known ? known : snapshot->materialize()};
            s.changes = ChangesPanel::rowsOf(row > 0 ? &trace->passes[size_t(row - 1)] : nullptr, *s.graph);
            if (!baseSnapshot) return s;
            s.previous = baseSnapshot->materialize();
            const Session::StepDiff diff = Session::diff(*s.previous, *s.graph);
            s.before = ShownStep::marksOf(diff.before);
            s.after = ShownStep::marksOf(diff.after);
            return s;
        },
        [this](ShownStep s) { applyStep(std::move(s)); });
}

void MainWindow::applyStep(ShownStep s) {
    if (m_session.snapshotAt(s.row) != s.snapshot) return;  // compiled again meanwhile
    m_session.setStep(s.row, s.graph);
    m_trail->leave();
    m_findBar->forget();  // ids belong to the graph they were found in
    m_selection.setStepGraph(s.graph);
    updateRunGraph();
    const int depth = m_initialDepth >= 0 ? m_initialDepth : s.graph->nodeCount() <= 300 ? (1 << 20) : 1;
    m_nodeTable->setGraph(s.graph);
    m_canvas->setGraph(s.graph, depth);
    if (s.previous) m_before->setGraph(s.previous, depth);
    else if (m_compareWithout) m_before->setGraph(nullptr, depth);  // that variant did not compile
    m_canvas->setLinkSelection(m_compare);
    m_before->setLinkSelection(m_compare);
    m_before->setMarks(std::move(s.before));
    m_canvas->setMarks(std::move(s.after));
    showBreaks(s.graph);
    m_changes->showRows(s.changes);
    // A run's heat belongs to the step that ran (node ids differ between steps); a
    // bisection's or the Variants dock's maps onto any step.
    applyOverlay();
    if (m_selection.isOfRun() && m_selection.node().valid()) showNodeKernels(m_selection.node());
    emit stepShown(s.row);
    if (!m_compiledPipeline.isNull()) {
        const QString pipeline = std::exchange(m_compiledPipeline, QString());
        m_walkthrough->setSession(m_session, pipeline);
        emit compiled(pipeline);
    }
}

void MainWindow::showWalkthrough(int chapter) { m_guide->show(chapter); }

void MainWindow::showBreaks(std::shared_ptr<const Graph> graph) {
    // Where execution would leave the GPU: by node (region, on the host) and by value (why).
    struct Breaks {
        GraphBreakReport report;
        std::vector<int> region;
        std::vector<bool> host;
        std::vector<QString> reasonByValue;
    };
    m_jobs.start(
        this, kBreaksJob, QString(),
        [graph](const JobRunner::Control&) {
            Breaks b;
            b.report = findGraphBreaks(*graph, cudaCapabilities());
            b.region.assign(graph->nodeArenaSize(), -1);
            b.host.assign(graph->nodeArenaSize(), false);
            for (const GraphRegion& r : b.report.regions)
                for (NodeId id : r.nodes) {
                    b.region[id.index] = r.index;
                    b.host[id.index] = r.placement == Placement::Host;
                }
            b.reasonByValue.resize(graph->valueCount());
            for (const GraphBreak& gb : b.report.breaks)
                if (gb.value.valid() && gb.value.index < b.reasonByValue.size())
                    b.reasonByValue[gb.value.index] = QString::fromStdString(gb.reason);
            return b;
        },
        [this, graph](Breaks b) {
            if (m_canvas->graph() != graph.get()) return;  // a subgraph was opened meanwhile
            m_canvas->setRegions(std::move(b.region), std::move(b.host));
            m_canvas->setBreakValues(std::move(b.reasonByValue));
            m_breaks->showReport(*graph, b.report);
        });
}

}  // namespace fsc
