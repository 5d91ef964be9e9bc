#pragma once
// The keyboard-focus mark of the views that paint themselves (the canvas, the timeline, the
// memory chart): Qt's styles draw one only around their own widgets, so without it a
// keyboard user cannot tell where the arrow keys go.
#include <QPainter>
#include <QWidget>

namespace fsc {

// Declared first in a paintEvent, it draws the mark over whatever was painted, on every
// way out of the function.
class FocusFrame {
public:
    FocusFrame(QPainter& painter, const QWidget& widget) : m_painter(painter), m_widget(widget) {}
    FocusFrame(const FocusFrame&) = delete;
    FocusFrame& operator=(const FocusFrame&) = delete;
    ~FocusFrame() {
        if (!m_widget.hasFocus()) return;
        m_painter.save();
        m_painter.setRenderHint(QPainter::Antialiasing, false);
        m_painter.setBrush(Qt::NoBrush);
        m_painter.setPen(QPen(m_widget.palette().color(QPalette::Highlight), 2));
        m_painter.drawRect(QRectF(m_widget.rect()).adjusted(1, 1, -1, -1));
        m_painter.restore();
    }

private:
    QPainter& m_painter;
    const QWidget& m_widget;
};

}  // namespace fsc
