#include "views/timeline_view.h"
#include "views/focus_frame.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

#include "core/units.h"
#include "views/op_category.h"
#include "views/selection.h"

namespace fsc {
namespace {

QString timeText(double ns) {
    return QString::fromStdString(durationText(ns / 1e6));
}

}  // namespace

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
    setFocusPolicy(Qt::StrongFocus);
    setMinimumHeight(kRuler + 2 * kLaneHeight + 40);
}

void TimelineView::setTrace(std::shared_ptr<const Trace> trace) {
    m_trace = std::move(trace);
    m_lanes = m_trace ? buildTimelineLanes(*m_trace) : std::vector<TimelineLane>{};
    m_nodeColour.clear();
    if (m_trace)
        for (const TraceNode& n : m_trace->nodes) {
            if (n.id < 0) continue;
            if (size_t(n.id) >= m_nodeColour.size()) m_nodeColour.resize(size_t(n.id) + 1, 0xb0b0b8);
            // "domain::op" as the graph names it: the same category colour as on the canvas.
            const size_t sep = n.opType.rfind("::");
            m_nodeColour[size_t(n.id)] = opCategoryColor(
                sep == std::string::npos ? opCategory("", n.opType) : opCategory(n.opType.substr(0, sep), n.opType.substr(sep + 2)));
        }
    m_selectedNode = -1;
    m_hasRange = false;
    m_cursorNs = -1;
    setMinimumHeight(kRuler + int(std::max<size_t>(2, m_lanes.size())) * kLaneHeight + 40);
    fit();
}

void TimelineView::fit() {
    const auto [begin, end] = m_trace ? oneIterationSpan(*m_trace) : std::pair<int64_t, int64_t>{0, 1};
    m_scale = TimeScale::fit(begin, end, plotWidth());
    m_fitted = true;
    m_fittedWhole = false;
    update();
}

void TimelineView::fitWholeRun() {
    const auto [begin, end] = m_trace ? wholeRunSpan(*m_trace) : std::pair<int64_t, int64_t>{0, 1};
    m_scale = TimeScale::fit(begin, end, plotWidth());
    m_fitted = true;
    m_fittedWhole = true;
    update();
}

void TimelineView::setScale(const TimeScale& scale) {
    m_scale = scale;
    m_fitted = false;
    update();
}

void TimelineView::selectNode(int64_t node) {
    m_selectedNode = node;
    if (node >= 0 && m_trace) {
        // Bring its first launch into view when it is off screen.
        for (const Activity& a : m_trace->activities)
            if (a.node == node && a.depth == 0) {
                const double x = m_scale.toX(double(a.startNs));
                if (x < 0 || x > plotWidth()) {
                    m_scale.startNs = double(a.startNs) - plotWidth() * 0.3 * m_scale.nsPerPixel;
                    m_fitted = false;
                }
                break;
            }
    }
    update();
}

void TimelineView::setCursorTime(int64_t timeNs) {
    m_cursorNs = timeNs;
    update();
}

void TimelineView::setSelection(Selection* selection) {
    m_selection = selection;
    connect(selection, &Selection::nodeSelected, this, [this] {
        selectNode(m_selection->isOfRun() && m_selection->node().valid() ? int64_t(m_selection->node().index) : -1);
    });
    connect(selection, &Selection::timeRangeSelected, this, &TimelineView::followTimeRange);
    connect(this, &TimelineView::rangeSelected, selection,
            [this](const RangeSummary& range) { m_selection->selectTimeRange(range.beginNs, range.endNs); });
}

void TimelineView::followTimeRange() {
    const int64_t begin = m_selection->rangeBegin(), end = m_selection->rangeEnd();
    if (begin < end) {
        m_cursorNs = -1;
        if (!m_hasRange || m_range.beginNs != begin || m_range.endNs != end) setRange(begin, end);
    } else {
        setCursorTime(begin);  // an instant, or -1: none
    }
}

void TimelineView::setRange(int64_t beginNs, int64_t endNs) {
    if (!m_trace) return;
    m_range = summarizeRange(*m_trace, beginNs, endNs);
    m_hasRange = true;
    update();
    emit rangeSelected(m_range);
}

