#include "views/graph_canvas.h"
#include "views/canvas_painter.h"
#include "views/focus_frame.h"
#include "views/box_neighbours.h"
#include "views/label_placement.h"


#include <QElapsedTimer>
#include <QHelpEvent>
#include <QFontMetricsF>
#include <algorithm>
#include <optional>
#include <QToolTip>
#include <cmath>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QSvgGenerator>
#include <QWheelEvent>

#include "views/heat_scale.h"
#include "views/job_runner.h"
#include "views/precision_colour.h"
#include "views/selection.h"
#include "core/provenance.h"
#include "views/op_category.h"

namespace fsc {

GraphCanvas::GraphCanvas(JobRunner& jobs, QWidget* parent) : QWidget(parent), m_jobs(jobs) {
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(false);
    setAutoFillBackground(false);
    setMinimumSize(200, 150);
}

GraphCanvas::~GraphCanvas() = default;

bool GraphCanvas::layingOut() const {
    return m_jobs.busy(this, kLayoutJob);
}

void GraphCanvas::setGraph(std::shared_ptr<const Graph> graph, int expandDepth) {
    m_graph = std::move(graph);
    m_tree.reset();  // built with the layout, off the GUI thread
    m_expanded.clear();
    m_expandDepth = expandDepth;
    if (!m_graph) {  // nothing to show: the last layout goes too, and one under way
        m_jobs.discard(this, kLayoutJob);
        m_shownGraph.reset();
        m_shownTree.reset();
        m_layout = CanvasLayout{};
        update();
        return;
    }
    startLayout(true);
}

void GraphCanvas::setExpanded(std::vector<bool> expanded) {
    if (!m_tree) return;  // a new graph's tree is on its way
    m_expanded = std::move(expanded);
    if (!m_expanded.empty()) m_expanded[0] = true;
    startLayout(false);
}

void GraphCanvas::toggleGroup(int group) {
    if (!m_tree || group <= 0 || size_t(group) >= m_expanded.size()) return;
    m_expanded[size_t(group)] = !m_expanded[size_t(group)];
    startLayout(false);
}

void GraphCanvas::setShowConstants(bool show) {
    if (show == m_showConstants) return;
    m_showConstants = show;
    startLayout(false);
}

void GraphCanvas::cancelLayout() {
    m_jobs.cancel(this, kLayoutJob);
}

void GraphCanvas::startLayout(bool fit) {
    if (!m_graph) return;
    m_pendingFit = m_pendingFit || fit;
    struct Laid {
        std::shared_ptr<const ScopeTree> tree;
        std::vector<bool> expanded;
        CanvasLayout layout;
        double ms = 0;
    };
    CanvasLayoutOptions options;
    options.showConstants = m_showConstants;
    auto work = [graph = m_graph, tree = m_tree, expanded = m_expanded, depth = m_expandDepth, cache = m_cache,
                 options](const JobRunner::Control& job) {
        QElapsedTimer timer;
        timer.start();
        Laid laid{tree, expanded, {}, 0};
        if (!laid.tree) {  // a new graph: its groups first
            laid.tree = std::make_shared<const ScopeTree>(ScopeTree::build(*graph));
            laid.expanded = expandedToDepth(*laid.tree, depth);
        }
        laid.layout = layoutCanvas(*graph, *laid.tree, laid.expanded, cache.get(), job.cancelFlag(), options);
        laid.ms = double(timer.nsecsElapsed()) / 1e6;
        return laid;
    };
    auto deliver = [this, graph = m_graph](Laid laid) {
        if (laid.layout.cancelled) return;
        const bool newTree = laid.tree != m_tree;
        m_tree = laid.tree;
        m_expanded = std::move(laid.expanded);
        m_layout = std::move(laid.layout);
        const bool newGraph = graph != m_shownGraph;
        if (newGraph) m_selected = {};
        m_shownGraph = graph;
        m_shownTree = m_tree;
        if (newGraph) followSelection();  // the node picked may be of this graph
        if (m_pendingFit) m_view = ViewTransform::start(m_layout.width, m_layout.height, width(), height());
        m_pendingFit = false;
        if (m_centreOnArrival.valid()) centreOn(m_centreOnArrival);
        if (m_groupOnArrival >= 0) centreOnGroup(m_groupOnArrival);
        update();
        if (newTree) emit graphChanged();
        emit laidOut(laid.ms, m_layout.groupsLaidOut);
    };
    // One layout at a time (they share the cache); the newest request runs next.
    JobRunner::Options runOptions;
    runOptions.afterPrevious = true;
    m_jobs.start(this, kLayoutJob, tr("Laying out"), std::move(work), std::move(deliver), runOptions);
}

void GraphCanvas::fitToView() {
    m_view = ViewTransform::fit(m_layout.width, m_layout.height, width(), height());
    update();
    emit viewChanged(m_view);  // the other pane of a comparison follows
}

int GraphCanvas::boxAt(QPointF p) const {
    const double x = m_view.toSceneX(p.x()), y = m_view.toSceneY(p.y());
    // Later boxes are drawn on top (contents after their frames): search from the end.
    for (size_t i = m_layout.boxes.size(); i-- > 0;) {
        const Rect& r = m_layout.boxes[i].rect;
        if (x >= r.x && x <= r.x + r.width && y >= r.y && y <= r.bottom()) return int(i);
    }
    return -1;
}

QString GraphCanvas::boxLabel(const CanvasLayout::Box& box) const {
    if (box.node.valid()) return QString::fromStdString(m_shownGraph->node(box.node).opType);
    const ScopeGroup& g = m_shownTree->groups()[size_t(box.group)];
    return QStringLiteral("%1  (%2)").arg(QString::fromStdString(g.name)).arg(g.totalNodes);
}

void GraphCanvas::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const FocusFrame focus(p, *this);
    if (!m_shownGraph || m_layout.boxes.empty()) {
        p.fillRect(rect(), palette().color(QPalette::Base));
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, layingOut() ? tr("Laying out…") : tr("Nothing to show"));
        return;
    }
    CanvasPainter(*this).paint(p, m_view, size());
    QRectF frame;
    ViewTransform mini;
    if (!minimap(frame, mini)) return;
    // The whole graph small, and the part in view outlined.
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setPen(QPen(palette().color(QPalette::Mid), 1));
    p.setBrush(palette().color(QPalette::Window));
    p.drawRect(frame);
    p.setPen(Qt::NoPen);
    for (const auto& box : m_layout.boxes) {
        if (box.expanded) continue;
        QColor fill = palette().color(QPalette::Button);
        if (box.node.valid()) {
            fill = nodeFill(*m_shownGraph, m_shownGraph->node(box.node));
        }
        p.setBrush(fill.darker(110));
        p.drawRect(QRectF(mini.toScreenX(box.rect.x), mini.toScreenY(box.rect.y), std::max(1.0, box.rect.width * mini.scale),
                          std::max(1.0, box.rect.height * mini.scale)));
    }
    const QRectF seen(mini.toScreenX(m_view.toSceneX(0)), mini.toScreenY(m_view.toSceneY(0)),
                      width() / m_view.scale * mini.scale, height() / m_view.scale * mini.scale);
    p.setBrush(Qt::NoBrush);
    p.setPen(QPen(palette().color(QPalette::Highlight), 2));
    p.drawRect(seen.intersected(frame));
}

