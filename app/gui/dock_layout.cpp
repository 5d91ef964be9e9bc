#include "app/gui/dock_layout.h"

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QGuiApplication>
#include <QLayout>
#include <QMainWindow>
#include <QMenu>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QTimer>

#include <algorithm>
#include <tuple>

namespace fsc {

namespace {

// Shares of the window the docks start with: a narrow left column and a short tab strip
// below leave the canvas about two thirds of the window on a 1366x768 laptop.
constexpr double kLeftColumnShare = 0.18;
constexpr double kBottomShare = 0.15;
// Raised whenever the docks' arrangement changes, so a layout saved by an older version is
// not restored over the new one.
constexpr int kLayoutVersion = 2;

// The widget that takes the keyboard in a pane: the pane itself when it does (the canvas,
// the timeline), else its first child that does (a dock's table or tree).
QWidget* firstFocusable(QWidget* pane) {
    // A dock's scroll area (the charts below the canvas) only holds the chart that wants
    // the keys.
    auto takesFocus = [](const QWidget* w) {
        return w->isVisible() && w->isEnabled() && (w->focusPolicy() & Qt::TabFocus) && !qobject_cast<const QScrollArea*>(w);
    };
    if (takesFocus(pane)) return pane;
    for (QWidget* child : pane->findChildren<QWidget*>())
        if (takesFocus(child)) return child;
    return nullptr;
}

}  // namespace

DockLayout::DockLayout(QMainWindow& window, QWidget& canvas, QWidget& before)
    : QObject(&window), m_window(window), m_canvas(canvas), m_before(before) {}

void DockLayout::keepDefaultAndRestore() {
    m_defaultState = m_window.saveState();
    restore();
}

QList<QWidget*> DockLayout::panes() const {
    QList<QWidget*> panes;
    if (m_before.isVisible()) panes << &m_before;
    panes << &m_canvas;
    QList<QDockWidget*> docks;
    for (QDockWidget* dock : m_window.findChildren<QDockWidget*>())
        if (dock->isVisible() && !dock->visibleRegion().isEmpty()) docks << dock;  // a front tab
    // Reading order: the left column top to bottom, then the docks below left to right.
    auto rank = [this](QDockWidget* dock) {
        const QPoint at = dock->mapTo(&m_window, QPoint(0, 0));
        const int area = m_window.dockWidgetArea(dock) == Qt::LeftDockWidgetArea ? 0 : 1;
        return std::tuple(area, area == 0 ? at.y() : at.x(), area == 0 ? at.x() : at.y());
    };
    std::stable_sort(docks.begin(), docks.end(), [&](QDockWidget* a, QDockWidget* b) { return rank(a) < rank(b); });
    for (QDockWidget* dock : docks) panes << dock;
    return panes;
}

void DockLayout::focusPane(int direction) {
    const QList<QWidget*> order = panes();
    if (order.isEmpty()) return;
    const QWidget* focused = QApplication::focusWidget();
    qsizetype at = -1;
    for (qsizetype i = 0; i < order.size(); ++i)
        if (focused && (order[i] == focused || order[i]->isAncestorOf(focused))) at = i;
    // From nowhere in particular (a toolbar, no focus), forward starts at the first pane
    // and backward at the last.
    const qsizetype n = order.size();
    const qsizetype start = at >= 0 ? at : (direction > 0 ? n - 1 : 0);
    for (qsizetype step = 1; step <= n; ++step) {
        const qsizetype next = ((start + direction * step) % n + n) % n;
        if (QWidget* target = firstFocusable(order[next])) {
            target->setFocus(Qt::ShortcutFocusReason);
            return;
        }
    }
}

void DockLayout::addPaneNavigation(QMenu* view) {
    QMenu* go = view->addMenu(tr("Go &to"));
    go->setObjectName(QStringLiteral("goToMenu"));
    QAction* next = go->addAction(tr("&Next pane"), this, [this] { focusPane(+1); });
    next->setShortcut(QKeySequence(Qt::Key_F6));
    next->setObjectName(QStringLiteral("nextPaneAction"));
    QAction* previous = go->addAction(tr("&Previous pane"), this, [this] { focusPane(-1); });
    previous->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F6));
    previous->setObjectName(QStringLiteral("previousPaneAction"));
    go->addSeparator();
    go->addAction(tr("The &graph"), this, [this] { m_canvas.setFocus(Qt::ShortcutFocusReason); });
    // One entry per dock, by its title, with the first letter not yet taken as its mnemonic:
    // the entry shows the dock (even a closed one), brings it forward and gives it the keys.
    QString taken = QStringLiteral("npg");
    for (QDockWidget* dock : m_window.findChildren<QDockWidget*>()) {
        QString title = dock->windowTitle();
        for (qsizetype i = 0; i < title.size(); ++i)
            if (title[i].isLetter() && !taken.contains(title[i].toLower())) {
                taken += title[i].toLower();
                title.insert(i, QLatin1Char('&'));
                break;
            }
        go->addAction(title, this, [this, dock] {
            raiseDock(dock->objectName());
            QTimer::singleShot(0, dock, [dock] {
                if (QWidget* target = firstFocusable(dock)) target->setFocus(Qt::ShortcutFocusReason);
            });
        });
    }
}

