#pragma once
// The INT8 sensitivity dock: a button that measures, for the graph shown, the error each
// Conv/MatMul/Gemm adds when it alone is quantized (and the error of quantizing them all),
// and a sortable table of the layers, worst first; a click on a row finds the node.
#include <QWidget>

#include "compiler/quantization/accuracy.h"

class QLabel;
class QPushButton;
class QStandardItemModel;
class QTableView;

namespace fsc {

class Selection;

class SensitivityPanel : public QWidget {
    Q_OBJECT
public:
    enum Column { Node, Op, Cosine, MeanRelative, MaxAbs, ColumnCount };
    explicit SensitivityPanel(QWidget* parent = nullptr);
    // Activating a row picks the node of that name in the step shown (nodeMissing() when
    // that step has none: it was measured on another).
    void setSelection(Selection* selection);

    void setRunning(bool running);
    // The table for a graph; `summary` says what data it was measured on and the whole-graph error.
    void showResult(const QString& summary, const std::vector<LayerSensitivity>& layers);
    void showMessage(const QString& message);
    QStandardItemModel* model() const { return m_model; }
    QTableView* view() const { return m_view; }

signals:
    void measureRequested();
    void nodeActivated(QString nodeName);
    void nodeMissing(QString nodeName);

private:
    QPushButton* m_measure;
    QLabel* m_summary;
    QStandardItemModel* m_model;
    QTableView* m_view;
};

}  // namespace fsc
