#pragma once
// The model summary panel: the same facts as `fusescope-cli inspect`, as a tree.
#include <QTreeWidget>

#include "core/model_summary.h"

namespace fsc {

class SummaryView : public QTreeWidget {
    Q_OBJECT
public:
    explicit SummaryView(QWidget* parent = nullptr);
    void showSummary(const ModelSummary& summary, const QString& file);
};

}  // namespace fsc
