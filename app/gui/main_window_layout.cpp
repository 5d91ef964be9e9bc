// The window's layout: it fits the screen it opens on, the graph gets most of it, and what
// a user arranges is remembered per screen size (a laptop's layout is not a monitor's).
#include <QAction>
#include <QDockWidget>
#include <QGuiApplication>
#include <QLayout>
#include <QScreen>
#include <QSettings>
#include <QTimer>

#include <algorithm>

#include "app/gui/main_window.h"

namespace fsc {

namespace {

// Shares of the window the docks start with: a narrow left column and a short tab strip
// below leave the canvas about two thirds of the window on a 1366x768 laptop.
constexpr double kLeftColumnShare = 0.16;
constexpr double kBottomShare = 0.17;

}  // namespace

QString MainWindow::screenKey() const {
    const QScreen* s = screen();
    const QSize size = s ? s->availableGeometry().size() : QSize();
    return QStringLiteral("window/%1x%2/").arg(size.width()).arg(size.height());
}

void MainWindow::restoreLayout() {
    QSettings settings;
    const QString key = screenKey();
    if (restoreGeometry(settings.value(key + QStringLiteral("geometry")).toByteArray()) &&
        restoreState(settings.value(key + QStringLiteral("state")).toByteArray()))
        return;
    // First time on this screen size: the window takes at most the screen's free area
    // (never more, whatever the docks would like), at least 1280x800 where there is room.
    // The tabbed docks only count as tabs once the layout is activated; before that their
    // minimum widths add up (2,390 pixels) and the window would be made that wide.
    layout()->invalidate();
    layout()->activate();
    // The offscreen platform (screenshots, tests) has no real screen: 1280x800 there.
    const bool realScreen = screen() && QGuiApplication::platformName() != QLatin1String("offscreen");
    const QRect free = realScreen ? screen()->availableGeometry() : QRect(0, 0, 1280, 800);
    const QSize size(std::min(free.width(), std::max(1280, int(free.width() * 0.85))),
                     std::min(free.height(), std::max(800, int(free.height() * 0.85))));
    setGeometry(QRect(free.topLeft() + QPoint((free.width() - size.width()) / 2, (free.height() - size.height()) / 2),
                      size));
    m_defaultSizesPending = true;  // docks can be sized once the window is laid out
}

void MainWindow::saveLayout() const {
    QSettings settings;
    const QString key = screenKey();
    settings.setValue(key + QStringLiteral("geometry"), saveGeometry());
    settings.setValue(key + QStringLiteral("state"), saveState());
}

void MainWindow::showEvent(QShowEvent* event) {
    QMainWindow::showEvent(event);
    if (!m_defaultSizesPending) return;
    m_defaultSizesPending = false;
    QTimer::singleShot(0, this, &MainWindow::applyDefaultDockSizes);
}

void MainWindow::applyDefaultDockSizes() {
    auto dock = [this](const char* name) { return findChild<QDockWidget*>(QString::fromLatin1(name)); };
    QDockWidget *passes = dock("passDock"), *summary = dock("summaryDock"), *nodes = dock("nodesDock");
    if (!passes || !summary || !nodes) return;
    resizeDocks({passes}, {std::max(200, int(width() * kLeftColumnShare))}, Qt::Horizontal);
    resizeDocks({passes, summary}, {height() / 2, height() / 2}, Qt::Vertical);
    resizeDocks({nodes}, {std::max(110, int(height() * kBottomShare))}, Qt::Vertical);
}

void MainWindow::setGraphOnly(bool on) {
    if (on) {
        m_hiddenForGraph.clear();
        for (QDockWidget* dock : findChildren<QDockWidget*>())
            if (dock->isVisible()) {
                m_hiddenForGraph.push_back(dock);
                dock->hide();
            }
    } else {
        for (QDockWidget* dock : m_hiddenForGraph) dock->show();
        m_hiddenForGraph.clear();
    }
    if (auto* action = findChild<QAction*>(QStringLiteral("graphOnlyAction")); action && action->isChecked() != on)
        action->setChecked(on);
}

bool MainWindow::raiseDock(const QString& name) {
    auto* dock = findChild<QDockWidget*>(name);
    if (!dock) return false;
    dock->show();
    dock->raise();
    // A tab raised just now is laid out on the next pass of the event loop; resizing it
    // before then is ignored.
    QTimer::singleShot(0, dock, [this, dock] {
        const int room = height() / 3;
        if (dockWidgetArea(dock) == Qt::BottomDockWidgetArea && !dock->isFloating() && dock->height() < room)
            resizeDocks({dock}, {room}, Qt::Vertical);
    });
    return true;
}

void MainWindow::resetLayout() {
    setGraphOnly(false);
    restoreState(m_defaultState);
    if (auto* walkthrough = findChild<QDockWidget*>(QStringLiteral("walkthroughDock"))) walkthrough->hide();
    const QRect free = screen() ? screen()->availableGeometry() : geometry();
    if (!free.contains(frameGeometry())) setGeometry(free);
    applyDefaultDockSizes();
}

}  // namespace fsc
