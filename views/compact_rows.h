#pragma once
// Table rows one line of text high: the style's default (about 30 pixels) left a 1366x768
// laptop's Nodes dock one row and its Passes list about six.
#include <QFontMetrics>
#include <QHeaderView>
#include <QTableView>

namespace fsc {

inline void useCompactRows(QTableView* view) {
    const int row = view->fontMetrics().height() + 6;
    view->verticalHeader()->setMinimumSectionSize(row);
    view->verticalHeader()->setDefaultSectionSize(row);
}

}  // namespace fsc
