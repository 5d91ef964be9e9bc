#pragma once
// Fusescope's main window: the graph canvas in the centre (two panes when comparing), and
// docks for the model summary, properties, passes, nodes, graph breaks, changes, runs and
// the log. Import, compile, layout, graph breaks, runs and run stores are jobs of one
// JobRunner, off the GUI thread; the status bar shows their progress with one Cancel.
#include <QMainWindow>

#include <QPointer>
#include "views/heat_scale.h"

#include <atomic>
#include <functional>
#include <map>
#include <memory>

#include "app/common/session.h"
#include "core/graph.h"
#include "views/job_runner.h"
#include "views/selection.h"

class QLabel;
class QProgressBar;
class QToolButton;
class QTableView;
class QComboBox;
class QMenu;
class QLineEdit;
class QToolBar;
class QTreeWidget;
class QPlainTextEdit;
class QDockWidget;
class QTreeView;

namespace fsc {

class DockLayout;
class FindBar;
class MainMenus;
class GraphCanvas;
class NodePropertiesView;
class PassListModel;
class PassesPanel;
class NodeTableModel;
class NodeTableView;
class SummaryView;
class GraphBreaksPanel;
class ChangesPanel;
class RunPanel;
class WorkIndicator;
class ScopeOutlineModel;
struct Trace;
class TimelineView;
class MemoryView;
class RooflineView;
class CompileController;
class RunController;
class SensitivityController;
class AblationController;
class BisectController;
struct BisectReport;
class CompareController;
class VariantsPanel;
class SensitivityPanel;
class StatusLine;
class SubgraphTrail;
class WalkthroughDock;
class WalkthroughGuide;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    // The bundled sample, opened when the GUI starts without a file.
    static constexpr const char* kSamplePath = ":/models/sample.onnx";

    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    void openModel(const QString& path);
    void cancelLoading();
    const Model* model() const { return m_session.model().get(); }
    const Session& session() const { return m_session; }
    // What is picked (node, value, kernel, time range, step): every view follows it.
    Selection& selection() { return m_selection; }
    NodeTableModel* nodeTable() const { return m_nodeTable; }
    GraphCanvas* canvas() const { return m_canvas; }
    PassListModel* passList() const;
    NodePropertiesView* properties() const { return m_properties; }
    // Compiles with a pipeline or a custom list of passes; compiled() follows once the
    // compiled graph is shown (on the canvas, laying out).
    CompileController* compiles() const { return m_compiles; }
    // Shows the graph after step `row` of the pass list (0: as imported); the graph is made
    // in the background and stepShown() follows.
    void showStep(int row);
    // Ctrl+F: finds nodes by name, op or tensor name in the graph shown.
    FindBar* findBar() const { return m_findBar; }
    // Side by side: the step before the selected one on the left, removed nodes marked
    // there, added ones on the right, pan and zoom shared, selection linked by provenance.
    void setCompare(bool on);
    // View > Compare with the compile without the selected pass: while on, selecting a pass
    // shows the full compile on the right and the compile without that pass on the left
    // (the imported step: the imported graph), what differs outlined (main_window_without.cpp).
    void setCompareWithout(bool on);
    // The step shown on the left when comparing: any step of the pass list (-1: the one
    // before the selected step). Turns the comparison on.
    void setCompareBase(int row);
    // Settings kept between runs (QSettings): recent files, window layout, palette.
    void setDarkPalette(bool dark);
    GraphCanvas* beforeCanvas() const { return m_before; }
    QTreeWidget* breaksList() const;
    QTreeWidget* changesList() const;
    RunPanel* runPanel() const { return m_runPanel; }
    QTreeView* outline() const { return m_outline; }
    // Runs of the graph shown, and runs read back from run stores.
    RunController* runs() const { return m_runs; }
    // Run > Ablate passes: what each pass of the compile shown bought (the Passes list's Effect column).
    void ablatePasses();
    // Run > Bisect numerics: `candidate` (BisectController::candidates()) against cpu/fp32; the
    // canvas shows the errors as heat and the first jumps outlined.
    void bisectNumerics(const QString& candidate);
    // Run > Compare variants: the compile in every precision, and on the CPU, node by node
    // (the Variants dock; the canvas heated by the variant it chooses).
    void compareVariants();
    VariantsPanel* variantsPanel() const { return m_variants; }
    void cancelWork();  // what the status bar's Cancel does: stops everything under way
    QString logText() const;
    TimelineView* timeline() const { return m_timeline; }
    MemoryView* memoryView() const { return m_memory; }
    SensitivityPanel* sensitivityPanel() const { return m_sensitivity; }
    RooflineView* rooflineView() const { return m_rooflineView; }
    // What the run overlay colours nodes by (View > Heat shows).
    void setHeatUnit(HeatUnit unit);
    HeatUnit heatUnit() const { return m_heatUnit; }
    // The run's heat on the canvas when it belongs to the graph shown and the overlay is on
    // (in place of a bisection's or the Variants dock's overlay).
    void applyRunHeat();
    // A line in the Log dock, timed.
    void log(const QString& line);
    StatusLine* statusLine() const { return m_status; }
    const Trace* lastTrace() const { return m_session.run().get(); }
    // If/Loop/Scan bodies opened on the canvas, as breadcrumbs.
    SubgraphTrail* subgraphs() const { return m_trail; }
    // Groups expanded when a model opens: -1 picks by size (all for small graphs).
    void setInitialExpandDepth(int depth) { m_initialDepth = depth; }
    bool loading() const;
    // Help > Walkthrough: the dock shown and raised, on chapter `chapter` (0: the one open, or 1).
    void showWalkthrough(int chapter = 0);
    WalkthroughDock* walkthrough() const { return m_walkthrough; }
    // Background work under way (loading, compiling, a step's graphs, breaks, layouts, runs).
    bool workPending() const { return m_jobs.busy(); }

signals:
    void modelShown(QString path);
    void loadFailed(QString message);
    void compiled(QString pipeline);
    void stepShown(int step);
    void runFinished(bool ok);
    void runStoreOpened(bool ok);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

public:
    // Where the docks are, raising one, Graph only, Reset layout, F6 between panes.
    DockLayout* docks() const { return m_docks; }

private:
    void createDocks();
    QDockWidget* addVariantsDock();  // the Variants dock and its controller (main_window_variants.cpp)
    void applyVariantHeat();         // the Variants dock's choice on the graph shown
    // What heats the canvas: the run shown, the last bisection, or the Variants dock's
    // choice; a new step shown gets the same overlay, mapped onto it.
    enum class Overlay { Run, Bisection, Variants };
    Overlay m_overlay = Overlay::Run;
    std::shared_ptr<const BisectReport> m_bisection;
    void applyOverlay();
    void showRunHeat();
    void showBisection();
    void showEvent(QShowEvent* event) override;
    DockLayout* m_docks = nullptr;
    QDockWidget* addDock(const QString& title, const QString& name, QWidget* widget,
                         Qt::DockWidgetArea area, bool shrinkable = false);
    void createActions();
    // A run the RunController made the session's: the docks that draw traces follow it.
    void showRunTrace(std::shared_ptr<const Trace> trace, bool fromStore);
    bool runMatchesCanvas() const;      // the run shown belongs to the graph on the canvas
    void showNodeKernels(NodeId node);  // its launches in the run, in the properties
    void showStepGraph();  // the step's graph on the canvas again (leaving a body)
    // What the window does when something is picked: the node's kernels in the run, the
    // properties brought forward, and a node of the step's graph shown when the canvas is
    // inside an If/Loop/Scan body.
    void followSelection();
    void startStep(int row);  // makes the step's graphs and diff marks in the background
    void startStepWithout(int row);  // the same, beside the compile without the row's pass
    struct ShownStep;
    void applyStep(ShownStep step);
    void updateRunGraph();  // tells the selection which graph the run shown belongs to

private:
    SubgraphTrail* m_trail = nullptr;
    void showModel(std::shared_ptr<const Model> model, const QString& path);
    void showError(const QString& message);

