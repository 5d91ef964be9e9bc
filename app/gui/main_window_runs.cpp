// MainWindow, the run shown (RunController makes it): its trace on the Timeline, Memory and
// Roofline docks, its heat on the canvas, and a picked node's kernels in the properties.
#include "app/gui/main_window.h"
#include "app/gui/dock_layout.h"

#include <QAction>

#include "app/gui/run_controller.h"
#include "app/gui/subgraph_trail.h"
#include "views/graph_canvas.h"
#include "views/memory_view.h"
#include "views/node_properties_view.h"
#include "views/roofline_view.h"
#include "views/timeline_view.h"

namespace fsc {

void MainWindow::showRunTrace(std::shared_ptr<const Trace> trace, bool fromStore) {
    if (fromStore) m_canvas->clearHeat();
    m_timeline->setTrace(trace);
    m_memory->setTrace(trace);
    m_rooflineView->setTrace(trace);
    m_docks->raiseDock(QStringLiteral("runDock"));
    applyRunHeat();
    if (fromStore) m_docks->raiseDock(QStringLiteral("timelineDock"));
}

void MainWindow::updateRunGraph() {
    m_selection.setRunGraph(m_session.runMatchesStep() ? m_session.stepGraph() : nullptr);
}

bool MainWindow::runMatchesCanvas() const {
    return m_session.runMatchesStep() && !m_trail->inBody();  // a body's ids are not the step's
}

void MainWindow::showNodeKernels(NodeId node) {
    if (!node.valid() || !runMatchesCanvas()) return;
    QList<QPair<QString, QString>> rows;
    double totalMs = 0;
    for (const Session::KernelLaunches& k : m_session.kernelsOfNode(node)) {
        totalMs += k.msPerIteration;
        QString detail = tr("%1 launches, %2 ms per iteration").arg(k.launches).arg(k.msPerIteration, 0, 'f', 4);
        if (k.first->grid[0] > 0)
            detail += tr(", grid %1×%2×%3, block %4×%5×%6, %7 registers")
                          .arg(k.first->grid[0])
                          .arg(k.first->grid[1])
                          .arg(k.first->grid[2])
                          .arg(k.first->block[0])
                          .arg(k.first->block[1])
                          .arg(k.first->block[2])
                          .arg(k.first->registers);
        rows.append({QString::fromStdString(k.name), detail});
    }
    m_properties->showRunKernels(rows.isEmpty() ? tr("none: this node did not run")
                                                : tr("%1 kernel(s), %2 ms per iteration on %3")
                                                      .arg(rows.size())
                                                      .arg(totalMs, 0, 'f', 4)
                                                      .arg(QString::fromStdString(m_session.run()->device)),
                                 rows);
}

void MainWindow::setHeatUnit(HeatUnit unit) {
    m_heatUnit = unit;
    for (QAction* a : findChildren<QAction*>())
        if (a->actionGroup() && a->data().isValid() && a->data().toInt() == int(unit))
            a->setChecked(true);
    applyRunHeat();
}

void MainWindow::applyRunHeat() {
    if (m_overlay != Overlay::Run && !m_compare) m_canvas->setMarks({});  // a bisection's outlines
    m_overlay = Overlay::Run;
    showRunHeat();
}

void MainWindow::applyOverlay() {
    switch (m_overlay) {
        case Overlay::Run: return showRunHeat();
        case Overlay::Bisection: return showBisection();
        case Overlay::Variants: return applyVariantHeat();
    }
}

void MainWindow::showRunHeat() {
    const QAction* on = findChild<QAction*>(QStringLiteral("heatAction"));
    if (!runMatchesCanvas() || (on && !on->isChecked())) {
        m_canvas->clearHeat();
        return;
    }
    m_canvas->setHeat(m_session.runHeat(m_heatUnit));
}

}  // namespace fsc
