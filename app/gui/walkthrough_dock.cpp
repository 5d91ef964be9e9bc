#include "app/gui/walkthrough_dock.h"

#include <QComboBox>
#include <QFile>
#include <QHBoxLayout>
#include <QImage>
#include <QLabel>
#include <QPainter>
#include <QPointer>
#include <QPushButton>
#include <QSvgRenderer>
#include <QTextBrowser>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

#include "views/job_runner.h"

namespace fsc {
namespace {

const QString kChapterJob = QStringLiteral("walkthrough chapter");
const QString kExportJob = QStringLiteral("walkthrough export");

QString chartUrl(int chapter, size_t index) {
    return QStringLiteral("walkthrough-chart:%1/%2").arg(chapter).arg(index);
}

// The button under a chapter: what it shows in the app, and the argument it needs.
struct ChapterAction {
    QString label;
    QString argument;
};

ChapterAction actionFor(const WalkthroughChapter& c) {
    switch (c.id) {
        case 1: return {QObject::tr("Show the Model dock"), {}};
        case 2:
        case 10: return {QObject::tr("Run the graph shown (Run dock)"), {}};
        case 3: return {QObject::tr("Next pass on the canvas"), {}};
        case 4: {
            QString example;
            double slowest = -1;
            if (c.figures.contains("by_fused_op"))
                for (const auto& kind : c.figures["by_fused_op"])
                    if (kind["ms_before"].get<double>() > slowest)
                        slowest = kind["ms_before"].get<double>(), example = QString::fromStdString(kind["example"].get<std::string>());
            if (example.isEmpty()) return {};
            return {QObject::tr("Show %1 on the canvas").arg(example.section(QLatin1Char('/'), -2)), example};
        }
        case 5: return {QObject::tr("Show the Roofline dock"), {}};
        case 6: return {QObject::tr("Show the Memory dock"), {}};
        case 7: return {QObject::tr("Show the Graph breaks dock"), {}};
        case 8: return {QObject::tr("Show the INT8 sensitivity dock"), {}};
        default: return {};
    }
}

}  // namespace

WalkthroughDock::WalkthroughDock(JobRunner& jobs, QWidget* parent) : QWidget(parent), m_jobs(jobs) {
    // The chapters in a list above the page, not beside it: the page keeps the dock's width,
    // which a 1366-pixel screen cannot spare twice.
    m_contents = new QComboBox(this);
    m_contents->setObjectName(QStringLiteral("walkthroughContents"));
    for (const ChapterEntry& e : walkthroughContents())
        m_contents->addItem(QStringLiteral("%1. %2").arg(e.id).arg(QString::fromUtf8(e.title)));
    m_contents->setCurrentIndex(-1);
    m_contents->setPlaceholderText(tr("Pick a chapter"));
    auto* previous = new QToolButton(this);
    previous->setArrowType(Qt::LeftArrow);
    previous->setToolTip(tr("The chapter before"));
    auto* next = new QToolButton(this);
    next->setArrowType(Qt::RightArrow);
    next->setToolTip(tr("The next chapter"));
    m_page = new QTextBrowser(this);
    m_page->setObjectName(QStringLiteral("walkthroughPage"));
    m_page->setOpenLinks(false);
    m_action = new QPushButton(this);
    m_action->setObjectName(QStringLiteral("walkthroughAction"));
    m_action->hide();
    m_state = new QLabel(tr("Compile a model, then pick a chapter."), this);
    m_state->setWordWrap(true);

    auto* top = new QHBoxLayout;
    top->addWidget(previous);
    top->addWidget(m_contents, 1);
    top->addWidget(next);
    auto* bottom = new QHBoxLayout;
    bottom->addWidget(m_state, 1);
    bottom->addWidget(m_action);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(top);
    layout->addWidget(m_page, 1);
    layout->addLayout(bottom);

    connect(m_contents, &QComboBox::currentIndexChanged, this, [this](int row) {
        if (row >= 0) showChapter(row + 1);
    });
    connect(previous, &QToolButton::clicked, this, [this] { showChapter(std::max(1, m_shown - 1)); });
    connect(next, &QToolButton::clicked, this, [this] { showChapter(std::min(int(walkthroughContents().size()), m_shown + 1)); });
    connect(m_action, &QPushButton::clicked, this, [this] {
        auto it = m_chapters.find(m_shown);
        if (it != m_chapters.end()) emit actionRequested(m_shown, actionFor(it->second).argument);
    });
}

void WalkthroughDock::setSession(const Session& session, const QString& pipelineName) {
    m_session = std::make_shared<const Session>(session);
    m_pipeline = pipelineName;
    m_chapters.clear();
    m_latency = std::make_shared<CompiledLatency>();
    ++m_generation;
    m_jobs.discard(this, kChapterJob);
    if (m_shown > 0) computeChapter(m_shown);  // the chapter open follows the new compile
}

void WalkthroughDock::showChapter(int id) {
    if (id < 1 || id > int(walkthroughContents().size())) return;
    m_shown = id;
    if (m_contents->currentIndex() != id - 1) {
        const QSignalBlocker quiet(m_contents);
        m_contents->setCurrentIndex(id - 1);
    }
    auto it = m_chapters.find(id);
    if (it != m_chapters.end()) {
        render(it->second);
        emit chapterShown(id, true);
        return;
    }
    computeChapter(id);
}

void WalkthroughDock::computeChapter(int id) {
    if (!m_session || !m_session->compiledResult()) {
        m_state->setText(tr("Compile a model first: each chapter is computed on the compiled model."));
        emit chapterShown(id, false);
        return;
    }
    m_action->hide();
    m_page->setHtml(QStringLiteral("<h2>%1</h2>").arg(m_contents->itemText(id - 1).toHtmlEscaped()));
    m_state->setText(tr("Computing chapter %1 on this model…").arg(id));
    m_jobs.start(
        this, kChapterJob, tr("Walkthrough chapter %1").arg(id),
        [session = m_session, pipeline = m_pipeline.toStdString(), latency = m_latency, id](const JobRunner::Control& control) {
            WalkthroughInput input{.session = *session, .pipelineName = pipeline, .cancel = control.cancelFlag()};
            input.compiledLatency = latency;
            return walkthroughChapter(id, input);
        },
        [this, id, generation = m_generation](Result<WalkthroughChapter> chapter) {
            if (generation != m_generation) return;
            if (!chapter) {
                m_state->setText(chapter.status().code() == ErrorCode::Cancelled
                                     ? tr("Chapter %1 was cancelled; pick it again to compute it.").arg(id)
                                     : tr("Chapter %1 failed: %2").arg(id).arg(QString::fromStdString(chapter.status().message())));
                emit chapterShown(id, false);
                return;
            }
            auto& kept = m_chapters[id] = std::move(*chapter);
            if (m_shown == id) render(kept);
            emit chapterShown(id, true);
        });
}

void WalkthroughDock::render(const WalkthroughChapter& chapter) {
    QTextDocument* doc = m_page->document();
    for (size_t i = 0; i < chapter.charts.size(); ++i) {
        QSvgRenderer svg(QByteArray::fromStdString(chapter.charts[i].svg));
        // Drawn at the screen's pixel density (sharp at a scale factor of 2), laid out at
        // the chart's own size.
        const qreal ratio = m_page->devicePixelRatioF();
        const QSize size = svg.isValid() ? svg.defaultSize() : QSize(1, 1);
        QImage image(size * ratio, QImage::Format_ARGB32_Premultiplied);
        image.setDevicePixelRatio(ratio);
        image.fill(Qt::white);
        if (svg.isValid()) {
            QPainter painter(&image);
            svg.render(&painter, QRectF(QPointF(0, 0), size));
        }
        doc->addResource(QTextDocument::ImageResource, QUrl(chartUrl(chapter.id, i)), image);
    }
    const std::string html = walkthroughChapterHtml(chapter, [id = chapter.id](size_t i) { return chartUrl(id, i).toStdString(); });
    m_page->setHtml(QString::fromStdString(html));
    const ChapterAction action = actionFor(chapter);
    m_action->setText(action.label);
    m_action->setVisible(!action.label.isEmpty() && chapter.notApplicable.empty());
    if (!chapter.notApplicable.empty())
        m_state->setText(tr("Chapter %1 does not apply to this model (see the page).").arg(chapter.id));
    else if (!chapter.timingWarning.empty())
        m_state->setText(tr("Chapter %1, computed on this model; its timings are unreliable: %2")
                             .arg(chapter.id)
                             .arg(QString::fromStdString(chapter.timingWarning)));
    else
        m_state->setText(tr("Chapter %1, computed on this model.").arg(chapter.id));
}

void WalkthroughDock::exportHtml(const QString& path) {
    if (!m_session || !m_session->compiledResult()) {
        emit exported(false, tr("Compile a model first: the walkthrough is computed on the compiled model."));
        return;
    }
    m_jobs.start(
        this, kExportJob, tr("Exporting the walkthrough"),
        [session = m_session, pipeline = m_pipeline.toStdString(), known = m_chapters, latency = m_latency,
         path](const JobRunner::Control& control) -> Status {
            std::vector<WalkthroughChapter> chapters;
            const auto& contents = walkthroughContents();
            for (size_t i = 0; i < contents.size(); ++i) {
                control.progress(i, contents.size());
                if (auto it = known.find(contents[i].id); it != known.end()) {
                    chapters.push_back(it->second);
                    continue;
                }
                WalkthroughInput input{.session = *session, .pipelineName = pipeline, .cancel = control.cancelFlag()};
                input.compiledLatency = latency;
                auto chapter = walkthroughChapter(contents[i].id, input);
                if (!chapter) return chapter.status();
                chapters.push_back(std::move(*chapter));
            }
            QFile file(path);
            const std::string html = walkthroughHtml(chapters, session->model()->path);
            if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) || file.write(html.data(), qint64(html.size())) != qint64(html.size()))
                return Status(ErrorCode::Io, path.toStdString() + ": cannot write the walkthrough");
            return Status();
        },
        [this, path](Status written) {
            if (written) emit exported(true, tr("Saved the walkthrough to %1").arg(path));
            else if (written.code() == ErrorCode::Cancelled) emit exported(false, tr("The walkthrough export was cancelled."));
            else emit exported(false, QString::fromStdString(written.message()));
        });
}

}  // namespace fsc
