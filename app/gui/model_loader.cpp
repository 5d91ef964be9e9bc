#include "app/gui/model_loader.h"

#include <QFile>

#include "core/onnx_import.h"

namespace fsc {

Result<Model> loadModelFile(const QString& path) {
    if (!path.startsWith(QLatin1Char(':'))) return importModel(path.toStdString());
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return Status(ErrorCode::NotFound, path.toStdString() + ": missing resource");
    const QByteArray bytes = file.readAll();
    return importModelFromBytes(bytes.constData(), static_cast<size_t>(bytes.size()), path.toStdString());
}

}  // namespace fsc
