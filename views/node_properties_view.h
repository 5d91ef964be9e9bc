#pragma once
// Properties of the selected node: name, op and domain, scope, attributes, inputs and
// outputs with their types, the op's documentation (ONNX's schema registry, or the fused
// op's summary), provenance (the imported nodes it was made from), the generated CUDA source
// of a FusedElementwise, and for each weight its statistics and histogram (the last two made
// by background jobs: weights can be large, and generating a kernel walks its fused body).
#include <QTreeWidget>

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "core/graph.h"
#include "core/status.h"

namespace fsc {

// The source a backend generates for a node: its entry point's name and the whole text.
struct GeneratedKernelText {
    std::string name, source;
};
// Which kernel source a node gets (null: none is shown). The window gives the session's.
using GeneratedKernelSource = std::function<Result<GeneratedKernelText>(const Graph&, NodeId)>;

class JobRunner;
class Selection;

class NodePropertiesView : public QTreeWidget {
    Q_OBJECT
public:
    explicit NodePropertiesView(JobRunner& jobs, QWidget* parent = nullptr);
    // The model's opset imports: which version of an op's documentation applies.
    void setOpsets(std::vector<std::pair<std::string, int64_t>> opsets) { m_opsets = std::move(opsets); }
    // Where a FusedElementwise's generated CUDA source comes from (run off the GUI thread).
    void setKernelSource(GeneratedKernelSource source) { m_kernelSource = std::move(source); }
    // Shows `node` of `graph`; an invalid node clears the view.
    void showNode(std::shared_ptr<const Graph> graph, NodeId node);
    // The launches of the shown node in the last run (a row per kernel: its name, and
    // "N launches, X ms per iteration, grid/block"); replaces any such rows shown before.
    void showRunKernels(const QString& summary, const QList<QPair<QString, QString>>& kernels);
    // Follows `selection` (the node picked, its value and kernel rows made current) and
    // publishes to it: an input or output row picks that value, a kernel row that kernel.
    void setSelection(Selection* selection);
    // The text of a top-level row's value ("Op", "Scope", ...), for tests.
    QString valueOf(const QString& property) const;
    QTreeWidgetItem* rowNamed(const QString& property) const;
    // A row's whole value (its tooltip where the shown text is shortened).
    QString fullValue(const QTreeWidgetItem* item) const;
    // The value in a read-only, resizable viewer (double-click on a value does the same).
    void showValue(const QTreeWidgetItem* item);

protected:
    // The names' column takes what its names need, at most 45% of the dock, so values
    // stay in view.
    void resizeEvent(QResizeEvent* event) override;

signals:
    void weightStatsShown();      // the statistics of the shown node's weights arrived
    void generatedKernelShown();  // a FusedElementwise's CUDA source (or why none) arrived

private:
    void addDocumentation(const Node& node);
    void addGeneratedKernel(NodeId node);
    void startWeightStats(const Node& node);
    void publishCurrentRow(QTreeWidgetItem* item);
    void followValue();
    void followKernel();
    void fitNamesColumn();
    void fitNamesColumnSoon();  // once, after the rows now being added
    bool m_fitPending = false;
    QTreeWidgetItem* childNamed(QTreeWidgetItem* parent, const std::function<bool(QTreeWidgetItem*)>& match) const;
    Selection* m_selection = nullptr;
    std::shared_ptr<const Graph> m_graph;
    std::vector<std::pair<std::string, int64_t>> m_opsets;
    JobRunner& m_jobs;
    GeneratedKernelSource m_kernelSource;
    static inline const QString kWeightsJob = QStringLiteral("weights");
    static inline const QString kKernelJob = QStringLiteral("kernel");
};

}  // namespace fsc