bool GraphCanvas::minimap(QRectF& frame, ViewTransform& view) const {
    if (m_layout.boxes.empty()) return false;
    const bool fits = m_layout.width * m_view.scale <= width() && m_layout.height * m_view.scale <= height();
    if (fits || width() < 300 || height() < 200) return false;
    const double w = std::min(180.0, width() * 0.25), h = std::min(140.0, height() * 0.3), margin = 10;
    frame = QRectF(width() - w - margin, height() - h - margin, w, h);
    view = ViewTransform::fit(m_layout.width, m_layout.height, w, h, 4);
    view.scale = std::min(view.scale, std::min((w - 8) / std::max(1.0, m_layout.width), (h - 8) / std::max(1.0, m_layout.height)));
    view.dx = frame.x() + (w - m_layout.width * view.scale) / 2;
    view.dy = frame.y() + (h - m_layout.height * view.scale) / 2;
    return true;
}

double GraphCanvas::heatOfNode(NodeId node) const {
    if (m_heat.empty()) return -1;
    const size_t i = node.index;
    const double value = i < m_heat.values.size() ? m_heat.values[i] : 0.0;
    if (m_heat.seconds.empty()) return value;
    const double seconds = i < m_heat.seconds.size() ? m_heat.seconds[i] : 0.0;
    return seconds > 0 ? value / seconds : 0.0;
}

