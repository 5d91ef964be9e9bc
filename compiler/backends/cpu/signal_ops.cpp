// Signal processing and linear algebra as audio and speech models export them (opset 17):
// the Hann, Hamming and Blackman windows, DFT, STFT, MelWeightMatrix, Det; and MaxUnpool. Transforms
// are direct sums in double (O(n^2) per signal): exact enough for ONNX's tolerances, and
// the frame lengths these models use (hundreds of samples) keep them cheap.
#include <cstring>
#include <cmath>
#include <complex>
#include <numbers>
#include <optional>
#include <vector>

#include "compiler/backends/cpu/cpu_common.h"

namespace fsc::cpu {
namespace {

using Complex = std::complex<double>;

Result<int64_t> scalarInt(const KernelContext& ctx, size_t input, const char* what) {
    const RtTensor* t = ctx.input(input);
    if (!t || t->numel() != 1) return bad(ctx, std::string(what) + " must be a scalar");
    return elementAsInt(*t, 0);
}

Result<double> scalarReal(const KernelContext& ctx, size_t input, const char* what) {
    const RtTensor* t = ctx.input(input);
    if (!t || t->numel() != 1) return bad(ctx, std::string(what) + " must be a scalar");
    return elementAsDouble(*t, 0);
}

Status writeReals(KernelContext& ctx, DType dtype, std::vector<int64_t> dims, const std::vector<double>& values) {
    auto out = ctx.output(0, dtype, std::move(dims));
    if (!out) return out.status();
    return dispatchNumeric(ctx, dtype, [&](auto tag) -> Status {
        using T = decltype(tag);
        T* p = (*out)->template as<T>();
        for (size_t i = 0; i < values.size(); ++i) p[i] = T(values[i]);
        return Status::ok();
    });
}

DType outputDtype(const KernelInit& init) {
    return dtypeFromOnnx(int32_t(init.getInt("output_datatype", 1))).value_or(DType::Float32);
}

// w[n] = a0 - a1 cos(2 pi n / N') + a2 cos(4 pi n / N'), N' = size (periodic) or size - 1.
KernelFactory cosineWindow(double a0, double a1, double a2) {
    return [=](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const DType dtype = outputDtype(init);
        const bool periodic = init.getInt("periodic", 1) != 0;
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            auto size = scalarInt(ctx, 0, "size");
            if (!size) return size.status();
            if (*size < 0) return bad(ctx, "size is negative");
            const double span = double(periodic ? *size : *size - 1);
            std::vector<double> w(static_cast<size_t>(*size));
            for (int64_t n = 0; n < *size; ++n) {
                const double x = span > 0 ? 2 * std::numbers::pi * double(n) / span : 0.0;
                w[size_t(n)] = a0 - a1 * std::cos(x) + a2 * std::cos(2 * x);
            }
            return writeReals(ctx, dtype, {*size}, w);
        }));
    };
}

// The complex values of one signal: `x` laid out [..., n, 1 or 2], read along `axis` (an
// index into the dims before the last) at the given outer and inner position.
struct SignalView {
    const RtTensor* x;
    int64_t length, outer, inner, parts;
    Complex at(int64_t o, int64_t n, int64_t i) const {
        const int64_t base = ((o * length + n) * inner + i) * parts;
        return {elementAsDouble(*x, base), parts == 2 ? elementAsDouble(*x, base + 1) : 0.0};
    }
};

// X[k] = sum_n x[n] e^(-+2 pi i k n / N) over the first min(n, N) samples (zero padded).
std::vector<Complex> transform(const std::vector<Complex>& x, int64_t length, int64_t bins, bool inverse) {
    std::vector<Complex> out(static_cast<size_t>(bins));
    const double sign = inverse ? 1.0 : -1.0;
    for (int64_t k = 0; k < bins; ++k) {
        Complex sum = 0;
        for (int64_t n = 0; n < std::min<int64_t>(int64_t(x.size()), length); ++n) {
            const double angle = sign * 2 * std::numbers::pi * double((k * n) % length) / double(length);
            sum += x[size_t(n)] * Complex(std::cos(angle), std::sin(angle));
        }
        out[size_t(k)] = inverse ? sum / double(length) : sum;
    }
    return out;
}

