#pragma once
// The status bar's line of text: a QLabel inside a widget without a layout. A QLabel given
// a new text asks its parent for a new layout, and in a status bar that re-lays out the
// whole window (5 ms with large tables docked); here the request stops at this widget.
#include <QWidget>

class QLabel;

namespace fsc {

class StatusLine : public QWidget {
    Q_OBJECT
public:
    explicit StatusLine(QWidget* parent = nullptr);
    void setText(const QString& text);
    QString text() const;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    QLabel* m_label;
};

}  // namespace fsc
