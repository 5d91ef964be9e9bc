#pragma once
// The timeline: one lane per stream (and per control-flow depth, and for copies), kernels
// as blocks coloured like their nodes on the graph, a time ruler, zoom and pan with the
// mouse (wheel, drag) and W/A/S/D, a time range picked with Shift+drag whose aggregates
// show in the corner, and selection shared with the graph canvas (click a block: its node;
// selectNode(): its launches highlighted and the first brought into view). Draws at most
// one block per pixel per lane, so 100,000 kernels repaint quickly.
#include <QWidget>

#include <memory>

#include "views/timeline_model.h"

namespace fsc {

class Selection;

class TimelineView : public QWidget {
    Q_OBJECT
public:
    explicit TimelineView(QWidget* parent = nullptr);

    void setTrace(std::shared_ptr<const Trace> trace);
    const Trace* trace() const { return m_trace.get(); }
    const std::vector<TimelineLane>& lanes() const { return m_lanes; }
    const TimeScale& scale() const { return m_scale; }
    void setScale(const TimeScale& scale);
    // F: one iteration (where a run opens); Shift+F: the whole run.
    void fit();
    void fitWholeRun();
    void selectNode(int64_t node);  // -1 clears
    int64_t selectedNode() const { return m_selectedNode; }
    void setRange(int64_t beginNs, int64_t endNs);
    const RangeSummary& range() const { return m_range; }
    // An instant marked with a vertical line (-1 clears): where another view points.
    void setCursorTime(int64_t timeNs);
    int64_t cursorTime() const { return m_cursorNs; }
    // Publishes to `selection` (a block picks its kernel and node, Shift+drag a time range)
    // and follows it (the run's node picked elsewhere highlighted, a range shaded, an
    // instant drawn as a line).
    void setSelection(Selection* selection);
    // Pixel geometry, for tests: the plot's left edge and a lane's vertical middle.
    static constexpr int kGutter = 150, kRuler = 22, kLaneHeight = 26;
    int laneMiddle(int lane) const { return kRuler + lane * kLaneHeight + kLaneHeight / 2; }
    // Paints everything now into `image`-sized area (benchmarks time this).
    void paintTo(QPainter& p, QSize size) const;

signals:
    void nodeSelected(int64_t node);  // a click on a block (-1: on nothing)
    void rangeSelected(fsc::RangeSummary range);

protected:
    void paintEvent(QPaintEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    double plotWidth() const { return std::max(1, width() - kGutter); }
    QColor colourOf(const Activity& a) const;
    std::shared_ptr<const Trace> m_trace;
    std::vector<TimelineLane> m_lanes;
    std::vector<unsigned> m_nodeColour;  // by node id
    TimeScale m_scale;
    int64_t m_selectedNode = -1;
    int64_t m_cursorNs = -1;
    Selection* m_selection = nullptr;
    void followTimeRange();
    RangeSummary m_range;
    bool m_hasRange = false;
    bool m_fitted = true;        // showing what fit() or fitWholeRun() chose, untouched by zoom or pan
    bool m_fittedWhole = false;  // ... and that was the whole run
    bool m_dragging = false, m_selecting = false;
    double m_dragFrom = 0, m_pressedAt = 0, m_rangeFrom = 0;
};

}  // namespace fsc
