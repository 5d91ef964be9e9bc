#include "views/summary_view.h"

#include <QLocale>

#include "core/units.h"

namespace fsc {

SummaryView::SummaryView(QWidget* parent) : QTreeWidget(parent) {
    setColumnCount(2);
    setHeaderLabels({tr("Property"), tr("Value")});
    setRootIsDecorated(true);
    setUniformRowHeights(true);
}

void SummaryView::showSummary(const ModelSummary& s, const QString& file) {
    clear();
    const QLocale locale;
    auto add = [this](QTreeWidgetItem* parent, const QString& key, const QString& value) {
        auto* item = parent ? new QTreeWidgetItem(parent) : new QTreeWidgetItem(this);
        item->setText(0, key);
        item->setText(1, value);
        return item;
    };
    add(nullptr, tr("File"), file);
    add(nullptr, tr("IR version"), QString::number(s.irVersion));
    QStringList opsets;
    for (const auto& [domain, version] : s.opsets)
        opsets << QStringLiteral("%1 %2").arg(domain.empty() ? QStringLiteral("ai.onnx")
                                                            : QString::fromStdString(domain))
                      .arg(version);
    add(nullptr, tr("Opsets"), opsets.join(QStringLiteral(", ")));
    add(nullptr, tr("Producer"),
        QString::fromStdString(s.producerName + " " + s.producerVersion).trimmed());
    auto* inputs = add(nullptr, tr("Inputs"), QString::number(s.inputs.size()));
    for (const auto& p : s.inputs)
        add(inputs, QString::fromStdString(p.name), QString::fromStdString(p.type.toString()));
    auto* outputs = add(nullptr, tr("Outputs"), QString::number(s.outputs.size()));
    for (const auto& p : s.outputs)
        add(outputs, QString::fromStdString(p.name), QString::fromStdString(p.type.toString()));
    add(nullptr, tr("Nodes"),
        tr("%1 top level, %2 including subgraphs")
            .arg(locale.toString(qulonglong(s.nodeCount)), locale.toString(qulonglong(s.totalNodeCount))));
    add(nullptr, tr("Parameters"),
        tr("%1 (%2) in %3 initializers, %4 Constant nodes")
            .arg(locale.toString(qlonglong(s.parameterCount)),
                 QString::fromStdString(bytesText(double(s.parameterBytes))))
            .arg(s.initializerCount)
            .arg(s.constantNodeCount));
    add(nullptr, tr("Subgraphs"), tr("%1 (max depth %2)").arg(s.subgraphCount).arg(s.maxSubgraphDepth));
    auto* ops = add(nullptr, tr("Op types"), QString::number(s.opHistogram.size()));
    for (const auto& [op, count] : s.opHistogram)
        add(ops, QString::fromStdString(op), QString::number(count));
    auto* unknown = add(nullptr, tr("Unknown shapes"), QString::number(s.unknownShapeValues.size()));
    for (const auto& name : s.unknownShapeValues) add(unknown, QString::fromStdString(name), {});
    for (const auto& w : s.warnings) add(nullptr, tr("Warning"), QString::fromStdString(w));
    expandItem(inputs);
    expandItem(outputs);
    resizeColumnToContents(0);
}

}  // namespace fsc
