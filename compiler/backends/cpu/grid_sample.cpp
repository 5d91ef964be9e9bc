// GridSample (opset 16): samples a [N, C, H, W] image at the normalised (x, y) positions of
// a [N, Ho, Wo, 2] grid, as spatial transformers and optical-flow warps export it. Nearest,
// bilinear and bicubic (A = -0.75) sampling; zeros, border or reflection padding; the
// coordinate mapping of align_corners both ways, as ONNX's reference and PyTorch define them.
#include <cmath>

#include "compiler/backends/cpu/cpu_common.h"

namespace fsc::cpu {
namespace {

enum class Sampling { Nearest, Bilinear, Bicubic };
enum class Padding { Zeros, Border, Reflection };

// Folds x into [lo, hi] by reflecting at the edges, as often as it takes.
double reflect(double x, double lo, double hi) {
    const double range = hi - lo;
    if (range <= 0) return lo;
    if (x < lo) {
        const double d = lo - x;
        const int64_t n = int64_t(d / range);
        const double r = d - double(n) * range;
        return n % 2 == 0 ? lo + r : hi - r;
    }
    if (x > hi) {
        const double d = x - hi;
        const int64_t n = int64_t(d / range);
        const double r = d - double(n) * range;
        return n % 2 == 0 ? hi - r : lo + r;
    }
    return x;
}

struct Plane {
    const double* pixels;
    int64_t height, width;
    Padding padding;
    bool alignCorners;

    double lo() const { return alignCorners ? 0.0 : -0.5; }
    double hi(int64_t size) const { return alignCorners ? double(size - 1) : double(size) - 0.5; }

    // The pixel at integer (row, column), or what the padding puts outside the image.
    double at(int64_t row, int64_t column) const {
        switch (padding) {
            case Padding::Zeros:
                if (row < 0 || row >= height || column < 0 || column >= width) return 0.0;
                break;
            case Padding::Border:
                row = std::clamp<int64_t>(row, 0, height - 1);
                column = std::clamp<int64_t>(column, 0, width - 1);
                break;
            case Padding::Reflection:
                row = std::clamp<int64_t>(int64_t(reflect(double(row), lo(), hi(height))), 0, height - 1);
                column = std::clamp<int64_t>(int64_t(reflect(double(column), lo(), hi(width))), 0, width - 1);
                break;
        }
        return pixels[row * width + column];
    }
};

double denormalize(double n, int64_t size, bool alignCorners) {
    return alignCorners ? (n + 1) / 2.0 * double(size - 1) : ((n + 1) * double(size) - 1) / 2.0;
}

void cubicCoefficients(double t, double c[4]) {
    constexpr double a = -0.75;
    const double x = std::abs(t);
    c[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
    c[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
    c[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
    c[3] = ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a;
}

double sample(const Plane& p, Sampling sampling, double x, double y) {
    if (p.padding == Padding::Border) {
        x = std::clamp(x, 0.0, double(p.width - 1));
        y = std::clamp(y, 0.0, double(p.height - 1));
    } else if (p.padding == Padding::Reflection) {
        x = reflect(x, p.lo(), p.hi(p.width));
        y = reflect(y, p.lo(), p.hi(p.height));
    }
    if (sampling == Sampling::Nearest) return p.at(int64_t(std::nearbyint(y)), int64_t(std::nearbyint(x)));
    const double x0 = std::floor(x), y0 = std::floor(y);
    const int64_t c0 = int64_t(x0), r0 = int64_t(y0);
    if (sampling == Sampling::Bilinear) {
        const double dx = x - x0, dy = y - y0;
        return (1 - dy) * ((1 - dx) * p.at(r0, c0) + dx * p.at(r0, c0 + 1)) +
               dy * ((1 - dx) * p.at(r0 + 1, c0) + dx * p.at(r0 + 1, c0 + 1));
    }
    double cx[4], cy[4];
    cubicCoefficients(x - x0, cx);
    cubicCoefficients(y - y0, cy);
    double sum = 0;
    for (int i = 0; i < 4; ++i) {
        double row = 0;
        for (int j = 0; j < 4; ++j) row += cx[j] * p.at(r0 - 1 + i, c0 - 1 + j);
        sum += cy[i] * row;
    }
    return sum;
}

KernelFactory gridSample() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const std::string mode = init.getString("mode", "bilinear"), padding = init.getString("padding_mode", "zeros");
        const Sampling sampling = mode == "nearest" ? Sampling::Nearest : mode == "bicubic" ? Sampling::Bicubic : Sampling::Bilinear;
        const Padding pad = padding == "border" ? Padding::Border : padding == "reflection" ? Padding::Reflection : Padding::Zeros;
        const bool alignCorners = init.getInt("align_corners", 0) != 0;
        if ((mode != "nearest" && mode != "bilinear" && mode != "bicubic") ||
            (padding != "zeros" && padding != "border" && padding != "reflection"))
            return Status(ErrorCode::Unsupported, "GridSample: mode '" + mode + "' with padding '" + padding + "'");
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const RtTensor* grid = ctx.input(1);
            if (!x || !grid || x->rank() != 4 || grid->rank() != 4 || grid->dims[3] != 2 || grid->dims[0] != x->dims[0])
                return bad(ctx, "needs X [N, C, H, W] and a grid [N, Ho, Wo, 2]");
            const int64_t n = x->dims[0], c = x->dims[1], h = x->dims[2], w = x->dims[3];
            const int64_t ho = grid->dims[1], wo = grid->dims[2];
            auto out = ctx.output(0, x->dtype, {n, c, ho, wo});
            if (!out) return out.status();
            return dispatchFloat(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                T* y = (*out)->template as<T>();
                std::vector<double> plane(static_cast<size_t>(h * w));
                for (int64_t b = 0; b < n; ++b)
                    for (int64_t ch = 0; ch < c; ++ch) {
                        for (int64_t i = 0; i < h * w; ++i) plane[size_t(i)] = elementAsDouble(*x, (b * c + ch) * h * w + i);
                        const Plane p{plane.data(), h, w, pad, alignCorners};
                        for (int64_t i = 0; i < ho * wo; ++i) {
                            const int64_t g = (b * ho * wo + i) * 2;
                            const double gx = denormalize(elementAsDouble(*grid, g), w, alignCorners);
                            const double gy = denormalize(elementAsDouble(*grid, g + 1), h, alignCorners);
                            y[(b * c + ch) * ho * wo + i] = T(sample(p, sampling, gx, gy));
                        }
                    }
                return Status::ok();
            });
        }));
    };
}

}  // namespace
}  // namespace fsc::cpu

namespace fsc {

void registerGridSampleKernels(KernelRegistry& r) {
    r.add("GridSample", cpu::gridSample());
}

}  // namespace fsc
