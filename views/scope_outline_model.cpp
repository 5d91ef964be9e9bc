#include "views/scope_outline_model.h"

namespace fsc {

// Internal ids are group indices; the root (group 0) is the invisible top, its children
// the top-level rows.

ScopeOutlineModel::ScopeOutlineModel(QObject* parent) : QAbstractItemModel(parent) {}

void ScopeOutlineModel::setTree(std::shared_ptr<const ScopeTree> tree) {
    beginResetModel();
    m_tree = std::move(tree);
    m_shares.clear();
    m_rowInParent.clear();
    if (m_tree) {
        m_rowInParent.assign(m_tree->groups().size(), 0);
        for (const ScopeGroup& g : m_tree->groups())
            for (size_t i = 0; i < g.children.size(); ++i) m_rowInParent[size_t(g.children[i])] = int(i);
    }
    endResetModel();
}

void ScopeOutlineModel::setShares(std::vector<double> byGroup) {
    m_shares = std::move(byGroup);
    if (rowCount() > 0) emit dataChanged(index(0, Share), index(rowCount() - 1, Share));
    // Deeper rows repaint when expanded; a reset would lose the view's expansion state.
}

QModelIndex ScopeOutlineModel::indexOfGroup(int group) const {
    if (!m_tree || group <= 0 || size_t(group) >= m_tree->groups().size()) return {};
    return createIndex(m_rowInParent[size_t(group)], 0, quintptr(group));
}

QModelIndex ScopeOutlineModel::index(int row, int column, const QModelIndex& parent) const {
    if (!m_tree || row < 0 || column < 0 || column >= ColumnCount) return {};
    const int p = parent.isValid() ? int(parent.internalId()) : 0;
    const auto& children = m_tree->groups()[size_t(p)].children;
    if (row >= int(children.size())) return {};
    return createIndex(row, column, quintptr(children[size_t(row)]));
}

QModelIndex ScopeOutlineModel::parent(const QModelIndex& child) const {
    if (!m_tree || !child.isValid()) return {};
    const int p = m_tree->groups()[size_t(child.internalId())].parent;
    if (p <= 0) return {};
    return createIndex(m_rowInParent[size_t(p)], 0, quintptr(p));
}

int ScopeOutlineModel::rowCount(const QModelIndex& parent) const {
    if (!m_tree || (parent.isValid() && parent.column() != 0)) return 0;
    const int p = parent.isValid() ? int(parent.internalId()) : 0;
    return int(m_tree->groups()[size_t(p)].children.size());
}

int ScopeOutlineModel::columnCount(const QModelIndex&) const {
    return ColumnCount;
}

QVariant ScopeOutlineModel::data(const QModelIndex& index, int role) const {
    if (!m_tree || !index.isValid()) return {};
    const int group = int(index.internalId());
    const ScopeGroup& g = m_tree->groups()[size_t(group)];
    if (role == GroupRole) return group;
    if (role == Qt::ToolTipRole) return QString::fromStdString(g.path);
    if (role == Qt::TextAlignmentRole && index.column() != Group) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
        case Group: return QString::fromStdString(g.name);
        case Nodes: return g.totalNodes;
        case Share:
            if (size_t(group) >= m_shares.size()) return {};
            return QStringLiteral("%1%").arg(100.0 * m_shares[size_t(group)], 0, 'f', 1);
        default: return {};
    }
}

QVariant ScopeOutlineModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case Group: return tr("Group");
        case Nodes: return tr("Nodes");
        case Share: return tr("Run time");
        default: return {};
    }
}

}  // namespace fsc
