#pragma once
// The Passes dock: the pipeline to compile with (O0..O3 or Custom…) above the list of the
// compile's steps. Picking a step selects it (the window shows its graph); a step's context
// menu makes it the left pane of a comparison. The list follows the selection's step.
#include <QWidget>

#include <memory>

class QComboBox;
class QTableView;

namespace fsc {

class PassListModel;
class Selection;
struct CompileTrace;

class PassesPanel : public QWidget {
    Q_OBJECT
public:
    PassesPanel(Selection& selection, QWidget* parent);

    PassListModel* model() const { return m_model; }
    QString pipeline() const;
    // Shows `pipeline` as chosen without asking for a compile (the custom dialog compiles).
    void showPipeline(const QString& pipeline);
    // A compile's steps (null: none yet).
    void setTrace(std::shared_ptr<const CompileTrace> trace);

signals:
    void pipelineChosen(const QString& pipeline);
    // Compare with step `row` on the left (-1: the step before the one shown).
    void compareBaseRequested(int row);

private:
    PassListModel* m_model;
    QComboBox* m_pipeline;
    QTableView* m_view;
};

}  // namespace fsc