    // Declared first: the views are given it, and it is shut down before they go.
    JobRunner m_jobs;
    // The window's own channels (a newer job of one replaces the older).
    static inline const QString kLoadJob = QStringLiteral("load");
    static inline const QString kBreaksJob = QStringLiteral("breaks");
    static inline const QString kStepJob = QStringLiteral("step");
    Session m_session;  // the model, its compile, the step and run shown
    Selection m_selection;
    bool m_showingStep = false;  // showStep() is asking the selection for its step
    QString m_compiledPipeline;  // a compile whose graph is being made: compiled() when shown
    GraphCanvas* m_canvas;
    GraphCanvas* m_before;  // the left pane of the comparison
    bool m_compare = false;
    bool m_compareWithout = false;  // the left pane: the compile without the selected pass
    // Those compiles, by pass left out, for the compile shown (showCompiled() forgets them;
    // at most a few are kept).
    std::map<std::string, std::shared_ptr<const Graph>> m_withoutPass;
    int m_compareBase = -1;
    MainMenus* m_menus = nullptr;
    void closeEvent(QCloseEvent* event) override;
    int m_initialDepth = -1;
    QString m_shownText;  // the status line's model summary
    PassesPanel* m_passes;
    NodePropertiesView* m_properties;
    FindBar* m_findBar = nullptr;
    GraphBreaksPanel* m_breaks;  // graph breaks of the step shown, against the CUDA table
    void showBreaks(std::shared_ptr<const Graph> graph);  // in the background
    ChangesPanel* m_changes;  // what the shown step changed and rejected, with reasons
    RunPanel* m_runPanel;
    TimelineView* m_timeline;
    RooflineView* m_rooflineView;
    MemoryView* m_memory;                  // planned arena vs measured allocations of the run shown
    QTreeView* m_outline;  // the scope tree of the graph on the canvas
    QPlainTextEdit* m_log;
    HeatUnit m_heatUnit = HeatUnit::Share;
    SensitivityPanel* m_sensitivity;
    SensitivityController* m_sensitivityController;  // the panel's measurements
    AblationController* m_ablation;                   // the pass list's Effect column
    BisectController* m_bisect;                       // the canvas's error overlay
    VariantsPanel* m_variants;
    CompareController* m_variantCompare;              // the Variants dock's comparisons
    WalkthroughDock* m_walkthrough = nullptr;
    WalkthroughGuide* m_guide = nullptr;
    NodeTableView* m_nodeView;
    NodeTableModel* m_nodeTable;
    SummaryView* m_summary;
    StatusLine* m_status;  // never re-lays out the window when its text changes
    RunController* m_runs = nullptr;
    CompileController* m_compiles = nullptr;
    void showCompiled(const QString& pipeline);  // a new compile: its last step shown
    WorkIndicator* m_work;  // long work in the status bar, with Cancel
};

}  // namespace fsc
