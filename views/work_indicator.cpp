#include "views/work_indicator.h"

#include <QHBoxLayout>
#include <QProgressBar>
#include <QToolButton>

namespace fsc {

WorkIndicator::WorkIndicator(QWidget* parent)
    : QWidget(parent), m_bar(new QProgressBar(this)), m_cancel(new QToolButton(this)) {
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_bar);
    layout->addWidget(m_cancel);
    m_bar->setMaximumWidth(220);
    m_cancel->setText(tr("Cancel"));
    m_cancel->setShortcut(Qt::Key_Escape);
    m_cancel->setToolTip(tr("Stop what is under way (Esc)"));
    connect(m_cancel, &QToolButton::clicked, this, &WorkIndicator::cancelAll);
    refresh();
}

int WorkIndicator::begin(const QString& label, std::function<void()> cancel) {
    const int id = m_next++;
    m_work[id] = {label, std::move(cancel), -1};
    refresh();
    return id;
}

void WorkIndicator::progress(int id, int percent) {
    auto it = m_work.find(id);
    if (it == m_work.end() || it->second.percent == percent) return;
    it->second.percent = percent;
    refresh();
}

void WorkIndicator::end(int id) {
    if (m_work.erase(id)) refresh();
}

void WorkIndicator::cancelAll() {
    const auto work = m_work;  // a cancel may end its work at once
    for (const auto& [id, w] : work)
        if (w.cancel) w.cancel();
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
