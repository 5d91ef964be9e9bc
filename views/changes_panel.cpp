#include "views/changes_panel.h"
#include "views/selection.h"

namespace fsc {

ChangesPanel::ChangesPanel(QWidget* parent) : QTreeWidget(parent) {
    setColumnCount(3);
    setHeaderLabels({tr("Pattern"), tr("Nodes"), tr("Reason")});
    setAlternatingRowColors(true);
    connect(this, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) {
        if (const QVariant node = item->data(0, Qt::UserRole); node.isValid()) emit nodeActivated(NodeId{node.toUInt()});
    });
}

ChangesPanel::Rows ChangesPanel::rowsOf(const PassReport* pass, const Graph& graph) {
    Rows rows;
    if (!pass) return rows;
    auto names = [&](const std::vector<NodeId>& ids) {
        QStringList out;
        for (NodeId id : ids)
            if (id.index < graph.nodeArenaSize())
                out << QString::fromStdString(graph.node(id).opType + " '" + graph.node(id).name + "'");
        return out.join(QStringLiteral(", "));
    };
    rows.shown = true;
    rows.changes.reserve(pass->changes.size());
    for (const ChangeRecord& c : pass->changes)
        rows.changes.push_back({QString::fromStdString(c.pattern),
                                QStringLiteral("-%1 +%2").arg(c.removed.size()).arg(c.added.size()),
                                QString::fromStdString(c.reason),
                                tr("removed: %1\nadded: %2").arg(names(c.removed), names(c.added)),
                                c.added.empty() ? -1 : int64_t(c.added.front().index)});  // reveal what it made
    rows.rejected.reserve(pass->rejections.size());
    for (const Rejection& r : pass->rejections) {
        const bool known = r.node.index < graph.nodeArenaSize();
        rows.rejected.push_back({QString::fromStdString(r.pattern), known ? names({r.node}) : QString(),
                                 QString::fromStdString(r.reason), {}, known ? int64_t(r.node.index) : -1});
    }
    rows.title = tr("Changes: %1 (%2 changes, %3 rejected)")
                     .arg(QString::fromStdString(pass->name))
                     .arg(pass->changes.size())
                     .arg(pass->rejections.size());
    return rows;
}

void ChangesPanel::showRows(const Rows& rows) {
    clear();
    if (!rows.shown) {
        emit titleChanged(tr("Changes"));
        return;
    }
    auto group = [this](const QString& title, const std::vector<Row>& list) {
        auto* top = new QTreeWidgetItem(this, {title, QString::number(list.size()), {}});
        QList<QTreeWidgetItem*> items;
        items.reserve(qsizetype(list.size()));
        for (const Row& r : list) {
            auto* item = new QTreeWidgetItem({r.pattern, r.nodes, r.reason});
            if (!r.toolTip.isEmpty()) item->setToolTip(2, r.toolTip);
            if (r.node >= 0) item->setData(0, Qt::UserRole, uint32_t(r.node));
            items << item;
        }
        top->addChildren(items);  // one insertion, not one per row
        top->setExpanded(list.size() <= 200);
    };
    group(tr("Changes"), rows.changes);
    if (rows.changes.empty())  // said, not left as an empty list: both sides of a comparison are one graph
        new QTreeWidgetItem(topLevelItem(0), {tr("nothing"), QString(), tr("this pass left the graph as it was")});
    group(tr("Rejected"), rows.rejected);
    emit titleChanged(rows.title);
}

void ChangesPanel::setSelection(Selection* selection) {
    connect(this, &ChangesPanel::nodeActivated, selection, [selection](NodeId node) { selection->selectStepNode(node); });
}

}  // namespace fsc
