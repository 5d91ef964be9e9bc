#pragma once
// Runs and run stores: the graph at the session's step profiled off the GUI thread with the
// Run dock's target, inputs and iterations (a CUDA run that cannot start or fails runs again
// on the CPU, and says why), and runs read back from a run store (.fsdb). A result becomes
// the session's run, the selection's run graph and the Run dock's table; runShown() tells the
// window to put the trace on its other docks. Jobs of its own on the window's JobRunner.
#include <QObject>
#include <QString>

#include <cstdint>
#include <memory>

#include "compiler/target.h"

class QWidget;

namespace fsc {

class Graph;
class JobRunner;
class RunPanel;
class Selection;
class Session;
struct Trace;

class RunController : public QObject {
    Q_OBJECT
public:
    // `dialogParent` owns the dialogs it opens (which run of a store, a CPU fallback).
    RunController(JobRunner& jobs, Session& session, Selection& selection, RunPanel& panel,
                  QWidget* dialogParent);

    // Where runs go, from the Run dock's choice: the CPU, or the CUDA backend on the first GPU
    // (without a usable one: the CPU, with showCpuFallback saying why). The window compiles
    // for the target this returns, so the graph shown is the one a run on it times.
    Target chooseBackend(bool cuda);
    // Profiles the graph of the step shown on the chosen target; finished() follows. A run
    // under way is left to end; while the compile for a newly chosen target is still being
    // made, the run waits for it (runIfWaiting).
    void runShownGraph();
    void runIfWaiting();  // a compile was shown: a run that waited for it starts
    // Why the last run stopped (finished(false)), one line naming the file, node and cause.
    QString lastError() const { return m_lastError; }
    // Reads a run store in the background; `runId` -1 asks which when it holds several.
    // storeOpened() follows; errors also get a dialog.
    void openRunStore(const QString& path, int64_t runId = -1);
    void chooseRunStore();  // a file dialog, then openRunStore
    // A partitioned graph (after tensor- or pipeline-parallel) simulated on its devices over
    // `interconnect` (nvlink4, pcie5, ndr): the cost model per node, quick enough for the GUI
    // thread; simulated() follows. False, with statusMessage(), when `graph` has one device.
    bool simulate(const Graph* graph, const QString& interconnect);
    // A GPU run that falls back to the CPU: logged, and a dialog that does not block the run.
    void showCpuFallback(const QString& title, const QString& why);

    struct Shown;  // a trace with its per-node rows, made ready off the GUI thread

signals:
    void finished(bool ok);
    void storeOpened(bool ok);
    // A run is the session's now (fromStore: read from a run store, not of the step shown).
    void runShown(std::shared_ptr<const Trace> trace, bool fromStore);
    void simulated(std::shared_ptr<const Trace> trace);  // one Timeline lane per device
    void logged(const QString& line);            // for the Log dock
    void statusMessage(const QString& message);  // for the status line

private:
    void show(const Shown& run, int step);

    JobRunner& m_jobs;
    Session& m_session;
    Selection& m_selection;
    RunPanel& m_panel;
    QWidget* m_dialogParent;
    QString m_lastError;
    Target m_target;  // chooseBackend's
    bool m_waiting = false;
};

}  // namespace fsc
