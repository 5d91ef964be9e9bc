#include "compiler/backends/cuda/simulated_gpu.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace fsc {
namespace {

std::string hexAddress(const void* p) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%p", p);
    return buf;
}

// The butterfly a warp's __shfl_xor_sync reduction performs, lane by lane.
template <typename Combine>
void butterfly(float (&v)[dk::kLanes], Combine combine) {
    for (int offset = dk::kLanes / 2; offset > 0; offset /= 2) {
        float next[dk::kLanes];
        for (int l = 0; l < dk::kLanes; ++l) next[l] = combine(v[l], v[l ^ offset]);
        std::memcpy(v, next, sizeof v);
    }
}

float fmaxCombine(float a, float b) {
    return std::fmax(a, b);
}
float sumCombine(float a, float b) {
    return a + b;
}

void runSoftmaxRow(const dk::SoftmaxParams& p, int64_t row) {
    float part[dk::kLanes];
    for (int l = 0; l < dk::kLanes; ++l) part[l] = dk::softmaxLaneMax(p, row, l);
    butterfly(part, fmaxCombine);
    const float rowMax = part[0];
    for (int l = 0; l < dk::kLanes; ++l) part[l] = dk::softmaxLaneSum(p, row, l, rowMax);
    butterfly(part, sumCombine);
    const float rowSum = part[0];
    for (int l = 0; l < dk::kLanes; ++l) dk::softmaxLaneWrite(p, row, l, rowMax, rowSum);
}

void runNormRow(const dk::NormParams& p, int64_t row) {
    float part[dk::kLanes];
    for (int l = 0; l < dk::kLanes; ++l) part[l] = dk::normLaneSum(p, row, l);
    butterfly(part, sumCombine);
    const float mean = p.rms ? 0.f : part[0] / float(p.cols);
    float meanSquare = part[0] / float(p.cols);
    if (!p.rms) {
        for (int l = 0; l < dk::kLanes; ++l) part[l] = dk::normLaneSquares(p, row, l, mean);
        butterfly(part, sumCombine);
        meanSquare = part[0] / float(p.cols);
    }
    const float invStd = 1.f / std::sqrt(meanSquare + p.epsilon);
    for (int l = 0; l < dk::kLanes; ++l) dk::normLaneWrite(p, row, l, mean, invStd);
}

// A warp of the register route: each lane's N registers, the warp's reductions between.
template <int N>
void runAttentionSoftmaxRowInRegisters(const dk::AttentionSoftmaxParams& p, int64_t row) {
    float x[dk::kLanes][N];
    float part[dk::kLanes];
    for (int l = 0; l < dk::kLanes; ++l) part[l] = dk::attentionRegistersLoad<N>(p, row, l, x[l]);
    butterfly(part, fmaxCombine);
    const float rowMax = part[0];
    for (int l = 0; l < dk::kLanes; ++l) part[l] = dk::attentionRegistersExp<N>(p, l, x[l], rowMax);
    butterfly(part, sumCombine);
    const float rowSum = part[0];
    for (int l = 0; l < dk::kLanes; ++l) dk::attentionRegistersWrite<N>(p, row, l, x[l], rowSum);
}

// The route the GPU's launcher picks for the row's length (launchAttentionSoftmax).
void runAttentionSoftmaxRow(const dk::AttentionSoftmaxParams& p, int64_t row) {
    switch (dk::attentionRegistersPerLane(p.lk)) {
        case 4: return runAttentionSoftmaxRowInRegisters<4>(p, row);
        case 8: return runAttentionSoftmaxRowInRegisters<8>(p, row);
        case 16: return runAttentionSoftmaxRowInRegisters<16>(p, row);
        case 32: return runAttentionSoftmaxRowInRegisters<32>(p, row);
        default: break;
    }
    float part[dk::kLanes];
    for (int l = 0; l < dk::kLanes; ++l) part[l] = dk::attentionSoftmaxLaneMax(p, row, l);
    butterfly(part, fmaxCombine);
    const float rowMax = part[0];
    for (int l = 0; l < dk::kLanes; ++l) part[l] = dk::attentionSoftmaxLaneExp(p, row, l, rowMax);
    butterfly(part, sumCombine);
    const float rowSum = part[0];
    for (int l = 0; l < dk::kLanes; ++l) dk::attentionSoftmaxLaneWrite(p, row, l, rowSum);
}