QColor TimelineView::colourOf(const Activity& a) const {
    if (a.kind == ActivityKind::Memcpy) return QColor(0xd0, 0x40, 0x10);
    if (a.kind == ActivityKind::Memset) return QColor(0x90, 0x60, 0x20);
    if (a.kind == ActivityKind::Range) return QColor(0x7a, 0x9c, 0x6e);
    if (a.node >= 0 && size_t(a.node) < m_nodeColour.size()) return QColor::fromRgb(QRgb(m_nodeColour[size_t(a.node)]));
    return QColor(0xb0, 0xb0, 0xb8);
}

void TimelineView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const FocusFrame focus(p, *this);
    paintTo(p, size());
}

void TimelineView::paintTo(QPainter& p, QSize size) const {
    const QPalette pal = palette();
    p.fillRect(QRect(QPoint(0, 0), size), pal.color(QPalette::Base));
    if (!m_trace || m_lanes.empty()) {
        p.setPen(pal.color(QPalette::PlaceholderText));
        p.drawText(QRect(QPoint(0, 0), size), Qt::AlignCenter, tr("No run yet: Run (Ctrl+R) fills the timeline"));
        return;
    }
    const double plot = std::max(1, size.width() - kGutter);
    // Ruler: ticks at a round step of about 100 px.
    const double raw = m_scale.nsPerPixel * 100;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    const double step = raw / magnitude < 2 ? magnitude * 2 : raw / magnitude < 5 ? magnitude * 5 : magnitude * 10;
    p.setPen(pal.color(QPalette::Mid));
    for (double t = std::ceil(m_scale.toNs(0) / step) * step; t <= m_scale.toNs(plot); t += step) {
        const double x = kGutter + m_scale.toX(t);
        p.drawLine(QPointF(x, kRuler - 6), QPointF(x, size.height()));
        p.setPen(pal.color(QPalette::Text));
        p.drawText(QPointF(x + 3, kRuler - 8), timeText(t));
        p.setPen(pal.color(QPalette::Mid));
    }
    p.setRenderHint(QPainter::Antialiasing, false);
    for (size_t l = 0; l < m_lanes.size(); ++l) {
        const int top = kRuler + int(l) * kLaneHeight;
        p.fillRect(QRect(0, top, kGutter, kLaneHeight), l % 2 ? pal.color(QPalette::AlternateBase) : pal.color(QPalette::Window));
        p.setPen(pal.color(QPalette::WindowText));
        p.drawText(QRect(6, top, kGutter - 10, kLaneHeight), Qt::AlignVCenter | Qt::AlignLeft,
                   QString::fromStdString(m_lanes[l].title));
        for (const TimelineBlock& b : visibleBlocks(*m_trace, m_lanes[l], m_scale, plot)) {
            const Activity& a = m_trace->activities[size_t(b.first)];
            const QRectF r(kGutter + b.x0, top + 3, std::max(1.0, b.x1 - b.x0), kLaneHeight - 6);
            const bool selected = m_selectedNode >= 0 && a.node == m_selectedNode && b.count == 1;
            p.fillRect(r, selected ? pal.color(QPalette::Highlight) : colourOf(a));
            if (b.count == 1 && r.width() > 6) {
                p.setPen(colourOf(a).darker(150));
                p.drawRect(r);
            }
            if (b.count == 1 && r.width() > 40) {
                p.setPen(selected ? pal.color(QPalette::HighlightedText) : QColor(0x20, 0x20, 0x20));
                const TraceNode* n = a.node >= 0 ? m_trace->findNode(a.node) : nullptr;
                p.drawText(r.adjusted(3, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                           QString::fromStdString(n ? n->name : a.name));
            }
        }
    }
    if (m_cursorNs >= 0) {
        const double x = kGutter + m_scale.toX(double(m_cursorNs));
        p.setPen(QPen(pal.color(QPalette::Highlight), 1.5));
        p.drawLine(QPointF(x, kRuler), QPointF(x, size.height()));
    }
    if (m_hasRange) {
        const double x0 = kGutter + m_scale.toX(double(m_range.beginNs)), x1 = kGutter + m_scale.toX(double(m_range.endNs));
        QColor shade = pal.color(QPalette::Highlight);
        shade.setAlpha(50);
        p.fillRect(QRectF(QPointF(x0, kRuler), QPointF(x1, size.height())), shade);
        QString text = tr("%1 selected: %2 activities, busy %3").arg(timeText(double(m_range.endNs - m_range.beginNs)))
                           .arg(m_range.activities).arg(timeText(double(m_range.busyNs)));
        for (const auto& [node, ns] : m_range.topNodes) {
            const TraceNode* n = m_trace->findNode(node);
            text += QStringLiteral("\n  %1  %2").arg(timeText(double(ns)), QString::fromStdString(n ? n->name : "?"));
        }
        const QRectF box(size.width() - 420, size.height() - 16 - 16 * (1 + int(m_range.topNodes.size())), 410,
                         10 + 16 * (1 + int(m_range.topNodes.size())));
        p.fillRect(box, pal.color(QPalette::ToolTipBase));
        p.setPen(pal.color(QPalette::ToolTipText));
        p.drawText(box.adjusted(6, 4, -6, -4), Qt::AlignLeft | Qt::AlignTop, text);
    }
}

void TimelineView::wheelEvent(QWheelEvent* event) {
    m_scale.zoomAt(event->position().x() - kGutter, std::pow(1.25, event->angleDelta().y() / 120.0));
    m_fitted = false;
    update();
}

void TimelineView::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) return;
    m_pressedAt = event->position().x();
    if (event->modifiers() & Qt::ShiftModifier) {
        m_selecting = true;
        m_rangeFrom = m_scale.toNs(event->position().x() - kGutter);
    } else {
        m_dragging = true;
        m_dragFrom = event->position().x();
    }
}