KernelFactory dft() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t axisAttr = init.getInt("axis", 1);
        const bool inverse = init.getInt("inverse", 0) != 0, onesided = init.getInt("onesided", 0) != 0;
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            if (!x || x->rank() < 2 || (x->dims.back() != 1 && x->dims.back() != 2))
                return bad(ctx, "the input must be [..., n, 1] (real) or [..., n, 2] (complex)");
            const int64_t signalRank = int64_t(x->rank()) - 1;
            auto axis = normAxis(ctx, axisAttr, signalRank);
            if (!axis) return axis.status();
            const SignalView view{x, x->dims[size_t(*axis)], product(x->dims, 0, size_t(*axis)),
                                  product(x->dims, size_t(*axis) + 1, size_t(signalRank)), x->dims.back()};
            int64_t length = view.length;
            if (const RtTensor* given = ctx.input(1); given && given->numel()) length = elementAsInt(*given, 0);
            if (length < 1) return bad(ctx, "dft_length must be at least 1");
            const int64_t bins = onesided ? length / 2 + 1 : length;
            std::vector<int64_t> dims = x->dims;
            dims[size_t(*axis)] = bins;
            dims.back() = 2;
            auto out = ctx.output(0, x->dtype, dims);
            if (!out) return out.status();
            return dispatchFloat(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                T* p = (*out)->template as<T>();
                std::vector<Complex> signal(static_cast<size_t>(view.length));
                for (int64_t o = 0; o < view.outer; ++o)
                    for (int64_t i = 0; i < view.inner; ++i) {
                        for (int64_t n = 0; n < view.length; ++n) signal[size_t(n)] = view.at(o, n, i);
                        const std::vector<Complex> spectrum = transform(signal, length, bins, inverse);
                        for (int64_t k = 0; k < bins; ++k) {
                            const int64_t at = ((o * bins + k) * view.inner + i) * 2;
                            p[at] = T(spectrum[size_t(k)].real());
                            p[at + 1] = T(spectrum[size_t(k)].imag());
                        }
                    }
                return Status::ok();
            });
        }));
    };
}

KernelFactory stft() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const bool onesided = init.getInt("onesided", 1) != 0;
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            if (!x || x->rank() != 3 || (x->dims[2] != 1 && x->dims[2] != 2))
                return bad(ctx, "the signal must be [batch, length, 1] or [batch, length, 2]");
            auto step = scalarInt(ctx, 1, "frame_step");
            if (!step) return step.status();
            const RtTensor* window = ctx.input(2);
            int64_t frame = window && window->defined() ? window->numel() : 0;
            if (const RtTensor* given = ctx.input(3); given && given->numel()) frame = elementAsInt(*given, 0);
            if (frame < 1 || *step < 1) return bad(ctx, "frame_length and frame_step must be at least 1");
            if (window && window->defined() && window->numel() != frame) return bad(ctx, "the window's length is not frame_length");
            const SignalView view{x, x->dims[1], x->dims[0], 1, x->dims[2]};
            const int64_t frames = view.length >= frame ? (view.length - frame) / *step + 1 : 0;
            const int64_t bins = onesided ? frame / 2 + 1 : frame;
            auto out = ctx.output(0, x->dtype, {x->dims[0], frames, bins, 2});
            if (!out) return out.status();
            return dispatchFloat(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                T* p = (*out)->template as<T>();
                std::vector<Complex> samples(static_cast<size_t>(frame));
                for (int64_t b = 0; b < view.outer; ++b)
                    for (int64_t f = 0; f < frames; ++f) {
                        for (int64_t n = 0; n < frame; ++n) {
                            const double w = window && window->defined() ? elementAsDouble(*window, n) : 1.0;
                            samples[size_t(n)] = view.at(b, f * *step + n, 0) * w;
                        }
                        const std::vector<Complex> spectrum = transform(samples, frame, bins, false);
                        for (int64_t k = 0; k < bins; ++k) {
                            const int64_t at = ((b * frames + f) * bins + k) * 2;
                            p[at] = T(spectrum[size_t(k)].real());
                            p[at + 1] = T(spectrum[size_t(k)].imag());
                        }
                    }
                return Status::ok();
            });
        }));
    };
}