// A warp's attention row: the lanes' stages in order, the scores in a scratch row as in
// the block's shared memory.
void runAttentionRow(const dk::AttentionParams& p, int64_t row, std::vector<float>& scores) {
    float part[dk::kLanes];
    for (int l = 0; l < dk::kLanes; ++l)
        part[l] = dk::attentionLaneScores(p, row, l, scores.data());
    butterfly(part, fmaxCombine);
    const float rowMax = part[0];
    for (int l = 0; l < dk::kLanes; ++l)
        part[l] = dk::attentionLaneExp(p, l, scores.data(), rowMax);
    butterfly(part, sumCombine);
    const float rowSum = part[0];
    for (int l = 0; l < dk::kLanes; ++l) dk::attentionLaneWrite(p, row, l, scores.data(), rowSum);
}

// Every thread of a grid-stride element kernel, in launch order.
template <typename Body>
void gridStride(const dk::LaunchGeometry& g, int64_t count, Body body) {
    const int64_t threads = g.grid * g.block;
    for (int64_t t = 0; t < threads; ++t)
        for (int64_t i = t; i < count; i += threads) body(i);
}

// Every warp of a row kernel.
template <typename Body>
void rowWarps(const dk::LaunchGeometry& g, int64_t rows, Body body) {
    const int warps = g.block / dk::kLanes;
    for (int64_t block = 0; block < g.grid; ++block)
        for (int w = 0; w < warps; ++w)
            if (const int64_t row = block * warps + w; row < rows) body(row);
}

}  // namespace

namespace {

// Each kind's CPU twin: the kernel's per-element (or per-row) code over the whole grid.
using G = dk::LaunchGeometry;
void twin(const dk::EwParams& p, const G& g) { gridStride(g, p.count, [&](int64_t i) { dk::elementwiseElement(p, i); }); }
void twin(const dk::BiasActParams& p, const G& g) {
    gridStride(g, dk::biasActSteps(p), [&](int64_t i) { dk::biasActElement(p, i); });
}
void twin(const dk::CopyParams& p, const G& g) { gridStride(g, p.count, [&](int64_t i) { dk::copyElement(p, i); }); }
void twin(const dk::SoftmaxParams& p, const G& g) { rowWarps(g, p.rows, [&](int64_t row) { runSoftmaxRow(p, row); }); }
void twin(const dk::NormParams& p, const G& g) { rowWarps(g, p.rows, [&](int64_t row) { runNormRow(p, row); }); }
void twin(const dk::GatherParams& p, const G& g) { gridStride(g, p.count, [&](int64_t i) { dk::gatherElement(p, i); }); }
void twin(const dk::WhereParams& p, const G& g) { gridStride(g, p.count, [&](int64_t i) { dk::whereElement(p, i); }); }
void twin(const dk::ReduceParams& p, const G& g) { gridStride(g, p.count, [&](int64_t i) { dk::reduceElement(p, i); }); }
void twin(const dk::PoolParams& p, const G& g) { gridStride(g, p.count, [&](int64_t i) { dk::poolElement(p, i); }); }
void twin(const dk::ChannelAffineParams& p, const G& g) {
    gridStride(g, p.count, [&](int64_t i) { dk::channelAffineElement(p, i); });
}
void twin(const dk::FillParams& p, const G& g) { gridStride(g, p.count, [&](int64_t i) { dk::fillElement(p, i); }); }
void twin(const dk::ResizeParams& p, const G& g) { gridStride(g, p.count, [&](int64_t i) { dk::resizeElement(p, i); }); }
void twin(const dk::QuantizeParams& p, const G& g) { gridStride(g, p.count, [&](int64_t i) { dk::quantizeElement(p, i); }); }
void twin(const dk::AttentionSoftmaxParams& p, const G& g) {
    rowWarps(g, p.rows, [&](int64_t row) { runAttentionSoftmaxRow(p, row); });
}
void twin(const dk::AttentionParams& p, const G& g) {
    std::vector<float> scores(size_t(std::max<int64_t>(p.lk, 1)));
    rowWarps(g, p.rows, [&](int64_t row) { runAttentionRow(p, row, scores); });
}

}  // namespace

