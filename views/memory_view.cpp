#include "views/memory_view.h"
#include "views/focus_frame.h"
#include "views/selection.h"
#include "views/compact_rows.h"
#include "core/units.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

namespace fsc {
namespace {

QString sizeText(int64_t bytes) {
    return QString::fromStdString(bytesText(double(bytes)));
}

QString timeText(double ns) {
    return QString::fromStdString(durationText(ns / 1e6));
}

const QColor kPlanned(0x3b, 0x6e, 0xc4), kMeasured(0xd9, 0x6a, 0x1c);

}  // namespace

MemoryChart::MemoryChart(QWidget* parent) : QWidget(parent) {
    setMinimumSize(320, 160);
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(false);
}

void MemoryChart::setTrace(std::shared_ptr<const Trace> trace) {
    m_trace = std::move(trace);
    m_endNs = m_trace ? memorySpanEnd(*m_trace) : 1;
    m_peakBytes = 1;
    if (m_trace)
        m_peakBytes = std::max({int64_t(1), memoryPeak(m_trace->plannedMemory).bytes, memoryPeak(m_trace->measuredMemory).bytes});
    m_cursorNs = -1;
    update();
}

double MemoryChart::xOf(int64_t timeNs) const {
    const double w = std::max(1, width() - kLeft - kRight);
    return kLeft + w * double(timeNs) / double(m_endNs);
}

int64_t MemoryChart::timeAt(double x) const {
    const double w = std::max(1, width() - kLeft - kRight);
    return std::clamp<int64_t>(int64_t((x - kLeft) / w * double(m_endNs)), 0, m_endNs - 1);
}

void MemoryChart::setCursorTime(int64_t timeNs) {
    m_cursorNs = timeNs;
    update();
    emit cursorMoved(timeNs);
}

void MemoryChart::mousePressEvent(QMouseEvent* event) {
    if (m_trace && event->button() == Qt::LeftButton) setCursorTime(timeAt(event->position().x()));
}

void MemoryChart::mouseMoveEvent(QMouseEvent* event) {
    if (m_trace && (event->buttons() & Qt::LeftButton)) setCursorTime(timeAt(event->position().x()));
}

void MemoryChart::keyPressEvent(QKeyEvent* event) {
    // Left/Right: the previous or next planned step.
    if (!m_trace || m_trace->plannedMemory.empty() || (event->key() != Qt::Key_Left && event->key() != Qt::Key_Right)) {
        QWidget::keyPressEvent(event);
        return;
    }
    const auto& steps = m_trace->plannedMemory;
    int step = plannedStepAt(*m_trace, std::max<int64_t>(0, m_cursorNs));
    step = std::clamp(step + (event->key() == Qt::Key_Right ? 1 : -1), 0, int(steps.size()) - 1);
    setCursorTime(steps[size_t(step)].timeNs);
}

void MemoryChart::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const FocusFrame focus(p, *this);
    p.setRenderHint(QPainter::Antialiasing, true);
    const QPalette& pal = palette();
    p.fillRect(rect(), pal.color(QPalette::Base));
    const QRectF plot(kLeft, kTop, std::max(1, width() - kLeft - kRight), std::max(1, height() - kTop - kBottom));
    p.setPen(pal.color(QPalette::Mid));
    p.drawRect(plot);
    if (!m_trace) {
        p.setPen(pal.color(QPalette::PlaceholderText));
        p.drawText(plot, Qt::AlignCenter, tr("Run the graph (or open a run store) to see its memory"));
        return;
    }
    auto y = [&](int64_t bytes) { return plot.bottom() - plot.height() * double(bytes) / double(m_peakBytes) * 0.92; };
    // Axes: four byte gridlines, time at both ends.
    p.setPen(pal.color(QPalette::Text));
    for (int i = 0; i <= 4; ++i) {
        const int64_t b = m_peakBytes * i / 4;
        p.setPen(pal.color(QPalette::Midlight));
        p.drawLine(QPointF(plot.left(), y(b)), QPointF(plot.right(), y(b)));
        p.setPen(pal.color(QPalette::Text));
        p.drawText(QRectF(0, y(b) - 8, kLeft - 6, 16), Qt::AlignRight | Qt::AlignVCenter, sizeText(b));
    }
    p.drawText(QRectF(plot.left(), plot.bottom() + 4, 100, 18), Qt::AlignLeft, QStringLiteral("0"));
    p.drawText(QRectF(plot.right() - 160, plot.bottom() + 4, 160, 18), Qt::AlignRight,
               tr("%1 (iteration 0)").arg(timeText(double(m_endNs))));

