#pragma once
// The Outline dock: the groups (scopes) of the graph a canvas shows, with each group's share
// of the run's time when the canvas has heat. A click shows the group on the canvas, a
// double click expands or collapses it there.
#include <QTreeView>

namespace fsc {

class GraphCanvas;
class ScopeOutlineModel;

class ScopeOutlineView : public QTreeView {
    Q_OBJECT
public:
    ScopeOutlineView(GraphCanvas& canvas, QWidget* parent);

private:
    GraphCanvas& m_canvas;
    ScopeOutlineModel* m_model;
};

}  // namespace fsc
