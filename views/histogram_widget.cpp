#include "views/histogram_widget.h"

#include <QPainter>

#include <algorithm>

namespace fsc {

HistogramWidget::HistogramWidget(std::vector<int64_t> bins, double min, double max, QWidget* parent)
    : QWidget(parent), m_bins(std::move(bins)), m_min(min), m_max(max) {
    setMinimumHeight(64);
    setToolTip(tr("values from %1 to %2 in %3 equal bins").arg(min).arg(max).arg(m_bins.size()));
}

void HistogramWidget::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const int labelHeight = fontMetrics().height();
    const QRectF plot(2, 2, width() - 4, height() - 4 - labelHeight);
    p.setPen(Qt::NoPen);
    p.setBrush(palette().color(QPalette::Highlight));
    const int64_t most = m_bins.empty() ? 0 : *std::max_element(m_bins.begin(), m_bins.end());
    if (most > 0) {
        const double w = plot.width() / double(m_bins.size());
        for (size_t i = 0; i < m_bins.size(); ++i) {
            const double h = plot.height() * double(m_bins[i]) / double(most);
            // A bin with any value gets at least a hairline, so rare values stay visible.
            p.drawRect(QRectF(plot.x() + w * double(i), plot.bottom() - std::max(h, m_bins[i] ? 1.0 : 0.0), std::max(1.0, w - 1),
                              std::max(h, m_bins[i] ? 1.0 : 0.0)));
        }
    }
    p.setPen(palette().color(QPalette::Text));
    const QRectF labels(plot.x(), plot.bottom() + 1, plot.width(), labelHeight);
    p.drawText(labels, Qt::AlignLeft | Qt::AlignVCenter, QString::number(m_min, 'g', 4));
    p.drawText(labels, Qt::AlignRight | Qt::AlignVCenter, QString::number(m_max, 'g', 4));
}

}  // namespace fsc
