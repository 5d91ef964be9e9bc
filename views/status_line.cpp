#include "views/status_line.h"

#include <QLabel>

namespace fsc {

StatusLine::StatusLine(QWidget* parent) : QWidget(parent), m_label(new QLabel(this)) {
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
}

void StatusLine::setText(const QString& text) {
    m_label->setText(text);
}

QString StatusLine::text() const {
    return m_label->text();
}

QSize StatusLine::sizeHint() const {
    return m_label->sizeHint();
}

QSize StatusLine::minimumSizeHint() const {
    return m_label->minimumSizeHint();
}

void StatusLine::resizeEvent(QResizeEvent*) {
    m_label->setGeometry(rect());
}

}  // namespace fsc
