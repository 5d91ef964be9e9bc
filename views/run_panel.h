#pragma once
// The Run dock: what to feed (random from a seed, or a folder of input_N.pb files), how many
// warm-up and timed iterations, where to run (the CPU or the CUDA GPU), a Run button, then the
// run's summary and its per-node time table (sortable; activating a row asks for its node).
#include <QWidget>

#include "compiler/runtime/feeds.h"
#include "profiler/node_stats.h"

class QComboBox;
class QLabel;
class QPushButton;
class QSortFilterProxyModel;
class QSpinBox;
class QTableView;

namespace fsc {

class RunTableModel;

class Selection;

class RunPanel : public QWidget {
    Q_OBJECT
public:
    explicit RunPanel(QWidget* parent = nullptr);
    // Activating a row picks that node of the run in `selection`.
    void setSelection(Selection* selection);

    FeedOptions feedOptions() const;
    void setInputDir(const QString& dir);  // empty: random inputs
    int iterations() const;
    int warmup() const;
    // CPU threads: 0 is automatic (the cores other programs leave free); remembered in the
    // settings ("run/threads") across sessions.
    int threads() const;
    void setThreads(int threads);
    void setIterations(int iterations);
    // Whether the run is asked of the CUDA backend (the window falls back to the CPU, and
    // says why, when there is no usable GPU).
    bool cudaSelected() const;
    void setCudaSelected(bool cuda);
    // While a run is under way the Run button is disabled.
    void setRunning(bool running);
    void showTimes(const QString& summary, std::vector<NodeTime> nodes, int64_t topLevelNs);
    void clearTimes(const QString& why);

    RunTableModel* table() const { return m_table; }
    QSortFilterProxyModel* sortedTable() const { return m_sorted; }
    QTableView* tableView() const { return m_view; }
    QPushButton* runButton() const { return m_run; }
    QString summary() const;

signals:
    void runRequested();
    void backendChosen(bool cuda);  // the user (or setCudaSelected) changed where runs go
    void nodeActivated(fsc::NodeId node);

private:
    QComboBox* m_inputs;
    QSpinBox* m_seed;
    QSpinBox* m_iterations;
    QSpinBox* m_warmup;
    QSpinBox* m_threads;
    QComboBox* m_backend;
    QPushButton* m_run;
    QLabel* m_summary;
    RunTableModel* m_table;
    QSortFilterProxyModel* m_sorted;
    QTableView* m_view;
    QString m_inputDir;
};

}  // namespace fsc