QString DockLayout::screenKey() const {
    const QScreen* s = m_window.screen();
    const QSize size = s ? s->availableGeometry().size() : QSize();
    return QStringLiteral("window/%1x%2/").arg(size.width()).arg(size.height());
}

void DockLayout::restore() {
    QSettings settings;
    const QString key = screenKey();
    if (m_window.restoreGeometry(settings.value(key + QStringLiteral("geometry")).toByteArray()) &&
        m_window.restoreState(settings.value(key + QStringLiteral("state")).toByteArray(), kLayoutVersion))
        return;
    // First time on this screen size: the window takes at most the screen's free area
    // (never more, whatever the docks would like), at least 1280x800 where there is room.
    // The tabbed docks only count as tabs once the layout is activated; before that their
    // minimum widths add up (2,390 pixels) and the window would be made that wide.
    m_window.layout()->invalidate();
    m_window.layout()->activate();
    // The offscreen platform (screenshots, tests) has no real screen: 1280x800 there.
    const bool realScreen = m_window.screen() && QGuiApplication::platformName() != QLatin1String("offscreen");
    const QRect free = realScreen ? m_window.screen()->availableGeometry() : QRect(0, 0, 1280, 800);
    const QSize size(std::min(free.width(), std::max(1280, int(free.width() * 0.85))),
                     std::min(free.height(), std::max(800, int(free.height() * 0.85))));
    m_window.setGeometry(QRect(free.topLeft() + QPoint((free.width() - size.width()) / 2, (free.height() - size.height()) / 2),
                      size));
    m_defaultSizesPending = true;  // docks can be sized once the window is laid out
}

void DockLayout::save() const {
    QSettings settings;
    const QString key = screenKey();
    settings.setValue(key + QStringLiteral("geometry"), m_window.saveGeometry());
    settings.setValue(key + QStringLiteral("state"), m_window.saveState(kLayoutVersion));
}

void DockLayout::shown() {
    if (!m_defaultSizesPending) return;
    m_defaultSizesPending = false;
    QTimer::singleShot(0, this, &DockLayout::applyDefaultDockSizes);
}

void DockLayout::applyDefaultDockSizes() {
    auto dock = [this](const char* name) { return m_window.findChild<QDockWidget*>(QString::fromLatin1(name)); };
    QDockWidget *passes = dock("passDock"), *summary = dock("summaryDock"), *nodes = dock("nodesDock");
    if (!passes || !summary || !nodes) return;
    m_window.resizeDocks({passes}, {std::max(200, int(m_window.width() * kLeftColumnShare))}, Qt::Horizontal);
    m_window.resizeDocks({passes, summary}, {m_window.height() * 3 / 5, m_window.height() * 2 / 5}, Qt::Vertical);
    m_window.resizeDocks({nodes}, {std::max(110, int(m_window.height() * kBottomShare))}, Qt::Vertical);
}

void DockLayout::setGraphOnly(bool on) {
    if (on) {
        m_hiddenForGraph.clear();
        for (QDockWidget* dock : m_window.findChildren<QDockWidget*>())
            if (dock->isVisible()) {
                m_hiddenForGraph.push_back(dock);
                dock->hide();
            }
    } else {
        for (QDockWidget* dock : m_hiddenForGraph) dock->show();
        m_hiddenForGraph.clear();
    }
    if (auto* action = m_window.findChild<QAction*>(QStringLiteral("graphOnlyAction")); action && action->isChecked() != on)
        action->setChecked(on);
}

bool DockLayout::raiseDock(const QString& name) {
    auto* dock = m_window.findChild<QDockWidget*>(name);
    if (!dock) return false;
    dock->show();
    dock->raise();
    // A tab raised just now is laid out on the next pass of the event loop; resizing it
    // before then is ignored. Of several raised at once (a run's dock, then the one asked
    // for) only the last, the one in front, is grown: growing a tab behind it undoes that.
    const bool scheduled = !m_dockToGrow.isNull();
    m_dockToGrow = dock;
    if (scheduled) return true;
    QTimer::singleShot(0, this, [this] {
        QDockWidget* grow = m_dockToGrow;
        m_dockToGrow = nullptr;
        const int room = m_window.height() / 3;
        if (grow && m_window.dockWidgetArea(grow) == Qt::BottomDockWidgetArea && !grow->isFloating() && grow->height() < room)
            m_window.resizeDocks({grow}, {room}, Qt::Vertical);
    });
    return true;
}

void DockLayout::reset() {
    setGraphOnly(false);
    m_window.restoreState(m_defaultState);
    if (auto* walkthrough = m_window.findChild<QDockWidget*>(QStringLiteral("walkthroughDock"))) walkthrough->hide();
    const QRect free = m_window.screen() ? m_window.screen()->availableGeometry() : m_window.geometry();
    if (!free.contains(m_window.frameGeometry())) m_window.setGeometry(free);
    applyDefaultDockSizes();
}

}  // namespace fsc
