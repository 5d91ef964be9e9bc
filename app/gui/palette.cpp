#include "app/gui/palette.h"

#include <QApplication>
#include <QColor>
#include <QPalette>
#include <QSettings>
#include <QStyle>

namespace fsc {

bool darkPaletteChosen() { return QSettings().value(QStringLiteral("view/dark"), false).toBool(); }

void applyPalette(bool dark) {
    QSettings().setValue(QStringLiteral("view/dark"), dark);
    if (!dark) {
        qApp->setPalette(qApp->style()->standardPalette());
        return;
    }
    QPalette p;
    p.setColor(QPalette::Window, QColor(0x2b, 0x2b, 0x2e));
    p.setColor(QPalette::WindowText, QColor(0xe6, 0xe6, 0xe6));
    p.setColor(QPalette::Base, QColor(0x1f, 0x1f, 0x22));
    p.setColor(QPalette::AlternateBase, QColor(0x33, 0x33, 0x38));
    p.setColor(QPalette::Text, QColor(0xe6, 0xe6, 0xe6));
    p.setColor(QPalette::Button, QColor(0x3a, 0x3a, 0x40));
    p.setColor(QPalette::ButtonText, QColor(0xe6, 0xe6, 0xe6));
    p.setColor(QPalette::Highlight, QColor(0x3d, 0x8e, 0xe6));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Mid, QColor(0x55, 0x55, 0x5c));
    p.setColor(QPalette::Dark, QColor(0x8a, 0x8a, 0x92));  // edges: light on the dark canvas
    p.setColor(QPalette::PlaceholderText, QColor(0x90, 0x90, 0x98));
    p.setColor(QPalette::ToolTipBase, QColor(0x33, 0x33, 0x38));
    p.setColor(QPalette::ToolTipText, QColor(0xe6, 0xe6, 0xe6));
    qApp->setPalette(p);
}

}  // namespace fsc