void runCpuTwin(const DeviceLaunch& l) {
    std::visit([&](const auto& p) { twin(p, l.geometry); }, l.params);
}

// int8 x int8 summed exactly in int32 (wrapping as the GPU's does on overflow).
void referenceIntegerGemm(const GemmCall& c) {
    const auto* a = static_cast<const int8_t*>(c.a);
    const auto* b = static_cast<const int8_t*>(c.b);
    auto* y = static_cast<int32_t*>(c.c);
    for (int64_t bi = 0; bi < c.batch; ++bi)
        for (int64_t r = 0; r < c.m; ++r)
            for (int64_t col = 0; col < c.n; ++col) {
                uint32_t acc = 0;
                for (int64_t kk = 0; kk < c.k; ++kk)
                    acc += uint32_t(int32_t(a[bi * c.strideA + r * c.lda + kk]) *
                                    int32_t(b[bi * c.strideB + col * c.ldb + kk]));
                y[bi * c.strideC + r * c.ldc + col] = int32_t(acc);
            }
}

void referenceGemm(const GemmCall& c) {
    if (c.type == dk::ElemType::I8) return referenceIntegerGemm(c);
    const dk::ElemType cType = c.floatOutput ? dk::ElemType::F32 : c.type;
    const bool tf32 = c.tf32 && c.type == dk::ElemType::F32;
    for (int64_t bi = 0; bi < c.batch; ++bi) {
        const int64_t ao = bi * c.strideA, bo = bi * c.strideB, co = bi * c.strideC;
        for (int64_t r = 0; r < c.m; ++r)
            for (int64_t col = 0; col < c.n; ++col) {
                float acc = 0.f;
                for (int64_t kk = 0; kk < c.k; ++kk) {
                    const float x = dk::loadFloat(
                        c.a, c.type, ao + (c.transA ? kk * c.lda + r : r * c.lda + kk));
                    const float y = dk::loadFloat(
                        c.b, c.type, bo + (c.transB ? col * c.ldb + kk : kk * c.ldb + col));
                    acc += tf32 ? roundToTf32(x) * roundToTf32(y) : x * y;
                }
                const int64_t ci = co + r * c.ldc + col;
                // beta == 0 never reads C (cuBLASLt's rule: C may hold NaNs then).
                float v =
                    c.alpha * acc + (c.beta != 0.f ? c.beta * dk::loadFloat(c.c, cType, ci) : 0.f);
                if (c.bias) v += dk::loadFloat(c.bias, c.type, col);
                dk::storeFloat(c.c, cType, ci,
                               dk::applyActivation(c.act, c.actAlpha, c.actBeta, v));
            }
    }
}