    auto drawSeries = [&](const std::vector<MemorySample>& samples, const QColor& colour, bool fill) {
        if (samples.empty()) return;
        QPainterPath path(QPointF(xOf(samples.front().timeNs), plot.bottom()));
        for (size_t i = 0; i < samples.size(); ++i) {
            const double x0 = xOf(samples[i].timeNs);
            const double x1 = i + 1 < samples.size() ? xOf(samples[i + 1].timeNs) : plot.right();
            path.lineTo(x0, y(samples[i].bytes));
            path.lineTo(x1, y(samples[i].bytes));
        }
        if (fill) {
            QPainterPath area = path;
            area.lineTo(plot.right(), plot.bottom());
            area.closeSubpath();
            QColor light = colour;
            light.setAlpha(50);
            p.fillPath(area, light);
        }
        p.setPen(QPen(colour, 2));
        p.drawPath(path);
        const MemoryPeak peak = memoryPeak(samples);
        const QPointF at(xOf(samples[size_t(peak.index)].timeNs), y(peak.bytes));
        p.setBrush(colour);
        p.drawEllipse(at, 4, 4);
        p.setBrush(Qt::NoBrush);
    };
    drawSeries(m_trace->plannedMemory, kPlanned, true);
    drawSeries(m_trace->measuredMemory, kMeasured, false);

    // Legend with the peaks.
    const MemoryPeak planned = memoryPeak(m_trace->plannedMemory), measured = memoryPeak(m_trace->measuredMemory);
    QString plannedText = tr("planned arena in use, peak %1").arg(sizeText(planned.bytes));
    if (planned.index >= 0 && !m_trace->plannedMemory[size_t(planned.index)].label.empty())
        plannedText += tr(" at %1").arg(QString::fromStdString(m_trace->plannedMemory[size_t(planned.index)].label));
    const QString measuredText = m_trace->measuredMemory.empty() ? tr("no allocations measured")
                                                                 : tr("measured allocations, peak %1").arg(sizeText(measured.bytes));
    p.fillRect(QRectF(kLeft, 6, 12, 10), kPlanned);
    p.setPen(pal.color(QPalette::Text));
    const QFontMetrics fm(font());
    p.drawText(QPointF(kLeft + 16, 16), plannedText);
    const double second = kLeft + 16 + fm.horizontalAdvance(plannedText) + 24;
    p.fillRect(QRectF(second, 6, 12, 10), kMeasured);
    p.drawText(QPointF(second + 16, 16), measuredText);

    if (m_cursorNs >= 0) {
        p.setPen(QPen(pal.color(QPalette::Highlight), 1, Qt::DashLine));
        p.drawLine(QPointF(xOf(m_cursorNs), plot.top()), QPointF(xOf(m_cursorNs), plot.bottom()));
    }
}

MemoryView::MemoryView(QWidget* parent) : QWidget(parent) {
    m_chart = new MemoryChart(this);
    m_title = new QLabel(this);
    m_summary = new QLabel(this);
    m_summary->setWordWrap(true);
    m_live = new QTableWidget(0, 4, this);
    m_live->setHorizontalHeaderLabels({tr("Tensor"), tr("Bytes"), tr("Offset"), tr("Live steps")});
    m_live->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_live->verticalHeader()->hide();
    useCompactRows(m_live);
    m_live->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_live->setSelectionBehavior(QAbstractItemView::SelectRows);
    auto* right = new QWidget(this);
    auto* rightLayout = new QVBoxLayout(right);
    rightLayout->setContentsMargins(0, 0, 0, 0);
    rightLayout->addWidget(m_title);
    rightLayout->addWidget(m_live);
    auto* left = new QWidget(this);
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(m_summary);
    leftLayout->addWidget(m_chart, 1);
    auto* split = new QSplitter(this);
    split->addWidget(left);
    split->addWidget(right);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(split);
    connect(m_chart, &MemoryChart::cursorMoved, this, [this](int64_t t) {
        if (m_trace) showStep(plannedStepAt(*m_trace, t));
    });
    setTrace(nullptr);
}