double GraphCanvas::heatOf(const CanvasLayout::Box& box) const {
    if (m_heat.empty()) return -1;
    if (box.node.valid()) return heatOfNode(box.node);
    if (m_heatTree != m_shownTree.get()) {  // a new layout or tree since the totals were summed
        m_groupHeat = heatTakesLargest(m_heat.unit) ? groupMaxima(*m_shownTree, m_heat.values)
                                                             : groupTotals(*m_shownTree, m_heat.values);
        if (!m_heat.seconds.empty()) {  // rates: summed work over summed time
            const std::vector<double> seconds = groupTotals(*m_shownTree, m_heat.seconds);
            for (size_t g = 0; g < m_groupHeat.size(); ++g) m_groupHeat[g] = seconds[g] > 0 ? m_groupHeat[g] / seconds[g] : 0.0;
        }
        m_heatTree = m_shownTree.get();
    }
    return box.group >= 0 && size_t(box.group) < m_groupHeat.size() ? m_groupHeat[size_t(box.group)] : 0.0;
}

void GraphCanvas::setHeat(NodeHeat heat) {
    m_heat = std::move(heat);
    m_heatTree = nullptr;
    update();
    emit heatChanged();
}

void GraphCanvas::setHeat(std::vector<double> shareByNodeIndex) {
    NodeHeat heat;
    heat.values = std::move(shareByNodeIndex);
    setHeat(std::move(heat));
}

void GraphCanvas::setBreakValues(std::vector<QString> reasonByValueIndex) {
    m_breakReason = std::move(reasonByValueIndex);
    update();
}

bool GraphCanvas::isBreakEdge(size_t edge) const {
    if (edge >= m_layout.edgeInfo.size()) return false;
    const ValueId v = m_layout.edgeInfo[edge].value;
    return v.valid() && v.index < m_breakReason.size() && !m_breakReason[v.index].isEmpty();
}

int GraphCanvas::edgeAt(QPointF point) const {
    // Distance from the point to each polyline, in screen pixels.
    const double tolerance = 5;
    int best = -1;
    double bestDistance = tolerance;
    for (size_t e = 0; e < m_layout.edges.size(); ++e) {
        const auto& path = m_layout.edges[e];
        for (size_t i = 1; i < path.size(); ++i) {
            const QPointF a(m_view.toScreenX(path[i - 1].x), m_view.toScreenY(path[i - 1].y));
            const QPointF b(m_view.toScreenX(path[i].x), m_view.toScreenY(path[i].y));
            const QPointF ab = b - a, ap = point - a;
            const double len2 = QPointF::dotProduct(ab, ab);
            const double t = len2 > 0 ? std::clamp(QPointF::dotProduct(ap, ab) / len2, 0.0, 1.0) : 0.0;
            const QPointF d = point - (a + ab * t);
            const double distance = std::hypot(d.x(), d.y());
            if (distance < bestDistance) {
                bestDistance = distance;
                best = int(e);
            }
        }
    }
    return best;
}

QString GraphCanvas::edgeText(int edge) const {
    if (!m_shownGraph || edge < 0 || size_t(edge) >= m_layout.edgeInfo.size()) return {};
    const CanvasLayout::EdgeInfo& info = m_layout.edgeInfo[size_t(edge)];
    if (!info.value.valid()) return {};
    const Value& v = m_shownGraph->value(info.value);
    QString out = QStringLiteral("%1\n%2").arg(QString::fromStdString(v.name), QString::fromStdString(v.type.toString()));
    if (info.target.valid()) out += tr("\n→ %1").arg(QString::fromStdString(m_shownGraph->node(info.target).name));
    if (info.values > 1) out += tr("\n(and %1 more values)").arg(info.values - 1);
    if (isBreakEdge(size_t(edge))) out += tr("\ngraph break: %1").arg(m_breakReason[info.value.index]);
    return out;
}