void referenceConvolution(const ConvCall& c) {
    const bool tf32 = c.tf32 && c.type == dk::ElemType::F32;
    const int64_t cg = c.c / c.group, kg = c.k / c.group;
    int64_t inPlane = 1, outPlane = 1, taps = 1;
    for (int d = 0; d < c.spatial; ++d) {
        inPlane *= c.inDims[d];
        outPlane *= c.outDims[d];
        taps *= c.kernel[d];
    }
    for (int64_t n = 0; n < c.n; ++n)
        for (int64_t k = 0; k < c.k; ++k) {
            const int64_t g = k / kg;
            for (int64_t o = 0; o < outPlane; ++o) {
                int64_t pos[3] = {0, 0, 0}, rest = o;
                for (int d = c.spatial - 1; d >= 0; --d) {
                    pos[d] = rest % c.outDims[d];
                    rest /= c.outDims[d];
                }
                float acc = 0.f;
                for (int64_t ci = 0; ci < cg; ++ci)
                    for (int64_t t = 0; t < taps; ++t) {
                        int64_t tap[3] = {0, 0, 0}, r = t, off = 0;
                        for (int d = c.spatial - 1; d >= 0; --d) {
                            tap[d] = r % c.kernel[d];
                            r /= c.kernel[d];
                        }
                        bool inside = true;
                        for (int d = 0; d < c.spatial; ++d) {
                            const int64_t x =
                                pos[d] * c.strides[d] - c.pads[d] + tap[d] * c.dilations[d];
                            inside = inside && x >= 0 && x < c.inDims[d];
                            off = off * c.inDims[d] + x;
                        }
                        if (!inside) continue;
                        const int64_t channel = g * cg + ci;
                        const int64_t xi = c.channelsLast && c.inputChannelsLast ? (n * inPlane + off) * c.c + channel
                                                          : (n * c.c + channel) * inPlane + off;
                        const int64_t wi = c.filterChannelsLast ? (k * taps + t) * cg + ci : (k * cg + ci) * taps + t;
                        const float x = dk::loadFloat(c.x, c.type, xi), w = dk::loadFloat(c.w, c.type, wi);
                        acc += tf32 ? roundToTf32(x) * roundToTf32(w) : x * w;
                    }
                dk::storeFloat(c.y, c.type, c.channelsLast ? (n * outPlane + o) * c.k + k : (n * c.k + k) * outPlane + o,
                               acc);
            }
        }
    if (c.hasEpilogue()) {  // the same per-element code as the BiasActivation kernel
        const DeviceLaunch epilogue = convEpilogueLaunch(c);
        const auto& p = std::get<dk::BiasActParams>(epilogue.params);
        for (int64_t i = 0; i < dk::biasActSteps(p); ++i) dk::biasActElement(p, i);
    }
}

namespace {

// The graph node a replay is running now, so its operations report it (as CUPTI's records
// carry graphNodeId); 0 outside replays.
thread_local uint64_t t_replayingNode = 0;

int64_t steadyNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

DeviceOperation operation(DeviceOpKind kind, std::string name, uint64_t bytes = 0) {
    DeviceOperation op;
    op.kind = kind;
    op.name = std::move(name);
    op.bytes = bytes;
    return op;
}

}  // namespace

SimulatedGpu::SimulatedGpu(uint64_t capacityBytes) : m_capacity(capacityBytes) {}

void SimulatedGpu::setObserver(DeviceObserver* observer) {
    m_observer.store(observer);
}

Status SimulatedGpu::observed(DeviceOperation what, const Op& op) {
    DeviceObserver* observer = m_observer.load();
    if (!observer) return op();
    what.graphNode = t_replayingNode;
    what.startNs = steadyNs();
    Status status = op();
    what.endNs = steadyNs();
    if (status.isOk()) observer->onOperation(what);
    return status;
}

Result<void*> SimulatedGpu::workspace(size_t bytes) {
    {
        std::lock_guard lock(m_mutex);
        if (!m_workspaces.empty() && m_workspaceBytes >= bytes) return m_workspaces.back();
    }
    auto grown = allocate(bytes);  // refused while capturing, as cudaMalloc would be
    if (!grown) return grown.status().withContext("growing the kernels' workspace");
    std::lock_guard lock(m_mutex);
    m_workspaces.push_back(*grown);
    m_workspaceBytes = bytes;
    return *grown;
}

SimulatedGpu::~SimulatedGpu() {
    for (auto& [start, bytes] : m_live) std::free(reinterpret_cast<void*>(start));
}

DeviceMemoryInfo SimulatedGpu::memory() const {
    std::lock_guard lock(m_mutex);
    return {m_capacity - m_used, m_capacity, m_peak};
}

