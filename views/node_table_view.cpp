#include "views/node_table_view.h"

#include <QHeaderView>

#include "views/node_table_model.h"
#include "views/selection.h"
#include "views/compact_rows.h"

namespace fsc {

NodeTableView::NodeTableView(QWidget* parent) : QTableView(parent), m_nodes(new NodeTableModel(this)) {
    setModel(m_nodes);
    setSelectionBehavior(QAbstractItemView::SelectRows);
    verticalHeader()->hide();
    useCompactRows(this);
    horizontalHeader()->setStretchLastSection(true);
    horizontalHeader()->setResizeContentsPrecision(200);  // fast on 6,000-node graphs
    setAlternatingRowColors(true);
}

void NodeTableView::setSelection(Selection* selection) {
    m_selection = selection;
    connect(this, &QTableView::activated, selection, [this](const QModelIndex& index) {
        if (const NodeId node = m_nodes->nodeAt(index.row()); node.valid())
            m_selection->selectNode(m_nodes->graphShared(), node);
    });
    connect(selection, &Selection::nodeSelected, this, [this] {
        const int row = m_nodes->rowOf(m_selection->nodeOf(m_nodes->graph()));
        if (row >= 0) selectRow(row);
    });
}

}  // namespace fsc
