#pragma once
// The Variants dock: N-way compare's table (CompareController), one row per ONNX node and,
// per variant, the time of the group holding it and that group's error against the
// baseline; sortable by any column (numbers sort as numbers). A line per variant gives its
// whole-run time over the baseline's; two choices heat the graph by one variant's time over
// another's, or by its error; a click on a row finds the node.
#include <QWidget>

#include <memory>

#include "app/analysis/variant_compare.h"
#include "app/gui/compare_controller.h"

class QComboBox;
class QLabel;
class QPushButton;
class QStandardItemModel;
class QTableView;

namespace fsc {

class Selection;

class VariantsPanel : public QWidget {
    Q_OBJECT
public:
    static constexpr int kSortRole = Qt::UserRole + 1;  // the number a figure's cell sorts by
    explicit VariantsPanel(QWidget* parent = nullptr);
    // Activating a row picks the node of that name in the step shown (nodeMissing() when
    // that step has none: the compile folded it away, or the step is another).
    void setSelection(Selection* selection);

    void setRunning(bool running);
    void setStatus(const QString& text);  // in place of the summary (why a compare stopped)
    void showResult(std::shared_ptr<const VariantComparison> comparison);
    const std::shared_ptr<const VariantComparison>& comparison() const { return m_comparison; }
    // What the graph is heated by: a variant and a measure; for times, over which variant's.
    size_t heatVariant() const;
    CompareController::Measure heatMeasure() const;
    size_t heatOver() const;
    QStandardItemModel* model() const { return m_model; }
    QTableView* view() const { return m_view; }
    QComboBox* heatChoice() const { return m_heat; }
    QComboBox* overChoice() const { return m_over; }

signals:
    void compareRequested();
    void heatChanged();  // the heat choice, or a new result
    void nodeActivated(QString nodeName);
    void nodeMissing(QString nodeName);

private:
    QPushButton* m_compare;
    QLabel* m_summary;
    QComboBox* m_heat;
    QComboBox* m_over;
    QStandardItemModel* m_model;
    QTableView* m_view;
    std::shared_ptr<const VariantComparison> m_comparison;
};

}  // namespace fsc