Result<void*> SimulatedGpu::allocate(size_t bytes) {
    std::lock_guard lock(m_mutex);
    if (m_capturing)
        return Status(ErrorCode::Internal, "device allocation while capturing a CUDA graph");
    const size_t rounded =
        std::max<size_t>(256, (bytes + 255) / 256 * 256);  // cudaMalloc's alignment
    if (m_used + rounded > m_capacity)
        return Status(ErrorCode::Unsupported, "out of device memory: asked for " +
                                                  std::to_string(bytes) + " bytes, " +
                                                  std::to_string(m_capacity - m_used) + " free");
    void* p = std::aligned_alloc(256, rounded);
    if (!p)
        return Status(ErrorCode::Unsupported, "out of host memory simulating a " +
                                                  std::to_string(bytes) + "-byte allocation");
    // Fresh device memory holds garbage: a kernel that reads before writing shows up as NaNs.
    std::memset(p, 0xff, rounded);
    m_live[reinterpret_cast<uintptr_t>(p)] = bytes;
    m_used += rounded;
    m_peak = std::max(m_peak, m_used);
    ++m_counters.allocations;
    if (DeviceObserver* observer = m_observer.load()) {
        DeviceOperation op = operation(DeviceOpKind::Allocation, "", bytes);
        op.address = reinterpret_cast<uintptr_t>(p);
        op.startNs = op.endNs = steadyNs();
        observer->onOperation(op);
    }
    return p;
}

void SimulatedGpu::release(void* ptr) {
    if (!ptr) return;
    std::lock_guard lock(m_mutex);
    auto it = m_live.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == m_live.end()) return;
    if (DeviceObserver* observer = m_observer.load()) {
        DeviceOperation op = operation(DeviceOpKind::Release, "", it->second);
        op.address = it->first;
        op.startNs = op.endNs = steadyNs();
        observer->onOperation(op);
    }
    m_used -= std::max<size_t>(256, (it->second + 255) / 256 * 256);
    m_live.erase(it);
    std::free(ptr);
}

bool SimulatedGpu::contains(const void* ptr, size_t bytes, std::string* why) const {
    std::lock_guard lock(m_mutex);
    const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
    auto it = m_live.upper_bound(p);
    if (it == m_live.begin()) {
        if (why) *why = hexAddress(ptr) + " is not device memory";
        return false;
    }
    --it;
    if (p >= it->first + std::max<size_t>(it->second, 1)) {
        if (why) *why = hexAddress(ptr) + " is not inside a live allocation";
        return false;
    }
    if (p + bytes > it->first + it->second) {
        if (why)
            *why = std::to_string(bytes) + " bytes at offset " + std::to_string(p - it->first) +
                   " overrun a " + std::to_string(it->second) + "-byte allocation";
        return false;
    }
    return true;
}

Status SimulatedGpu::checkExtents(const std::vector<DeviceExtent>& extents,
                                  const char* kernel) const {
    for (const DeviceExtent& e : extents) {
        if (e.bytes == 0) continue;
        std::string why;
        if (!contains(e.ptr, e.bytes, &why))
            return Status(ErrorCode::Internal, std::string(kernel) + ": " + e.what + ": " + why);
    }
    return Status::ok();
}

Status SimulatedGpu::run(Op op) {
    uint64_t node = 0;
    {
        std::lock_guard lock(m_mutex);
        if (m_capturing) {
            node = m_nextGraphNode++;
            m_recording.push_back([node, op = std::move(op)] {
                t_replayingNode = node;
                Status status = op();
                t_replayingNode = 0;
                return status;
            });
        }
    }
    if (!node) return op();
    if (DeviceObserver* observer = m_observer.load()) {
        DeviceOperation made;
        made.kind = DeviceOpKind::GraphNode;
        made.graphNode = node;
        observer->onOperation(made);
    }
    return Status::ok();
}

