#include "compiler/quantization/range_calibrator.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fsc {

Result<CalibrationMethod> parseCalibrationMethod(const std::string& name) {
    if (name == "minmax") return CalibrationMethod::MinMax;
    if (name == "percentile") return CalibrationMethod::Percentile;
    if (name == "entropy") return CalibrationMethod::Entropy;
    return Status(ErrorCode::InvalidArgument, "unknown calibrator '" + name + "' (expected minmax, percentile or entropy)");
}

const char* calibrationMethodName(CalibrationMethod method) {
    switch (method) {
        case CalibrationMethod::MinMax: return "minmax";
        case CalibrationMethod::Percentile: return "percentile";
        case CalibrationMethod::Entropy: return "entropy";
    }
    return "?";
}

void RangeCalibrator::observeExtent(const float* data, int64_t count) {
    for (int64_t i = 0; i < count; ++i) {
        const float v = data[i];
        if (!std::isfinite(v)) continue;
        if (!m_seen) {
            m_min = m_max = v;
            m_seen = true;
        }
        m_min = std::min(m_min, v);
        m_max = std::max(m_max, v);
    }
}

float RangeCalibrator::absMax() const {
    return std::max(std::abs(m_min), std::abs(m_max));
}

void RangeCalibrator::observeHistogram(const float* data, int64_t count) {
    if (m_hist.empty()) {
        m_hist.assign(kBins, 0.0);
        m_negative.assign(kBins, 0.0);
    }
    const float top = absMax();
    if (top <= 0) return;
    const float perBin = float(kBins) / top;
    for (int64_t i = 0; i < count; ++i) {
        const float v = data[i];
        if (!std::isfinite(v)) continue;
        if (v == 0.0f) {  // exact zeros (a ReLU's) are exact in any range; kept apart so they do not drag entropy's threshold down
            m_zeros += 1;
            continue;
        }
        const int bin = std::min(kBins - 1, int(std::abs(v) * perBin));
        m_hist[size_t(bin)] += 1;
        if (v < 0) m_negative[size_t(bin)] += 1;
    }
}

ValueRange RangeCalibrator::range(CalibrationMethod method, double percentile) const {
    if (method == CalibrationMethod::MinMax || m_hist.empty() || absMax() <= 0) return {m_min, m_max};
    return method == CalibrationMethod::Percentile ? percentileRange(percentile) : entropyRange();
}

// Clips each side at the bin where the tail beyond holds less than (100 - p)% of all values.
ValueRange RangeCalibrator::percentileRange(double percentile) const {
    double total = m_zeros;
    for (double c : m_hist) total += c;
    const double tail = total * (100.0 - percentile) / 100.0;
    const float binWidth = absMax() / float(kBins);
    auto edge = [&](const std::vector<double>& hist) {
        double beyond = 0;
        for (int b = kBins - 1; b >= 0; --b) {
            beyond += hist[size_t(b)];
            if (beyond > tail) return float(b + 1) * binWidth;
        }
        return 0.0f;
    };
    std::vector<double> positive(kBins);
    for (int b = 0; b < kBins; ++b) positive[size_t(b)] = m_hist[size_t(b)] - m_negative[size_t(b)];
    return {std::max(m_min, -edge(m_negative)), std::min(m_max, edge(positive))};
}

ValueRange RangeCalibrator::entropyRange() const {
    const int levels = m_min < 0 ? 128 : 256;  // int8 magnitudes, or uint8 for non-negative data
    const float threshold = float(entropyThresholdBin(m_hist, levels)) * absMax() / float(kBins);
    return {std::max(m_min, -threshold), std::min(m_max, threshold)};
}

int entropyThresholdBin(const std::vector<double>& hist, int levels) {
    const int bins = int(hist.size());
    if (bins <= levels) return bins;
    double bestKl = std::numeric_limits<double>::infinity();
    int best = bins;
    std::vector<double> p, q;
    for (int end = levels; end <= bins; ++end) {
        // P: the histogram clipped at `end`, the outliers added to its last bin.
        p.assign(hist.begin(), hist.begin() + end);
        for (int b = end; b < bins; ++b) p[size_t(end - 1)] += hist[size_t(b)];
        // Q: the unclipped bins merged into `levels` buckets, each spread evenly back over
        // the bins of its bucket that held anything.
        q.assign(size_t(end), 0.0);
        const double perLevel = double(end) / levels;
        for (int l = 0; l < levels; ++l) {
            const int from = int(std::floor(l * perLevel)), to = std::max(from + 1, int(std::floor((l + 1) * perLevel)));
            double sum = 0;
            int used = 0;
            for (int b = from; b < to && b < end; ++b) {
                sum += hist[size_t(b)];
                used += hist[size_t(b)] != 0;
            }
            if (used == 0) continue;
            for (int b = from; b < to && b < end; ++b)
                if (hist[size_t(b)] != 0) q[size_t(b)] = sum / used;
        }
        double pSum = 0, qSum = 0;
        for (int b = 0; b < end; ++b) {
            pSum += p[size_t(b)];
            qSum += q[size_t(b)];
        }
        if (pSum <= 0 || qSum <= 0) continue;
        double kl = 0;
        for (int b = 0; b < end; ++b) {
            if (p[size_t(b)] <= 0) continue;
            const double pb = p[size_t(b)] / pSum;
            const double qb = q[size_t(b)] > 0 ? q[size_t(b)] / qSum : 1e-12;  // an outlier bin Q never saw
            kl += pb * std::log(pb / qb);
        }
        if (kl < bestKl) {
            bestKl = kl;
            best = end;
        }
    }
    return best;
}

QuantParams activationParams(ValueRange range, bool symmetric) {
    QuantParams q;
    if (symmetric) {
        const float a = std::max(std::abs(range.min), std::abs(range.max));
        q.scale = a > 0 ? a / 127.0f : 1.0f;
        q.isSigned = true;
        return q;
    }
    const float lo = std::min(range.min, 0.0f), hi = std::max(range.max, 0.0f);
    q.scale = hi > lo ? (hi - lo) / 255.0f : 1.0f;
    q.zeroPoint = std::clamp(int32_t(std::nearbyint(-lo / q.scale)), 0, 255);
    return q;
}

}  // namespace fsc
