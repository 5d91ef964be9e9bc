#include "app/gui/run_controller.h"

#include <QFileDialog>
#include <QInputDialog>
#include <QMessageBox>
#include <QStringList>

#include <optional>
#include <utility>

#include "app/profiling/profile_session.h"
#include "app/common/session.h"
#include "app/profiling/simulated_trace.h"
#include "app/common/target_choice.h"
#include "app/profiling/trace_recorder.h"
#include "core/units.h"
#include "profiler/node_stats.h"
#include "profiler/run_store.h"
#include "views/job_runner.h"
#include "views/run_panel.h"
#include "views/selection.h"

namespace fsc {

// A run made ready for the docks on the job's thread: the trace and its per-node rows.
struct RunController::Shown {
    std::shared_ptr<const Trace> trace;
    std::vector<NodeTime> times;
    int64_t topLevelNs = 0;
};

namespace {

const QString kRunJob = QStringLiteral("run");
const QString kRunStoreJob = QStringLiteral("run store");

QString joined(const std::vector<std::string>& list) {
    QStringList out;
    for (const std::string& s : list) out << QString::fromStdString(s);
    return out.join(QStringLiteral("; "));
}

RunController::Shown prepare(Trace trace) {
    RunController::Shown run;
    run.trace = std::make_shared<const Trace>(std::move(trace));
    const NodeStatsCollector times = nodeTimes(*run.trace);
    run.times = times.sorted();
    run.topLevelNs = times.topLevelMedianNs();
    return run;
}

}  // namespace

RunController::RunController(JobRunner& jobs, Session& session, Selection& selection, RunPanel& panel,
                             QWidget* dialogParent)
    : QObject(dialogParent), m_jobs(jobs), m_session(session), m_selection(selection), m_panel(panel),
      m_dialogParent(dialogParent) {}

bool RunController::simulate(const Graph* graph, const QString& interconnect) {
    const PartitionShape shape = graph ? partitionShape(*graph) : PartitionShape{};
    if (shape.devices < 2) {
        emit statusMessage(tr("The graph shown is not partitioned: choose a pipeline with tensor-parallel or pipeline-parallel"));
        return false;
    }
    // Quick (the cost model per node), so on the GUI thread.
    auto result = fsc::simulateDevices(*graph, shape, interconnect.toStdString(), 4);
    if (!result) {
        emit statusMessage(QString::fromStdString(result.status().message()));
        return false;
    }
    const SimulatedRun& run = result->run;
    const Interconnect* link = &result->link;
    emit simulated(result->trace);
    emit logged(tr("Simulated (not measured) on %1 devices over %2%3: %4 us against %5 us on one, speed-up %6x; "
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

// Not modal: the run goes on (on the CPU) while the message is read.
void RunController::showCpuFallback(const QString& title, const QString& why) {
    emit logged(tr("%1: %2; running on the CPU instead").arg(title, why));
    auto* box = new QMessageBox(QMessageBox::Warning, title, tr("%1.\n\nThe graph runs on the CPU instead.").arg(why),
                                QMessageBox::Ok, m_dialogParent);
    box->setObjectName(QStringLiteral("cpuFallbackDialog"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

Target RunController::chooseBackend(bool cuda) {
    m_target = Target{};
    if (!cuda) return m_target;
    // A GPU asked for but not usable: say why, and run on the CPU rather than not at all.
    auto target = makeTarget({.backend = "cuda"});
    if (target)
        m_target = *target;
    else
        showCpuFallback(tr("No CUDA device"), QString::fromStdString(target.status().message()));
    return m_target;
}

void RunController::runIfWaiting() {
    if (std::exchange(m_waiting, false)) runShownGraph();
}

void RunController::runShownGraph() {
    const int step = m_session.step();
    auto snapshot = m_session.snapshotAt(step);
    if (m_jobs.busy(this, kRunJob) || !snapshot) {
        if (!snapshot) emit statusMessage(tr("Nothing to run yet: open a model and let it compile"));
        return;
    }
    // The graph shown was compiled for another target than the one chosen since: its compile
    // for the chosen one is on its way, and the run follows it.
    if (m_session.pipeline().target.backend != m_target.backend) {
        m_waiting = true;
        emit statusMessage(tr("Compiling for the %1 first; the run follows").arg(QString::fromLatin1(m_target.name())));
        return;
    }
    const QString stepName = QString::fromStdString(m_session.stepLabel(step));
    Target target = m_session.pipeline().target;
    target.threads = m_panel.threads();
    ProfileRequest request = m_session.profileRequest(snapshot->materialize(), target, stepName.toStdString());
    request.feeds = m_panel.feedOptions();
    request.warmup = m_panel.warmup();
    request.iterations = m_panel.iterations();
    const QString where = request.target.device ? QString::fromStdString(request.target.device->name()) : tr("the CPU");
    m_panel.setRunning(true);
    emit logged(tr("Running the graph after '%1' on %2: %3 warm-up + %4 iterations, each with and without "
                   "the profiler")
                    .arg(stepName, where)
                    .arg(request.warmup)
                    .arg(request.iterations));
    struct Ran {
        Status status = Status::ok();
        Shown run;
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
                ran.run = prepare(std::move(*trace));
            else
                ran.status = trace.status();
            return ran;
        },
        [this, step, stepName](Ran ran) {
            m_panel.setRunning(false);
            if (!ran.gpuError.isEmpty()) showCpuFallback(tr("The CUDA run failed"), ran.gpuError);
            if (!ran.status.isOk()) {
                m_lastError = QString::fromStdString(ran.status.message());
                const QString line = tr("Run stopped: %1").arg(m_lastError);
                emit statusMessage(line);
                emit logged(line);
                emit finished(false);
                return;
            }
            show(ran.run, step);
            emit logged(tr("Ran '%1': %2").arg(stepName, m_panel.summary()));
            emit finished(true);
        });
}

void RunController::show(const Shown& run, int step) {
    const auto& trace = run.trace;
    m_session.setRun(trace, step);
    m_selection.setRunGraph(m_session.runMatchesStep() ? m_session.stepGraph() : nullptr);
    const int64_t arena = trace->measuredMemory.empty() ? 0 : trace->measuredMemory.front().bytes;
    const QString summary =
        tr("median %1 ms (%2 ms profiled, %3) over %4 iterations on %5; arena %6; inputs: %7")
            .arg(trace->unprofiledMs, 0, 'f', 3)
            .arg(trace->profiledMs, 0, 'f', 3)
            .arg(QString::fromStdString(trace->overheadText()))
            .arg(trace->iterations)
            .arg(QString::fromStdString(trace->device))
            .arg(QString::fromStdString(bytesText(double(arena))))
            .arg(joined(trace->inputs)) +
        (trace->timingWarning.empty()
             ? QString()
             : QStringLiteral("\n") + tr("Warning: %1.").arg(QString::fromStdString(trace->timingWarning)));
    m_panel.showTimes(summary, run.times, run.topLevelNs);
    emit runShown(trace, step < 0);
}

namespace {

// What a run store holds, read in the background: its runs, and the trace of the one asked
// for (none when it must be chosen first).
struct StoredRun {
    Status error = Status::ok();
    std::vector<RunSummary> runs;
    int64_t runId = -1;
    std::optional<RunController::Shown> run;
};

StoredRun failed(Status why) {
    StoredRun out;
    out.error = std::move(why);
    return out;
}

StoredRun readRunStore(const std::string& path, int64_t runId) {
    StoredRun out;
    auto store = RunStore::openExisting(path);
    if (!store) return failed(store.status());
    auto runs = (*store)->runs();
    if (!runs) return failed(runs.status());
    if (runs->empty()) return failed(Status(ErrorCode::InvalidArgument, path + ": the run store holds no runs"));
    out.runs = std::move(*runs);
    out.runId = runId < 0 && out.runs.size() == 1 ? out.runs.front().id : runId;
    if (out.runId < 0) return out;  // several: the user picks one
    auto trace = (*store)->loadTrace(out.runId);
    if (!trace) return failed(trace.status());
    out.run = prepare(std::move(*trace));
    return out;
}

}  // namespace

void RunController::openRunStore(const QString& path, int64_t runId) {
    m_jobs.start(
        this, kRunStoreJob, tr("Reading %1").arg(path),
        [path = path.toStdString(), runId](const JobRunner::Control&) { return readRunStore(path, runId); },
        [this, path](StoredRun stored) {
            if (!stored.error.isOk()) {
                const QString why = QString::fromStdString(stored.error.message());
                emit logged(tr("error: %1").arg(why));
                auto* box = new QMessageBox(QMessageBox::Critical, tr("Could not open the run store"), why,
                                            QMessageBox::Ok, m_dialogParent);
                box->setAttribute(Qt::WA_DeleteOnClose);
                box->open();
                emit storeOpened(false);
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
                const QString item = QInputDialog::getItem(m_dialogParent, tr("Open a run"), tr("Runs in %1").arg(path),
                                                           items, int(items.size()) - 1, false, &ok);
                if (!ok) return emit storeOpened(false);
                openRunStore(path, item.section(QLatin1Char(':'), 0, 0).toLongLong());
                return;
            }
            show(*stored.run, -1);  // its node ids need not match the graph shown
            emit logged(tr("Opened run %1 of %2").arg(stored.runId).arg(path));
            emit storeOpened(true);
        });
}

void RunController::chooseRunStore() {
    const QString path = QFileDialog::getOpenFileName(m_dialogParent, tr("Open a run store"), {},
                                                      tr("Fusescope runs (*.fsdb);;All files (*)"));
    if (!path.isEmpty()) openRunStore(path);
}

}  // namespace fsc