Status SimulatedGpu::copyToDevice(void* dst, const void* src, size_t bytes) {
    if (m_capturing)
        return Status(ErrorCode::Internal, "host-to-device copy while capturing a CUDA graph");
    std::string why;
    if (bytes && !contains(dst, bytes, &why))
        return Status(ErrorCode::Internal, "copy to device: " + why);
    return observed(operation(DeviceOpKind::Memcpy, "HtoD", bytes), [&]() -> Status {
        std::memcpy(dst, src, bytes);
        std::lock_guard lock(m_mutex);
        m_counters.hostToDeviceBytes += int64_t(bytes);
        return Status::ok();
    });
}

Status SimulatedGpu::copyToHost(void* dst, const void* src, size_t bytes) {
    if (m_capturing)
        return Status(ErrorCode::Internal, "device-to-host copy while capturing a CUDA graph");
    std::string why;
    if (bytes && !contains(src, bytes, &why))
        return Status(ErrorCode::Internal, "copy to host: " + why);
    return observed(operation(DeviceOpKind::Memcpy, "DtoH", bytes), [&]() -> Status {
        std::memcpy(dst, src, bytes);
        std::lock_guard lock(m_mutex);
        m_counters.deviceToHostBytes += int64_t(bytes);
        return Status::ok();
    });
}

Status SimulatedGpu::copyOnDevice(void* dst, const void* src, size_t bytes) {
    return run([=, this]() -> Status {
        std::string why;
        if (bytes && (!contains(src, bytes, &why) || !contains(dst, bytes, &why)))
            return Status(ErrorCode::Internal, "device-to-device copy: " + why);
        return observed(operation(DeviceOpKind::Memcpy, "DtoD", bytes), [&]() -> Status {
            std::memmove(dst, src, bytes);
            std::lock_guard lock(m_mutex);
            m_counters.deviceToDeviceBytes += int64_t(bytes);
            return Status::ok();
        });
    });
}

Status SimulatedGpu::fill(void* dst, int byte, size_t bytes) {
    return run([=, this]() -> Status {
        std::string why;
        if (bytes && !contains(dst, bytes, &why))
            return Status(ErrorCode::Internal, "memset: " + why);
        return observed(operation(DeviceOpKind::Memset, "memset", bytes), [&]() -> Status {
            std::memset(dst, byte, bytes);
            return Status::ok();
        });
    });
}

Status SimulatedGpu::launch(const DeviceLaunch& l) {
    if (l.geometry.grid < 1 || l.geometry.block < 1 || l.geometry.block > 1024 ||
        l.geometry.grid > 2147483647)
        return Status(ErrorCode::Internal,
                      std::string(l.name()) + ": launch geometry out of range");
    return run([l, this]() -> Status {
        FSC_RETURN_IF_ERROR(checkExtents(l.extents, l.name()));
        DeviceOperation what = operation(DeviceOpKind::Kernel, l.name());
        what.grid = l.geometry.grid, what.block = l.geometry.block;
        return observed(what, [&]() -> Status {
            runCpuTwin(l);
            std::lock_guard lock(m_mutex);
            ++m_counters.launches;
            return Status::ok();
        });
    });
}

// The PTX must hold the entry the launch names (what cudaLibraryGetKernel looks up); the
// program then runs as the element-wise kernel's CPU twin.
Status SimulatedGpu::launchGenerated(const GeneratedLaunch& g) {
    if (!g.ptx || g.ptx->find(".entry " + g.name + "(") == std::string::npos)
        return Status(ErrorCode::Internal,
                      "generated kernel " + g.name + ": the PTX has no such entry");
    if (g.params.inputs < 1 || g.params.inputs > dk::kEwMaxInputs)
        return Status(ErrorCode::Internal, "generated kernel " + g.name + ": " +
                                               std::to_string(g.params.inputs) + " inputs");
    DeviceLaunch twin;
    twin.geometry = g.geometry;
    twin.set<dk::EwParams>() = g.params;
    twin.extents = g.extents;
    if (twin.geometry.grid < 1 || twin.geometry.block < 1 || twin.geometry.block > 1024)
        return Status(ErrorCode::Internal, g.name + ": launch geometry out of range");
    return run([twin, name = g.name, this]() -> Status {
        FSC_RETURN_IF_ERROR(checkExtents(twin.extents, name.c_str()));
        DeviceOperation what = operation(DeviceOpKind::Kernel, name);
        what.grid = twin.geometry.grid, what.block = twin.geometry.block;
        return observed(what, [&]() -> Status {
            runCpuTwin(twin);
            std::lock_guard lock(m_mutex);
            ++m_counters.launches;
            ++m_counters.generatedLaunches;
            return Status::ok();
        });
    });
}

