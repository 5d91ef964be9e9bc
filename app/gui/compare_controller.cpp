#include "app/gui/compare_controller.h"

#include <algorithm>
#include <map>

#include "app/common/session.h"
#include "core/provenance.h"
#include "core/units.h"
#include "views/job_runner.h"

namespace fsc {

namespace {

const QString kCompareJob = QStringLiteral("compare");

}  // namespace

CompareController::CompareController(JobRunner& jobs, QObject* parent)
    : QObject(parent), m_jobs(jobs) {}

std::vector<CompareVariant> CompareController::variantsOf(const Session& session) {
    if (!session.model() || !session.compiledResult()) return {};
    const PipelineSpec shown = session.pipeline();
    auto variant = [&shown](const Target& target, Precision precision, const char* precisionName) {
        CompareVariant v{std::string(target.name()) + "/" + precisionName, shown};
        v.pipeline.target = target;
        v.pipeline.precision = precision;
        return v;
    };
    Target cpu;
    cpu.threads = shown.target.threads;
    std::vector<CompareVariant> out{variant(cpu, Precision::Float32, "fp32")};
    if (shown.target.backend != cpu.backend)
        out.push_back(variant(shown.target, Precision::Float32, "fp32"));
    out.push_back(variant(shown.target, Precision::Float16, "fp16"));
    out.push_back(variant(shown.target, Precision::BFloat16, "bf16"));
    out.push_back(variant(shown.target, Precision::Int8, "int8"));
    return out;
}

bool CompareController::compare(const Session& session, int rounds) {
    const std::vector<CompareVariant> variants = variantsOf(session);
    if (variants.empty()) {
        emit statusMessage(tr("Nothing to compare yet: open a model and let it compile"));
        return false;
    }
    if (m_jobs.busy(this, kCompareJob)) return true;
    QStringList labels;
    for (const CompareVariant& v : variants) labels << QString::fromStdString(v.label);
    emit logged(tr("Comparing %1 node by node against %2: each profiled, bisected against it, and "
                   "timed in %3 "
                   "alternating rounds")
                    .arg(labels.join(QStringLiteral(", ")), labels.front())
                    .arg(rounds));
    const std::shared_ptr<const Model> model = session.model();
    CompareOptions options;
    options.rounds = rounds;
    // Each variant is profiled, then bisected; then all are timed together.
    const size_t steps = 2 * variants.size();
    m_jobs.start(
        this, kCompareJob, tr("Comparing variants"),
        [model, variants, options, steps](const JobRunner::Control& job) {
            size_t step = 0;
            return compareVariants(*model, variants, 0, options, job.cancelFlag(),
                                   [&job, &step, steps](const std::string&) {
                                       job.progress(std::min(++step, steps), steps);
                                   });
        },
        [this](Result<VariantComparison> comparison) {
            if (!comparison) {
                emit logged(tr("Compare stopped: %1")
                                .arg(QString::fromStdString(comparison.status().message())));
                emit statusMessage(tr("Compare stopped"));
                emit stopped(QString::fromStdString(comparison.status().message()));
                return;
            }
            auto shared = std::make_shared<const VariantComparison>(std::move(*comparison));
            QStringList figures;
            for (const VariantSummary& v : shared->variants)
                figures << tr("%1 %2 %3")
                               .arg(QString::fromStdString(v.label),
                                    QString::fromStdString(durationText(v.medianMs)),
                                    QString::fromStdString(vsBaselineText(v, shared->rounds)));
            emit logged(tr("Compare: %1").arg(figures.join(QStringLiteral("; "))));
            emit statusMessage(tr("Compare done: the Variants dock has every ONNX node"));
            emit finished(shared);
        });
    emit started();
    return true;
}

CompareController::Overlay CompareController::overlayFor(const Graph& shown,
                                                         const VariantComparison& comparison,
                                                         size_t variant, Measure measure,
                                                         size_t over) {
    Overlay overlay;
    overlay.heat.unit = measure == Measure::Error ? HeatUnit::RelativeError : HeatUnit::TimeRatio;
    overlay.heat.values.assign(shown.nodeArenaSize(), 0.0);
    if (variant >= comparison.variants.size() || over >= comparison.variants.size()) return overlay;
    std::map<std::string, double> figureOf;  // ONNX node -> its figure
    for (const CompareRow& row : comparison.rows) {
        const NodeCell& cell = row.cells[variant];
        const NodeCell& base = row.cells[over];
        if (!cell.ran) continue;
        if (measure == Measure::Error && cell.error >= 0) figureOf[row.node] = cell.error;
        if (measure == Measure::TimeRatio && base.ran && base.ms > 0)
            figureOf[row.node] = cell.ms / base.ms;
    }
    for (NodeId id : shown.order()) {
        bool heated = false;
        for (const std::string& name : ownAndOriginNames(shown, id))
            if (const auto at = figureOf.find(name); at != figureOf.end()) {
                overlay.heat.values[id.index] = std::max(overlay.heat.values[id.index], at->second);
                heated = true;
            }
        overlay.nodesHeated += heated;
    }
    return overlay;
}

}  // namespace fsc
