// MainWindow, a pass left out: while View > Compare with the compile without the selected
// pass is on, selecting a pass shows the full compile on the right and, on the left, the
// compile without every step of that pass (as ablation compiles it), made in the background
// once per pass; what only one side has is outlined (Session::diffByProvenance).
#include <QAction>

#include <algorithm>
#include "app/analysis/ablation.h"
#include "app/gui/main_window.h"
#include "app/gui/main_window_shown_step.h"

#include "views/job_runner.h"
#include "views/status_line.h"

namespace fsc {

namespace {

constexpr size_t kWithoutPassKept = 4;

}  // namespace

void MainWindow::setCompareWithout(bool on) {
    if (on)  // one comparison at a time
        if (QAction* step = findChild<QAction*>(QStringLiteral("compareAction")))
            step->setChecked(false);
    if (QAction* self = findChild<QAction*>(QStringLiteral("compareWithoutAction")))
        self->setChecked(on);
    m_compareWithout = on;
    m_compare = on;  // the left pane shown, selections linked by provenance
    m_compareBase = -1;
    m_before->setVisible(on);
    const int row = m_selection.step() >= 0 ? m_selection.step() : m_session.step();
    if (row >= 0) showStep(row);
}

void MainWindow::startStepWithout(int row) {
    const std::shared_ptr<const CompileTrace> trace = m_session.compiled();
    const int last = trace ? int(trace->passes.size()) : -1;
    const std::shared_ptr<const GraphSnapshot> full = m_session.snapshotAt(last);
    if (!full || row < 0 || row > last) return;
    const std::string pass = row > 0 ? trace->passes[size_t(row - 1)].name : std::string();
    const QString name = QString::fromStdString(pass);
    std::shared_ptr<const Graph> known = last == m_session.step() ? m_session.stepGraph() : nullptr;
    std::shared_ptr<const Graph> left;
    if (const auto at = m_withoutPass.find(pass); row > 0 && at != m_withoutPass.end())
        left = at->second;
    const std::shared_ptr<const GraphSnapshot> imported = m_session.snapshotAt(0);
    const std::shared_ptr<const Model> model = m_session.model();
    const PipelineSpec without = pipelineWithout(m_session.pipeline(), pass);
    m_jobs.start(
        this, kStepJob, row > 0 && !left ? tr("Compiling without %1").arg(name) : QString(),
        [=](const JobRunner::Control& job) {
            ShownStep s{last, full, known ? known : full->materialize()};
            s.changes = ChangesPanel::rowsOf(last > 0 ? &trace->passes[size_t(last - 1)] : nullptr,
                                             *s.graph);
            s.previous = row == 0 ? imported->materialize() : left;
            if (!s.previous) {
                CompileOptions options;
                options.keepSnapshots = false;
                options.cancel = job.cancelFlag();
                auto compiled = Session::compileWith(*model, without, options);
                if (!compiled) {
                    s.note = tr("Without %1 the model does not compile: %2")
                                 .arg(name, QString::fromStdString(compiled.status().message()));
                    return s;
                }
                auto variant = std::make_shared<const Model>(std::move(compiled->model));
                s.previous = std::shared_ptr<const Graph>(variant, variant->graph.get());
            }
            const Session::StepDiff diff = Session::diffByProvenance(*s.previous, *s.graph);
            s.before = ShownStep::marksOf(diff.before);
            s.after = ShownStep::marksOf(diff.after);
            const auto count = [](const std::vector<GraphCanvas::Mark>& marks) {
                return std::count(marks.begin(), marks.end(), GraphCanvas::Mark::Removed) +
                       std::count(marks.begin(), marks.end(), GraphCanvas::Mark::Added);
            };
            s.note = tr("Left: %1 (%2 nodes, %3 only there); right: the full compile (%4 nodes, %5 "
                        "only there)")
                         .arg(row == 0 ? tr("the imported graph")
                                       : tr("the compile without %1").arg(name))
                         .arg(s.previous->nodeCount())
                         .arg(count(s.before))
                         .arg(s.graph->nodeCount())
                         .arg(count(s.after));
            return s;
        },
        [this, row, pass](ShownStep s) {
            if (row > 0 && s.previous) {
                // Each holds a compiled model (ResNet-50's weights are 100 MB): a few at a time.
                if (m_withoutPass.size() >= kWithoutPassKept) m_withoutPass.clear();
                m_withoutPass[pass] = s.previous;
            }
            const QString note = s.note;
            log(note);
            applyStep(std::move(s));
            m_status->setText(note);  // which pane is which
        });
}

}  // namespace fsc
