// MainWindow, the analyses' overlays: the Variants dock (Run > Compare variants) and the
// canvas heated by the variant it chooses, or by the last bisection's errors.
#include <QDockWidget>

#include "app/gui/bisect_controller.h"
#include "app/gui/compare_controller.h"
#include "app/gui/dock_layout.h"
#include "app/gui/main_window.h"
#include "app/gui/variants_panel.h"
#include "views/graph_canvas.h"
#include "views/status_line.h"

namespace fsc {

QDockWidget* MainWindow::addVariantsDock() {
    m_variants = new VariantsPanel(this);
    QDockWidget* dock = addDock(tr("Variants"), QStringLiteral("variantsDock"), m_variants,
                                Qt::BottomDockWidgetArea, true);
    m_variantCompare = new CompareController(m_jobs, this);
    connect(m_variants, &VariantsPanel::compareRequested, this, &MainWindow::compareVariants);
    connect(m_variantCompare, &CompareController::logged, this, &MainWindow::log);
    connect(m_variantCompare, &CompareController::statusMessage, m_status, &StatusLine::setText);
    connect(m_variantCompare, &CompareController::started, this, [this] {
        m_variants->setRunning(true);
        m_docks->raiseDock(QStringLiteral("variantsDock"));
    });
    connect(m_variantCompare, &CompareController::stopped, this, [this](const QString& why) {
        m_variants->setRunning(false);
        m_variants->setStatus(tr("Compare stopped: %1").arg(why));
    });
    connect(m_variantCompare, &CompareController::finished, m_variants, &VariantsPanel::showResult);
    connect(m_variants, &VariantsPanel::heatChanged, this, [this] {
        m_overlay = Overlay::Variants;
        applyVariantHeat();
    });
    m_variants->setSelection(&m_selection);
    connect(m_variants, &VariantsPanel::nodeMissing, this, [this](const QString& name) {
        m_status->setText(
            tr("'%1' is not in the graph shown (the compile folded it away)").arg(name));
    });
    return dock;
}

void MainWindow::compareVariants() {
    m_variantCompare->compare(m_session);
}

void MainWindow::applyVariantHeat() {
    const Graph* shown = m_canvas->graph();  // the step just set, before its layout arrives
    const auto& comparison = m_variants->comparison();
    if (!shown || !comparison) return;
    CompareController::Overlay overlay =
        CompareController::overlayFor(*shown, *comparison, m_variants->heatVariant(),
                                      m_variants->heatMeasure(), m_variants->heatOver());
    if (!m_compare) m_canvas->setMarks({});  // a bisection's outlines; a comparison keeps its own
    m_canvas->setHeat(std::move(overlay.heat));
}

void MainWindow::showBisection() {
    const Graph* shown = m_canvas->graph();  // the step just set, before its layout arrives
    if (!shown || !m_bisection) return;
    BisectController::Overlay overlay = BisectController::overlayFor(*shown, *m_bisection);
    m_canvas->setHeat(std::move(overlay.heat));
    if (!m_compare)
        m_canvas->setMarks(std::move(overlay.marks));  // a comparison keeps its outlines
}

}  // namespace fsc
