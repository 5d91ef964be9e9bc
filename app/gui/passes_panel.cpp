#include "app/gui/passes_panel.h"

#include <QComboBox>
#include <QHeaderView>
#include <QMenu>
#include <QSignalBlocker>
#include <QTableView>
#include <QVBoxLayout>

#include "app/gui/compile_controller.h"
#include "views/pass_list_model.h"
#include "views/selection.h"
#include "views/compact_rows.h"

namespace fsc {

PassesPanel::PassesPanel(Selection& selection, QWidget* parent)
    : QWidget(parent), m_model(new PassListModel(this)), m_pipeline(new QComboBox(this)), m_view(new QTableView(this)) {
    for (const char* level : {"O0", "O1", "O2", "O3"}) m_pipeline->addItem(QString::fromLatin1(level));
    m_pipeline->addItem(CompileController::kCustomPipeline);
    m_pipeline->setToolTip(tr("The compiler pipeline: O0..O3, or a custom list of passes"));
    m_pipeline->setCurrentText(QStringLiteral("O2"));
    m_view->setModel(m_model);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->verticalHeader()->hide();
    useCompactRows(m_view);
    m_view->horizontalHeader()->setStretchLastSection(true);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_pipeline);
    layout->addWidget(m_view);

    connect(m_pipeline, &QComboBox::currentTextChanged, this, &PassesPanel::pipelineChosen);
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, &selection,
            [&selection](const QModelIndex& current) { selection.selectStep(current.row()); });
    connect(&selection, &Selection::stepSelected, m_view, [this](int step) {
        if (m_view->currentIndex().row() != step) m_view->selectRow(step);
    });
    // Any two steps side by side: a step's context menu makes it the left pane.
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_view, &QWidget::customContextMenuRequested, this, [this](const QPoint& at) {
        const int row = m_view->indexAt(at).row();
        if (row < 0) return;
        QMenu menu(this);
        menu.addAction(tr("Compare: show this step on the left"), this, [this, row] { emit compareBaseRequested(row); });
        menu.addAction(tr("Compare: the step before on the left"), this, [this] { emit compareBaseRequested(-1); });
        menu.exec(m_view->viewport()->mapToGlobal(at));
    });
}

QString PassesPanel::pipeline() const { return m_pipeline->currentText(); }

void PassesPanel::showPipeline(const QString& pipeline) {
    const QSignalBlocker quiet(m_pipeline);
    m_pipeline->setCurrentText(pipeline);
}

void PassesPanel::setTrace(std::shared_ptr<const CompileTrace> trace) {
    m_model->setTrace(std::move(trace));
    m_view->resizeColumnsToContents();
}

}  // namespace fsc
