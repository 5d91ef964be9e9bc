#pragma once
// A small bar chart of a tensor's value histogram, its range written under the bars.
#include <QWidget>

#include <vector>

namespace fsc {

class HistogramWidget : public QWidget {
    Q_OBJECT
public:
    HistogramWidget(std::vector<int64_t> bins, double min, double max, QWidget* parent = nullptr);
    QSize sizeHint() const override { return {220, 64}; }
    const std::vector<int64_t>& bins() const { return m_bins; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    std::vector<int64_t> m_bins;
    double m_min, m_max;
};

}  // namespace fsc
