#include "views/custom_pipeline_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

#include <algorithm>

#include "compiler/pass_registry.h"
#include "compiler/pipelines.h"

namespace fsc {

CustomPipelineDialog::CustomPipelineDialog(QWidget* parent)
    : QDialog(parent), m_list(new QListWidget(this)), m_preset(new QComboBox(this)) {
    setWindowTitle(tr("Custom pipeline"));
    m_list->setDragDropMode(QAbstractItemView::InternalMove);
    m_list->setMinimumSize(420, 420);
    for (const char* level : {"O0", "O1", "O2", "O3"}) m_preset->addItem(QString::fromLatin1(level));
    connect(m_preset, &QComboBox::currentTextChanged, this, &CustomPipelineDialog::preset);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Compile"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Start from"), this));
    top->addWidget(m_preset);
    top->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(new QLabel(tr("Checked passes run top to bottom; drag to reorder."), this));
    layout->addWidget(m_list, 1);
    layout->addWidget(buttons);
    m_preset->setCurrentText(QStringLiteral("O2"));
    preset(QStringLiteral("O2"));
}

void CustomPipelineDialog::preset(const QString& level) {
    const auto chosen = pipelinePasses(level.toStdString());
    std::vector<std::string> order = chosen ? *chosen : std::vector<std::string>{};
    // A pass may appear twice in a level (eliminate-no-ops does): the list shows each once.
    std::vector<std::string> unique;
    for (const std::string& name : order)
        if (std::find(unique.begin(), unique.end(), name) == unique.end()) unique.push_back(name);
    m_list->clear();
    auto add = [&](const PassInfo& info, bool checked) {
        auto* item = new QListWidgetItem(QString::fromStdString(info.name), m_list);
        item->setToolTip(QString::fromStdString(info.description));
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable | Qt::ItemIsDragEnabled);
        item->setCheckState(checked ? Qt::Checked : Qt::Unchecked);
    };
    const PassRegistry& registry = PassRegistry::builtin();
    for (const std::string& name : unique)
        if (const PassInfo* info = registry.find(name)) add(*info, true);
    for (const PassInfo& info : registry.passes())
        if (std::find(unique.begin(), unique.end(), info.name) == unique.end()) add(info, false);
}

void CustomPipelineDialog::setChecked(const std::string& pass, bool checked) {
    for (int i = 0; i < m_list->count(); ++i)
        if (m_list->item(i)->text().toStdString() == pass) m_list->item(i)->setCheckState(checked ? Qt::Checked : Qt::Unchecked);
}

std::vector<std::string> CustomPipelineDialog::passes() const {
    std::vector<std::string> out;
    for (int i = 0; i < m_list->count(); ++i)
        if (m_list->item(i)->checkState() == Qt::Checked) out.push_back(m_list->item(i)->text().toStdString());
    return out;
}

}  // namespace fsc
