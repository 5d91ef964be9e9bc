#include "views/pass_list_model.h"

#include <QBrush>
#include <QColor>

namespace fsc {

PassListModel::PassListModel(QObject* parent) : QAbstractTableModel(parent) {}

void PassListModel::setTrace(std::shared_ptr<const CompileTrace> trace) {
    beginResetModel();
    m_trace = std::move(trace);
    m_effects.clear();
    endResetModel();
}

void PassListModel::setEffects(QMap<QString, PassEffectText> effects) {
    m_effects = std::move(effects);
    if (rowCount() > 0) emit dataChanged(index(0, Effect), index(rowCount() - 1, Effect));
}

std::shared_ptr<const GraphSnapshot> PassListModel::snapshotAt(int row) const {
    if (!m_trace || row < 0 || row > int(m_trace->passes.size())) return nullptr;
    return row == 0 ? m_trace->imported : m_trace->passes[size_t(row - 1)].snapshot;
}

int PassListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !m_trace ? 0 : int(m_trace->passes.size()) + 1;
}

int PassListModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant PassListModel::data(const QModelIndex& index, int role) const {
    if (!m_trace || !index.isValid() || index.row() >= rowCount()) return {};
    const int row = index.row();
    if (row == 0) {
        if (role == Qt::DisplayRole) {
            if (index.column() == Step) return tr("imported");
            if (index.column() == Nodes) return qulonglong(m_trace->imported->nodeCount());
        }
        if (role == Qt::ToolTipRole) return tr("The graph as imported, before any pass");
        return {};
    }
    const PassReport& p = m_trace->passes[size_t(row - 1)];
    if (index.column() == Effect) {
        const auto effect = m_effects.constFind(QString::fromStdString(p.name));
        if (effect == m_effects.constEnd()) return {};
        if (role == Qt::DisplayRole) return effect->verdict;
        if (role == Qt::ToolTipRole) return effect->details;
        if (role == Qt::ForegroundRole && effect->sign != 0)
            return QBrush(effect->sign > 0 ? QColor(0x1a, 0x7f, 0x37) : QColor(0xb4, 0x23, 0x18));
        return {};
    }
    const long long delta = (long long)p.nodesAfter - (long long)p.nodesBefore;
    switch (role) {
        case Qt::DisplayRole:
            switch (index.column()) {
                case Step: return QStringLiteral("%1. %2").arg(row).arg(QString::fromStdString(p.name));
                case Nodes: return qulonglong(p.nodesAfter);
                case Delta: return delta == 0 ? QStringLiteral("0") : QStringLiteral("%1%2").arg(delta > 0 ? "+" : "").arg(delta);
                case Milliseconds: return QString::number(p.milliseconds, 'f', 2);
                case Changes: return qulonglong(p.changes.size());
                case Rejected: return qulonglong(p.rejections.size());
            }
            return {};
        case Qt::ToolTipRole: return QString::fromStdString(p.description);
        case Qt::TextAlignmentRole:
            return index.column() == Step ? QVariant(Qt::AlignLeft | Qt::AlignVCenter) : QVariant(Qt::AlignRight | Qt::AlignVCenter);
        case Qt::UserRole: return delta;  // for sorting and colouring by effect
    }
    return {};
}

QVariant PassListModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case Step: return tr("Step");
        case Nodes: return tr("Nodes");
        case Delta: return tr("Δ");
        case Milliseconds: return tr("ms");
        case Changes: return tr("Changes");
        case Rejected: return tr("Rejected");
        case Effect: return tr("Effect");
    }
    return {};
}

}  // namespace fsc
