#pragma once
class QWidget;

namespace fsc {

// Help > About Fusescope: the version, the git commit and the versions of Qt, ONNX, oneDNN,
// SQLite and CUDA in use, selectable so a bug report can quote them.
void showAboutDialog(QWidget* parent);

}  // namespace fsc
