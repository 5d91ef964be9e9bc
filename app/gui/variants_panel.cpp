#include "app/gui/variants_panel.h"

#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>

#include "core/units.h"
#include "views/compact_rows.h"
#include "views/selection.h"

namespace fsc {

namespace {

enum FixedColumn { kNode, kOp, kFixedColumns };

QStandardItem* figure(const QString& text, double sortValue) {
    auto* item = new QStandardItem(text);
    item->setData(sortValue, VariantsPanel::kSortRole);
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

QStandardItem* label(const std::string& text) {
    auto* item = new QStandardItem(QString::fromStdString(text));
    item->setData(item->text(), VariantsPanel::kSortRole);
    return item;
}

}  // namespace

VariantsPanel::VariantsPanel(QWidget* parent) : QWidget(parent) {
    m_compare = new QPushButton(tr("Compare variants of the compile"), this);
    m_compare->setObjectName(QStringLiteral("compareVariants"));
    m_compare->setToolTip(
        tr("The compile in float32 on the CPU (the baseline), on its own target and in float16, "
           "bfloat16 and INT8: each profiled, its groups' outputs compared with the baseline's, "
           "and all timed in alternating rounds"));
    m_summary =
        new QLabel(tr("Time and error of every ONNX node in each variant: compare to see."), this);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_heat = new QComboBox(this);
    m_heat->setObjectName(QStringLiteral("variantHeat"));
    m_heat->setToolTip(tr("What the graph is heated by"));
    m_heat->setEnabled(false);
    m_over = new QComboBox(this);
    m_over->setObjectName(QStringLiteral("variantHeatOver"));
    m_over->setToolTip(tr("Whose time the heated variant's is divided by"));
    m_over->setEnabled(false);
    m_model = new QStandardItemModel(0, kFixedColumns, this);
    m_model->setSortRole(kSortRole);
    m_model->setHorizontalHeaderLabels({tr("Node"), tr("Op")});
    m_view = new QTableView(this);
    m_view->setModel(m_model);
    m_view->setSortingEnabled(true);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->verticalHeader()->hide();
    useCompactRows(m_view);
    auto* layout = new QVBoxLayout(this);
    auto* top = new QHBoxLayout;
    top->addWidget(m_compare);
    top->addWidget(m_heat, 1);
    top->addWidget(m_over, 1);
    layout->addLayout(top);
    layout->addWidget(m_summary);
    layout->addWidget(m_view, 1);
    connect(m_compare, &QPushButton::clicked, this, &VariantsPanel::compareRequested);
    connect(m_heat, &QComboBox::currentIndexChanged, this, [this] {
        m_over->setEnabled(m_comparison && heatMeasure() == CompareController::Measure::TimeRatio);
        if (m_comparison) emit heatChanged();
    });
    connect(m_over, &QComboBox::currentIndexChanged, this, [this] {
        if (m_comparison) emit heatChanged();
    });
    connect(m_view, &QTableView::clicked, this, [this](const QModelIndex& index) {
        emit nodeActivated(m_model->item(index.row(), kNode)->text());
    });
}

void VariantsPanel::setRunning(bool running) {
    m_compare->setEnabled(!running);
    if (running)
        m_summary->setText(tr("Comparing (the status bar has the progress and Cancel)..."));
}

void VariantsPanel::setStatus(const QString& text) {
    m_summary->setText(text);
}

void VariantsPanel::showResult(std::shared_ptr<const VariantComparison> comparison) {
    m_comparison = std::move(comparison);
    const VariantComparison& c = *m_comparison;
    const std::string& baseline = c.variants[c.baseline].label;
    QStringList lines;
    for (const VariantSummary& v : c.variants) {
        QString line = tr("%1: %2").arg(QString::fromStdString(v.label),
                                        QString::fromStdString(durationText(v.medianMs)));
        if (const std::string ratio = vsBaselineText(v, c.rounds);
            !ratio.empty() && v.label != baseline)
            line += tr(", %1 the baseline's time").arg(QString::fromStdString(ratio));
        if (v.label != baseline)
            line += tr(", output error %1")
                        .arg(QString::fromStdString(compareErrorText(v.outputError)));
        if (!v.timingWarning.empty())
            line += QStringLiteral(", ") + QString::fromStdString(v.timingWarning);
        lines << line;
    }
    m_summary->setText(
        tr("Against %1%2. %3")
            .arg(QString::fromStdString(baseline))
            .arg(c.rounds > 0 ? tr(", timed in %1 alternating rounds").arg(c.rounds) : QString())
            .arg(lines.join(QStringLiteral("; "))));

    m_view->setSortingEnabled(false);
    m_model->clear();
    QStringList headers{tr("Node"), tr("Op")};
    for (size_t v = 0; v < c.variants.size(); ++v) {  // the baseline has no error against itself
        const QString name = QString::fromStdString(c.variants[v].label);
        headers << tr("%1 time").arg(name);
        if (v != c.baseline) headers << tr("%1 error").arg(name);
    }
    m_model->setColumnCount(int(headers.size()));
    m_model->setHorizontalHeaderLabels(headers);
    for (const CompareRow& row : c.rows) {
        QList<QStandardItem*> items{label(row.node), label(row.op)};
        for (size_t v = 0; v < row.cells.size(); ++v) {
            const NodeCell& cell = row.cells[v];
            const bool withError = v != c.baseline;
            if (!cell.ran) {
                items << figure(tr("folded"), -1);
                if (withError) items << figure(QString(), -1);
                continue;
            }
            // A fused group's time is on each node it holds (marked *, as the CLI marks it).
            QStandardItem* time = figure(
                QString::fromStdString(durationText(cell.ms)) + (cell.groupSize > 1 ? "*" : ""),
                cell.ms);
            time->setToolTip(tr("group %1 (%2 ONNX nodes)")
                                 .arg(QString::fromStdString(cell.group))
                                 .arg(cell.groupSize));
            items << time;
            if (withError)
                items << figure(QString::fromStdString(compareErrorText(cell.error)), cell.error);
        }
        m_model->appendRow(items);
    }
    m_view->horizontalHeader()->setSectionResizeMode(kNode, QHeaderView::Stretch);
    m_view->setSortingEnabled(true);
    // The baseline's slowest first (each variant before the baseline has two columns).
    m_view->sortByColumn(kFixedColumns + 2 * int(c.baseline), Qt::DescendingOrder);

    const QSignalBlocker quiet(m_heat), quietOver(m_over);
    m_heat->clear();
    m_over->clear();
    for (size_t v = 0; v < c.variants.size(); ++v) {
        const QString name = QString::fromStdString(c.variants[v].label);
        m_over->addItem(tr("over %1's time").arg(name), qulonglong(v));
        if (v == c.baseline) continue;
        m_heat->addItem(tr("Heat: %1's time").arg(name),
                        QVariantList{qulonglong(v), int(CompareController::Measure::TimeRatio)});
        m_heat->addItem(
            tr("Heat: %1's error against %2").arg(name, QString::fromStdString(baseline)),
            QVariantList{qulonglong(v), int(CompareController::Measure::Error)});
    }
    m_over->setCurrentIndex(int(c.baseline));
    m_heat->setEnabled(m_heat->count() > 0);
    m_over->setEnabled(m_heat->count() > 0);
    m_compare->setEnabled(true);
    emit heatChanged();
}

size_t VariantsPanel::heatVariant() const {
    const QVariantList choice = m_heat->currentData().toList();
    return choice.size() == 2 ? size_t(choice[0].toULongLong()) : 0;
}

CompareController::Measure VariantsPanel::heatMeasure() const {
    const QVariantList choice = m_heat->currentData().toList();
    return choice.size() == 2 ? CompareController::Measure(choice[1].toInt())
                              : CompareController::Measure::TimeRatio;
}

size_t VariantsPanel::heatOver() const {
    return m_over->currentIndex() >= 0 ? size_t(m_over->currentData().toULongLong()) : 0;
}

void VariantsPanel::setSelection(Selection* selection) {
    connect(this, &VariantsPanel::nodeActivated, selection, [this, selection](const QString& name) {
        // The node, or the group made of it in a compiled step.
        if (!selection->selectStepNodeNamed(name.toStdString(), true)) emit nodeMissing(name);
    });
}

}  // namespace fsc
