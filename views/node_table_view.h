#pragma once
// The Nodes dock: the graph's nodes in schedule order (NodeTableModel). Activating a row
// picks its node in the selection; a node of the same graph picked elsewhere selects its row.
#include <QTableView>

namespace fsc {

class NodeTableModel;
class Selection;

class NodeTableView : public QTableView {
    Q_OBJECT
public:
    explicit NodeTableView(QWidget* parent = nullptr);
    NodeTableModel* nodes() const { return m_nodes; }
    void setSelection(Selection* selection);

private:
    NodeTableModel* m_nodes;
    Selection* m_selection = nullptr;
};

}  // namespace fsc
