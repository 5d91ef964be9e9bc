#pragma once
// The memory dock: the planned arena's occupancy over the schedule next to the measured
// allocations over the same time (the first profiled iteration), each peak marked, and the
// tensors live at the point under the cursor (click or move with the mouse; Left/Right step)
// listed with their bytes and arena offsets.
#include <QWidget>

#include <memory>

#include "views/memory_model.h"

class QLabel;
class QTableWidget;

namespace fsc {

class MemoryChart : public QWidget {
    Q_OBJECT
public:
    explicit MemoryChart(QWidget* parent = nullptr);
    void setTrace(std::shared_ptr<const Trace> trace);
    void setCursorTime(int64_t timeNs);
    int64_t cursorTime() const { return m_cursorNs; }
    // Plot geometry, for tests: the x of a time.
    double xOf(int64_t timeNs) const;
    static constexpr int kLeft = 74, kRight = 12, kTop = 24, kBottom = 26;

signals:
    void cursorMoved(int64_t timeNs);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;

private:
    int64_t timeAt(double x) const;
    std::shared_ptr<const Trace> m_trace;
    int64_t m_endNs = 1;
    int64_t m_peakBytes = 1;
    int64_t m_cursorNs = -1;
};

class Selection;

class MemoryView : public QWidget {
    Q_OBJECT
public:
    explicit MemoryView(QWidget* parent = nullptr);
    void setTrace(std::shared_ptr<const Trace> trace);
    MemoryChart* chart() const { return m_chart; }
    QTableWidget* liveTable() const { return m_live; }
    QString headline() const;
    // Shows the tensors live at planned step `step` (and moves the cursor there).
    void showStep(int step);
    // The chart's cursor (a click, Left/Right) picks that instant in `selection`; a time
    // picked elsewhere (a range's start on the timeline) moves the cursor there.
    void setSelection(Selection* selection);

private:
    std::shared_ptr<const Trace> m_trace;
    Selection* m_selection = nullptr;
    bool m_following = false;  // moving the cursor because the selection did: do not publish
    MemoryChart* m_chart;
    QLabel* m_title;
    QLabel* m_summary;
    QTableWidget* m_live;
};

}  // namespace fsc
