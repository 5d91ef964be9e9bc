#pragma once
// The graph canvas: draws a CanvasLayout (group frames, collapsed groups, nodes coloured by
// op category, edges), with zoom about the cursor (wheel, +/-), pan (drag, W/A/S/D,
// arrows), fit (F, Home) and level of detail: labels only where they are readable. Layout runs
// off the GUI thread, cancellable; double-clicking a group expands or collapses it and lays
// out again, reusing the unchanged groups' layouts.
#include <QWidget>

#include "views/heat_scale.h"

#include <atomic>
#include <memory>

#include "views/group_layout.h"
#include "views/scope_tree.h"
#include "views/view_transform.h"

class QPainter;

namespace fsc {

class JobRunner;
class Selection;

class GraphCanvas : public QWidget {
    Q_OBJECT
public:
    // Layouts (and a new graph's scope tree) are made by `jobs`, off the GUI thread.
    explicit GraphCanvas(JobRunner& jobs, QWidget* parent = nullptr);
    ~GraphCanvas() override;
    // A layout is being made (or is due): the canvas shows "Laying out…" until laidOut().
    bool layingOut() const;
    // Laid out and showing a graph.
    bool showsLayout() const { return m_shownGraph && !m_layout.boxes.empty(); }

    // Shows a graph with groups expanded to `depth`; its scope tree (graphChanged()) and
    // layout (laidOut()) arrive from a background job. A null graph clears the canvas.
    void setGraph(std::shared_ptr<const Graph> graph, int expandDepth);
    void setExpanded(std::vector<bool> expanded);
    void toggleGroup(int group);
    void cancelLayout();
    // Constant nodes and Identities of weights: hidden by default, shown on demand.
    void setShowConstants(bool show);
    bool showsConstants() const { return m_showConstants; }

