#pragma once
// Choosing a custom pipeline: every built-in pass as a checkable row (drag to reorder),
// preset from O0..O3, each row's tooltip its description.
#include <QDialog>

#include <string>
#include <vector>

class QListWidget;
class QComboBox;

namespace fsc {

class CustomPipelineDialog : public QDialog {
    Q_OBJECT
public:
    explicit CustomPipelineDialog(QWidget* parent = nullptr);
    // Checks exactly the passes of a level, in its order, the others after them unchecked.
    void preset(const QString& level);
    void setChecked(const std::string& pass, bool checked);
    std::vector<std::string> passes() const;  // the checked ones, in the order shown
    QListWidget* list() const { return m_list; }

private:
    QListWidget* m_list;
    QComboBox* m_preset;
};

}  // namespace fsc
