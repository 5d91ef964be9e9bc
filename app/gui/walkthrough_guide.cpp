#include "app/gui/walkthrough_guide.h"

#include <QDockWidget>

#include <algorithm>
#include <memory>

#include "app/gui/dock_layout.h"
#include "app/gui/main_window.h"
#include "app/gui/run_controller.h"
#include "app/gui/walkthrough_dock.h"
#include "views/graph_canvas.h"
#include "views/status_line.h"

namespace fsc {

WalkthroughGuide::WalkthroughGuide(MainWindow& window, WalkthroughDock& dock)
    : QObject(&window), m_window(window), m_dock(dock) {
    connect(&dock, &WalkthroughDock::actionRequested, this, &WalkthroughGuide::act);
}

void WalkthroughGuide::show(int chapter) {
    auto* dock = m_window.findChild<QDockWidget*>(QStringLiteral("walkthroughDock"));
    const bool opening = !dock->isVisible();
    dock->show();
    dock->raise();
    if (opening) {
        // Room to read: the right column widens (the pass list stays in the left one, for
        // chapter 3 to step through).
        m_window.resizeDocks({dock}, {std::max(480, m_window.width() * 2 / 5)}, Qt::Horizontal);
    }
    m_dock.showChapter(chapter > 0 ? chapter : std::max(1, m_dock.shownChapter()));
}

void WalkthroughGuide::act(int chapter, const QString& argument) {
    auto raise = [this](const char* name) {
        m_window.docks()->raiseDock(QString::fromLatin1(name));
    };
    switch (chapter) {
        case 1: return raise("summaryDock");
        case 2:
        case 10: raise("runDock"); return m_window.runs()->runShownGraph();
        case 3: return m_window.showStep((m_window.session().step() + 1) % std::max(1, m_window.session().stepCount()));
        case 4: {
            const int last = m_window.session().stepCount() - 1;
            if (m_window.session().step() == last) return revealNodeNamed(argument);
            // The fused node lives in the compiled graph: show it first, then the node.
            auto once = std::make_shared<QMetaObject::Connection>();
            *once = connect(&m_window, &MainWindow::stepShown, this, [this, once, argument, last](int step) {
                disconnect(*once);
                if (step == last) revealNodeNamed(argument);
            });
            return m_window.showStep(last);
        }
        case 5: return raise("rooflineDock");
        case 6: return raise("memoryDock");
        case 7: return raise("breaksDock");
        case 8: return raise("sensitivityDock");
        default: return;
    }
}

void WalkthroughGuide::revealNodeNamed(const QString& name) {
    GraphCanvas* canvas = m_window.canvas();
    if (canvas->layingOut() || canvas->shownGraph() != canvas->graph()) {
        // A new step is still being laid out: reveal once it is drawn.
        auto once = std::make_shared<QMetaObject::Connection>();
        *once = connect(canvas, &GraphCanvas::laidOut, this, [this, once, name] {
            disconnect(*once);
            revealNodeNamed(name);
        });
        return;
    }
    const Graph* graph = canvas->shownGraph();
    if (!graph) return;
    for (NodeId id : graph->order())
        if (QString::fromStdString(graph->node(id).name) == name) return canvas->revealNode(id);  // and selects it
    m_window.statusLine()->setText(tr("'%1' is not in the graph shown").arg(name));
}

}  // namespace fsc