    const Graph* graph() const { return m_graph.get(); }  // the latest graph asked for
    const Graph* shownGraph() const { return m_shownGraph.get(); }  // the one canvasLayout() draws
    std::shared_ptr<const Graph> shownGraphShared() const { return m_shownGraph; }
    const ScopeTree* scopeTree() const { return m_tree.get(); }
    std::shared_ptr<const ScopeTree> scopeTreeShared() const { return m_tree; }
    // Expands the groups around `group` (laying out again if needed) and centres its box.
    void revealGroup(int group);
    const CanvasLayout& canvasLayout() const { return m_layout; }
    const ViewTransform& transform() const { return m_view; }
    void fitToView();
    // The index of the box under a widget point (innermost first), or -1.
    int boxAt(QPointF point) const;
    NodeId selectedNode() const { return m_selected; }
    void selectNode(NodeId node);
    // Publishes to `selection` and follows it: a click picks a node, or on an edge its value,
    // of the graph shown; a node picked elsewhere in this graph is revealed and its value's
    // edges drawn bold. With `link` on (the panes of a comparison), a node picked in another
    // graph of the same compile lights up this graph's nodes made from the same imported ones.
    void setSelection(Selection* selection);
    void setLinkSelection(bool link);
    // Writes the current view (`wholeGraph` false) or the whole graph at 1:1 (capped at
    // 16,384 px a side) as PNG or SVG, by the file's suffix. Returns an error message or "".
    QString exportImage(const QString& path, bool wholeGraph) const;
    // Diff marks: nodes drawn with a red (removed) or green (added) outline, numeric
    // bisection's first jumps with a violet one, and nodes highlighted as linked to the
    // other pane's selection.
    enum class Mark { None, Removed, Added, FirstJump };
    void setMarks(std::vector<Mark> byNodeIndex);
    void setLinked(std::vector<NodeId> nodes);
    void setTransform(const ViewTransform& view);
    // Graph-break regions: each node's region (-1: none) tints a stripe on its box, and
    // nodes that fall back to the CPU get a dark dotted outline.
    void setRegions(std::vector<int> regionByNodeIndex, std::vector<bool> hostByNodeIndex);
    Mark markOf(NodeId node) const { return node.index < m_marks.size() ? m_marks[node.index] : Mark::None; }
    bool isLinked(NodeId node) const { return node.index < m_linked.size() && m_linked[node.index]; }
    // Run overlay: a value per node (share of run time, time, achieved bandwidth or FLOP/s;
    // empty clears it). Boxes are filled by heat (collapsed groups by their nodes' sum, or
    // for rates their summed work over summed time) on a scale up to the hottest box drawn,
    // which the legend names.
    // What fills node boxes without a run overlay: the op's category, or the precision
    // it computes in (after the float16/bfloat16/INT8 passes).
    enum class Colouring { OpCategory, Precision };
    void setColouring(Colouring colouring);
    Colouring colouring() const { return m_colouring; }
    QColor nodeFill(const Graph& graph, const Node& node) const;
    void setHeat(NodeHeat heat);
    void setHeat(std::vector<double> shareByNodeIndex);
    void clearHeat() { setHeat(NodeHeat{}); }
    bool hasHeat() const { return !m_heat.empty(); }
    const std::vector<double>& heat() const { return m_heat.values; }
    HeatUnit heatUnit() const { return m_heat.unit; }
    double heatOfNode(NodeId node) const;  // -1 without heat
    // Values where execution leaves a region (by value index: the reason, empty for none):
    // edges carrying them are drawn as breaks and their tooltips give the reason.
    void setBreakValues(std::vector<QString> reasonByValueIndex);
    // The edge under a widget point (within a few pixels), or -1.
    int edgeAt(QPointF point) const;
    // What a tooltip shows for an edge: value name, dtype and shape (and the break).
    QString edgeText(int edge) const;
    // Selects a node, expands the groups around it (laying out again if needed) and centres it.
    void revealNode(NodeId node);

signals:
    void laidOut(double milliseconds, int groupsLaidOut);
    void graphChanged();  // a new graph's scope tree arrived (with its first layout)
    void heatChanged();
    void nodeActivated(fsc::NodeId node);
    void nodeSelected(fsc::NodeId node);  // a click on a node (invalid: on nothing)
    void viewChanged(fsc::ViewTransform view);  // zoom or pan by the user

protected:
    void paintEvent(QPaintEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    bool event(QEvent* event) override;  // tooltips for nodes and edges

private:
    friend class CanvasPainter;  // paints this state (canvas_painter.cpp)
    void startLayout(bool fit);
    void centreOn(NodeId node);
    // The minimap in the bottom-right corner: its frame and scene transform, when shown
    // (the scene does not fit the view).
    bool minimap(QRectF& frame, ViewTransform& view) const;
    QString boxLabel(const CanvasLayout::Box& box) const;
    QString boxToolTip(const CanvasLayout::Box& box) const;
    double heatOf(const CanvasLayout::Box& box) const;
    bool isBreakEdge(size_t edge) const;

    std::shared_ptr<const Graph> m_graph;
    std::shared_ptr<const ScopeTree> m_tree;
    std::vector<bool> m_expanded;
    CanvasLayout m_layout;
    // What m_layout was made from: kept until the next layout arrives, so a new graph
    // never flashes an empty canvas or labels old boxes with new nodes.
    std::shared_ptr<const Graph> m_shownGraph;
    std::shared_ptr<const ScopeTree> m_shownTree;
    // Touched only by the layout job, one at a time; shared so a job never outlives it.
    std::shared_ptr<GroupLayoutCache> m_cache = std::make_shared<GroupLayoutCache>();
    ViewTransform m_view;
    JobRunner& m_jobs;
    static inline const QString kLayoutJob = QStringLiteral("layout");
    int m_expandDepth = 0;  // for a new graph's tree, when it arrives
    bool m_pendingFit = false;
    QPointF m_dragFrom, m_pressedAt;
    NodeId m_selected;
    Selection* m_selection = nullptr;
    bool m_following = false;  // selecting because the selection changed: do not publish
    bool m_linkSelection = false;
    void followSelection();
    ValueId selectedValue() const;
    NodeId m_centreOnArrival;  // revealNode() waiting for the layout that shows it
    int m_groupOnArrival = -1;  // revealGroup() waiting likewise
    void centreOnGroup(int group);
    std::vector<Mark> m_marks;
    std::vector<bool> m_linked;  // by node index
    std::vector<int> m_region;   // by node index
    std::vector<bool> m_host;    // by node index
    NodeHeat m_heat;
    Colouring m_colouring = Colouring::OpCategory;
    mutable std::vector<double> m_groupHeat;  // by group of m_heatTree, summed lazily
    mutable const ScopeTree* m_heatTree = nullptr;
    std::vector<QString> m_breakReason;  // by value index
    bool m_dragging = false;
    bool m_showConstants = false;
};

}  // namespace fsc
