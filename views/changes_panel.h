#pragma once
// What one pass changed and which matches it rejected, each with its reason. Activating a
// row asks for the node it made (or the node a match was rejected at).
#include <QTreeWidget>

#include "compiler/pass_manager.h"

namespace fsc {

class Selection;

class ChangesPanel : public QTreeWidget {
    Q_OBJECT
public:
    explicit ChangesPanel(QWidget* parent = nullptr);
    // Activating a row picks that node of the step shown in `selection`.
    void setSelection(Selection* selection);
    // A pass's rows as text, made off the GUI thread (a large model's fusion pass has
    // thousands, each naming its nodes). `pass` null (the imported graph) makes none. Node
    // names come from `graph`, the graph after the pass.
    struct Row {
        QString pattern, nodes, reason, toolTip;
        int64_t node = -1;  // what activating it picks: the node made, or where a match was rejected
    };
    struct Rows {
        bool shown = false;  // a pass (not the imported graph)
        QString title;
        std::vector<Row> changes, rejected;
    };
    static Rows rowsOf(const PassReport* pass, const Graph& graph);
    void showRows(const Rows& rows);
    void showPass(const PassReport* pass, const Graph& graph) { showRows(rowsOf(pass, graph)); }

signals:
    void nodeActivated(fsc::NodeId node);
    void titleChanged(QString title);
};

}  // namespace fsc
