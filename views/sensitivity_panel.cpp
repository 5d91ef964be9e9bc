#include "views/sensitivity_panel.h"

#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>

#include "views/selection.h"
#include "views/compact_rows.h"

namespace fsc {

SensitivityPanel::SensitivityPanel(QWidget* parent) : QWidget(parent) {
    m_measure = new QPushButton(tr("Measure INT8 sensitivity of the graph shown"), this);
    m_measure->setObjectName(QStringLiteral("measureSensitivity"));
    m_measure->setToolTip(tr("Calibrates on generated inputs, then quantizes each Conv/MatMul/Gemm alone and measures the "
                             "output error against float32 (one run per layer)"));
    m_summary = new QLabel(tr("Which layers lose the most when quantized to INT8: measure to see."), this);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_model = new QStandardItemModel(0, ColumnCount, this);
    m_model->setHorizontalHeaderLabels({tr("Node"), tr("Op"), tr("Cosine"), tr("Mean rel"), tr("Max abs")});
    m_view = new QTableView(this);
    m_view->setModel(m_model);
    m_view->setSortingEnabled(true);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->horizontalHeader()->setSectionResizeMode(Node, QHeaderView::Stretch);
    m_view->verticalHeader()->hide();
    useCompactRows(m_view);
    auto* layout = new QVBoxLayout(this);
    auto* top = new QHBoxLayout;
    top->addWidget(m_measure);
    top->addWidget(m_summary, 1);
    layout->addLayout(top);
    layout->addWidget(m_view);
    connect(m_measure, &QPushButton::clicked, this, &SensitivityPanel::measureRequested);
    connect(m_view, &QTableView::clicked, this, [this](const QModelIndex& index) {
        emit nodeActivated(m_model->item(index.row(), Node)->text());
    });
}

void SensitivityPanel::setRunning(bool running) {
    m_measure->setEnabled(!running);
    if (running) m_summary->setText(tr("Measuring (the status bar has the progress and Cancel)..."));
}

void SensitivityPanel::showMessage(const QString& message) {
    m_summary->setText(message);
}

void SensitivityPanel::showResult(const QString& summary, const std::vector<LayerSensitivity>& layers) {
    m_summary->setText(summary);
    m_model->setRowCount(0);
    m_view->setSortingEnabled(false);
    for (const LayerSensitivity& l : layers) {
        auto number = [](double v) {
            auto* item = new QStandardItem;
            item->setData(v, Qt::DisplayRole);  // sorts numerically
            return item;
        };
        m_model->appendRow({new QStandardItem(QString::fromStdString(l.node)), new QStandardItem(QString::fromStdString(l.opType)),
                            number(l.error.cosine), number(l.error.meanRelative), number(l.error.maxAbs)});
    }
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(Cosine, Qt::AscendingOrder);
}

void SensitivityPanel::setSelection(Selection* selection) {
    connect(this, &SensitivityPanel::nodeActivated, selection, [this, selection](const QString& name) {
        if (!selection->selectStepNodeNamed(name.toStdString())) emit nodeMissing(name);
    });
}

}  // namespace fsc
