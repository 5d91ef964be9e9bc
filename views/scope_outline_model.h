#pragma once
// The group outline: the scope tree of the graph shown as an item model (group, nodes in
// it, and after a run its share of the run time). Rows carry their group index in GroupRole.
#include <QAbstractItemModel>

#include <memory>
#include <vector>

#include "views/scope_tree.h"

namespace fsc {

class ScopeOutlineModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { Group, Nodes, Share, ColumnCount };
    enum Role { GroupRole = Qt::UserRole };

    explicit ScopeOutlineModel(QObject* parent = nullptr);
    void setTree(std::shared_ptr<const ScopeTree> tree);
    // Per group share of the run time (empty: none shown).
    void setShares(std::vector<double> byGroup);
    const ScopeTree* tree() const { return m_tree.get(); }
    QModelIndex indexOfGroup(int group) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    std::shared_ptr<const ScopeTree> m_tree;
    std::vector<int> m_rowInParent;  // by group
    std::vector<double> m_shares;
};

}  // namespace fsc
