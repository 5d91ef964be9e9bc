#pragma once
// Ctrl+F: finds nodes by name, op or tensor name in the graph a canvas shows. Enter or F3
// goes to the next match, Shift+F3 to the previous, Esc hides the bar; the count of matches
// sits beside the field. The matches belong to the graph they were found in: forget() them
// when another graph is shown.
#include <QString>
#include <QToolBar>

#include <vector>

#include "core/ids.h"

class QLabel;
class QLineEdit;

namespace fsc {

class GraphCanvas;

class FindBar : public QToolBar {
    Q_OBJECT
public:
    FindBar(GraphCanvas& canvas, QWidget* parent);

    // The next (+1) or previous (-1) match of `query`, revealed and selected on the canvas.
    void find(const QString& query, int step);
    void open();    // shown, with the field focused and its text selected
    void forget();  // the matches found so far
    QLineEdit* field() const { return m_field; }

private:
    GraphCanvas& m_canvas;
    QLineEdit* m_field;
    QLabel* m_count;
    QString m_query;
    std::vector<NodeId> m_hits;
    int m_index = -1;
};

}  // namespace fsc
