// How long the GUI thread is blocked by the window's own work on a large model: the longest
// gap between ticks of a 1 ms timer (a stall the user feels as a frozen window) while
//  - the pass list's steps are shown one after another (graph breaks, diffs, layout),
//  - a run store is opened (SQLite read of a whole trace),
//  - the properties of every node of the compiled graph are shown (weights' statistics, a
//    FusedElementwise's generated CUDA source).
// Each stall is printed with the time the whole operation took (its reference in this run):
// what matters is that the stall stays a small fraction of it.
//
//   bench_gui_thread MODEL.onnx RUNS.fsdb   (the run store from `fusescope-cli profile`)
#include <QApplication>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTest>
#include <QEventLoop>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <functional>

#include "app/gui/main_window.h"
#include "app/gui/run_controller.h"
#include "views/graph_canvas.h"
#include "views/pass_list_model.h"

using namespace fsc;

namespace {

// Measures the longest gap between 1 ms ticks while `operation` starts work and `done` says
// whether it has finished (polled from the event loop).
struct Stall {
    double callMs = 0;     // the call that starts the operation
    double longestMs = 0;  // the longest the event loop went without a tick (paints included)
    double totalMs = 0;
};

Stall measure(const std::function<void()>& operation, const std::function<bool()>& done) {
    QElapsedTimer clock;
    clock.start();
    qint64 last = clock.nsecsElapsed();
    Stall stall;
    QTimer tick;
    tick.setInterval(1);
    QObject::connect(&tick, &QTimer::timeout, [&] {
        const qint64 now = clock.nsecsElapsed();
        stall.longestMs = std::max(stall.longestMs, double(now - last) / 1e6);
        last = now;
    });
    tick.start();
    QTimer::singleShot(0, [&] {
        last = clock.nsecsElapsed();
        const qint64 before = last;
        operation();  // the call itself blocks the thread too
        const qint64 now = clock.nsecsElapsed();
        stall.callMs = double(now - before) / 1e6;
        stall.longestMs = std::max(stall.longestMs, stall.callMs);
        last = now;
    });
    // Polled from a 1 ms timer in an event loop: QTest::qWaitFor sleeps 10 ms between its
    // polls, and that sleep would be measured as a stall.
    QEventLoop loop;
    QTimer poll;
    poll.setInterval(1);
    QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
        if (done()) loop.quit();
    });
    QTimer::singleShot(120000, &loop, &QEventLoop::quit);
    poll.start();
    loop.exec();
    QTimer::singleShot(5, &loop, &QEventLoop::quit);  // the ticks after it ended
    loop.exec();
    stall.totalMs = double(clock.nsecsElapsed()) / 1e6;
    return stall;
}

void print(const char* what, const Stall& s) {
    std::printf("%-34s call %6.1f ms, longest GUI-thread stall %6.1f ms of %8.1f ms (%.3f of the operation)\n",
                what, s.callMs, s.longestMs, s.totalMs, s.longestMs / std::max(1e-9, s.totalMs));
}

bool laidOut(MainWindow& w) {
    return w.canvas()->shownGraph() == w.canvas()->graph() && !w.canvas()->layingOut();
}

}  // namespace

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    if (argc < 3) {
        std::fprintf(stderr, "usage: bench_gui_thread MODEL.onnx RUNS.fsdb\n");
        return 64;
    }
    const QString model = QString::fromLocal8Bit(argv[1]);
    const QString store = QString::fromLocal8Bit(argv[2]);
    MainWindow w;
    w.setInitialExpandDepth(1);
    w.resize(1400, 900);
    w.show();
    QSignalSpy compiled(&w, &MainWindow::compiled);
    w.openModel(model);
    if (!compiled.wait(300000) || !QTest::qWaitFor([&] { return laidOut(w); }, 120000)) {
        std::fprintf(stderr, "%s: did not open and compile\n", argv[1]);
        return 2;
    }
    const int steps = w.passList()->rowCount();
    std::printf("%s: %d steps, %zu nodes after O2\n", argv[1], steps,
                w.canvas()->shownGraph()->nodeCount());

    Stall worstStep;
    std::vector<double> stepStalls, stepCalls;
    for (int row = 0; row < steps; ++row) {
        // Done when the step's graph (made in the background) is laid out on the canvas.
        const Stall s = measure([&] { w.showStep(row); }, [&] {
            return w.session().step() == row && w.canvas()->graph() == w.session().stepGraph().get() && laidOut(w);
        });
        if (s.longestMs > worstStep.longestMs) worstStep.longestMs = s.longestMs, worstStep.totalMs = s.totalMs;
        worstStep.callMs = std::max(worstStep.callMs, s.callMs);
        stepStalls.push_back(s.longestMs);
        stepCalls.push_back(s.callMs);
    }
    print("step change (worst of all steps)", worstStep);
    // The worst of 18 catches any hiccup of a shared machine; the median is the typical step.
    auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    std::printf("step change (median of all steps)  call %6.1f ms, longest GUI-thread stall %6.1f ms\n", median(stepCalls),
                median(stepStalls));

    const Stall open = measure([&] { w.runs()->openRunStore(store, 1); },
                               [&] { return w.lastTrace() != nullptr; });
    print("run store open", open);

    // Every node of the compiled graph (a FusedElementwise also generates its CUDA source).
    const Graph* graph = w.canvas()->shownGraph();
    Stall worstNode;
    int fused = 0;
    for (NodeId id : graph->order()) {
        fused += graph->node(id).opType == "FusedElementwise";
        const Stall s = measure([&] { w.canvas()->selectNode(id); }, [] { return true; });
        worstNode.longestMs = std::max(worstNode.longestMs, s.longestMs);
        worstNode.callMs = std::max(worstNode.callMs, s.callMs);
        worstNode.totalMs += s.totalMs;
    }
    std::printf("(%zu nodes, %d FusedElementwise)\n", graph->order().size(), fused);
    print("properties of every node (worst)", worstNode);
    return 0;
}
