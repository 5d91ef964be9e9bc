// MainWindow, runs: the graph of the step shown, profiled on the CPU off the GUI thread
// (the profiler's own overhead measured), its per-node times in the Run dock, as heat on
// the canvas and on the timeline; and runs read back from a run store (.fsdb).
#include "app/gui/main_window.h"

#include <QAction>
#include <QDockWidget>
#include <QFileDialog>
#include <QInputDialog>
#include <QLabel>
#include <QMessageBox>

#include <map>

#include "app/common/profile_session.h"
#include "app/common/target_choice.h"
#include "app/common/trace_recorder.h"
#include "compiler/backends/cuda/device.h"
#include "core/units.h"
#include "profiler/node_stats.h"
#include "profiler/run_store.h"
#include "views/status_line.h"
#include "views/graph_canvas.h"
#include "views/memory_view.h"
#include "views/node_properties_view.h"
#include "views/pass_list_model.h"
#include "views/roofline_view.h"
#include "views/run_panel.h"
#include "views/timeline_view.h"
#include "views/work_indicator.h"

namespace fsc {

// A run made ready for the docks on the job's thread: the trace and its per-node rows.
struct MainWindow::ShownRun {
    std::shared_ptr<const Trace> trace;
    std::vector<NodeTime> times;
    int64_t topLevelNs = 0;
};

namespace {

MainWindow::ShownRun prepareRun(Trace trace) {
    MainWindow::ShownRun run;
    run.trace = std::make_shared<const Trace>(std::move(trace));
    const NodeStatsCollector times = nodeTimes(*run.trace);
    run.times = times.sorted();
    run.topLevelNs = times.topLevelMedianNs();
    return run;
}

QString joined(const std::vector<std::string>& list) {
    QStringList out;
    for (const std::string& s : list) out << QString::fromStdString(s);
    return out.join(QStringLiteral("; "));
}

}  // namespace

// Not modal: the run goes on (on the CPU) while the message is read.
void MainWindow::showCpuFallback(const QString& title, const QString& why) {
    log(tr("%1: %2; running on the CPU instead").arg(title, why));
    auto* box = new QMessageBox(QMessageBox::Warning, title,
                                tr("%1.\n\nThe graph runs on the CPU instead.").arg(why),
                                QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("cpuFallbackDialog"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

void MainWindow::runShownGraph() {
    const int step = m_session.step();
    auto snapshot = m_session.snapshotAt(step);
    if (m_jobs.busy(this, kRunJob) || !snapshot) {
        if (!snapshot) m_status->setText(tr("Nothing to run yet: open a model and let it compile"));
        return;
    }
    const QString stepName = QString::fromStdString(m_session.stepLabel(step));
    Target cpu;
    cpu.threads = m_runPanel->threads();
    ProfileRequest request = m_session.profileRequest(snapshot->materialize(), cpu, stepName.toStdString());
    request.feeds = m_runPanel->feedOptions();
    request.warmup = m_runPanel->warmup();
    request.iterations = m_runPanel->iterations();
    // A GPU asked for but not usable: say why, and run on the CPU rather than not at all.
    if (m_runPanel->cudaSelected()) {
        auto target = makeTarget({.backend = "cuda", .threads = request.target.threads});
        if (target)
            request.target = *target;
        else
            showCpuFallback(tr("No CUDA device"),
                            QString::fromStdString(target.status().message()));
    }
    const QString where =
        request.target.device ? QString::fromStdString(request.target.device->name()) : tr("the CPU");
    m_runPanel->setRunning(true);
    log(tr("Running the graph after '%1' on %2: %3 warm-up + %4 iterations, each with and without "
           "the profiler")
            .arg(stepName, where)
            .arg(request.warmup)
            .arg(request.iterations));
    struct Ran {
        Status status = Status::ok();
        ShownRun run;
        QString gpuError;  // a CUDA run that failed and was run again on the CPU
    };
    m_jobs.start(
        this, kRunJob, tr("Running"),
        [request](const JobRunner::Control& job) mutable {
            auto progress = [&job](int done, int total) { job.progress(size_t(done), size_t(total)); };
            Ran ran;
            auto trace = profileGraph(request, job.cancelFlag(), progress);
            // Out of device memory, no CUPTI, a kernel error: run again on the CPU, say why.
            if (!trace && request.target.device && !job.cancelled()) {
                ran.gpuError = QString::fromStdString(trace.status().message());
                request.target.backend = Backend::Cpu;
                request.target.device.reset();
                trace = profileGraph(request, job.cancelFlag(), progress);
            }
            if (trace)
                ran.run = prepareRun(std::move(*trace));
            else
                ran.status = trace.status();
            return ran;
        },
        [this, step, stepName](Ran ran) {
            m_runPanel->setRunning(false);
            if (!ran.gpuError.isEmpty()) showCpuFallback(tr("The CUDA run failed"), ran.gpuError);
            if (!ran.status.isOk()) {
                m_lastRunError = QString::fromStdString(ran.status.message());
                m_status->setText(tr("Run stopped: %1").arg(m_lastRunError));
                log(m_status->text());
                emit runFinished(false);
                return;
            }
            showRun(std::move(ran.run), step);
            log(tr("Ran '%1': %2").arg(stepName, m_runPanel->summary()));
            emit runFinished(true);
        });
}

void MainWindow::showRun(ShownRun run, int step) {
    const auto trace = run.trace;
    m_session.setRun(trace, step);
    updateRunGraph();
    const int64_t arena = trace->measuredMemory.empty() ? 0 : trace->measuredMemory.front().bytes;
    const QString summary = tr("median %1 ms (%2 ms profiled, %3) over %4 iterations on "
                               "%5; arena %6; inputs: %7")
                                .arg(trace->unprofiledMs, 0, 'f', 3)
                                .arg(trace->profiledMs, 0, 'f', 3)
                                .arg(QString::fromStdString(trace->overheadText()))
                                .arg(trace->iterations)
                                .arg(QString::fromStdString(trace->device))
                                .arg(QString::fromStdString(bytesText(double(arena))))
                                .arg(joined(trace->inputs)) +
                          (trace->timingWarning.empty() ? QString()
                                                        : QStringLiteral("\n") + tr("Warning: %1.").arg(QString::fromStdString(trace->timingWarning)));
    m_runPanel->showTimes(summary, std::move(run.times), run.topLevelNs);
    m_timeline->setTrace(trace);
    m_memory->setTrace(trace);
    m_rooflineView->setTrace(trace);
    raiseDock(QStringLiteral("runDock"));
    applyRunHeat();
}

void MainWindow::updateRunGraph() {
    m_selection.setRunGraph(m_session.runMatchesStep() ? m_session.stepGraph() : nullptr);
}

bool MainWindow::runMatchesCanvas() const {
    return m_session.runMatchesStep() && m_subgraphs.empty();  // a body's ids are not the step's
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
    const QAction* on = findChild<QAction*>(QStringLiteral("heatAction"));
    if (!runMatchesCanvas() || (on && !on->isChecked())) {
        m_canvas->clearHeat();
        return;
    }
    m_canvas->setHeat(m_session.runHeat(m_heatUnit));
}

namespace {

// What a run store holds, read in the background: its runs, and the trace of the one asked
// for (none when it must be chosen first).
struct StoredRun {
    Status error = Status::ok();
    std::vector<RunSummary> runs;
    int64_t runId = -1;
    std::optional<MainWindow::ShownRun> run;
};

StoredRun readRunStore(const std::string& path, int64_t runId) {
    StoredRun out;
    auto store = RunStore::openExisting(path);
    if (!store) return {store.status()};
    auto runs = (*store)->runs();
    if (!runs) return {runs.status()};
    if (runs->empty()) return {Status(ErrorCode::InvalidArgument, path + ": the run store holds no runs")};
    out.runs = std::move(*runs);
    out.runId = runId < 0 && out.runs.size() == 1 ? out.runs.front().id : runId;
    if (out.runId < 0) return out;  // several: the user picks one
    auto trace = (*store)->loadTrace(out.runId);
    if (!trace) return {trace.status()};
    out.run = prepareRun(std::move(*trace));
    return out;
}

}  // namespace

void MainWindow::openRunStore(const QString& path, int64_t runId) {
    m_jobs.start(
        this, kRunStoreJob, tr("Reading %1").arg(path),
        [path = path.toStdString(), runId](const JobRunner::Control&) { return readRunStore(path, runId); },
        [this, path](StoredRun stored) {
            if (!stored.error.isOk()) {
                const QString why = QString::fromStdString(stored.error.message());
                log(tr("error: %1").arg(why));
                auto* box = new QMessageBox(QMessageBox::Critical, tr("Could not open the run store"), why,
                                            QMessageBox::Ok, this);
                box->setAttribute(Qt::WA_DeleteOnClose);
                box->open();
                emit runStoreOpened(false);
                return;
            }
            if (!stored.run) {  // which run?
                QStringList items;
                for (const RunSummary& r : stored.runs)
                    items << tr("%1: %2, %3 on %4, %5")
                                 .arg(r.id)
                                 .arg(QString::fromStdString(r.model), QString::fromStdString(r.pipeline),
                                      QString::fromStdString(r.device), QString::fromStdString(r.startedAt));
                bool ok = false;
                const QString item = QInputDialog::getItem(this, tr("Open a run"), tr("Runs in %1").arg(path), items,
                                                           int(items.size()) - 1, false, &ok);
                if (!ok) return emit runStoreOpened(false);
                openRunStore(path, item.section(QLatin1Char(':'), 0, 0).toLongLong());
                return;
            }
            m_canvas->clearHeat();
            showRun(std::move(*stored.run), -1);  // its node ids need not match the graph shown
            raiseDock(QStringLiteral("timelineDock"));
            log(tr("Opened run %1 of %2").arg(stored.runId).arg(path));
            emit runStoreOpened(true);
        });
}

void MainWindow::chooseRunStore() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open a run store"), {},
                                                      tr("Fusescope runs (*.fsdb);;All files (*)"));
    if (!path.isEmpty()) openRunStore(path);
}

}  // namespace fsc
