#include "views/selection.h"

#include <algorithm>

#include "core/provenance.h"

namespace fsc {

void Selection::selectStep(int step) {
    if (step == m_step) return;
    m_step = step;
    emit stepSelected(step);
}

void Selection::setStepGraph(std::shared_ptr<const Graph> graph) {
    if (graph == m_stepGraph) return;
    m_stepGraph = std::move(graph);
    emit stepGraphChanged();
}

void Selection::setRunGraph(std::shared_ptr<const Graph> graph) {
    if (graph == m_runGraph) return;
    m_runGraph = std::move(graph);
    emit runGraphChanged();
}

bool Selection::selectStepNodeNamed(const std::string& name, bool orMadeFrom) {
    const Graph* graph = m_stepGraph.get();
    if (!graph) return false;
    for (NodeId id : graph->order())
        if (graph->node(id).name == name) {
            selectStepNode(id);
            return true;
        }
    if (orMadeFrom)
        for (NodeId id : graph->order()) {
            const std::vector<std::string> names = ownAndOriginNames(*graph, id);
            if (std::find(names.begin(), names.end(), name) != names.end()) {
                selectStepNode(id);
                return true;
            }
        }
    return false;
}

void Selection::selectNode(std::shared_ptr<const Graph> graph, NodeId node) {
    if (!graph || !node.valid() || node.index >= graph->nodeArenaSize()) node = NodeId{};
    if (graph == m_graph && node == m_node) return;
    if (graph != m_graph) m_value = ValueId{};  // value ids are the graph's own
    m_graph = std::move(graph);
    m_node = node;
    emit nodeSelected();
}

bool Selection::selectRunNode(NodeId node) {
    if (!m_runGraph) {
        if (node.valid()) emit runNodeElsewhere();
        return false;
    }
    selectNode(m_runGraph, node);
    return true;
}

NodeId Selection::nodeOf(const Graph* graph) const {
    return graph && graph == m_graph.get() ? m_node : NodeId{};
}

void Selection::selectValue(ValueId value) {
    if (value.valid() && (!m_graph || value.index >= m_graph->valueCount())) value = ValueId{};
    if (value == m_value) return;
    m_value = value;
    emit valueSelected();
}

void Selection::selectKernel(const QString& name) {
    if (name == m_kernel) return;
    m_kernel = name;
    emit kernelSelected();
}

void Selection::selectTimeRange(int64_t beginNs, int64_t endNs) {
    if (beginNs > endNs) std::swap(beginNs, endNs);
    if (beginNs == m_rangeBegin && endNs == m_rangeEnd) return;
    m_rangeBegin = beginNs;
    m_rangeEnd = endNs;
    emit timeRangeSelected();
}

}  // namespace fsc
