#pragma once
// The status bar's line of text. Unlike a QLabel, a new text never asks the window for a
// new layout (a QLabel's does, and laying out a window of large tables takes 5 ms); a text
// too long for the line is elided in the middle, the whole of it in the tooltip.
#include <QWidget>

namespace fsc {

class StatusLine : public QWidget {
    Q_OBJECT
public:
    explicit StatusLine(QWidget* parent = nullptr);
    void setText(const QString& text);
    const QString& text() const { return m_text; }
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    QString m_text;
};

}  // namespace fsc
