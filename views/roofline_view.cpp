#include "views/roofline_view.h"

#include <QMouseEvent>
#include <QPainter>

#include <cmath>

#include "core/units.h"
#include "views/selection.h"

namespace fsc {
namespace {

QString decade(double e) {
    return QStringLiteral("1e%1").arg(int(e));
}

}  // namespace

RooflineView::RooflineView(QWidget* parent) : QWidget(parent) {
    setMinimumSize(320, 200);
}

void RooflineView::setTrace(std::shared_ptr<const Trace> trace) {
    m_trace = std::move(trace);
    m_stats = m_trace ? computeNodeStats(*m_trace) : std::vector<NodeStat>{};
    m_roofline = m_trace ? buildRoofline(*m_trace, m_stats) : Roofline{};
    m_selected = -1;
    update();
}

void RooflineView::selectNode(int64_t node) {
    m_selected = node;
    update();
}

QRectF RooflineView::plot() const {
    return QRectF(64, 28, std::max(10, width() - 64 - 14), std::max(10, height() - 28 - 40));
}

double RooflineView::xOf(double intensity) const {
    const QRectF r = plot();
    return r.left() + r.width() * (std::log10(intensity) - m_roofline.log10MinX) / (m_roofline.log10MaxX - m_roofline.log10MinX);
}

double RooflineView::yOf(double flops) const {
    const QRectF r = plot();
    return r.bottom() - r.height() * (std::log10(flops) - m_roofline.log10MinY) / (m_roofline.log10MaxY - m_roofline.log10MinY);
}

QPointF RooflineView::pointOf(const RooflinePoint& p) const {
    return {xOf(p.stat->arithmeticIntensity), yOf(p.stat->flopsPerSecond)};
}

int64_t RooflineView::nodeAt(QPointF position) const {
    int64_t best = -1;
    double bestDistance = 8;
    for (const RooflinePoint& p : m_roofline.points) {
        const double d = std::hypot(pointOf(p).x() - position.x(), pointOf(p).y() - position.y());
        if (d <= bestDistance) best = p.stat->node, bestDistance = d;
    }
    return best;
}

void RooflineView::setSelection(Selection* selection) {
    m_selection = selection;
    connect(selection, &Selection::nodeSelected, this, [this] {
        selectNode(m_selection->isOfRun() && m_selection->node().valid() ? int64_t(m_selection->node().index) : -1);
    });
}

void RooflineView::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) return;
    const int64_t node = nodeAt(event->position());
    selectNode(node);
    emit nodeSelected(node);
    if (m_selection && node >= 0) m_selection->selectRunNode(NodeId{uint32_t(node)});
}

void RooflineView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing, true);
    const QPalette& pal = palette();
    p.fillRect(rect(), pal.color(QPalette::Base));
    const QRectF r = plot();
    p.setPen(pal.color(QPalette::Mid));
    p.drawRect(r);
    if (m_roofline.points.empty()) {
        p.setPen(pal.color(QPalette::PlaceholderText));
        p.drawText(r, Qt::AlignCenter | Qt::TextWordWrap,
                   m_trace ? tr("No node of this run has both a FLOP count and a measured time") : tr("Run the graph to see its roofline"));
        return;
    }
    p.setPen(pal.color(QPalette::Text));
    for (double e = m_roofline.log10MinX; e <= m_roofline.log10MaxX; ++e) {
        const double x = xOf(std::pow(10, e));
        p.setPen(pal.color(QPalette::Midlight));
        p.drawLine(QPointF(x, r.top()), QPointF(x, r.bottom()));
        p.setPen(pal.color(QPalette::Text));
        p.drawText(QRectF(x - 30, r.bottom() + 2, 60, 16), Qt::AlignCenter, decade(e));
    }
    for (double e = m_roofline.log10MinY; e <= m_roofline.log10MaxY; ++e) {
        const double y = yOf(std::pow(10, e));
        p.setPen(pal.color(QPalette::Midlight));
        p.drawLine(QPointF(r.left(), y), QPointF(r.right(), y));
        p.setPen(pal.color(QPalette::Text));
        p.drawText(QRectF(0, y - 8, r.left() - 4, 16), Qt::AlignRight | Qt::AlignVCenter, decade(e));
    }
    p.drawText(QRectF(r.left(), r.bottom() + 18, r.width(), 18), Qt::AlignCenter, tr("FLOPs per byte (cost model)"));
    p.drawText(QRectF(r.left(), 4, r.width(), 18), Qt::AlignLeft,
               m_roofline.hasRoofs ? tr("achieved FLOP/s per node; roofs %1 GFLOP/s, %2 (%3)")
                                         .arg(m_roofline.peakFlopsPerSecond / 1e9, 0, 'f', 0)
                                         .arg(QString::fromStdString(bandwidthText(m_roofline.peakBytesPerSecond)))
                                         .arg(QString::fromStdString(m_trace->peaksSource))
                                   : tr("achieved FLOP/s per node; the device's roofs are not known for this run"));
    p.save();
    p.setClipRect(r);
    if (m_roofline.hasRoofs) {
        const double x0 = std::pow(10, m_roofline.log10MinX), x1 = std::pow(10, m_roofline.log10MaxX);
        p.setPen(QPen(pal.color(QPalette::Text), 1.5));
        const QPointF points[] = {{xOf(x0), yOf(m_roofline.attainable(x0))},
                                  {xOf(m_roofline.ridge), yOf(m_roofline.peakFlopsPerSecond)},
                                  {xOf(x1), yOf(m_roofline.peakFlopsPerSecond)}};
        p.drawPolyline(points, 3);
    }
    // Translucent (overlapping nodes show), and lighter on a dark background, where the
    // light palette's red sinks into the base colour.
    const bool dark = pal.color(QPalette::Base).lightness() < 128;
    QColor dot = dark ? QColor(0xff, 0x6b, 0x6b) : QColor(0xe3, 0x1a, 0x1c);
    dot.setAlpha(dark ? 200 : 150);
    for (const RooflinePoint& point : m_roofline.points) {
        const double radius = 3 + 6 * std::sqrt(point.stat->share);
        p.setPen(Qt::NoPen);
        p.setBrush(dot);
        p.drawEllipse(pointOf(point), radius, radius);
        if (point.stat->node == m_selected) {
            p.setPen(QPen(pal.color(QPalette::Highlight), 2.5));
            p.setBrush(Qt::NoBrush);
            p.drawEllipse(pointOf(point), radius + 4, radius + 4);
            p.setPen(pal.color(QPalette::Text));
            p.drawText(pointOf(point) + QPointF(radius + 6, -radius - 4), QString::fromStdString(point.node->name));
        }
    }
    p.restore();
}

}  // namespace fsc
