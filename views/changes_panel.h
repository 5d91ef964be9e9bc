#pragma once
// What one pass changed and which matches it rejected, each with its reason. Activating a
// row asks for the node it made (or the node a match was rejected at).
#include <QTreeWidget>

#include "compiler/pass_manager.h"

namespace fsc {

class ChangesPanel : public QTreeWidget {
    Q_OBJECT
public:
    explicit ChangesPanel(QWidget* parent = nullptr);
    // `pass` null (the imported graph) clears the list. Node names come from `graph`, the
    // graph after the pass.
    void showPass(const PassReport* pass, const Graph& graph);

signals:
    void nodeActivated(fsc::NodeId node);
    void titleChanged(QString title);
};

}  // namespace fsc
