// The INT8 sensitivity dock's work: calibrate the graph shown on generated inputs, quantize
// each layer alone and all of them, and measure the outputs against float32, off the GUI
// thread with progress and Cancel.
#include <QDockWidget>
#include <QLabel>

#include "app/gui/main_window.h"
#include "app/common/simulated_trace.h"
#include "compiler/fused_domain.h"
#include "compiler/pass_manager.h"
#include "compiler/passes/passes.h"
#include "compiler/quantization/accuracy.h"
#include "views/status_line.h"
#include "views/graph_canvas.h"
#include "views/pass_list_model.h"
#include "views/sensitivity_panel.h"
#include "views/timeline_view.h"
#include "views/work_indicator.h"

namespace fsc {

namespace {

struct SensitivityResult {
    QString summary, error;
    std::vector<LayerSensitivity> layers;
};

SensitivityResult measure(const Model& model, const std::atomic<bool>* cancel, const std::function<void(size_t, size_t)>& progress) {
    SensitivityResult r;
    CalibrationSplit data = holdBack(generateCalibrationData(*model.graph, 8, 1));
    Int8Options options;
    options.calibration = std::make_shared<CalibrationData>(std::move(data.calibration));
    options.ranges = std::make_shared<ActivationRanges>();
    auto table = layerSensitivity(model, options, data.heldBack, progress, cancel);
    if (!table) {
        r.error = QString::fromStdString(table.status().message());
        return r;
    }
    if (table->empty()) {
        r.error = QObject::tr("No Conv, MatMul or Gemm with a constant weight in this graph: nothing to quantize");
        return r;
    }
    std::vector<std::unique_ptr<Pass>> passes;
    passes.push_back(passes::quantizeInt8(options));
    passes.push_back(passes::foldQdq());
    CompileOptions compile;
    compile.keepSnapshots = false;
    compile.cancel = cancel;
    auto all = compileModel(model, std::move(passes), compile);
    auto error = all ? compareOutputs(model, all->model, data.heldBack, cancel) : Result<OutputError>(all.status());
    if (!error) {
        r.error = QString::fromStdString(error.status().message());
        return r;
    }
    r.layers = std::move(*table);
    r.summary = QObject::tr("All %1 layers in INT8: cosine %2, mean rel %3, max abs %4 against float32. Measured on %5.")
                    .arg(r.layers.size())
                    .arg(error->cosine, 0, 'f', 6)
                    .arg(error->meanRelative, 0, 'g', 3)
                    .arg(error->maxAbs, 0, 'g', 3)
                    .arg(QString::fromStdString(data.heldBack.source));
    return r;
}

}  // namespace

void MainWindow::measureSensitivity() {
    auto snapshot = m_session.snapshotAt(m_session.step());
    if (m_jobs.busy(this, kSensitivityJob) || !snapshot) {
        if (!snapshot) m_status->setText(tr("Nothing to measure yet: open a model and let it compile"));
        return;
    }
    Model model = *m_session.model();
    model.graph = snapshot->materialize();
    if (model.opsetVersion(kFusescopeDomain) < 0) model.opsetImports.push_back({kFusescopeDomain, 1});
    const QString stepName = QString::fromStdString(m_session.stepLabel(m_session.step()));
    m_sensitivity->setRunning(true);
    log(tr("Measuring INT8 sensitivity of the graph after '%1' (generated inputs, one run per layer)").arg(stepName));
    m_jobs.start(
        this, kSensitivityJob, tr("Measuring INT8 sensitivity"),
        [model](const JobRunner::Control& job) {
            return measure(model, job.cancelFlag(), [&job](size_t done, size_t total) { job.progress(done, total); });
        },
        [this, stepName](SensitivityResult r) {
            m_sensitivity->setRunning(false);
            if (!r.error.isEmpty()) {
                m_sensitivity->showMessage(tr("Not measured: %1").arg(r.error));
                log(tr("INT8 sensitivity stopped: %1").arg(r.error));
                return;
            }
            m_sensitivity->showResult(tr("After '%1'. %2").arg(stepName, r.summary), r.layers);
            log(tr("INT8 sensitivity of '%1': %2").arg(stepName, r.summary));
        });
}

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
    raiseDock(QStringLiteral("timelineDock"));
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
