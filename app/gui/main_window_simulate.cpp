// The partitioned graph shown, simulated on its devices over an interconnect (the cost model
// per node, on the GUI thread), for the Timeline's lane per device.
#include "app/gui/main_window.h"
#include "app/gui/dock_layout.h"
#include "app/common/simulated_trace.h"
#include "views/status_line.h"
#include "views/graph_canvas.h"
#include "views/timeline_view.h"

namespace fsc {

bool MainWindow::simulateDevices(const QString& interconnect) {
    const Graph* graph = m_canvas->shownGraph();
    const PartitionShape shape = graph ? partitionShape(*graph) : PartitionShape{};
    if (shape.devices < 2) {
        m_status->setText(tr("The graph shown is not partitioned: choose a pipeline with tensor-parallel or pipeline-parallel"));
        return false;
    }
    // Quick (the cost model per node), so on the GUI thread.
    auto simulated = fsc::simulateDevices(*graph, shape, interconnect.toStdString(), 4);
    if (!simulated) {
        m_status->setText(QString::fromStdString(simulated.status().message()));
        return false;
    }
    const SimulatedRun& run = simulated->run;
    const Interconnect* link = &simulated->link;
    m_timeline->setTrace(simulated->trace);
    m_docks->raiseDock(QStringLiteral("timelineDock"));
    log(tr("Simulated (not measured) on %1 devices over %2%3: %4 us against %5 us on one, speed-up %6x; "
           "communication %7 us on the critical path; bubbles %8%")
            .arg(shape.devices)
            .arg(QString::fromStdString(link->name))
            .arg(shape.pipeline ? tr(", 4 micro-batches") : QString())
            .arg(run.totalSeconds * 1e6, 0, 'f', 1)
            .arg(run.singleDeviceSeconds * 1e6, 0, 'f', 1)
            .arg(run.speedup(), 0, 'f', 2)
            .arg(run.communicationSeconds * 1e6, 0, 'f', 1)
            .arg(run.bubbleFraction * 100, 0, 'f', 1));
    return true;
}

}  // namespace fsc
