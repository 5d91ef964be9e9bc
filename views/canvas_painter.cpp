#include "views/canvas_painter.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/provenance.h"
#include "views/graph_canvas.h"
#include "views/box_neighbours.h"
#include "views/heat_scale.h"
#include "views/label_placement.h"
#include "views/op_category.h"
#include "views/precision_colour.h"

namespace fsc {

using Mark = GraphCanvas::Mark;
using Colouring = GraphCanvas::Colouring;
namespace {

// The point halfway along a polyline.
LayoutResult::Point pathMiddle(const std::vector<LayoutResult::Point>& path) {
    double total = 0;
    for (size_t i = 1; i < path.size(); ++i) total += std::hypot(path[i].x - path[i - 1].x, path[i].y - path[i - 1].y);
    double left = total / 2;
    for (size_t i = 1; i < path.size(); ++i) {
        const double len = std::hypot(path[i].x - path[i - 1].x, path[i].y - path[i - 1].y);
        if (len >= left && len > 0) {
            const double t = left / len;
            return {path[i - 1].x + (path[i].x - path[i - 1].x) * t, path[i - 1].y + (path[i].y - path[i - 1].y) * t};
        }
        left -= len;
    }
    return path.empty() ? LayoutResult::Point{} : path.back();
}

}  // namespace

void CanvasPainter::paint(QPainter& p, const ViewTransform& view, QSizeF area) const {
    const QPalette pal = c.palette();
    p.fillRect(QRectF(QPointF(0, 0), area), pal.color(QPalette::Base));
    p.setRenderHint(QPainter::Antialiasing, view.scale > 0.3);
    const double s = view.scale;
    const double left = view.toSceneX(0), top = view.toSceneY(0);
    const double right = view.toSceneX(area.width()), bottom = view.toSceneY(area.height());
    auto visible = [&](const Rect& r) { return r.x <= right && r.x + r.width >= left && r.y <= bottom && r.bottom() >= top; };
    auto screen = [&](const Rect& r) {
        return QRectF(view.toScreenX(r.x), view.toScreenY(r.y), r.width * s, r.height * s);
    };
    const bool labels = 36 * s >= 13;  // a node box tall enough for its text
    QFont font = p.font();
    font.setPointSizeF(std::clamp(11.0 * s, 6.0, 14.0));
    p.setFont(font);
    const QColor text = QColor(0x20, 0x20, 0x20);

    // The heat scale runs to the hottest box drawn, so collapsed groups (sums) and single
    // nodes share one honest scale.
    double heatScale = 0;
    if (!c.m_heat.empty())
        for (const auto& box : c.m_layout.boxes)
            if (!box.expanded) heatScale = std::max(heatScale, c.heatOf(box));

    // Group frames first, then edges, then boxes on top.
    for (const auto& box : c.m_layout.boxes) {
        if (!box.expanded || !visible(box.rect)) continue;
        const QRectF r = screen(box.rect);
        p.setPen(QPen(pal.color(QPalette::Mid), 1));
        p.setBrush(pal.color(QPalette::AlternateBase));
        p.drawRoundedRect(r, 6 * s, 6 * s);
        if (labels) {
            p.setPen(pal.color(QPalette::Text));
            // A title wider than its group loses its middle, never its end (the node count);
            // the tooltip has the whole path.
            const QRectF title = r.adjusted(8 * s, 4 * s, -8 * s, 0);
            p.drawText(title, Qt::AlignLeft | Qt::AlignTop,
                       p.fontMetrics().elidedText(c.boxLabel(box), Qt::ElideMiddle, int(title.width())));
        }
    }
    const QPen edgePen(pal.color(QPalette::Dark), std::max(0.6, 1.2 * s));
    const QPen valuePen(pal.color(QPalette::Highlight), std::max(2.0, 3.0 * s));
    const ValueId pickedValue = c.selectedValue();
    const QPen breakPen(QColor(0xd0, 0x40, 0x10), std::max(1.5, 2.5 * s), Qt::DashLine);
    const bool edgeLabels = s >= 0.9;  // shapes are readable next to the edges
    LabelPlacement edgeLabelPlaces;  // converging edges' labels never land on each other or on a node
    if (edgeLabels)
        for (const auto& box : c.m_layout.boxes)
            if (!box.expanded && visible(box.rect)) edgeLabelPlaces.block(screen(box.rect));
    std::vector<bool> labelled;  // a value read by several nodes is labelled once, not per edge
    p.setBrush(Qt::NoBrush);
    for (size_t e = 0; e < c.m_layout.edges.size(); ++e) {
        const auto& path = c.m_layout.edges[e];
        const bool isBreak = c.isBreakEdge(e);
        const bool picked = pickedValue.valid() && e < c.m_layout.edgeInfo.size() && c.m_layout.edgeInfo[e].value == pickedValue;
        p.setPen(picked ? valuePen : isBreak ? breakPen : edgePen);
        double x0 = 1e18, x1 = -1e18, y0 = 1e18, y1 = -1e18;
        for (const auto& pt : path) {
            x0 = std::min(x0, pt.x), x1 = std::max(x1, pt.x), y0 = std::min(y0, pt.y), y1 = std::max(y1, pt.y);
        }
        if (!visible({x0, y0, x1 - x0, y1 - y0})) continue;
        QPainterPath line(QPointF(view.toScreenX(path[0].x), view.toScreenY(path[0].y)));
        for (size_t i = 1; i < path.size(); ++i) line.lineTo(view.toScreenX(path[i].x), view.toScreenY(path[i].y));
        p.drawPath(line);
        if (labels && path.size() >= 2) {  // an arrowhead where the edge enters its target
            const QPointF tip(view.toScreenX(path.back().x), view.toScreenY(path.back().y));
            const QPointF from(view.toScreenX(path[path.size() - 2].x), view.toScreenY(path[path.size() - 2].y));
            const QPointF d = tip - from;
            const double len = std::hypot(d.x(), d.y());
            if (len > 1e-6) {
                const QPointF u = d / len, n(-u.y(), u.x());
                const double a = 7 * std::min(1.0, s * 1.5);
                const QPointF head[3] = {tip, tip - u * a + n * a * 0.5, tip - u * a - n * a * 0.5};
                p.save();
                p.setPen(QPen(p.pen().color(), 1));
                p.setBrush(p.pen().color());
                p.drawPolygon(head, 3);
                p.restore();
            }
        }
        const ValueId edgeValue = e < c.m_layout.edgeInfo.size() ? c.m_layout.edgeInfo[e].value : ValueId{};
        if (edgeLabels && edgeValue.valid() && edgeValue.index >= labelled.size()) labelled.resize(edgeValue.index + 1, false);
        if (edgeLabels && edgeValue.valid() && !labelled[edgeValue.index]) {
            // dtype and shape beside the middle of the edge (fanned-out edges have parted there).
            const Value& v = c.m_shownGraph->value(edgeValue);
            QString label = QString::fromStdString(v.type.toString());
            if (c.m_layout.edgeInfo[e].values > 1) label += GraphCanvas::tr(" +%1").arg(c.m_layout.edgeInfo[e].values - 1);
            p.save();
            QFont small = p.font();
            small.setPointSizeF(std::clamp(8.0 * s, 6.0, 11.0));
            p.setFont(small);
            p.setPen(isBreak ? breakPen.color() : pal.color(QPalette::PlaceholderText));
            const LayoutResult::Point at = pathMiddle(path);
            const QFontMetricsF metrics(small);
            const QRectF wanted(view.toScreenX(at.x) + 4, view.toScreenY(at.y) + 4 - metrics.ascent(),
                                metrics.horizontalAdvance(label), metrics.height());
            if (const auto placed = edgeLabelPlaces.place(wanted)) {
                p.drawText(QPointF(placed->x(), placed->y() + metrics.ascent()), label);
                labelled[edgeValue.index] = true;
            }
            p.restore();
        }
    }
    for (const auto& box : c.m_layout.boxes) {
        if (box.expanded || !visible(box.rect)) continue;
        const QRectF r = screen(box.rect);
        QColor fill;
        if (box.node.valid()) {
            fill = c.nodeFill(*c.m_shownGraph, c.m_shownGraph->node(box.node));
        } else {
            fill = pal.color(QPalette::Button);
        }
        if (const double heat = c.heatOf(box); heat >= 0)
            fill = QColor::fromRgb(QRgb(heatColor(heatScale > 0 ? heat / heatScale : 0)));
        const bool selected = box.node.valid() && box.node == c.m_selected;
        const bool linked = box.node.valid() && box.node.index < c.m_linked.size() && c.m_linked[box.node.index];
        const Mark mark = box.node.valid() && box.node.index < c.m_marks.size() ? c.m_marks[box.node.index] : Mark::None;
        QPen pen = labels ? QPen(fill.darker(160), 1) : QPen(Qt::NoPen);
        if (mark == Mark::Removed) pen = QPen(QColor(0xd0, 0x30, 0x30), 3, Qt::DashLine);
        if (mark == Mark::Added) pen = QPen(QColor(0x20, 0xa0, 0x40), 3);
        if (mark == Mark::FirstJump) pen = QPen(QColor(0x80, 0x30, 0xd0), 5);
        const bool host = box.node.valid() && box.node.index < c.m_host.size() && c.m_host[box.node.index];
        if (host) pen = QPen(QColor(0x60, 0x20, 0x10), 2.5, Qt::DotLine);
        if (linked) pen = QPen(QColor(0xff, 0x90, 0x00), 4);
        if (selected) pen = QPen(pal.color(QPalette::Highlight), 4);
        p.setPen(pen);
        p.setBrush(fill);
        if (box.node.valid()) p.drawRoundedRect(r, 4 * s, 4 * s);
        else p.drawRect(r);
        const int region = box.node.valid() && box.node.index < c.m_region.size() ? c.m_region[box.node.index] : -1;
        if (region >= 0 && labels) {  // the region's colour as a stripe on the left edge
            p.save();
            p.setPen(Qt::NoPen);
            p.setBrush(QColor::fromHsv((200 + region * 67) % 360, 140, 210));
            p.drawRect(QRectF(r.x(), r.y() + 3 * s, 5 * s, r.height() - 6 * s));
            p.restore();
        }
        if (labels) {
            const bool dark = fill.lightnessF() < 0.45;  // the hottest heat colours
            p.setPen(dark ? QColor(Qt::white) : box.node.valid() || !c.m_heat.empty() ? text : pal.color(QPalette::ButtonText));
            p.drawText(r, Qt::AlignCenter,
                       p.fontMetrics().elidedText(c.boxLabel(box), Qt::ElideMiddle, int(r.width() - 8 * s)));
        }
    }
    if (!c.m_heat.empty()) paintHeatLegend(p, area, heatScale);
    else if (c.m_colouring == Colouring::Precision) paintPrecisionLegend(p, area);
}

void CanvasPainter::paintPrecisionLegend(QPainter& p, QSizeF area) const {
    // One swatch per precision, bottom left.
    const NodePrecision kinds[] = {NodePrecision::Int8, NodePrecision::Float16, NodePrecision::BFloat16,
                                   NodePrecision::Float32, NodePrecision::Other};
    const double swatch = 12, step = 78, margin = 12;
    const QRectF frame(margin - 8, area.height() - margin - swatch - 8, step * 5 + 8, swatch + 16);
    p.save();
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setPen(QPen(c.palette().color(QPalette::Mid), 1));
    p.setBrush(c.palette().color(QPalette::Window));
    p.drawRect(frame);
    QFont font = p.font();
    font.setPointSizeF(8.5);
    p.setFont(font);
    for (int i = 0; i < 5; ++i) {
        const QRectF box(margin + i * step, area.height() - margin - swatch, swatch, swatch);
        p.setPen(QPen(c.palette().color(QPalette::Mid), 1));
        p.setBrush(QColor::fromRgb(QRgb(nodePrecisionColor(kinds[i]))));
        p.drawRect(box);
        p.setPen(c.palette().color(QPalette::WindowText));
        p.drawText(QRectF(box.right() + 4, box.y() - 3, step - swatch - 6, swatch + 6), Qt::AlignLeft | Qt::AlignVCenter,
                   QString::fromLatin1(nodePrecisionName(kinds[i])));
    }
    p.restore();
}

void CanvasPainter::paintHeatLegend(QPainter& p, QSizeF area, double scale) const {
    // A bar from no time to the largest node's share, bottom left, wide enough for its title
    // and range side by side (the longest title, bisection's, did not fit 230 pixels).
    QFont font = p.font();
    font.setPointSizeF(8.5);
    const QString title = GraphCanvas::tr(heatTitle(c.m_heat.unit));
    const QString range = GraphCanvas::tr("0 – %1").arg(QString::fromStdString(formatHeat(c.m_heat.unit, scale)));
    const QFontMetricsF metrics(font);
    const double w = std::max(230.0, metrics.horizontalAdvance(title) + metrics.horizontalAdvance(range) + 16);
    const double h = 12, margin = 12;
    const QRectF bar(margin, area.height() - margin - h, w, h);
    const QRectF frame = bar.adjusted(-8, -24, 8, 8);
    p.save();
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setPen(QPen(c.palette().color(QPalette::Mid), 1));
    p.setBrush(c.palette().color(QPalette::Window));
    p.drawRect(frame);
    QLinearGradient ramp(bar.topLeft(), bar.topRight());
    for (int i = 0; i <= 8; ++i) ramp.setColorAt(i / 8.0, QColor::fromRgb(QRgb(heatColor(i / 8.0))));
    p.setBrush(ramp);
    p.drawRect(bar);
    p.setFont(font);
    p.setPen(c.palette().color(QPalette::WindowText));
    p.drawText(QRectF(bar.x(), frame.y() + 2, w, 18), Qt::AlignLeft | Qt::AlignVCenter, title);
    p.drawText(QRectF(bar.x(), frame.y() + 2, w, 18), Qt::AlignRight | Qt::AlignVCenter, range);
    p.restore();
}

}  // namespace fsc
