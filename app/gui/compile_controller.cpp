#include "app/gui/compile_controller.h"

#include <QListWidget>

#include <memory>

#include "app/common/session.h"
#include "compiler/pipelines.h"
#include "views/custom_pipeline_dialog.h"
#include "views/job_runner.h"

namespace fsc {

namespace {

const QString kCompileJob = QStringLiteral("compile");

}  // namespace

CompileController::CompileController(JobRunner& jobs, Session& session, QWidget* dialogParent)
    : QObject(dialogParent), m_jobs(jobs), m_session(session), m_dialogParent(dialogParent) {}

CustomPipelineDialog* CompileController::customPipelineDialog() const { return m_dialog; }

void CompileController::compileWith(const QString& pipeline) {
    if (pipeline == kCustomPipeline) {
        if (!m_customPasses.empty()) {  // chosen before: compile with it, Passes > Custom… changes it
            compilePasses(tr("custom"), m_customPasses);
            return;
        }
        chooseCustomPipeline();
        return;
    }
    auto passes = pipelinePasses(pipeline.toStdString());
    if (passes) compile(pipeline, *passes, false);
}

void CompileController::chooseCustomPipeline() {
    auto* dialog = new CustomPipelineDialog(m_dialogParent);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    if (!m_customPasses.empty()) {
        for (int i = 0; i < dialog->list()->count(); ++i) dialog->list()->item(i)->setCheckState(Qt::Unchecked);
        for (const std::string& name : m_customPasses) dialog->setChecked(name, true);
    }
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        m_customPasses = dialog->passes();
        emit customChosen();
        compilePasses(tr("custom"), m_customPasses);
    });
    m_dialog = dialog;
    dialog->open();
}

void CompileController::compilePasses(const QString& pipeline, const std::vector<std::string>& passes) {
    compile(pipeline, passes, true);
}

void CompileController::compile(const QString& pipeline, const std::vector<std::string>& passes, bool custom) {
    if (!m_session.model()) return;
    emit logged(tr("Compiling with %1: %2 passes").arg(pipeline).arg(passes.size()));
    const PipelineSpec spec{.passes = passes, .customPasses = custom, .target = m_target};
    // A newer choice replaces a compile under way (the runner cancels it and drops its result).
    m_jobs.start(
        this, kCompileJob, tr("Compiling %1").arg(pipeline),
        [model = m_session.model(), spec](const JobRunner::Control& job) -> Result<std::shared_ptr<const CompileResult>> {
            CompileOptions options;
            options.cancel = job.cancelFlag();
            options.progress = [&job](size_t index, size_t count, const std::string&) { job.progress(index, count); };
            auto result = Session::compileWith(*model, spec, options);
            if (!result) return result.status();
            return std::make_shared<const CompileResult>(std::move(*result));
        },
        [this, pipeline, spec](Result<std::shared_ptr<const CompileResult>> result) {
            if (!result) {
                const QString line =
                    tr("Compiling with %1 stopped: %2").arg(pipeline, QString::fromStdString(result.status().message()));
                emit statusMessage(line);
                emit logged(line);
                return;
            }
            m_session.setCompiled(*result, spec);
            const auto& trace = m_session.compiled();
            emit logged(tr("Compiled with %1: %2 passes in %3 ms, %4 -> %5 nodes")
                            .arg(pipeline)
                            .arg(trace->passes.size())
                            .arg(trace->totalMilliseconds, 0, 'f', 1)
                            .arg(trace->imported ? trace->imported->nodeCount() : 0)
                            .arg(trace->passes.empty() ? 0 : trace->passes.back().nodesAfter));
            emit compiledReady(pipeline);
        });
}

}  // namespace fsc
