#pragma once
// A flat table of a graph's nodes in schedule order: the plain node list of the first GUI,
// and later the per-node table. Holds the model snapshot it shows.
#include <QAbstractTableModel>

#include <memory>

#include "core/graph.h"

namespace fsc {

class NodeTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Index, Name, OpType, Scope, Inputs, Outputs, ColumnCount };

    explicit NodeTableModel(QObject* parent = nullptr);

    void setGraph(std::shared_ptr<const Graph> graph);
    const Graph* graph() const { return m_graph.get(); }
    const std::shared_ptr<const Graph>& graphShared() const { return m_graph; }
    NodeId nodeAt(int row) const;  // invalid outside the table
    int rowOf(NodeId node) const;  // -1 when not listed

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    QString valueList(const std::vector<ValueId>& ids) const;
    std::shared_ptr<const Graph> m_graph;
};

}  // namespace fsc