QString GraphCanvas::boxToolTip(const CanvasLayout::Box& box) const {
    QString out;
    if (box.node.valid()) {
        const Node& n = m_shownGraph->node(box.node);
        out = QStringLiteral("%1  (%2)").arg(QString::fromStdString(n.name), QString::fromStdString(n.opType));
        for (ValueId v : n.outputs)
            if (v.valid()) out += QStringLiteral("\n→ ") + QString::fromStdString(m_shownGraph->value(v).type.toString());
    } else {
        const ScopeGroup& g = m_shownTree->groups()[size_t(box.group)];
        out = tr("%1\n%2 nodes; double-click to %3").arg(QString::fromStdString(g.path)).arg(g.totalNodes)
                  .arg(box.expanded ? tr("collapse") : tr("expand"));
    }
    if (const double heat = heatOf(box); heat >= 0)
        out += tr("\n%1: %2").arg(tr(heatTitle(m_heat.unit)), QString::fromStdString(formatHeat(m_heat.unit, heat)));
    return out;
}

bool GraphCanvas::event(QEvent* e) {
    if (e->type() != QEvent::ToolTip || !m_shownGraph) return QWidget::event(e);
    auto* help = static_cast<QHelpEvent*>(e);
    QString text = edgeText(edgeAt(help->pos()));
    if (text.isEmpty())
        if (const int box = boxAt(help->pos()); box >= 0) text = boxToolTip(m_layout.boxes[size_t(box)]);
    if (text.isEmpty()) QToolTip::hideText();
    else QToolTip::showText(help->globalPos(), text, this);
    return true;
}

QString GraphCanvas::exportImage(const QString& path, bool wholeGraph) const {
    if (!m_shownGraph || m_layout.boxes.empty()) return tr("nothing is shown yet");
    ViewTransform view = m_view;
    QSizeF area = size();
    if (wholeGraph) {  // the whole graph at 1:1, or smaller if that is too large an image
        constexpr double kMaxSide = 16384, kMargin = 16;
        view.scale = std::min(1.0, kMaxSide / std::max({m_layout.width + 2 * kMargin, m_layout.height + 2 * kMargin, 1.0}));
        view.dx = view.dy = kMargin * view.scale;
        area = QSizeF((m_layout.width + 2 * kMargin) * view.scale, (m_layout.height + 2 * kMargin) * view.scale);
    }
    if (path.endsWith(QLatin1String(".svg"), Qt::CaseInsensitive)) {
        QSvgGenerator svg;
        svg.setFileName(path);
        svg.setSize(area.toSize());
        svg.setViewBox(QRectF(QPointF(0, 0), area));
        svg.setTitle(tr("Fusescope graph"));
        QPainter p;
        if (!p.begin(&svg)) return tr("%1: cannot write").arg(path);
        CanvasPainter(*this).paint(p, view, area);
        return p.end() ? QString() : tr("%1: cannot write").arg(path);
    }
    QImage image(area.toSize(), QImage::Format_ARGB32_Premultiplied);
    if (image.isNull()) return tr("the image would be too large (%1 x %2)").arg(area.width()).arg(area.height());
    {
        QPainter p(&image);
        CanvasPainter(*this).paint(p, view, area);
    }
    return image.save(path) ? QString() : tr("%1: cannot write (PNG or SVG by the suffix)").arg(path);
}

void GraphCanvas::wheelEvent(QWheelEvent* event) {
    const double steps = event->angleDelta().y() / 120.0;
    m_view.zoomAt(event->position().x(), event->position().y(), std::pow(1.2, steps));
    update();
    emit viewChanged(m_view);
}

void GraphCanvas::mousePressEvent(QMouseEvent* event) {
    QRectF frame;
    ViewTransform mini;
    if (event->button() == Qt::LeftButton && minimap(frame, mini) && frame.contains(event->position())) {
        // Centre the view on the point clicked in the minimap.
        const double x = mini.toSceneX(event->position().x()), y = mini.toSceneY(event->position().y());
        m_view.dx = width() / 2.0 - x * m_view.scale;
        m_view.dy = height() / 2.0 - y * m_view.scale;
        m_pressedAt = QPointF(-1e9, -1e9);  // so the release selects nothing behind the minimap
        update();
        emit viewChanged(m_view);
        return;
    }
    if (event->button() == Qt::LeftButton) {
        m_dragging = true;
        m_dragFrom = m_pressedAt = event->position();
    }
}

void GraphCanvas::selectNode(NodeId node) {
    if (node == m_selected) return;
    m_selected = node;
    update();
    emit nodeSelected(node);
}

