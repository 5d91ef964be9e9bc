#pragma once
// What the user has picked, one per window and observed by every view: a node (with the
// graph it belongs to, so a view showing another graph can tell), a value of that graph,
// a kernel and a time range of the run shown, and the step shown. A view sets it when its
// user picks something and follows it when anything else did; no view knows another, and
// the window only says which graphs the step and the run are.
#include <QObject>
#include <QString>

#include <memory>

#include "core/graph.h"

namespace fsc {

class Selection : public QObject {
    Q_OBJECT
public:
    explicit Selection(QObject* parent = nullptr) : QObject(parent) {}

    // The step asked for (0: as imported); stepSelected() lets the window show it.
    void selectStep(int step);
    int step() const { return m_step; }
    // The graph of the step shown, once made; lists of the step's nodes select in it.
    void setStepGraph(std::shared_ptr<const Graph> graph);
    const std::shared_ptr<const Graph>& stepGraph() const { return m_stepGraph; }
    // The graph the run shown ran on, when it is one shown here (null: no run, or a run
    // whose node ids belong to no graph here).
    void setRunGraph(std::shared_ptr<const Graph> graph);
    const std::shared_ptr<const Graph>& runGraph() const { return m_runGraph; }

    // A node of `graph` (an invalid node clears the selection). Nothing happens when it is
    // already the one selected.
    void selectNode(std::shared_ptr<const Graph> graph, NodeId node);
    void selectStepNode(NodeId node) { selectNode(m_stepGraph, node); }
    // The step's node named `name`, or with `orMadeFrom` the node made from the imported node
    // of that name (provenance): false, selecting nothing, when the step has neither.
    bool selectStepNodeNamed(const std::string& name, bool orMadeFrom = false);
    // A node of the run (the timeline, roofline and Run table name those): false, with
    // runNodeElsewhere(), when the run's graph is not shown here.
    bool selectRunNode(NodeId node);
    const std::shared_ptr<const Graph>& graph() const { return m_graph; }
    NodeId node() const { return m_node; }
    // The selected node when it belongs to `graph`, else an invalid id.
    NodeId nodeOf(const Graph* graph) const;
    bool isOfRun() const { return m_graph && m_graph == m_runGraph; }

    // A value (tensor) of graph(); an invalid id clears it.
    void selectValue(ValueId value);
    ValueId value() const { return m_value; }
    ValueId valueOf(const Graph* graph) const { return graph && graph == m_graph.get() ? m_value : ValueId{}; }
    // A kernel of the run shown, by name (empty clears).
    void selectKernel(const QString& name);
    const QString& kernel() const { return m_kernel; }
    // A time range of the run shown, in its nanoseconds; begin == end is an instant, and
    // -1, -1 clears it.
    void selectTimeRange(int64_t beginNs, int64_t endNs);
    int64_t rangeBegin() const { return m_rangeBegin; }
    int64_t rangeEnd() const { return m_rangeEnd; }

signals:
    void stepSelected(int step);
    void stepGraphChanged();
    void runGraphChanged();
    void nodeSelected();
    void valueSelected();
    void kernelSelected();
    void timeRangeSelected();
    void runNodeElsewhere();  // a node of a run whose graph is not shown was picked

private:
    int m_step = -1;
    std::shared_ptr<const Graph> m_stepGraph, m_runGraph, m_graph;
    NodeId m_node;
    ValueId m_value;
    QString m_kernel;
    int64_t m_rangeBegin = -1, m_rangeEnd = -1;
};

}  // namespace fsc
