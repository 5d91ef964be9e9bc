// com.microsoft.QLinearSoftmax (X, X_scale, x_zero_point, y_scale, y_zero_point; attributes
// axis and opset), as ONNX Runtime's quantizer writes a Softmax in its operator form. The
// arithmetic is ONNX Runtime's, so that the two give the same bytes: softmax does not change
// when every input moves by the same amount, so X's zero point drops out and the row's largest
// byte is moved to the top of a table of 256 exponentials, e^((b - 255 + shift) x_scale), where
// `shift` keeps a row's sum of up to D terms below float's largest value. The sum runs in float
// in the row's order, and each output is round(e * floor(1 / y_scale) / sum) + y_zero_point.
// One difference: ONNX Runtime wraps an int8 output of 128 (a row whose largest value takes
// all the weight, with y_zero_point -128) round to -128; it saturates to 127 here.
// opset < 13 normalizes over the flattened dims from `axis` on (default 1), opset 13 and later
// over the one dim `axis` (default -1), as the two versions of Softmax do.
#include <algorithm>
#include <cmath>
#include <limits>

#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/runtime/execution_plan.h"
#include "compiler/runtime/thread_pool.h"

namespace fsc::cpu {
namespace {

struct SoftmaxLayout {
    int64_t outer = 1;   // rows before the normalized dims
    int64_t length = 1;  // D: the terms of one sum
    int64_t stride = 1;  // the distance between a row's terms
};

// entry[b] for b in [0, 255]: the exponential of a byte b - 255 below the row's largest.
void buildExponentials(float xScale, int64_t length, float* entry) {
    const float largest = std::numeric_limits<float>::max() / float(length);
    const double shift = std::max(0.0, std::log(double(largest)) - 5.0) / double(xScale);
    for (int b = 0; b < 256; ++b) entry[b] = float(std::exp((double(b) - 255.0 + shift) * double(xScale)));
}

// One row of `length` bytes `stride` apart. `Byte` is uint8_t or int8_t.
template <typename Byte>
void softmaxRow(const Byte* x, Byte* y, const SoftmaxLayout& at, const float* entry, float yInverse, int yZero) {
    Byte top = x[0];
    for (int64_t i = 1; i < at.length; ++i) top = std::max(top, x[i * at.stride]);
    const float* shifted = entry + 255 - int(top);  // shifted[b] = entry[b - top + 255]
    float sum = 0.f;
    for (int64_t i = 0; i < at.length; ++i) sum += shifted[int(x[i * at.stride])];
    constexpr int lowest = std::numeric_limits<Byte>::min(), highest = std::numeric_limits<Byte>::max();
    for (int64_t i = 0; i < at.length; ++i) {
        const int q = int(std::nearbyint(shifted[int(x[i * at.stride])] * yInverse / sum)) + yZero;
        y[i * at.stride] = Byte(std::clamp(q, lowest, highest));
    }
}

template <typename Byte>
void softmaxAll(KernelContext& ctx, const RtTensor& x, RtTensor& y, const SoftmaxLayout& at, const float* entry,
                float yInverse, int yZero) {
    const Byte* in = x.as<Byte>();
    Byte* out = y.as<Byte>();
    const int64_t rows = at.outer * at.stride;  // every (outer, inner) pair is one row
    const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, at.length));
    ctx.pool().parallelFor(rows, grain, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
            const int64_t start = (r / at.stride) * at.length * at.stride + r % at.stride;
            softmaxRow(in + start, out + start, at, entry, yInverse, yZero);
        }
    });
}

Status qlinearSoftmax(KernelContext& ctx, int64_t axisAttribute, bool legacy) {
    const RtTensor *x = ctx.input(0), *xScale = ctx.input(1), *yScale = ctx.input(3), *yZero = ctx.input(4);
    if (!x || !xScale || !yScale) return bad(ctx, "needs X, X_scale and y_scale");
    if (x->dtype != DType::UInt8 && x->dtype != DType::Int8) return unsupportedType(ctx, x->dtype);
    if (xScale->numel() != 1 || yScale->numel() != 1) return bad(ctx, "scales must be scalars");
    if (yZero && (yZero->numel() != 1 || yZero->dtype != x->dtype))
        return bad(ctx, "y_zero_point must be a scalar of X's type");
    const int64_t rank = int64_t(x->dims.size());
    if (rank == 0) return bad(ctx, "X must have at least one dimension");
    const int64_t axis = axisAttribute < 0 ? axisAttribute + rank : axisAttribute;
    if (axis < 0 || axis >= rank) return bad(ctx, "axis " + std::to_string(axisAttribute) + " is outside X's rank");
    auto y = ctx.output(0, x->dtype, x->dims);
    if (!y) return y.status();
    if (x->numel() == 0) return Status::ok();

    SoftmaxLayout at;
    for (int64_t d = 0; d < axis; ++d) at.outer *= x->dims[size_t(d)];
    if (legacy) {
        at.length = x->numel() / at.outer;
    } else {
        at.length = x->dims[size_t(axis)];
        for (int64_t d = axis + 1; d < rank; ++d) at.stride *= x->dims[size_t(d)];
    }
    const float xs = float(elementAsDouble(*xScale, 0)), ys = float(elementAsDouble(*yScale, 0));
    if (!(xs > 0.f) || !(ys > 0.f)) return bad(ctx, "scales must be positive");
    float entry[256];
    buildExponentials(xs, at.length, entry);
    const float yInverse = std::floor(1.f / ys);
    const int zero = yZero ? int(elementAsDouble(*yZero, 0)) : 0;
    if (x->dtype == DType::UInt8) softmaxAll<uint8_t>(ctx, *x, **y, at, entry, yInverse, zero);
    else softmaxAll<int8_t>(ctx, *x, **y, at, entry, yInverse, zero);
    return Status::ok();
}

}  // namespace
}  // namespace fsc::cpu

namespace fsc {

void registerQLinearSoftmaxKernel(KernelRegistry& r) {
    KernelDef def;
    def.domain = "com.microsoft";
    def.op = "QLinearSoftmax";
    def.factory = [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        // ONNX Runtime requires `opset`; without it the node follows the model's ai.onnx opset.
        const int64_t modelOpset = init.lowering() ? init.lowering()->opsetFor("") : -1;
        const int64_t opset = init.getInt("opset", modelOpset > 0 ? modelOpset : 13);
        const bool legacy = opset < 13;
        const int64_t axis = init.getInt("axis", legacy ? 1 : -1);
        return std::unique_ptr<Kernel>(
            new FunctionKernel([axis, legacy](KernelContext& ctx) { return cpu::qlinearSoftmax(ctx, axis, legacy); }));
    };
    r.add(std::move(def));
}

}  // namespace fsc
