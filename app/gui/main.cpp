// fusescope: the desktop explorer. With no argument it opens the bundled sample model.
#include <QApplication>
#include <QCommandLineParser>

#include "app/gui/main_window.h"

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
    parser.process(app);

    fsc::MainWindow window;
    window.show();
    const QStringList args = parser.positionalArguments();
    window.openModel(args.isEmpty() ? QString::fromLatin1(fsc::MainWindow::kSamplePath) : args.first());
    return app.exec();
}
