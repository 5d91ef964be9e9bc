#include "views/node_table_model.h"

#include <algorithm>

namespace fsc {

NodeTableModel::NodeTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void NodeTableModel::setGraph(std::shared_ptr<const Graph> graph) {
    beginResetModel();
    m_graph = std::move(graph);
    endResetModel();
}

NodeId NodeTableModel::nodeAt(int row) const {
    if (!m_graph || row < 0 || size_t(row) >= m_graph->order().size()) return {};
    return m_graph->order()[size_t(row)];
}

int NodeTableModel::rowOf(NodeId node) const {
    if (!m_graph || !node.valid()) return -1;
    const auto& order = m_graph->order();
    const auto at = std::find(order.begin(), order.end(), node);
    return at == order.end() ? -1 : int(at - order.begin());
}

int NodeTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !m_graph ? 0 : static_cast<int>(m_graph->nodeCount());
}

int NodeTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QString NodeTableModel::valueList(const std::vector<ValueId>& ids) const {
    QStringList parts;
    for (ValueId id : ids) {
        if (!id.valid()) {
            parts << QStringLiteral("—");
            continue;
        }
        const Value& v = m_graph->value(id);
        parts << QString::fromStdString(v.name + " : " + v.type.toString());
    }
    return parts.join(QStringLiteral(", "));
}

QVariant NodeTableModel::data(const QModelIndex& index, int role) const {
    if (!m_graph || !index.isValid() || index.row() >= rowCount()) return {};
    const Node& n = m_graph->node(m_graph->order()[static_cast<size_t>(index.row())]);
    if (role == Qt::DisplayRole || role == Qt::ToolTipRole) {
        switch (index.column()) {
            case Index: return index.row();
            case Name: return QString::fromStdString(n.name);
            case OpType:
                return QString::fromStdString(n.domain.empty() ? n.opType
                                                               : n.domain + "::" + n.opType);
            case Scope: return QString::fromStdString(n.scope);
            case Inputs: return valueList(n.inputs);
            case Outputs: return valueList(n.outputs);
        }
    }
    return {};
}

QVariant NodeTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case Index: return tr("#");
        case Name: return tr("Name");
        case OpType: return tr("Op");
        case Scope: return tr("Scope");
        case Inputs: return tr("Inputs");
        case Outputs: return tr("Outputs");
    }
    return {};
}

}  // namespace fsc
