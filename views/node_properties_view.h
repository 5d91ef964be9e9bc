#pragma once
// Properties of the selected node: name, op and domain, scope, attributes, inputs and
// outputs with their types, and provenance (the imported nodes it was made from).
#include <QTreeWidget>

#include <memory>

#include "core/graph.h"

namespace fsc {

class NodePropertiesView : public QTreeWidget {
    Q_OBJECT
public:
    explicit NodePropertiesView(QWidget* parent = nullptr);
    // Shows `node` of `graph`; an invalid node clears the view.
    void showNode(std::shared_ptr<const Graph> graph, NodeId node);
    // The text of a top-level row's value ("Op", "Scope", ...), for tests.
    QString valueOf(const QString& property) const;

private:
    std::shared_ptr<const Graph> m_graph;
};

}  // namespace fsc