Status SimulatedGpu::gemm(const GemmCall& call) {
    FSC_RETURN_IF_ERROR(checkGemmCall(call));
    return run([call, this]() -> Status {
        FSC_RETURN_IF_ERROR(checkExtents(gemmExtents(call), "cublasLtMatmul"));
        return observed(operation(DeviceOpKind::Kernel, "cublasLt gemm (simulated)"),
                        [&]() -> Status {
                            referenceGemm(call);
                            std::lock_guard lock(m_mutex);
                            ++m_counters.gemms;
                            return Status::ok();
                        });
    });
}

Status SimulatedGpu::convolution(const ConvCall& call) {
    FSC_RETURN_IF_ERROR(checkConvCall(call));
    return run([call, this]() -> Status {
        FSC_RETURN_IF_ERROR(checkExtents(convExtents(call), "cudnnConvolutionForward"));
        return observed(operation(DeviceOpKind::Kernel, "cudnn convolution (simulated)"),
                        [&]() -> Status {
                            referenceConvolution(call);
                            std::lock_guard lock(m_mutex);
                            ++m_counters.convolutions;
                            return Status::ok();
                        });
    });
}

Status SimulatedGpu::fusedAttention(const FusedAttentionCall& call) {
    if (!m_fusedAttention) return Status(ErrorCode::Unsupported, "fused attention is off on this simulated device");
    FSC_RETURN_IF_ERROR(checkFusedAttentionCall(call));
    return run([call, this]() -> Status {
        FSC_RETURN_IF_ERROR(checkExtents(fusedAttentionExtents(call), "cudnn fused attention"));
        return observed(operation(DeviceOpKind::Kernel, "cudnn fused attention (simulated)"), [&]() -> Status {
            referenceFusedAttention(call);
            std::lock_guard lock(m_mutex);
            ++m_counters.fusedAttentions;
            return Status::ok();
        });
    });
}

Status SimulatedGpu::beginCapture() {
    std::lock_guard lock(m_mutex);
    if (m_capturing) return Status(ErrorCode::Internal, "a CUDA graph capture is already running");
    m_capturing = true;
    m_recording.clear();
    return Status::ok();
}

Result<int> SimulatedGpu::endCapture() {
    std::lock_guard lock(m_mutex);
    if (!m_capturing) return Status(ErrorCode::Internal, "no CUDA graph capture to end");
    m_capturing = false;
    const int id = m_nextGraph++;
    m_graphs[id] = std::move(m_recording);
    m_recording.clear();
    return id;
}

Status SimulatedGpu::replay(int graph) {
    std::vector<Op>* ops = nullptr;
    {
        std::lock_guard lock(m_mutex);
        auto it = m_graphs.find(graph);
        if (it == m_graphs.end())
            return Status(ErrorCode::Internal, "no CUDA graph " + std::to_string(graph));
        ops = &it->second;
        ++m_counters.replays;
    }
    for (Op& op : *ops) FSC_RETURN_IF_ERROR(op());
    return Status::ok();
}

void SimulatedGpu::dropGraph(int graph) {
    std::lock_guard lock(m_mutex);
    m_graphs.erase(graph);
}

DeviceCounters SimulatedGpu::counters() const {
    std::lock_guard lock(m_mutex);
    return m_counters;
}

size_t SimulatedGpu::liveAllocations() const {
    std::lock_guard lock(m_mutex);
    return m_live.size();
}

std::shared_ptr<CudaDevice> makeSimulatedGpu(uint64_t capacityBytes) {
    return std::make_shared<SimulatedGpu>(capacityBytes);
}

}  // namespace fsc
