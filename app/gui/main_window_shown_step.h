#pragma once
// What the window shows for a step, made off the GUI thread (materialising a snapshot of a
// large model takes longer than a frame): main_window_passes.cpp and _without.cpp make it,
// applyStep() shows it.
#include <QString>

#include <memory>
#include <vector>

#include "app/common/session.h"
#include "compiler/graph_snapshot.h"
#include "views/changes_panel.h"
#include "views/graph_canvas.h"

namespace fsc {

struct MainWindow::ShownStep {
    int row = -1;
    std::shared_ptr<const GraphSnapshot>
        snapshot;  // what it was made from: stale if recompiled since
    std::shared_ptr<const Graph> graph;
    std::shared_ptr<const Graph> previous;  // the comparison's left pane, when comparing
    std::vector<GraphCanvas::Mark> before, after;
    ChangesPanel::Rows changes;  // what the step's pass changed and rejected
    QString note;                // for the Log: what the panes show, or why the left one is missing

    static std::vector<GraphCanvas::Mark> marksOf(const std::vector<Session::Change>& changes) {
        std::vector<GraphCanvas::Mark> out(changes.size(), GraphCanvas::Mark::None);
        for (size_t i = 0; i < changes.size(); ++i)
            if (changes[i] == Session::Change::Removed)
                out[i] = GraphCanvas::Mark::Removed;
            else if (changes[i] == Session::Change::Added)
                out[i] = GraphCanvas::Mark::Added;
        return out;
    }
};

}  // namespace fsc
