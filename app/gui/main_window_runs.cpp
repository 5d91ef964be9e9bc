// MainWindow, runs: the graph of the step shown, timed on the CPU off the GUI thread, its
// per-node times in the Run dock and as heat on the canvas.
#include "app/gui/main_window.h"

#include <QAction>
#include <QDockWidget>
#include <QLabel>
#include <QThread>

#include "app/gui/graph_run.h"
#include "compiler/fused_domain.h"
#include "views/graph_canvas.h"
#include "views/pass_list_model.h"
#include "views/run_panel.h"
#include "views/work_indicator.h"

namespace fsc {

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
    const int work = m_work->begin(tr("Running"), [cancel] { cancel->store(true); });
    m_runPanel->setRunning(true);
    log(tr("Running the graph after '%1' on the CPU: %2 warm-up + %3 timed iterations")
            .arg(stepName).arg(request.warmup).arg(request.iterations));
    m_runThread = QThread::create([this, request, cancel, work, step, stepName] {
        auto lastPercent = std::make_shared<int>(-1);
        auto record = runGraph(request, cancel.get(), [this, work, lastPercent](int64_t done, int64_t total) {
            const int percent = int(100 * done / std::max<int64_t>(1, total));
            if (percent == *lastPercent) return;  // one message per percent, not per node
            *lastPercent = percent;
            QMetaObject::invokeMethod(this, [this, work, percent] { m_work->progress(work, percent); });
        });
        QMetaObject::invokeMethod(this, [this, record = std::move(record), work, step, stepName] {
            m_work->end(work);
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

}  // namespace fsc