// Triangular filters spaced evenly on the mel scale, as ONNX's reference builds them: the
// edges in hertz are mapped to spectrogram bins with integer division, then each filter
// rises from its left edge to its centre and falls to its right edge.
KernelFactory melWeightMatrix() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const DType dtype = outputDtype(init);
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            auto mels = scalarInt(ctx, 0, "num_mel_bins");
            auto length = scalarInt(ctx, 1, "dft_length");
            auto rate = scalarInt(ctx, 2, "sample_rate");
            auto lower = scalarReal(ctx, 3, "lower_edge_hertz");
            auto upper = scalarReal(ctx, 4, "upper_edge_hertz");
            for (const Status& s : {mels.status(), length.status(), rate.status(), lower.status(), upper.status()})
                if (!s) return s;
            if (*mels < 1 || *length < 1 || *rate < 1) return bad(ctx, "num_mel_bins, dft_length and sample_rate must be positive");
            const int64_t spectrogramBins = *length / 2 + 1;
            auto toMel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
            const double low = toMel(*lower), step = (toMel(*upper) - low) / double(*mels + 2);
            std::vector<int64_t> edge(static_cast<size_t>(*mels + 2));
            for (int64_t i = 0; i < *mels + 2; ++i) {
                const double hz = 700.0 * (std::pow(10.0, (double(i) * step + low) / 2595.0) - 1.0);
                edge[size_t(i)] = int64_t(std::floor(double(*length + 1) * hz / double(*rate)));
            }
            std::vector<double> w(static_cast<size_t>(spectrogramBins * *mels), 0.0);
            auto set = [&](int64_t bin, int64_t mel, double v) {
                if (bin >= 0 && bin < spectrogramBins) w[size_t(bin * *mels + mel)] = v;
            };
            for (int64_t m = 0; m < *mels; ++m) {
                const int64_t left = edge[size_t(m)], centre = edge[size_t(m + 1)], right = edge[size_t(m + 2)];
                if (centre == left) set(centre, m, 1.0);
                else
                    for (int64_t j = left; j <= centre; ++j) set(j, m, double(j - left) / double(centre - left));
                for (int64_t j = centre; j < right; ++j) set(j, m, double(right - j) / double(right - centre));
            }
            return writeReals(ctx, dtype, {spectrogramBins, *mels}, w);
        }));
    };
}

// Determinant of each trailing square matrix: LU with partial pivoting in double.
Status det(KernelContext& ctx) {
    const RtTensor* x = ctx.input(0);
    if (!x || x->rank() < 2 || x->dims[x->rank() - 1] != x->dims[x->rank() - 2])
        return bad(ctx, "the input must end in square matrices [..., M, M]");
    const int64_t m = x->dims.back(), count = product(x->dims, 0, x->rank() - 2);
    std::vector<int64_t> dims(x->dims.begin(), x->dims.end() - 2);
    auto out = ctx.output(0, x->dtype, dims);
    if (!out) return out.status();
    return dispatchFloat(ctx, x->dtype, [&](auto tag) -> Status {
        using T = decltype(tag);
        T* p = (*out)->template as<T>();
        std::vector<double> a(static_cast<size_t>(m * m));
        for (int64_t b = 0; b < count; ++b) {
            for (int64_t i = 0; i < m * m; ++i) a[size_t(i)] = elementAsDouble(*x, b * m * m + i);
            double d = 1.0;
            for (int64_t c = 0; c < m && d != 0.0; ++c) {
                int64_t pivot = c;
                for (int64_t r = c + 1; r < m; ++r)
                    if (std::abs(a[size_t(r * m + c)]) > std::abs(a[size_t(pivot * m + c)])) pivot = r;
                if (a[size_t(pivot * m + c)] == 0.0) {
                    d = 0.0;
                    break;
                }
                if (pivot != c) {
                    for (int64_t k = 0; k < m; ++k) std::swap(a[size_t(c * m + k)], a[size_t(pivot * m + k)]);
                    d = -d;
                }
                d *= a[size_t(c * m + c)];
                for (int64_t r = c + 1; r < m; ++r) {
                    const double f = a[size_t(r * m + c)] / a[size_t(c * m + c)];
                    for (int64_t k = c; k < m; ++k) a[size_t(r * m + k)] -= f * a[size_t(c * m + k)];
                }
            }
            p[b] = T(d);
        }
        return Status::ok();
    });
}

