#include "app/gui/sensitivity_controller.h"

#include <atomic>
#include <functional>

#include "app/common/session.h"
#include "compiler/runtime/fused_domain.h"
#include "compiler/pass_manager.h"
#include "compiler/passes/passes.h"
#include "compiler/quantization/accuracy.h"
#include "views/job_runner.h"
#include "views/sensitivity_panel.h"

namespace fsc {

namespace {

const QString kSensitivityJob = QStringLiteral("sensitivity");

struct SensitivityResult {
    QString summary, error;
    std::vector<LayerSensitivity> layers;
};

SensitivityResult measureModel(const Model& model, const std::atomic<bool>* cancel,
                               const std::function<void(size_t, size_t)>& progress) {
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

SensitivityController::SensitivityController(JobRunner& jobs, SensitivityPanel& panel, QObject* parent)
    : QObject(parent), m_jobs(jobs), m_panel(panel) {}

bool SensitivityController::measure(const Session& session) {
    auto snapshot = session.snapshotAt(session.step());
    if (!snapshot) {
        emit statusMessage(tr("Nothing to measure yet: open a model and let it compile"));
        return false;
    }
    if (m_jobs.busy(this, kSensitivityJob)) return true;
    Model model = *session.model();
    model.graph = snapshot->materialize();
    if (model.opsetVersion(kFusescopeDomain) < 0) model.opsetImports.push_back({kFusescopeDomain, 1});
    const QString stepName = QString::fromStdString(session.stepLabel(session.step()));
    m_panel.setRunning(true);
    emit logged(tr("Measuring INT8 sensitivity of the graph after '%1' (generated inputs, one run per layer)").arg(stepName));
    m_jobs.start(
        this, kSensitivityJob, tr("Measuring INT8 sensitivity"),
        [model](const JobRunner::Control& job) {
            return measureModel(model, job.cancelFlag(), [&job](size_t done, size_t total) { job.progress(done, total); });
        },
        [this, stepName](SensitivityResult r) {
            m_panel.setRunning(false);
            if (!r.error.isEmpty()) {
                m_panel.showMessage(tr("Not measured: %1").arg(r.error));
                emit logged(tr("INT8 sensitivity stopped: %1").arg(r.error));
                return;
            }
            m_panel.showResult(tr("After '%1'. %2").arg(stepName, r.summary), r.layers);
            emit logged(tr("INT8 sensitivity of '%1': %2").arg(stepName, r.summary));
        });
    return true;
}

}  // namespace fsc
