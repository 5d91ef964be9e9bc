#include "app/gui/ablation_controller.h"

#include <memory>

#include "app/analysis/ablation.h"
#include "app/analysis/ablation_report.h"
#include "app/common/session.h"
#include "core/units.h"
#include "views/job_runner.h"
#include "views/pass_list_model.h"

namespace fsc {

namespace {

const QString kAblationJob = QStringLiteral("ablation");

QString detailsOf(const PassEffect& e, const AblationReport& report) {
    QString text = QString::fromStdString(e.label);
    if (e.kind == PassEffect::Kind::Measured)
        text += QObject::tr(": %1 against %2 with it; ratio per round %3 to %4")
                    .arg(QString::fromStdString(durationText(e.figures.latency.median)),
                         QString::fromStdString(durationText(report.full.latency.median)))
                    .arg(e.lowestRatio, 0, 'f', 2)
                    .arg(e.highestRatio, 0, 'f', 2);
    if (!e.note.empty()) text += QStringLiteral(": ") + QString::fromStdString(e.note);
    for (const PassInteraction& i : e.enables)
        text += QObject::tr("\nenables %1 (%2 rewrites, %3 without it)")
                    .arg(QString::fromStdString(i.pass))
                    .arg(i.appliedWith)
                    .arg(i.appliedWithout);
    for (const PassInteraction& i : e.takesOver)
        text += QObject::tr("\n%1 takes over (%2 rewrites, %3 without it)")
                    .arg(QString::fromStdString(i.pass))
                    .arg(i.appliedWith)
                    .arg(i.appliedWithout);
    return text;
}

}  // namespace

AblationController::AblationController(JobRunner& jobs, PassListModel& passes, QObject* parent)
    : QObject(parent), m_jobs(jobs), m_passes(passes) {}

bool AblationController::ablate(const Session& session, int rounds) {
    if (!session.model() || !session.compiledResult()) {
        emit statusMessage(tr("Nothing to ablate yet: open a model and let it compile"));
        return false;
    }
    if (m_jobs.busy(this, kAblationJob)) return true;
    const std::shared_ptr<const Model> model = session.model();
    const PipelineSpec pipeline = session.pipeline();
    const std::string name = pipeline.customPasses ? "custom" : "the pipeline";
    emit logged(tr("Ablating %1 passes on the %2 backend: each left out in turn, %3 alternating rounds")
                    .arg(pipeline.passes.size())
                    .arg(QString::fromLatin1(pipeline.target.name()))
                    .arg(rounds));
    m_jobs.start(
        this, kAblationJob, tr("Ablating passes"),
        [model, pipeline, name, rounds](const JobRunner::Control& job) {
            AblationOptions options;
            options.rounds = rounds;
            return ablatePasses(*model, pipeline, name, options, job.cancelFlag(),
                                [&job](const AblationProgress& p) { job.progress(size_t(p.done), size_t(p.total)); });
        },
        [this](Result<AblationReport> report) {
            if (!report) {
                emit logged(tr("Ablation stopped: %1").arg(QString::fromStdString(report.status().message())));
                emit statusMessage(tr("Ablation stopped"));
                return;
            }
            QMap<QString, PassListModel::PassEffectText> effects;
            for (const PassEffect& e : report->without) {
                const int sign = e.kind == PassEffect::Kind::Measured && e.aboveNoise ? (e.deltaMs > 0 ? 1 : -1) : 0;
                effects.insert(QString::fromStdString(e.pass),
                               {QString::fromStdString(effectVerdict(e)), detailsOf(e, *report), sign});
            }
            m_passes.setEffects(std::move(effects));
            emit logged(tr("Ablation done in %1 s: the full pipeline %2 median; the Passes list's Effect column has each pass")
                            .arg(report->seconds, 0, 'f', 1)
                            .arg(QString::fromStdString(durationText(report->full.latency.median))));
            emit statusMessage(tr("Ablation done"));
        });
    return true;
}

}  // namespace fsc
