#include "views/work_indicator.h"

#include <QHBoxLayout>
#include <QProgressBar>
#include <QToolButton>

#include "views/job_runner.h"

namespace fsc {

WorkIndicator::WorkIndicator(JobRunner& jobs, QWidget* parent)
    : QWidget(parent), m_jobs(jobs), m_bar(new QProgressBar(this)), m_cancel(new QToolButton(this)) {
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_bar);
    layout->addWidget(m_cancel);
    m_bar->setMaximumWidth(220);
    m_cancel->setText(tr("Cancel"));
    m_cancel->setShortcut(Qt::Key_Escape);
    m_cancel->setToolTip(tr("Stop what is under way (Esc)"));
    connect(m_cancel, &QToolButton::clicked, this, &WorkIndicator::cancelAll);
    connect(&jobs, &JobRunner::started, this, [this](int id, const QString& label) {
        if (label.isEmpty()) return;  // quick background work the user need not see
        m_work[id] = {label, -1};
        refresh();
    });
    connect(&jobs, &JobRunner::progressed, this, [this](int id, int percent) {
        auto it = m_work.find(id);
        if (it == m_work.end() || it->second.percent == percent) return;
        it->second.percent = percent;
        refresh();
    });
    connect(&jobs, &JobRunner::ended, this, [this](int id) {
        if (m_work.erase(id)) refresh();
    });
    refresh();
}

void WorkIndicator::cancelAll() {
    m_jobs.cancelAll();
}

void WorkIndicator::refresh() {
    if (m_work.empty()) {
        m_bar->hide();
        m_cancel->hide();
        return;
    }
    const Work& w = m_work.rbegin()->second;
    if (w.percent < 0) {
        m_bar->setRange(0, 0);  // no fractions known: a busy indicator
    } else {
        m_bar->setRange(0, 100);
        m_bar->setValue(w.percent);
    }
    m_bar->setFormat(w.label + QStringLiteral(" %p%"));
    m_bar->setTextVisible(w.percent >= 0);
    m_bar->setToolTip(w.label);
    m_bar->show();
    m_cancel->show();
}

}  // namespace fsc
