#include "app/gui/about_dialog.h"

#include <QIcon>
#include <QMessageBox>
#include <QString>

#include "app/common/build_info.h"

namespace fsc {

void showAboutDialog(QWidget* parent) {
    const BuildInfo info = buildInfo();
    QString rows = QStringLiteral("<tr><td>Qt</td><td>%1 (built with %2)</td></tr>").arg(QString::fromLatin1(qVersion()),
                                                                                          QStringLiteral(QT_VERSION_STR));
    for (const auto& [name, version] : libraryVersions())
        rows += QStringLiteral("<tr><td>%1</td><td>%2</td></tr>")
                    .arg(QString::fromStdString(name).toHtmlEscaped(), QString::fromStdString(version).toHtmlEscaped());
    auto* box = new QMessageBox(parent);
    box->setObjectName(QStringLiteral("aboutDialog"));
    box->setWindowTitle(QObject::tr("About Fusescope"));
    box->setIconPixmap(QIcon(QStringLiteral(":/icons/fusescope.svg")).pixmap(96, 96));
    box->setTextFormat(Qt::RichText);
    box->setText(QObject::tr("<h3>Fusescope %1</h3><p>commit %2</p>"
                             "<p>Opens an ONNX model, compiles it pass by pass, runs it on the CPU or an NVIDIA GPU "
                             "and lays the measured times over the graph.</p><table>%3</table>")
                     .arg(QString::fromStdString(info.version), QString::fromStdString(info.commit), rows));
    box->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

}  // namespace fsc
