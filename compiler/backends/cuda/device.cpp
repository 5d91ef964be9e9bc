// What the real and the simulated device share: kernel names and the checks on a GEMM's
// description. Built into the CUDA device plugin too.
#include "compiler/backends/cuda/device.h"

#include <cstring>

#include <algorithm>

namespace fsc {

const char* DeviceLaunch::name() const {
    return std::visit([](const auto& p) { return std::decay_t<decltype(p)>::kName; }, params);
}

Status checkGemmCall(const GemmCall& c) {
    auto bad = [&](const std::string& why) {
        return Status(ErrorCode::Internal, "GEMM " + std::to_string(c.m) + "x" +
                                               std::to_string(c.n) + "x" + std::to_string(c.k) +
                                               ": " + why);
    };
    if (c.m < 0 || c.n < 0 || c.k < 0 || c.batch < 1) return bad("negative size or empty batch");
    if (c.type == dk::ElemType::I8) {
        if (c.bias || c.act != dk::Act::None || c.alpha != 1.f || c.beta != 0.f)
            return bad("an int8 GEMM has no epilogue, alpha 1 and beta 0");
        if (c.transA || !c.transB)
            return bad("an int8 GEMM wants A as m x k and B as n x k (cuBLASLt's TN form)");
        if (c.n % 4 || c.k % 4 || c.lda % 4 || c.ldb % 4 || c.ldc % 4)
            return bad("an int8 GEMM wants n, k and the leading dimensions to be multiples of 4");
    } else if (c.type != dk::ElemType::F32 && c.type != dk::ElemType::F16 &&
               c.type != dk::ElemType::BF16) {
        return bad("element type is not float32, float16, bfloat16 or int8");
    }
    if (c.floatOutput && (c.type == dk::ElemType::I8 || c.bias || c.act != dk::Act::None))
        return bad("a float32 C is for float GEMMs without an epilogue");
    if (c.lda < std::max<int64_t>(1, c.transA ? c.m : c.k))
        return bad("lda " + std::to_string(c.lda) + " is too small");
    if (c.ldb < std::max<int64_t>(1, c.transB ? c.k : c.n))
        return bad("ldb " + std::to_string(c.ldb) + " is too small");
    if (c.ldc < std::max<int64_t>(1, c.n))
        return bad("ldc " + std::to_string(c.ldc) + " is too small");
    if (c.strideA < 0 || c.strideB < 0 || c.strideC < 0) return bad("negative batch stride");
    // Batches of C follow one another, or sit side by side within each row (the heads of
    // a [batch, rows, heads, cols] output).
    const bool stacked = c.strideC >= c.m * c.ldc,
               interleaved = c.strideC >= c.n && c.ldc >= c.batch * c.strideC;
    if (c.batch > 1 && !stacked && !interleaved) return bad("batches of C overlap");
    return Status::ok();
}

std::vector<DeviceExtent> gemmExtents(const GemmCall& c) {
    const size_t e = size_t(dk::elemBytes(c.type));
    auto span = [&](int64_t rows, int64_t cols, int64_t ld, int64_t stride) -> size_t {
        if (rows == 0 || cols == 0) return 0;
        return size_t((c.batch - 1) * stride + (rows - 1) * ld + cols) * e;
    };
    std::vector<DeviceExtent> x;
    if (c.m && c.n && c.k) {
        x.push_back(
            {c.a, span(c.transA ? c.k : c.m, c.transA ? c.m : c.k, c.lda, c.strideA), false, "A"});
        x.push_back(
            {c.b, span(c.transB ? c.n : c.k, c.transB ? c.k : c.n, c.ldb, c.strideB), false, "B"});
    }
    const size_t cBytes = c.type == dk::ElemType::I8 || c.floatOutput ? 4 : e;  // int32 or float32
    x.push_back({c.c, span(c.m, c.n, c.ldc, c.strideC) / e * cBytes, true, "C"});
    if (c.bias) x.push_back({c.bias, size_t(c.n) * e, false, "bias"});
    return x;
}

Status checkConvCall(const ConvCall& c) {
    auto bad = [&](const std::string& why) {
        return Status(ErrorCode::Internal, "convolution: " + why);
    };
    if (c.spatial < 1 || c.spatial > 3) return bad("1 to 3 spatial dims");
    if (c.filterChannelsLast && c.spatial != 2) return bad("a KRSC filter needs 2 spatial dims");
    if (c.type != dk::ElemType::F32 && c.type != dk::ElemType::F16 && c.type != dk::ElemType::BF16)
        return bad("element type is not float32, float16 or bfloat16");
    if (c.n < 1 || c.c < 1 || c.k < 1 || c.group < 1 || c.c % c.group || c.k % c.group)
        return bad("channels " + std::to_string(c.c) + " -> " + std::to_string(c.k) +
                   " do not divide into " + std::to_string(c.group) + " groups");
    for (int d = 0; d < c.spatial; ++d) {
        if (c.inDims[d] < 1 || c.kernel[d] < 1 || c.strides[d] < 1 || c.dilations[d] < 1 ||
            c.pads[d] < 0)
            return bad("sizes, strides and dilations must be positive");
        const int64_t span = c.inDims[d] + 2 * c.pads[d] - (c.kernel[d] - 1) * c.dilations[d] - 1;
        if (span < 0 || c.outDims[d] != span / c.strides[d] + 1)
            return bad("output size " + std::to_string(c.outDims[d]) +
                       " does not follow from the input, kernel and pads");
    }
    return Status::ok();
}

size_t convOutputBytes(const ConvCall& c) {
    int64_t out = c.n * c.k;
    for (int d = 0; d < c.spatial; ++d) out *= c.outDims[d];
    return size_t(out) * size_t(dk::elemBytes(c.type));
}

std::vector<DeviceExtent> convExtents(const ConvCall& c) {
    const size_t e = size_t(dk::elemBytes(c.type)), out = convOutputBytes(c);
    int64_t in = c.n * c.c, w = c.k * (c.c / std::max<int64_t>(c.group, 1));
    for (int d = 0; d < c.spatial; ++d) {
        in *= c.inDims[d];
        w *= c.kernel[d];
    }
    std::vector<DeviceExtent> extents{{c.x, size_t(in) * e, false, "X"}, {c.w, size_t(w) * e, false, "W"}, {c.y, out, true, "Y"}};
    if (c.bias) extents.push_back({c.bias, size_t(c.k) * e, false, "bias"});
    if (c.z) extents.push_back({c.z, out, false, "Z"});
    return extents;
}

DeviceLaunch convEpilogueLaunch(const ConvCall& c) {
    int64_t plane = 1;
    for (int d = 0; d < c.spatial; ++d) plane *= c.outDims[d];
    DeviceLaunch l;
        dk::BiasActParams& p = l.set<dk::BiasActParams>();
    p.in = c.y;
    p.out = c.y;
    p.bias = c.bias;
    p.residual = c.z;
    p.type = c.type;
    p.act = c.act;
    p.alpha = c.actAlpha;
    p.beta = c.actBeta;
    // The bias index is (element / biasInner) % k: channels innermost in NHWC, planes in NCHW.
    p.biasInner = c.channelsLast ? 1 : plane;
    p.cols = c.k;
    p.count = c.n * c.k * plane;
    const auto all = convExtents(c);
    l.extents = {{c.y, all[2].bytes, false, "input"}, {c.y, all[2].bytes, true, "output"}};
    for (size_t i = 3; i < all.size(); ++i) l.extents.push_back(all[i]);
    p.vector = dk::biasActVector(p);
    l.geometry = dk::elementGeometry(dk::biasActSteps(p));
    return l;
}

float roundToTf32(float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    if ((bits & 0x7f800000u) == 0x7f800000u) return v;  // inf and NaN as they are
    bits = (bits + 0x1000u) & ~0x1fffu;  // add half of the dropped 13 bits' unit, then drop them
    std::memcpy(&v, &bits, sizeof v);
    return v;
}

}  // namespace fsc
