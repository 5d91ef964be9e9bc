// fusescope: the desktop explorer. With no argument it opens the bundled sample model.
// `--screenshot FILE.png` opens the model, lays it out, saves the window and prints the
// timings as JSON, then exits: pictures for docs and tests, and the GUI's speed figures.
#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTimer>

#include <cstdio>

#include "app/gui/main_window.h"
#include "views/graph_canvas.h"

namespace {

// Drives one screenshot run: import -> first layout (the requested depth) painted ->
// save -> everything expanded laid out -> JSON on stdout -> quit.
void runScreenshot(fsc::MainWindow& window, const QString& model, const QString& file) {
    auto timer = std::make_shared<QElapsedTimer>();
    auto importMs = std::make_shared<double>(0), firstFrameMs = std::make_shared<double>(-1);
    auto importedAt = std::make_shared<qint64>(0);
    QObject::connect(&window, &fsc::MainWindow::loadFailed, [](const QString& message) {
        std::fprintf(stderr, "error: %s\n", message.toUtf8().constData());
        QCoreApplication::exit(2);
    });
    QObject::connect(&window, &fsc::MainWindow::modelShown, [=] {
        *importedAt = timer->nsecsElapsed();
        *importMs = double(*importedAt) / 1e6;
    });
    QObject::connect(window.canvas(), &fsc::GraphCanvas::laidOut, &window, [=, &window](double layoutMs, int) {
        if (*firstFrameMs < 0) {
            window.canvas()->repaint();  // the first frame, painted now
            *firstFrameMs = double(timer->nsecsElapsed() - *importedAt) / 1e6;
            if (!window.grab().save(file)) {
                std::fprintf(stderr, "error: %s: cannot write the screenshot\n", file.toUtf8().constData());
                QCoreApplication::exit(2);
                return;
            }
            const fsc::ScopeTree* tree = window.canvas()->scopeTree();
            window.canvas()->setExpanded(fsc::expandedToDepth(*tree, 1 << 20));
            return;
        }
        const QJsonObject j{{QStringLiteral("screenshot"), file},
                            {QStringLiteral("nodes"), int(window.model()->graph->nodeCount())},
                            {QStringLiteral("import_ms"), *importMs},
                            {QStringLiteral("first_frame_ms"), *firstFrameMs},
                            {QStringLiteral("full_layout_ms"), layoutMs}};
        std::printf("%s\n", QJsonDocument(j).toJson(QJsonDocument::Compact).constData());
        QCoreApplication::exit(0);
    });
    timer->start();
    window.openModel(model);
}

}  // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("Fusescope"));
    QApplication::setOrganizationName(QStringLiteral("Fusescope"));
    QApplication::setApplicationVersion(QStringLiteral(FUSESCOPE_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Fusescope: ONNX graph explorer and profiler"));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("model"),
                                 QStringLiteral("ONNX model to open (default: the bundled sample)"));
    const QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                        QStringLiteral("Save the window as FILE.png once laid out, print timings as JSON, exit."),
                                        QStringLiteral("FILE.png"));
    const QCommandLineOption depth(QStringLiteral("expand-depth"),
                                   QStringLiteral("Expand groups to depth N when the model opens."), QStringLiteral("N"));
    parser.addOption(screenshot);
    parser.addOption(depth);
    parser.process(app);

    fsc::MainWindow window;
    if (parser.isSet(depth)) {
        bool ok = false;
        const int n = parser.value(depth).toInt(&ok);
        if (!ok || n < 0) {
            std::fprintf(stderr, "fusescope: --expand-depth needs a number >= 0\n");
            return 64;
        }
        window.setInitialExpandDepth(n);
    }
    window.show();
    const QStringList args = parser.positionalArguments();
    const QString model = args.isEmpty() ? QString::fromLatin1(fsc::MainWindow::kSamplePath) : args.first();
    if (parser.isSet(screenshot)) runScreenshot(window, model, parser.value(screenshot));
    else window.openModel(model);
    return app.exec();
}
