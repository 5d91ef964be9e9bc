#include "views/node_properties_view.h"

#include <algorithm>

#include <QAction>
#include <QResizeEvent>
#include <QClipboard>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QGuiApplication>
#include <QMenu>
#include <QVBoxLayout>
#include <QHeaderView>
#include <QPlainTextEdit>
#include <QStyledItemDelegate>
#include <QTimer>

#include "compiler/runtime/fused_domain.h"
#include "compiler/runtime/tensor_stats.h"
#include "core/op_docs.h"
#include "core/text_printer.h"
#include "views/histogram_widget.h"
#include "views/job_runner.h"
#include "views/selection.h"

namespace fsc {
namespace {

QString text(const std::string& s) {
    return QString::fromStdString(s);
}

QTreeWidgetItem* addRow(QTreeWidget* tree, QTreeWidgetItem* parent, const QString& key, const QString& value) {
    auto* item = parent ? new QTreeWidgetItem(parent) : new QTreeWidgetItem(tree);
    item->setText(0, key);
    item->setText(1, value);
    item->setToolTip(1, value);
    return item;
}

// The first paragraph of ONNX's Markdown description, on one line.
QString firstParagraph(const std::string& doc) {
    QString all = text(doc).trimmed();
    const qsizetype end = all.indexOf(QStringLiteral("\n\n"));
    return (end < 0 ? all : all.left(end)).simplified();
}

// Names lose their end when cut ("histo…"), values their middle (scope paths and shapes
// differ at their ends).
class NameDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;

protected:
    void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override {
        QStyledItemDelegate::initStyleOption(option, index);
        option->textElideMode = Qt::ElideRight;
    }
};

}  // namespace

NodePropertiesView::NodePropertiesView(JobRunner& jobs, QWidget* parent) : QTreeWidget(parent), m_jobs(jobs) {
    setColumnCount(2);
    setHeaderLabels({tr("Property"), tr("Value")});
    header()->setStretchLastSection(true);
    setAlternatingRowColors(true);
    setWordWrap(true);
    setTextElideMode(Qt::ElideMiddle);  // scope paths differ at their ends
    setItemDelegateForColumn(0, new NameDelegate(this));
    setIndentation(12);                 // nested rows (a weight's statistics) keep their names in a narrow dock
    connect(model(), &QAbstractItemModel::rowsInserted, this, &NodePropertiesView::fitNamesColumnSoon);
    connect(this, &QTreeWidget::itemExpanded, this, &NodePropertiesView::fitNamesColumnSoon);
    connect(this, &QTreeWidget::itemCollapsed, this, &NodePropertiesView::fitNamesColumnSoon);
    // A value cut at the dock's edge is still readable: its tooltip, a copy, or a viewer.
    auto* copy = new QAction(tr("Copy value"), this);
    copy->setObjectName(QStringLiteral("copyValueAction"));
    copy->setShortcut(QKeySequence::Copy);
    copy->setShortcutContext(Qt::WidgetShortcut);
    connect(copy, &QAction::triggered, this, [this] {
        if (QTreeWidgetItem* item = currentItem()) QGuiApplication::clipboard()->setText(fullValue(item));
    });
    addAction(copy);
    auto* view = new QAction(tr("Show value…"), this);
    view->setObjectName(QStringLiteral("showValueAction"));
    connect(view, &QAction::triggered, this, [this] {
        if (QTreeWidgetItem* item = currentItem()) showValue(item);
    });
    connect(this, &QTreeWidget::itemDoubleClicked, this, [this](QTreeWidgetItem* item, int column) {
        if (column == 1) showValue(item);
    });
    setContextMenuPolicy(Qt::CustomContextMenu);
    connect(this, &QWidget::customContextMenuRequested, this, [this, copy, view](const QPoint& at) {
        if (!itemAt(at)) return;
        QMenu menu(this);
        menu.addAction(copy);
        menu.addAction(view);
        menu.exec(viewport()->mapToGlobal(at));
    });
}

void NodePropertiesView::resizeEvent(QResizeEvent* event) {
    QTreeWidget::resizeEvent(event);
    fitNamesColumn();
}

