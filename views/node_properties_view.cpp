#include "views/node_properties_view.h"

#include <QHeaderView>

#include "core/text_printer.h"

namespace fsc {

NodePropertiesView::NodePropertiesView(QWidget* parent) : QTreeWidget(parent) {
    setColumnCount(2);
    setHeaderLabels({tr("Property"), tr("Value")});
    header()->setStretchLastSection(true);
    setAlternatingRowColors(true);
    setUniformRowHeights(true);
}

void NodePropertiesView::showNode(std::shared_ptr<const Graph> graph, NodeId id) {
    clear();
    m_graph = std::move(graph);
    if (!m_graph || !id.valid() || id.index >= m_graph->nodeArenaSize()) return;
    const Node& n = m_graph->node(id);
    auto row = [this](QTreeWidgetItem* parent, const QString& key, const QString& value) {
        auto* item = parent ? new QTreeWidgetItem(parent) : new QTreeWidgetItem(this);
        item->setText(0, key);
        item->setText(1, value);
        item->setToolTip(1, value);
        return item;
    };
    auto text = [](const std::string& s) { return QString::fromStdString(s); };
    row(nullptr, tr("Name"), text(n.name));
    row(nullptr, tr("Op"), text(n.domain.empty() ? n.opType : n.domain + "::" + n.opType));
    row(nullptr, tr("Scope"), text(n.scope));
    auto values = [&](const QString& title, const std::vector<ValueId>& ids) {
        auto* group = row(nullptr, title, QString::number(ids.size()));
        for (ValueId v : ids) {
            if (!v.valid()) {
                row(group, tr("(absent)"), {});
                continue;
            }
            const Value& value = m_graph->value(v);
            QString kind = value.kind == Value::Kind::Initializer ? tr(" (weight)") : QString();
            row(group, text(value.name), text(value.type.toString()) + kind);
        }
        group->setExpanded(true);
    };
    values(tr("Inputs"), n.inputs);
    values(tr("Outputs"), n.outputs);
    auto* attrs = row(nullptr, tr("Attributes"), QString::number(n.attributes.size()));
    for (const Attribute& a : n.attributes) row(attrs, text(a.name), text(attributeValueText(a)));
    attrs->setExpanded(true);
    // Provenance: what the compiler made this node from, back to the imported graph.
    if (n.origins.empty()) {
        row(nullptr, tr("Made from"), tr("itself (as imported)"));
    } else {
        auto* from = row(nullptr, tr("Made from"), tr("%1 imported nodes").arg(n.origins.size()));
        for (NodeId o : n.origins)
            if (o.index < m_graph->nodeArenaSize()) row(from, text(m_graph->node(o).opType), text(m_graph->node(o).name));
        from->setExpanded(true);
    }
    if (!n.docString.empty()) row(nullptr, tr("Doc"), text(n.docString));
    resizeColumnToContents(0);
}

QString NodePropertiesView::valueOf(const QString& property) const {
    for (int i = 0; i < topLevelItemCount(); ++i)
        if (topLevelItem(i)->text(0) == property) return topLevelItem(i)->text(1);
    return {};
}

}  // namespace fsc