void TimelineView::mouseMoveEvent(QMouseEvent* event) {
    if (m_dragging) {
        m_scale.pan(event->position().x() - m_dragFrom);
        m_fitted = false;
        m_dragFrom = event->position().x();
        update();
    } else if (m_selecting) {
        setRange(int64_t(m_rangeFrom), int64_t(m_scale.toNs(event->position().x() - kGutter)));
    }
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event) {
    const bool click = std::abs(event->position().x() - m_pressedAt) < 4;
    const bool wasSelecting = m_selecting;
    m_dragging = m_selecting = false;
    if (!click || wasSelecting || !m_trace || event->button() != Qt::LeftButton) return;
    const int lane = (int(event->position().y()) - kRuler) / kLaneHeight;
    int64_t node = -1;
    int picked = -1;
    if (lane >= 0 && size_t(lane) < m_lanes.size() && event->position().x() >= kGutter) {
        picked = activityAt(*m_trace, m_lanes[size_t(lane)], m_scale.toNs(event->position().x() - kGutter),
                              2 * m_scale.nsPerPixel);
        if (picked >= 0) node = m_trace->activities[size_t(picked)].node;
    }
    m_hasRange = false;
    if (m_selection) m_selection->selectTimeRange(-1, -1);
    selectNode(node);
    emit nodeSelected(node);
    if (m_selection && picked >= 0) {
        m_selection->selectKernel(QString::fromStdString(m_trace->activities[size_t(picked)].name));
        if (node >= 0) m_selection->selectRunNode(NodeId{uint32_t(node)});
    }
}

void TimelineView::keyPressEvent(QKeyEvent* event) {
    const double middle = plotWidth() / 2;
    switch (event->key()) {
        case Qt::Key_W: m_scale.zoomAt(middle, 1.5); break;
        case Qt::Key_S: m_scale.zoomAt(middle, 1 / 1.5); break;
        case Qt::Key_A: case Qt::Key_Left: m_scale.pan(plotWidth() / 5); break;
        case Qt::Key_D: case Qt::Key_Right: m_scale.pan(-plotWidth() / 5); break;
        case Qt::Key_F:
            if (event->modifiers() & Qt::ShiftModifier) fitWholeRun();
            else fit();
            return;
        case Qt::Key_Escape:
            m_hasRange = false;
            if (m_selection) m_selection->selectTimeRange(-1, -1);
            break;
        default: QWidget::keyPressEvent(event); return;
    }
    if (event->key() != Qt::Key_Escape) m_fitted = false;
    update();
}

void TimelineView::resizeEvent(QResizeEvent*) {
    // Still fitted: keep it so at the new width (a hidden dock starts narrow).
    if (m_fitted) m_fittedWhole ? fitWholeRun() : fit();
    update();
}

}  // namespace fsc
