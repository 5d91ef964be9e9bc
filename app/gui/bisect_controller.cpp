#include "app/gui/bisect_controller.h"

#include <QStringList>

#include <algorithm>
#include <map>

#include "app/common/session.h"
#include "core/provenance.h"
#include "views/job_runner.h"

namespace fsc {

namespace {

const QString kBisectJob = QStringLiteral("bisect");

// "; inside fused_3, unfused: the error jumps at /ln/Add (Add: 1.0e-05 -> 3.2e-02)".
QString insideText(const BisectReport& report) {
    QStringList ops;
    for (const GroupError& g : report.inside)
        if (g.firstJump)
            ops << QStringLiteral("%1 (%2: %3 -> %4)")
                       .arg(QString::fromStdString(g.node), QString::fromStdString(g.op))
                       .arg(g.inputError, 0, 'e', 1)
                       .arg(g.error, 0, 'e', 1);
    const QString group = QString::fromStdString(report.insideGroup);
    if (!ops.isEmpty())
        return BisectController::tr("; inside %1, unfused: the error jumps at %2").arg(group, ops.join(QStringLiteral(", ")));
    if (!report.insideNote.empty())
        return BisectController::tr("; inside %1: %2").arg(group, QString::fromStdString(report.insideNote));
    return BisectController::tr("; inside %1, unfused: no single op's error jumps").arg(group);
}

}  // namespace

BisectController::BisectController(JobRunner& jobs, QObject* parent) : QObject(parent), m_jobs(jobs) {}

QStringList BisectController::candidates() {
    return {QStringLiteral("fp16"), QStringLiteral("bf16"), QStringLiteral("int8"), QStringLiteral("target")};
}

bool BisectController::bisect(const Session& session, const QString& candidate) {
    if (!session.model() || !session.compiledResult()) {
        emit statusMessage(tr("Nothing to bisect yet: open a model and let it compile"));
        return false;
    }
    if (!candidates().contains(candidate)) {
        emit statusMessage(tr("Unknown bisection candidate '%1'").arg(candidate));
        return false;
    }
    if (m_jobs.busy(this, kBisectJob)) return true;
    BisectSide reference{"cpu/fp32", session.pipeline(), std::nullopt};
    reference.pipeline.target = Target{};
    reference.pipeline.target.threads = session.pipeline().target.threads;
    reference.pipeline.precision = Precision::Float32;
    BisectSide side{"", session.pipeline(), std::nullopt};
    const std::string backend = side.pipeline.target.name();
    if (candidate == QStringLiteral("fp16")) side.pipeline.precision = Precision::Float16;
    if (candidate == QStringLiteral("bf16")) side.pipeline.precision = Precision::BFloat16;
    if (candidate == QStringLiteral("int8")) side.pipeline.precision = Precision::Int8;
    if (candidate == QStringLiteral("target")) side.pipeline.precision = Precision::Float32;
    side.label = backend + "/" + (candidate == QStringLiteral("target") ? std::string("fp32") : candidate.toStdString());
    const std::shared_ptr<const Model> model = session.model();
    emit logged(tr("Bisecting %1 against cpu/fp32: every value both compiles make, compared on the same inputs")
                    .arg(QString::fromStdString(side.label)));
    m_jobs.start(
        this, kBisectJob, tr("Bisecting numerics"),
        [model, reference, side](const JobRunner::Control& job) {
            int step = 0;
            return bisectNumerics(*model, reference, side, BisectOptions{}, job.cancelFlag(),
                                  [&job, &step](const std::string&) { job.progress(size_t(++step), 5); });
        },
        [this](Result<BisectReport> report) {
            if (!report) {
                emit logged(tr("Bisection stopped: %1").arg(QString::fromStdString(report.status().message())));
                emit statusMessage(tr("Bisection stopped"));
                return;
            }
            auto shared = std::make_shared<const BisectReport>(std::move(*report));
            QString line = tr("Bisection of %1: %2 values compared, output error %3; ")
                               .arg(QString::fromStdString(shared->candidate))
                               .arg(shared->groups.size())
                               .arg(shared->outputError, 0, 'e', 2);
            if (shared->firstJumps.empty()) {
                line += tr("no group's error jumps above %1").arg(shared->threshold, 0, 'e', 1);
            } else {
                QStringList jumps;
                for (size_t i : shared->firstJumps) {
                    const GroupError& g = shared->groups[i];
                    jumps << tr("%1 (%2: %3 -> %4)")
                                 .arg(QString::fromStdString(g.node), QString::fromStdString(g.op))
                                 .arg(g.inputError, 0, 'e', 1)
                                 .arg(g.error, 0, 'e', 1);
                }
                line += tr("first jumps, outlined: %1").arg(jumps.join(QStringLiteral(", ")));
                line += insideText(*shared);
            }
            emit logged(line);
            emit statusMessage(tr("Bisection done: the graph is heated by relative error"));
            emit finished(shared);
        });
    return true;
}

BisectController::Overlay BisectController::overlayFor(const Graph& shown, const BisectReport& report) {
    // Each name (a group's, or an ONNX node's inside a group) to its largest error.
    std::map<std::string, double> errorOf;
    std::map<std::string, bool> jumpOf;
    auto note = [&](const std::string& name, double error, bool firstJump) {
        double& e = errorOf[name];
        e = std::max(e, error);
        jumpOf[name] = jumpOf[name] || firstJump;
    };
    for (const GroupError& g : report.groups) {
        note(g.node, g.error, g.firstJump);
        for (const std::string& member : g.onnxNodes) note(member, g.error, g.firstJump);
    }
    // Inside the first jump's group, rerun unfused, each ONNX node has its own error: that,
    // not the group's, is what its node shows, and only the ops that jump there are outlined.
    // A step where the group is one node still shows the group's figure and outline.
    if (std::any_of(report.inside.begin(), report.inside.end(), [](const GroupError& g) { return g.firstJump; }))
        for (const std::string& member : report.groups[report.firstJumps.front()].onnxNodes) jumpOf[member] = false;
    for (const GroupError& g : report.inside) {
        errorOf[g.node] = g.error;
        jumpOf[g.node] = jumpOf[g.node] || g.firstJump;
    }
    Overlay overlay;
    overlay.heat.unit = HeatUnit::RelativeError;
    overlay.heat.values.assign(shown.nodeArenaSize(), 0.0);
    overlay.marks.assign(shown.nodeArenaSize(), GraphCanvas::Mark::None);
    for (NodeId id : shown.order()) {
        bool heated = false, jump = false;
        for (const std::string& name : ownAndOriginNames(shown, id))
            if (const auto at = errorOf.find(name); at != errorOf.end()) {
                overlay.heat.values[id.index] = std::max(overlay.heat.values[id.index], at->second);
                heated = true;
                jump = jump || jumpOf[name];
            }
        overlay.nodesHeated += heated;
        if (jump) {
            overlay.marks[id.index] = GraphCanvas::Mark::FirstJump;
            ++overlay.firstJumps;
        }
    }
    return overlay;
}

}  // namespace fsc
