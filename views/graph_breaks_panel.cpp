#include "views/graph_breaks_panel.h"
#include "views/selection.h"

namespace fsc {

GraphBreaksPanel::GraphBreaksPanel(QWidget* parent) : QTreeWidget(parent) {
    setColumnCount(3);
    setHeaderLabels({tr("Break"), tr("Node"), tr("Reason")});
    setRootIsDecorated(false);
    setAlternatingRowColors(true);
    connect(this, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) {
        emit nodeActivated(NodeId{item->data(0, Qt::UserRole).toUInt()});
    });
}

void GraphBreaksPanel::showReport(const Graph& graph, const GraphBreakReport& report) {
    clear();
    for (const GraphBreak& b : report.breaks) {
        auto* item = new QTreeWidgetItem(this);
        item->setText(0, QString::fromLatin1(breakKindName(b.kind)));
        item->setText(1, QString::fromStdString(graph.node(b.node).name));
        item->setText(2, QString::fromStdString(b.reason));
        item->setToolTip(2, item->text(2));
        item->setData(0, Qt::UserRole, b.node.index);
    }
    m_title = tr("Graph breaks (%1 regions, %2 breaks on CUDA)").arg(report.regions.size()).arg(report.breaks.size());
    emit titleChanged(m_title);
}

void GraphBreaksPanel::setSelection(Selection* selection) {
    connect(this, &GraphBreaksPanel::nodeActivated, selection, [selection](NodeId node) { selection->selectStepNode(node); });
}

}  // namespace fsc
