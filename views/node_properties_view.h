#pragma once
// Properties of the selected node: name, op and domain, scope, attributes, inputs and
// outputs with their types, the op's documentation (ONNX's schema registry, or the fused
// op's summary), provenance (the imported nodes it was made from), the generated CUDA source
// of a FusedElementwise, and for each weight its statistics and histogram (computed off the
// GUI thread: weights can be large).
#include <QTreeWidget>

#include <atomic>
#include <memory>
#include <utility>
#include <vector>

#include "core/graph.h"

namespace fsc {

class NodePropertiesView : public QTreeWidget {
    Q_OBJECT
public:
    explicit NodePropertiesView(QWidget* parent = nullptr);
    ~NodePropertiesView() override;
    // The model's opset imports: which version of an op's documentation applies.
    void setOpsets(std::vector<std::pair<std::string, int64_t>> opsets) { m_opsets = std::move(opsets); }
    // Shows `node` of `graph`; an invalid node clears the view.
    void showNode(std::shared_ptr<const Graph> graph, NodeId node);
    // The launches of the shown node in the last run (a row per kernel: its name, and
    // "N launches, X ms per iteration, grid/block"); replaces any such rows shown before.
    void showRunKernels(const QString& summary, const QList<QPair<QString, QString>>& kernels);
    // The text of a top-level row's value ("Op", "Scope", ...), for tests.
    QString valueOf(const QString& property) const;
    QTreeWidgetItem* rowNamed(const QString& property) const;

signals:
    void weightStatsShown();  // the statistics of the shown node's weights arrived

private:
    void addDocumentation(const Node& node);
    void addGeneratedKernel(const Node& node);
    void startWeightStats(const Node& node);
    std::shared_ptr<const Graph> m_graph;
    std::vector<std::pair<std::string, int64_t>> m_opsets;
    std::atomic<quint64> m_generation{0};  // results for an earlier node are dropped (read by the job)
    QList<class QThread*> m_jobs;
};

}  // namespace fsc
