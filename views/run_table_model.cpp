#include "views/run_table_model.h"

namespace fsc {

RunTableModel::RunTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void RunTableModel::setTimes(std::vector<NodeTime> nodes, int64_t topLevelNs) {
    beginResetModel();
    m_nodes = std::move(nodes);
    m_topLevelNs = topLevelNs;
    endResetModel();
}

int RunTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_nodes.size());
}

int RunTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RunTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount) return {};
    const NodeTime& t = m_nodes[size_t(index.row())];
    const double ms = double(t.medianNs) / 1e6;
    const double share = t.depth == 0 && m_topLevelNs > 0 ? double(t.medianNs) / double(m_topLevelNs) : 0.0;
    if (role == NodeRole) return t.depth == 0 && t.id.valid() ? QVariant(t.id.index) : QVariant();
    if (role == Qt::TextAlignmentRole)
        return index.column() >= Milliseconds ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    if (role == Qt::ToolTipRole && index.column() == Node && t.depth > 0)
        return tr("inside a control-flow node (depth %1): its time is part of that node's").arg(t.depth);
    if (role != Qt::DisplayRole && role != SortRole) return {};
    const bool sort = role == SortRole;
    switch (index.column()) {
        case Node: return QString(t.depth * 2, QLatin1Char(' ')) + QString::fromStdString(t.node);
        case Op: return QString::fromStdString(t.opType);
        case Kernel: return QString::fromStdString(t.kernelId);
        case Milliseconds: return sort ? QVariant(ms) : QVariant(QString::number(ms, 'f', 3));
        case Share:
            if (sort) return share;
            return t.depth == 0 ? QVariant(QStringLiteral("%1%").arg(100.0 * share, 0, 'f', 1)) : QVariant(QStringLiteral("–"));
        case Launches: return sort ? QVariant(qlonglong(t.launches)) : QVariant(QString::number(t.launches));
        default: return {};
    }
}

QVariant RunTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case Node: return tr("Node");
        case Op: return tr("Op");
        case Kernel: return tr("Kernel");
        case Milliseconds: return tr("ms / iteration (median)");
        case Share: return tr("Share");
        case Launches: return tr("Launches");
        default: return {};
    }
}

}  // namespace fsc
