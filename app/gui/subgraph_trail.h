#pragma once
// If/Loop/Scan bodies opened on the canvas, one breadcrumb each ("graph › Loop 'l' › body"):
// entering a body shows it on the canvas and in the node table, without the step's marks,
// regions and heat (keyed by the step's node ids); a crumb goes back up to its level (Alt+Up:
// one level), and the first, the step's graph, asks the window to show the step again.
#include <QStringList>
#include <QToolBar>

#include <memory>
#include <vector>

#include "core/ids.h"

namespace fsc {

class Graph;
class GraphCanvas;
class NodeTableModel;

class SubgraphTrail : public QToolBar {
    Q_OBJECT
public:
    SubgraphTrail(GraphCanvas& canvas, NodeTableModel& nodes, QWidget* parent);

    // Opens the node's graph attribute `attribute` (empty: its only one; an If asks which
    // branch with a menu). False when the canvas's node has no such body.
    bool enter(NodeId node, const QString& attribute = {});
    // Back to `level` (0: the step's graph, through backToStep()).
    void upTo(int level);
    QStringList breadcrumb() const;
    bool inBody() const { return !m_bodies.empty(); }
    void leave();  // another step is shown: no body is open

signals:
    void backToStep();
    void logged(const QString& line);

private:
    void rebuild();
    struct Body {
        QString label;
        std::shared_ptr<const Graph> graph;
    };
    GraphCanvas& m_canvas;
    NodeTableModel& m_nodes;
    std::vector<Body> m_bodies;  // outermost first
};

}  // namespace fsc