QString MemoryView::headline() const {
    return m_summary->text();
}

void MemoryView::setTrace(std::shared_ptr<const Trace> trace) {
    m_trace = trace;
    m_chart->setTrace(trace);
    m_live->setRowCount(0);
    if (!m_trace) {
        m_summary->setText(tr("No run yet."));
        m_title->setText(tr("Click the chart to list the tensors live at that point."));
        return;
    }
    const MemoryPeak planned = memoryPeak(m_trace->plannedMemory), measured = memoryPeak(m_trace->measuredMemory);
    QString text = tr("Planned peak %1 over %2 steps (%3 intermediates)")
                       .arg(sizeText(planned.bytes))
                       .arg(m_trace->plannedMemory.size())
                       .arg(m_trace->plannedBuffers.size());
    text += m_trace->measuredMemory.empty() ? tr("; no measured allocations.") : tr("; measured peak %1.").arg(sizeText(measured.bytes));
    m_summary->setText(text);
    m_title->setText(tr("Click the chart (or use Left/Right) to list the tensors live at that step."));
    if (planned.index >= 0) showStep(planned.index);  // the peak first: the step users look for
}

void MemoryView::showStep(int step) {
    if (!m_trace || step < 0 || size_t(step) >= m_trace->plannedMemory.size()) {
        m_live->setRowCount(0);
        return;
    }
    const MemorySample& sample = m_trace->plannedMemory[size_t(step)];
    if (plannedStepAt(*m_trace, m_chart->cursorTime()) != step) {
        const QSignalBlocker quiet(m_chart);
        m_chart->setCursorTime(sample.timeNs);
    }
    const auto live = liveBuffersAt(*m_trace, step);
    m_title->setText(tr("Step %1 (%2): %3 live tensors, %4")
                         .arg(step)
                         .arg(QString::fromStdString(sample.label))
                         .arg(live.size())
                         .arg(sizeText(sample.bytes)));
    m_live->setSortingEnabled(false);
    m_live->setRowCount(int(live.size()));
    for (int r = 0; r < int(live.size()); ++r) {
        const PlannedBuffer& b = *live[size_t(r)];
        auto* bytes = new QTableWidgetItem;
        bytes->setData(Qt::DisplayRole, qlonglong(b.bytes));
        auto* offset = new QTableWidgetItem;
        offset->setData(Qt::DisplayRole, qlonglong(b.offset));
        m_live->setItem(r, 0, new QTableWidgetItem(QString::fromStdString(b.name)));
        m_live->setItem(r, 1, bytes);
        m_live->setItem(r, 2, offset);
        m_live->setItem(r, 3, new QTableWidgetItem(QStringLiteral("%1–%2").arg(b.firstStep).arg(b.lastStep)));
    }
    m_live->setSortingEnabled(true);
}

void MemoryView::setSelection(Selection* selection) {
    m_selection = selection;
    connect(m_chart, &MemoryChart::cursorMoved, selection, [this](int64_t timeNs) {
        if (!m_following) m_selection->selectTimeRange(timeNs, timeNs);
    });
    connect(selection, &Selection::timeRangeSelected, this, [this] {
        const int64_t timeNs = m_selection->rangeBegin();
        if (timeNs < 0 || !m_trace || timeNs == m_chart->cursorTime()) return;
        m_following = true;
        m_chart->setCursorTime(timeNs);
        m_following = false;
    });
}

}  // namespace fsc