void NodePropertiesView::fitNamesColumn() {
    // The rows shown, with their indentation: short names leave the values more room, long
    // ones (a weight's "histogram" two levels down) are not cut until half the width.
    const int wanted = sizeHintForColumn(0) + 8;
    const int most = std::clamp(int(viewport()->width() * 0.45), 60, 260);
    setColumnWidth(0, std::clamp(wanted, 60, most));
}

void NodePropertiesView::fitNamesColumnSoon() {
    if (m_fitPending) return;
    m_fitPending = true;
    QTimer::singleShot(0, this, [this] {
        m_fitPending = false;
        fitNamesColumn();
    });
}

QString NodePropertiesView::fullValue(const QTreeWidgetItem* item) const {
    const QString tip = item->toolTip(1);
    return tip.isEmpty() ? item->text(1) : tip;
}

void NodePropertiesView::showValue(const QTreeWidgetItem* item) {
    auto* dialog = new QDialog(this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setObjectName(QStringLiteral("valueViewer"));
    dialog->setWindowTitle(item->text(0));
    auto* layout = new QVBoxLayout(dialog);
    auto* text = new QPlainTextEdit(fullValue(item), dialog);
    text->setReadOnly(true);
    text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    layout->addWidget(text);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
    connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
    layout->addWidget(buttons);
    dialog->resize(640, 360);
    dialog->show();
}

void NodePropertiesView::showNode(std::shared_ptr<const Graph> graph, NodeId id) {
    clear();
    m_jobs.discard(this, kWeightsJob);  // their rows are gone
    m_jobs.discard(this, kKernelJob);
    m_graph = std::move(graph);
    if (!m_graph || !id.valid() || id.index >= m_graph->nodeArenaSize()) return;
    const Node& n = m_graph->node(id);
    auto row = [this](QTreeWidgetItem* parent, const QString& key, const QString& value) {
        return addRow(this, parent, key, value);
    };
    row(nullptr, tr("Name"), text(n.name));
    row(nullptr, tr("Op"), text(n.domain.empty() ? n.opType : n.domain + "::" + n.opType));
    row(nullptr, tr("Scope"), text(n.scope));
    auto values = [&](const QString& title, const std::vector<ValueId>& ids) {
        auto* group = row(nullptr, title, QString::number(ids.size()));
        for (ValueId v : ids) {
            if (!v.valid()) {
                row(group, tr("(absent)"), {});
                continue;
            }
            const Value& value = m_graph->value(v);
            QString kind = value.kind == Value::Kind::Initializer ? tr(" (weight)") : QString();
            auto* item = row(group, text(value.name), text(value.type.toString()) + kind);
            item->setData(0, Qt::UserRole, v.index);
        }
        group->setExpanded(true);
    };
    values(tr("Inputs"), n.inputs);
    values(tr("Outputs"), n.outputs);
    auto* attrs = row(nullptr, tr("Attributes"), QString::number(n.attributes.size()));
    for (const Attribute& a : n.attributes) row(attrs, text(a.name), text(attributeValueText(a)));
    attrs->setExpanded(true);
    addDocumentation(n);
    if (m_kernelSource && n.domain == kFusescopeDomain && n.opType == "FusedElementwise") addGeneratedKernel(id);
    // Provenance: what the compiler made this node from, back to the imported graph.
    if (n.origins.empty()) {
        row(nullptr, tr("Made from"), tr("itself (as imported)"));
    } else {
        auto* from = row(nullptr, tr("Made from"), tr("%1 imported nodes").arg(n.origins.size()));
        for (NodeId o : n.origins)
            if (o.index < m_graph->nodeArenaSize()) row(from, text(m_graph->node(o).opType), text(m_graph->node(o).name));
        from->setExpanded(true);
    }
    if (!n.docString.empty()) row(nullptr, tr("Doc"), text(n.docString));
    resizeColumnToContents(0);
    setColumnWidth(0, std::clamp(columnWidth(0), 110, 200));  // long tensor names must leave values room
    startWeightStats(n);
}

void NodePropertiesView::addGeneratedKernel(NodeId node) {
    // The CUDA C++ the backend compiles with NVRTC for this node, as the CLI's --show-kernels.
    // Generating it walks the fused body: off the GUI thread, the row says so meanwhile.
    auto* row = addRow(this, nullptr, tr("CUDA kernel"), tr("generating…"));
    m_jobs.start(
        this, kKernelJob, QString(),
        [graph = m_graph, node, source = m_kernelSource](const JobRunner::Control&) { return source(*graph, node); },
        [this, row](Result<GeneratedKernelText> kernel) {
            if (!kernel) {
                row->setText(1, text(kernel.status().message()));
                row->setToolTip(1, row->text(1));
                emit generatedKernelShown();
                return;
            }
            row->setText(1, text(kernel->name));
            row->setToolTip(1, row->text(1));
            auto* sourceRow = addRow(this, row, tr("source"), {});
            auto* source = new QPlainTextEdit(text(kernel->source));
            source->setReadOnly(true);
            source->setLineWrapMode(QPlainTextEdit::NoWrap);
            source->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
            source->setMinimumHeight(220);
            source->setObjectName(QStringLiteral("cudaSource"));
            setItemWidget(sourceRow, 1, source);
            sourceRow->setSizeHint(1, QSize(200, 220));
            emit generatedKernelShown();
        });
}

void NodePropertiesView::addDocumentation(const Node& n) {
    if (n.domain == kFusescopeDomain) {
        const std::string summary = fusedOpSummary(n.opType);
        auto* doc = addRow(this, nullptr, tr("Documentation"),
                           summary.empty() ? tr("a Fusescope fused op") : text(summary));
        addRow(this, doc, tr("reference"), tr("docs/fused_ops.md (domain ai.fusescope, version 1)"));
        return;
    }
    int64_t version = -1;
    for (const auto& [domain, v] : m_opsets)
        if (domain == n.domain || (n.domain.empty() && domain == "ai.onnx") || (domain.empty() && n.domain == "ai.onnx"))
            version = v;
    const auto found = findOpDoc(n.domain, n.opType, version);
    if (!found) {
        addRow(this, nullptr, tr("Documentation"), tr("none in ONNX's schema registry for %1 at opset %2")
                                                          .arg(text(n.domain.empty() ? n.opType : n.domain + "::" + n.opType))
                                                          .arg(version));
        return;
    }
    auto* doc = addRow(this, nullptr, tr("Documentation"), firstParagraph(found->text));
    doc->setToolTip(1, text(found->text));
    addRow(this, doc, tr("defined in"), tr("opset %1%2").arg(found->sinceVersion).arg(found->deprecated ? tr(" (deprecated)") : QString()));
    auto params = [&](const QString& title, const std::vector<OpDoc::Param>& list) {
        if (list.empty()) return;
        auto* group = addRow(this, doc, title, QString::number(list.size()));
        for (const OpDoc::Param& p : list) {
            auto* item = addRow(this, group, text(p.name), firstParagraph(p.description));
            item->setToolTip(1, text(p.description + (p.type.empty() ? "" : "\n(" + p.type + ")")));
        }
    };
    params(tr("inputs"), found->inputs);
    params(tr("outputs"), found->outputs);
    params(tr("attributes"), found->attributes);
}

void NodePropertiesView::startWeightStats(const Node& n) {
    std::vector<ValueId> weights;
    for (ValueId v : n.inputs)
        if (v.valid() && m_graph->value(v).initializer) weights.push_back(v);
    if (weights.empty()) return;
    using Stats = std::vector<std::pair<ValueId, TensorStats>>;
    m_jobs.start(
        this, kWeightsJob, QString(),
        [graph = m_graph, weights](const JobRunner::Control& job) {
            Stats stats;
            for (ValueId v : weights) {
                if (job.cancelled()) break;
                auto tensor = tensorFromConstant(*graph->value(v).initializer);
                if (tensor) stats.push_back({v, computeTensorStats(*tensor)});
            }
            return stats;
        },
        [this](Stats stats) {
            QTreeWidgetItem* inputs = rowNamed(tr("Inputs"));
            // Each item widget lays the whole tree out again (word-wrapped documentation
            // included): the rows first, the charts in one go at the end.
            std::vector<std::pair<QTreeWidgetItem*, HistogramWidget*>> charts;
            for (const auto& [value, s] : stats)
                for (int i = 0; inputs && i < inputs->childCount(); ++i) {
                    QTreeWidgetItem* item = inputs->child(i);
                    if (item->data(0, Qt::UserRole).toUInt() != value.index) continue;
                    addRow(this, item, tr("elements"), QString::number(s.count));
                    addRow(this, item, tr("min / max"), QStringLiteral("%1 / %2").arg(s.min, 0, 'g', 6).arg(s.max, 0, 'g', 6));
                    addRow(this, item, tr("mean / std"), QStringLiteral("%1 / %2").arg(s.mean, 0, 'g', 6).arg(s.stddev, 0, 'g', 6));
                    addRow(this, item, tr("sparsity"), QStringLiteral("%1% zeros").arg(100.0 * s.sparsity, 0, 'f', 2));
                    if (s.nonFinite) addRow(this, item, tr("not finite"), QString::number(s.nonFinite));
                    if (!s.histogram.empty()) {
                        charts.push_back({addRow(this, item, tr("histogram"), {}),
                                          new HistogramWidget(s.histogram, s.min, s.max)});
                    }
                    item->setExpanded(true);
                }
            for (const auto& [row, chart] : charts) setItemWidget(row, 1, chart);
            emit weightStatsShown();
        });
}

QTreeWidgetItem* NodePropertiesView::rowNamed(const QString& property) const {
    for (int i = 0; i < topLevelItemCount(); ++i)
        if (topLevelItem(i)->text(0) == property) return topLevelItem(i);
    return nullptr;
}

QString NodePropertiesView::valueOf(const QString& property) const {
    const QTreeWidgetItem* item = rowNamed(property);
    return item ? item->text(1) : QString();
}

void NodePropertiesView::setSelection(Selection* selection) {
    m_selection = selection;
    connect(selection, &Selection::nodeSelected, this, [this] {
        showNode(m_selection->graph(), m_selection->node());
        followValue();
    });
    connect(selection, &Selection::valueSelected, this, &NodePropertiesView::followValue);
    connect(selection, &Selection::kernelSelected, this, &NodePropertiesView::followKernel);
    connect(this, &QTreeWidget::currentItemChanged, this, &NodePropertiesView::publishCurrentRow);
}

void NodePropertiesView::publishCurrentRow(QTreeWidgetItem* item) {
    if (!m_selection || !item || !item->parent()) return;
    const QString group = item->parent()->text(0);
    if ((group == tr("Inputs") || group == tr("Outputs")) && item->data(0, Qt::UserRole).isValid() &&
        m_graph == m_selection->graph())
        m_selection->selectValue(ValueId{item->data(0, Qt::UserRole).toUInt()});
    else if (group == tr("Kernels in the last run"))
        m_selection->selectKernel(item->text(0));
}

QTreeWidgetItem* NodePropertiesView::childNamed(QTreeWidgetItem* parent,
                                                const std::function<bool(QTreeWidgetItem*)>& match) const {
    for (int i = 0; parent && i < parent->childCount(); ++i)
        if (match(parent->child(i))) return parent->child(i);
    return nullptr;
}

void NodePropertiesView::followValue() {
    const ValueId value = m_selection->valueOf(m_graph.get());
    if (!value.valid()) return;
    auto isValue = [&](QTreeWidgetItem* item) {
        return item->data(0, Qt::UserRole).isValid() && item->data(0, Qt::UserRole).toUInt() == value.index;
    };
    QTreeWidgetItem* row = childNamed(rowNamed(tr("Inputs")), isValue);
    if (!row) row = childNamed(rowNamed(tr("Outputs")), isValue);
    if (row) setCurrentItem(row);
}

void NodePropertiesView::followKernel() {
    const QString name = m_selection->kernel();
    QTreeWidgetItem* row = childNamed(rowNamed(tr("Kernels in the last run")),
                                      [&](QTreeWidgetItem* item) { return item->text(0) == name; });
    if (row) setCurrentItem(row);
}

void NodePropertiesView::showRunKernels(const QString& summary, const QList<QPair<QString, QString>>& kernels) {
    const QString title = tr("Kernels in the last run");
    delete rowNamed(title);
    auto* row = addRow(this, nullptr, title, summary);
    for (const auto& [name, detail] : kernels) {
        auto* kernel = addRow(this, row, name, detail);
        kernel->setToolTip(0, name);
    }
    row->setExpanded(true);
    if (m_selection) followKernel();
}

}  // namespace fsc
