#include "app/gui/subgraph_trail.h"

#include <QAction>
#include <QCursor>
#include <QMenu>

#include <algorithm>

#include "core/graph.h"
#include "views/graph_canvas.h"
#include "views/node_table_model.h"

namespace fsc {

SubgraphTrail::SubgraphTrail(GraphCanvas& canvas, NodeTableModel& nodes, QWidget* parent)
    : QToolBar(tr("Subgraph"), parent), m_canvas(canvas), m_nodes(nodes) {
    setObjectName(QStringLiteral("crumbBar"));
    setToolTip(tr("Where the canvas is: the step's graph, then the If/Loop/Scan bodies opened"));
    hide();
}

void SubgraphTrail::leave() {
    if (m_bodies.empty()) return;
    m_bodies.clear();
    rebuild();
}

bool SubgraphTrail::enter(NodeId node, const QString& attribute) {
    const Graph* graph = m_canvas.shownGraph();
    if (!graph || !node.valid() || node.index >= graph->nodeArenaSize()) return false;
    const Node& n = graph->node(node);
    std::vector<std::pair<QString, std::shared_ptr<const Graph>>> bodies;
    for (const Attribute& a : n.attributes) {
        if (a.g) bodies.push_back({QString::fromStdString(a.name), a.g});
        for (size_t i = 0; i < a.graphs.size(); ++i)
            bodies.push_back({QStringLiteral("%1[%2]").arg(QString::fromStdString(a.name)).arg(i), a.graphs[i]});
    }
    if (bodies.empty()) return false;
    if (attribute.isEmpty() && bodies.size() > 1) {  // If: which branch?
        QMenu menu(this);
        for (const auto& [name, body] : bodies)
            menu.addAction(name, this, [this, node, name = name] { enter(node, name); });
        menu.exec(QCursor::pos());
        return true;
    }
    auto body = std::find_if(bodies.begin(), bodies.end(), [&](const auto& b) { return attribute.isEmpty() || b.first == attribute; });
    if (body == bodies.end()) return false;
    // Not this step's graph: marks, regions, breaks and heat (keyed by its ids) stay behind.
    m_canvas.setMarks({});
    m_canvas.setRegions({}, {});
    m_canvas.setBreakValues({});
    m_canvas.clearHeat();
    m_canvas.setLinkSelection(false);  // a body's node ids say nothing about the other pane's
    m_bodies.push_back({QStringLiteral("%1 '%2' › %3").arg(QString::fromStdString(n.opType), QString::fromStdString(n.name), body->first),
                           body->second});
    m_canvas.setGraph(body->second, 1 << 20);
    m_nodes.setGraph(body->second);
    rebuild();
    emit logged(tr("Opened the subgraph %1 (%2 nodes)").arg(breadcrumb().join(QStringLiteral(" › "))).arg(body->second->nodeCount()));
    return true;
}

void SubgraphTrail::upTo(int level) {
    if (level < 0 || size_t(level) >= m_bodies.size() + 1) return;
    if (level == 0) {
        leave();
        emit backToStep();
        return;
    }
    m_bodies.resize(size_t(level));
    m_canvas.setGraph(m_bodies.back().graph, 1 << 20);
    m_nodes.setGraph(m_bodies.back().graph);
    rebuild();
}

QStringList SubgraphTrail::breadcrumb() const {
    QStringList out{tr("graph")};
    for (const Body& c : m_bodies) out << c.label;
    return out;
}

void SubgraphTrail::rebuild() {
    QToolBar::clear();
    const QStringList crumbs = breadcrumb();
    for (int i = 0; i < crumbs.size(); ++i) {
        if (i > 0) addSeparator();
        QAction* a = addAction(crumbs[i], this, [this, i] { upTo(i); });
        a->setEnabled(i + 1 < crumbs.size());  // the current level is where one is
    }
    if (crumbs.size() > 1)
        addAction(tr("Up"), this, [this] { upTo(int(m_bodies.size()) - 1); })
            ->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Up));
    setVisible(crumbs.size() > 1);
}

}  // namespace fsc