// MaxPool's inverse: zeros of the pooled-from shape (or output_shape), each value written
// back where MaxPool's Indices output says it came from (flat indices into the output).
KernelFactory maxUnpool() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const std::vector<int64_t> kernel = init.getInts("kernel_shape"), strides = init.getInts("strides"),
                                   pads = init.getInts("pads");
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const RtTensor* indices = ctx.input(1);
            if (!x || !indices || x->rank() < 3 || indices->dims != x->dims) return bad(ctx, "needs X and indices of one shape [N, C, ...]");
            const size_t spatial = x->rank() - 2;
            if (kernel.size() != spatial) return bad(ctx, "kernel_shape does not match the input's spatial rank");
            std::vector<int64_t> dims = x->dims;
            for (size_t i = 0; i < spatial; ++i) {
                const int64_t stride = i < strides.size() ? strides[i] : 1;
                const int64_t padded = pads.size() == 2 * spatial ? pads[i] + pads[i + spatial] : 0;
                dims[i + 2] = (x->dims[i + 2] - 1) * stride + kernel[i] - padded;
            }
            // Indices count in the pooled-from shape; a larger output_shape places each value
            // at the same coordinates.
            const std::vector<int64_t> from = dims;
            if (const RtTensor* shape = ctx.input(2); shape && shape->numel()) {
                auto given = readInts(*shape, "output_shape");
                if (!given) return given.status().withContext(ctx.where());
                if (given->size() != dims.size()) return bad(ctx, "output_shape has the wrong rank");
                dims = *given;
            }
            auto out = ctx.output(0, x->dtype, dims);
            if (!out) return out.status();
            // Positions no index names are 0: the output may be reused memory.
            std::memset((*out)->data, 0, (*out)->bytes());
            const int64_t size = product(from);
            auto place = [&](int64_t flat) {
                if (dims == from) return flat;
                int64_t at = 0, stride = 1;
                for (size_t k = dims.size(); k-- > 0;) {
                    const int64_t coordinate = flat % from[k];
                    flat /= from[k];
                    if (coordinate >= dims[k]) return int64_t(-1);
                    at += coordinate * stride;
                    stride *= dims[k];
                }
                return at;
            };
            return dispatchBySize(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                T* p = (*out)->template as<T>();
                const T* in = x->template as<T>();
                for (int64_t j = 0; j < x->numel(); ++j) {
                    const int64_t at = elementAsInt(*indices, j);
                    if (at < 0 || at >= size) return bad(ctx, "index " + std::to_string(at) + " is outside the output");
                    if (const int64_t to = place(at); to >= 0) p[to] = in[j];
                }
                return Status::ok();
            });
        }));
    };
}

}  // namespace
}  // namespace fsc::cpu

namespace fsc {
using namespace cpu;

void registerSignalKernels(KernelRegistry& r) {
    r.add("HannWindow", cosineWindow(0.5, 0.5, 0.0));
    r.add("HammingWindow", cosineWindow(25.0 / 46.0, 21.0 / 46.0, 0.0));
    r.add("BlackmanWindow", cosineWindow(0.42, 0.5, 0.08));
    r.add("DFT", dft());
    r.add("STFT", stft());
    r.add("MelWeightMatrix", melWeightMatrix());
    r.add("Det", functionKernel(det));
    r.add("MaxUnpool", maxUnpool(), {.halfViaFloat = false});
}

}  // namespace fsc
