#include "views/changes_panel.h"

namespace fsc {

ChangesPanel::ChangesPanel(QWidget* parent) : QTreeWidget(parent) {
    setColumnCount(3);
    setHeaderLabels({tr("Pattern"), tr("Nodes"), tr("Reason")});
    setAlternatingRowColors(true);
    connect(this, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) {
        if (const QVariant node = item->data(0, Qt::UserRole); node.isValid()) emit nodeActivated(NodeId{node.toUInt()});
    });
}

void ChangesPanel::showPass(const PassReport* pass, const Graph& graph) {
    clear();
    if (!pass) {
        emit titleChanged(tr("Changes"));
        return;
    }
    auto names = [&](const std::vector<NodeId>& ids) {
        QStringList out;
        for (NodeId id : ids)
            if (id.index < graph.nodeArenaSize())
                out << QString::fromStdString(graph.node(id).opType + " '" + graph.node(id).name + "'");
        return out.join(QStringLiteral(", "));
    };
    auto* changed = new QTreeWidgetItem(this, {tr("Changes"), QString::number(pass->changes.size()), {}});
    for (const ChangeRecord& c : pass->changes) {
        auto* item = new QTreeWidgetItem(changed, {QString::fromStdString(c.pattern),
                                                   QStringLiteral("-%1 +%2").arg(c.removed.size()).arg(c.added.size()),
                                                   QString::fromStdString(c.reason)});
        item->setToolTip(2, tr("removed: %1\nadded: %2").arg(names(c.removed), names(c.added)));
        if (!c.added.empty()) item->setData(0, Qt::UserRole, c.added.front().index);  // reveal what it made
    }
    auto* rejected = new QTreeWidgetItem(this, {tr("Rejected"), QString::number(pass->rejections.size()), {}});
    for (const Rejection& r : pass->rejections) {
        const bool known = r.node.index < graph.nodeArenaSize();
        auto* item = new QTreeWidgetItem(rejected, {QString::fromStdString(r.pattern), known ? names({r.node}) : QString(),
                                                    QString::fromStdString(r.reason)});
        if (known) item->setData(0, Qt::UserRole, r.node.index);
    }
    changed->setExpanded(pass->changes.size() <= 200);
    rejected->setExpanded(pass->rejections.size() <= 200);
    emit titleChanged(tr("Changes: %1 (%2 changes, %3 rejected)")
                          .arg(QString::fromStdString(pass->name))
                          .arg(pass->changes.size())
                          .arg(pass->rejections.size()));
}

}  // namespace fsc
