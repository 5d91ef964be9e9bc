#include "app/gui/find_bar.h"

#include <QAction>
#include <QLabel>
#include <QLineEdit>

#include "views/graph_canvas.h"
#include "views/node_search.h"

namespace fsc {

FindBar::FindBar(GraphCanvas& canvas, QWidget* parent)
    : QToolBar(tr("Find"), parent), m_canvas(canvas), m_field(new QLineEdit(this)), m_count(new QLabel(this)) {
    setObjectName(QStringLiteral("findBar"));
    m_field->setPlaceholderText(tr("Find node, op or tensor"));
    m_field->setClearButtonEnabled(true);
    m_field->setMaximumWidth(320);
    addWidget(m_field);
    addAction(tr("Previous"), this, [this] { find(m_field->text(), -1); })->setShortcut(QKeySequence::FindPrevious);
    addAction(tr("Next"), this, [this] { find(m_field->text(), +1); })->setShortcut(QKeySequence::FindNext);
    addWidget(m_count);
    QAction* close = addAction(tr("Close"), this, &QToolBar::hide);
    close->setShortcut(Qt::Key_Escape);
    close->setShortcutContext(Qt::WidgetWithChildrenShortcut);  // Esc also cancels work elsewhere
    connect(m_field, &QLineEdit::returnPressed, this, [this] { find(m_field->text(), +1); });
    hide();
}

void FindBar::open() {
    show();
    m_field->setFocus();
    m_field->selectAll();
}

void FindBar::forget() { m_hits.clear(); }

void FindBar::find(const QString& query, int step) {
    const Graph* graph = m_canvas.shownGraph();
    if (!graph) return;
    if (query != m_query || m_hits.empty()) {  // a new search
        m_query = query;
        m_hits = findNodes(*graph, query.toStdString());
        m_index = step > 0 ? -1 : 0;
    }
    if (m_hits.empty()) {
        m_count->setText(query.isEmpty() ? QString() : tr("no match"));
        return;
    }
    const int n = int(m_hits.size());
    m_index = ((m_index + step) % n + n) % n;
    m_count->setText(tr("%1 of %2").arg(m_index + 1).arg(n));
    m_canvas.revealNode(m_hits[size_t(m_index)]);
}

}  // namespace fsc
