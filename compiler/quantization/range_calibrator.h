#pragma once
// Turns the values a tensor took during calibration into the range INT8 represents:
// min-max keeps everything; percentile clips the rarest tails; entropy picks the clipping
// threshold whose 8-bit histogram loses the least information (KL divergence, as TensorRT).
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace fsc {

enum class CalibrationMethod { MinMax, Percentile, Entropy };

Result<CalibrationMethod> parseCalibrationMethod(const std::string& name);  // minmax|percentile|entropy
const char* calibrationMethodName(CalibrationMethod method);

struct ValueRange {
    float min = 0;
    float max = 0;
};

// Observes one tensor over many runs. Histogram methods need two sweeps over the same
// samples: the first fixes the extent, the second fills the bins.
class RangeCalibrator {
public:
    static constexpr int kBins = 2048;

    void observeExtent(const float* data, int64_t count);
    void observeHistogram(const float* data, int64_t count);  // after every observeExtent
    ValueRange range(CalibrationMethod method, double percentile = 99.99) const;

    float observedMin() const { return m_min; }
    float observedMax() const { return m_max; }
    const std::vector<double>& histogram() const { return m_hist; }  // |x| in [0, absmax], exact zeros apart

private:
    float absMax() const;
    ValueRange percentileRange(double percentile) const;
    ValueRange entropyRange() const;

    bool m_seen = false;
    float m_min = 0, m_max = 0;
    std::vector<double> m_hist;      // of |x|, kBins bins over [0, absMax()]
    std::vector<double> m_negative;  // the same for negative values only (for percentile)
    double m_zeros = 0;              // exact zeros, outside the histogram
};

// Index of the threshold bin (exclusive end) whose quantisation into `levels` buckets
// keeps the KL divergence from the clipped distribution smallest.
int entropyThresholdBin(const std::vector<double>& hist, int levels);

// Scale and zero point for a range: asymmetric uint8 ([min, max] widened to hold 0) or
// symmetric int8 (zero point 0).
struct QuantParams {
    float scale = 1;
    int32_t zeroPoint = 0;
    bool isSigned = false;  // int8 when true, else uint8
};
QuantParams activationParams(ValueRange range, bool symmetric);

}  // namespace fsc
