#pragma once
// The per-node time table of a run: node, op, kernel, milliseconds per iteration, share
// of the run and launches. Sorts by any column through a QSortFilterProxyModel (numbers by
// value through SortRole); NodeRole gives the node id of main-graph rows.
#include <QAbstractTableModel>

#include <vector>

#include "profiler/node_stats.h"

namespace fsc {

class RunTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Node, Op, Kernel, Milliseconds, Share, Launches, ColumnCount };
    enum Role { SortRole = Qt::UserRole, NodeRole };

    explicit RunTableModel(QObject* parent = nullptr);
    // Medians per iteration; shares are of `topLevelNs`, the main-graph medians' sum (nested
    // launches, inside their control-flow node's time, get none).
    void setTimes(std::vector<NodeTime> nodes, int64_t topLevelNs);
    void clear() { setTimes({}, 0); }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    std::vector<NodeTime> m_nodes;
    int64_t m_topLevelNs = 0;
};

}  // namespace fsc
