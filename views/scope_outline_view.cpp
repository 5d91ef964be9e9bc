#include "views/scope_outline_view.h"

#include <QHeaderView>

#include "views/graph_canvas.h"
#include "views/scope_outline_model.h"
#include "views/scope_tree.h"

namespace fsc {

ScopeOutlineView::ScopeOutlineView(GraphCanvas& canvas, QWidget* parent)
    : QTreeView(parent), m_canvas(canvas), m_model(new ScopeOutlineModel(this)) {
    setModel(m_model);
    setUniformRowHeights(true);
    header()->setStretchLastSection(false);
    header()->setSectionResizeMode(ScopeOutlineModel::Group, QHeaderView::Stretch);
    setExpandsOnDoubleClick(false);
    connect(&m_canvas, &GraphCanvas::graphChanged, this, [this] { m_model->setTree(m_canvas.scopeTreeShared()); });
    connect(&m_canvas, &GraphCanvas::heatChanged, this, [this] {
        const ScopeTree* tree = m_model->tree();
        m_model->setShares(tree && m_canvas.hasHeat() ? groupTotals(*tree, m_canvas.heat()) : std::vector<double>{});
    });
    connect(this, &QTreeView::clicked, this, [this](const QModelIndex& index) {
        m_canvas.revealGroup(index.data(ScopeOutlineModel::GroupRole).toInt());
    });
    connect(this, &QTreeView::doubleClicked, this, [this](const QModelIndex& index) {
        m_canvas.toggleGroup(index.data(ScopeOutlineModel::GroupRole).toInt());
    });
}

}  // namespace fsc
