#include "views/run_panel.h"
#include "views/selection.h"

#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QTableView>
#include <QVBoxLayout>

#include "views/run_table_model.h"
#include "views/compact_rows.h"

namespace fsc {

RunPanel::RunPanel(QWidget* parent)
    : QWidget(parent),
      m_inputs(new QComboBox(this)),
      m_seed(new QSpinBox(this)),
      m_iterations(new QSpinBox(this)),
      m_warmup(new QSpinBox(this)),
      m_threads(new QSpinBox(this)),
      m_backend(new QComboBox(this)),
      m_run(new QPushButton(tr("Run on CPU"), this)),
      m_summary(new QLabel(this)),
      m_table(new RunTableModel(this)),
      m_sorted(new QSortFilterProxyModel(this)),
      m_view(new QTableView(this)) {
    m_inputs->addItem(tr("Random inputs, seed"));
    m_inputs->addItem(tr("Folder of input_N.pb…"));
    m_inputs->setToolTip(tr(
        "Random: floats in [-1, 1), integers in [0, 10), symbolic dims 1 (as fusescope-cli run)"));
    m_seed->setRange(0, 1 << 30);
    m_iterations->setRange(1, 10000);
    m_iterations->setValue(10);
    m_iterations->setPrefix(tr("iterations "));
    m_warmup->setRange(0, 1000);
    m_warmup->setValue(1);
    m_warmup->setPrefix(tr("warm-up "));
    m_threads->setRange(0, 1024);
    m_threads->setPrefix(tr("threads "));
    m_threads->setSpecialValueText(tr("threads: automatic"));
    m_threads->setToolTip(tr("CPU threads of the run; automatic: every core that other programs leave free "
                             "(as fusescope-cli's --threads)"));
    m_threads->setValue(QSettings().value(QStringLiteral("run/threads"), 0).toInt());
    connect(m_threads, &QSpinBox::valueChanged, this,
            [](int value) { QSettings().setValue(QStringLiteral("run/threads"), value); });
    m_backend->addItem(tr("CPU"));
    m_backend->addItem(tr("CUDA GPU"));
    m_backend->setToolTip(
        tr("CUDA: what the CUDA capability table claims runs on the first GPU, timed by CUPTI; "
           "the rest on the CPU with explicit copies"));
    connect(m_backend, &QComboBox::currentIndexChanged, this, [this](int index) {
        m_run->setText(index == 1 ? tr("Run on GPU") : tr("Run on CPU"));
        m_run->setToolTip(
            index == 1
                ? tr("Run the graph shown on the CUDA backend and time every kernel (Ctrl+R)")
                : tr("Run the graph shown on the CPU backend and time every node (Ctrl+R)"));
        emit backendChosen(index == 1);
    });
    m_run->setToolTip(tr("Run the graph shown on the CPU backend and time every node (Ctrl+R)"));
    connect(m_inputs, &QComboBox::activated, this, [this](int index) {
        if (index == 0) {
            setInputDir({});
            return;
        }
        const QString dir = QFileDialog::getExistingDirectory(
            this, tr("Folder with input_0.pb, input_1.pb, …"), m_inputDir);
        setInputDir(dir);
    });
    connect(m_run, &QPushButton::clicked, this, &RunPanel::runRequested);

    m_sorted->setSourceModel(m_table);
    m_sorted->setSortRole(RunTableModel::SortRole);
    m_view->setModel(m_sorted);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(RunTableModel::Milliseconds, Qt::DescendingOrder);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->verticalHeader()->hide();
    useCompactRows(m_view);
    // The node's name takes the room a wide dock has; the figures keep their own width.
    m_view->horizontalHeader()->setStretchLastSection(false);
    m_view->horizontalHeader()->setSectionResizeMode(RunTableModel::Node, QHeaderView::Stretch);
    m_view->horizontalHeader()->setResizeContentsPrecision(200);  // fast on 2,000-node runs
    m_view->setAlternatingRowColors(true);
    connect(m_view, &QTableView::activated, this, [this](const QModelIndex& index) {
        const QVariant node = m_sorted->data(index, RunTableModel::NodeRole);
        if (node.isValid()) emit nodeActivated(NodeId{node.toUInt()});
    });

    auto* controls = new QHBoxLayout;
    controls->addWidget(m_inputs);
    controls->addWidget(m_seed);
    controls->addWidget(m_warmup);
    controls->addWidget(m_iterations);
    controls->addWidget(m_threads);
    controls->addWidget(m_backend);
    controls->addStretch(1);
    controls->addWidget(m_run);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(controls);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_summary);
    layout->addWidget(m_view, 1);
    clearTimes(tr("No run yet: Run times every node of the graph shown."));
}

FeedOptions RunPanel::feedOptions() const {
    FeedOptions options;
    options.inputDir = m_inputDir.toStdString();
    options.seed = uint64_t(m_seed->value());
    return options;
}

int RunPanel::threads() const { return m_threads->value(); }
void RunPanel::setThreads(int threads) { m_threads->setValue(threads); }

void RunPanel::setInputDir(const QString& dir) {
    m_inputDir = dir;
    m_inputs->setItemText(1, dir.isEmpty() ? tr("Folder of input_N.pb…") : dir);
    m_inputs->setCurrentIndex(dir.isEmpty() ? 0 : 1);
    m_seed->setVisible(dir.isEmpty());
}

int RunPanel::iterations() const {
    return m_iterations->value();
}

int RunPanel::warmup() const {
    return m_warmup->value();
}

bool RunPanel::cudaSelected() const {
    return m_backend->currentIndex() == 1;
}

void RunPanel::setCudaSelected(bool cuda) {
    m_backend->setCurrentIndex(cuda ? 1 : 0);
}

void RunPanel::setIterations(int iterations) {
    m_iterations->setValue(iterations);
}

void RunPanel::setRunning(bool running) {
    m_run->setEnabled(!running);
}

void RunPanel::showTimes(const QString& summary, std::vector<NodeTime> nodes, int64_t topLevelNs) {
    m_summary->setText(summary);
    m_table->setTimes(std::move(nodes), topLevelNs);
    m_view->resizeColumnsToContents();
}

void RunPanel::clearTimes(const QString& why) {
    m_summary->setText(why);
    m_table->clear();
}

QString RunPanel::summary() const {
    return m_summary->text();
}

void RunPanel::setSelection(Selection* selection) {
    connect(this, &RunPanel::nodeActivated, selection, [selection](NodeId node) { selection->selectRunNode(node); });
}

}  // namespace fsc
