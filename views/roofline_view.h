#pragma once
// The roofline of a run: each node at its arithmetic intensity (cost-model FLOPs per byte)
// and achieved FLOP/s, dot area by its share of the run, under the device's roofs (their
// source named). Click a dot to select its node; the selected node is ringed.
#include <QWidget>

#include <memory>
#include <vector>

#include "profiler/roofline.h"

namespace fsc {

class Selection;

class RooflineView : public QWidget {
    Q_OBJECT
public:
    explicit RooflineView(QWidget* parent = nullptr);
    void setTrace(std::shared_ptr<const Trace> trace);
    void selectNode(int64_t node);
    int64_t selectedNode() const { return m_selected; }
    // A click on a dot picks the run's node in `selection`; a node of the run picked
    // elsewhere is ringed.
    void setSelection(Selection* selection);
    const Roofline& roofline() const { return m_roofline; }
    QPointF pointOf(const RooflinePoint& p) const;  // widget coordinates, for tests
    int64_t nodeAt(QPointF position) const;        // -1: none within reach

signals:
    void nodeSelected(int64_t node);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;

private:
    QRectF plot() const;
    double xOf(double intensity) const;
    double yOf(double flopsPerSecond) const;
    std::shared_ptr<const Trace> m_trace;
    std::vector<NodeStat> m_stats;
    Roofline m_roofline;
    int64_t m_selected = -1;
    Selection* m_selection = nullptr;
};

}  // namespace fsc