void GraphCanvas::setSelection(Selection* selection) {
    m_selection = selection;
    connect(this, &GraphCanvas::nodeSelected, selection, [this](NodeId node) {
        if (!m_following) m_selection->selectNode(m_shownGraph, node);
    });
    connect(selection, &Selection::nodeSelected, this, &GraphCanvas::followSelection);
    connect(selection, &Selection::valueSelected, this, qOverload<>(&QWidget::update));
}

void GraphCanvas::setLinkSelection(bool link) {
    m_linkSelection = link;
    if (!link) setLinked({});
    else followSelection();
}

void GraphCanvas::followSelection() {
    if (!m_selection || !m_shownGraph) return;
    m_following = true;
    if (m_selection->graph() == m_shownGraph) {
        setLinked({});
        const NodeId node = m_selection->node();
        if (node != m_selected) {
            if (node.valid()) revealNode(node);
            else selectNode(node);
        }
    } else if (m_selection->graph()) {  // picked in another graph: not ours to show selected
        selectNode({});
        setLinked(m_linkSelection ? linkedNodes(*m_selection->graph(), m_selection->node(), *m_shownGraph)
                                  : std::vector<NodeId>{});
    }
    m_following = false;
}

ValueId GraphCanvas::selectedValue() const {
    return m_selection ? m_selection->valueOf(m_shownGraph.get()) : ValueId{};
}

void GraphCanvas::setMarks(std::vector<Mark> byNodeIndex) {
    m_marks = std::move(byNodeIndex);
    update();
}

void GraphCanvas::setRegions(std::vector<int> regionByNodeIndex, std::vector<bool> hostByNodeIndex) {
    m_region = std::move(regionByNodeIndex);
    m_host = std::move(hostByNodeIndex);
    update();
}

void GraphCanvas::setLinked(std::vector<NodeId> nodes) {
    m_linked.assign(m_linked.size(), false);
    for (NodeId n : nodes) {
        if (n.index >= m_linked.size()) m_linked.resize(n.index + 1, false);
        m_linked[n.index] = true;
    }
    update();
}

void GraphCanvas::setTransform(const ViewTransform& view) {
    m_view = view;
    update();
}

void GraphCanvas::revealNode(NodeId node) {
    if (!m_tree || !node.valid() || m_shownTree != m_tree) return;
    bool changed = false;
    for (int g = m_tree->groupOf(node); g > 0; g = m_tree->groups()[size_t(g)].parent)
        if (!m_expanded[size_t(g)]) m_expanded[size_t(g)] = changed = true;
    m_centreOnArrival = node;
    selectNode(node);
    if (changed) startLayout(false);
    else centreOn(node);
}

void GraphCanvas::revealGroup(int group) {
    if (!m_tree || group <= 0 || size_t(group) >= m_tree->groups().size() || m_shownTree != m_tree) return;
    bool changed = false;
    for (int g = m_tree->groups()[size_t(group)].parent; g > 0; g = m_tree->groups()[size_t(g)].parent)
        if (!m_expanded[size_t(g)]) m_expanded[size_t(g)] = changed = true;
    m_groupOnArrival = group;
    if (changed) startLayout(false);
    else centreOnGroup(group);
}

void GraphCanvas::centreOnGroup(int group) {
    m_groupOnArrival = -1;
    for (const auto& box : m_layout.boxes) {
        if (box.node.valid() || box.group != group) continue;
        // The whole box in view if it fits at a readable scale, else its top centred.
        const double fit = std::min(width() / (box.rect.width + 40), height() / (box.rect.height + 40));
        m_view.scale = std::clamp(fit, 0.3, 1.0);
        m_view.dx = width() / 2.0 - box.rect.centerX() * m_view.scale;
        m_view.dy = fit >= 0.3 ? height() / 2.0 - (box.rect.y + box.rect.height / 2) * m_view.scale
                               : 20 - box.rect.y * m_view.scale;
        update();
        emit viewChanged(m_view);
        return;
    }
}

void GraphCanvas::centreOn(NodeId node) {
    for (const auto& box : m_layout.boxes) {
        if (box.node != node) continue;
        m_view.scale = std::max(m_view.scale, 0.8);
        m_view.dx = width() / 2.0 - box.rect.centerX() * m_view.scale;
        m_view.dy = height() / 2.0 - (box.rect.y + box.rect.height / 2) * m_view.scale;
        m_centreOnArrival = {};
        update();
        return;
    }
}

