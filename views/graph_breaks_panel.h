#pragma once
// The graph breaks of the step shown: one row per break (kind, node, reason), the dock's
// title counting regions and breaks. Activating a row asks for its node.
#include <QTreeWidget>

#include "compiler/graph_breaks.h"

namespace fsc {

class Selection;

class GraphBreaksPanel : public QTreeWidget {
    Q_OBJECT
public:
    explicit GraphBreaksPanel(QWidget* parent = nullptr);
    // Activating a row picks that node of the step shown in `selection`.
    void setSelection(Selection* selection);
    void showReport(const Graph& graph, const GraphBreakReport& report);
    QString title() const { return m_title; }

signals:
    void nodeActivated(fsc::NodeId node);
    void titleChanged(QString title);

private:
    QString m_title;
};

}  // namespace fsc
