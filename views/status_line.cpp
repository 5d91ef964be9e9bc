#include "views/status_line.h"

#include <QPainter>

namespace fsc {

StatusLine::StatusLine(QWidget* parent) : QWidget(parent) {
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

void StatusLine::setText(const QString& text) {
    if (text == m_text) return;
    m_text = text;
    setToolTip(text);
    update();  // a repaint only: the size does not depend on the text
}

QSize StatusLine::sizeHint() const {
    return {200, fontMetrics().height() + 4};
}

QSize StatusLine::minimumSizeHint() const {
    return {40, fontMetrics().height() + 4};
}

void StatusLine::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setPen(palette().color(QPalette::WindowText));
    const QRect area = rect().adjusted(2, 0, -2, 0);
    p.drawText(area, Qt::AlignVCenter | Qt::AlignLeft, fontMetrics().elidedText(m_text, Qt::ElideMiddle, area.width()));
}

}  // namespace fsc