void GraphCanvas::mouseMoveEvent(QMouseEvent* event) {
    if (!m_dragging) return;
    const QPointF d = event->position() - m_dragFrom;
    m_dragFrom = event->position();
    m_view.pan(d.x(), d.y());
    update();
    emit viewChanged(m_view);
}

void GraphCanvas::mouseReleaseEvent(QMouseEvent* event) {
    m_dragging = false;
    if (event->button() != Qt::LeftButton) return;
    const QPointF moved = event->position() - m_pressedAt;
    if (std::abs(moved.x()) + std::abs(moved.y()) > 4) return;  // that was a pan
    const int i = boxAt(event->position());
    selectNode(i >= 0 ? m_layout.boxes[size_t(i)].node : NodeId{});
    // On an edge: its value (the first one when the edge carries several).
    const int edge = i < 0 ? edgeAt(event->position()) : -1;
    const bool onValue = edge >= 0 && size_t(edge) < m_layout.edgeInfo.size();
    if (m_selection) m_selection->selectValue(onValue ? m_layout.edgeInfo[size_t(edge)].value : ValueId{});
}

void GraphCanvas::mouseDoubleClickEvent(QMouseEvent* event) {
    const int i = boxAt(event->position());
    if (i < 0) return;
    const auto& box = m_layout.boxes[size_t(i)];
    if (box.group > 0 && m_shownTree == m_tree) toggleGroup(box.group);  // not while a new graph is laid out
    else if (box.node.valid()) emit nodeActivated(box.node);
}

void GraphCanvas::keyPressEvent(QKeyEvent* event) {
    const double step = 60;
    // With a node selected the arrows walk to its neighbours on the canvas (W/A/S/D pan).
    if (m_selected.valid() && !(event->modifiers() & Qt::ShiftModifier)) {
        std::optional<ArrowDirection> direction;
        switch (event->key()) {
            case Qt::Key_Up: direction = ArrowDirection::Up; break;
            case Qt::Key_Down: direction = ArrowDirection::Down; break;
            case Qt::Key_Left: direction = ArrowDirection::Left; break;
            case Qt::Key_Right: direction = ArrowDirection::Right; break;
            default: break;
        }
        if (direction) {
            std::vector<BoxCentre> centres;
            std::vector<NodeId> nodes;
            int from = -1;
            for (const auto& box : m_layout.boxes) {
                if (!box.node.valid() || box.expanded) continue;
                if (box.node == m_selected) from = int(nodes.size());
                centres.push_back({box.rect.x + box.rect.width / 2, box.rect.y + box.rect.height / 2});
                nodes.push_back(box.node);
            }
            if (const int next = nearestInDirection(centres, from, *direction); next >= 0) {
                selectNode(nodes[size_t(next)]);
                centreOn(nodes[size_t(next)]);
            }
            return;
        }
    }
    switch (event->key()) {
        case Qt::Key_Plus: case Qt::Key_Equal: m_view.zoomAt(width() / 2.0, height() / 2.0, 1.25); break;
        case Qt::Key_Minus: m_view.zoomAt(width() / 2.0, height() / 2.0, 0.8); break;
        case Qt::Key_F: case Qt::Key_Home: fitToView(); return;
        case Qt::Key_A: case Qt::Key_Left: m_view.pan(step, 0); break;
        case Qt::Key_D: case Qt::Key_Right: m_view.pan(-step, 0); break;
        case Qt::Key_W: case Qt::Key_Up: m_view.pan(0, step); break;
        case Qt::Key_S: case Qt::Key_Down: m_view.pan(0, -step); break;
        default: QWidget::keyPressEvent(event); return;
    }
    update();
    emit viewChanged(m_view);
}

void GraphCanvas::setColouring(Colouring colouring) {
    if (colouring == m_colouring) return;
    m_colouring = colouring;
    update();
}

QColor GraphCanvas::nodeFill(const Graph& graph, const Node& node) const {
    if (m_colouring == Colouring::Precision) return QColor::fromRgb(QRgb(nodePrecisionColor(nodePrecision(graph, node))));
    return QColor::fromRgb(QRgb(opCategoryColor(opCategory(node.domain, node.opType))));
}

}  // namespace fsc
