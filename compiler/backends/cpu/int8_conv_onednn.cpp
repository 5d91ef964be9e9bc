#include "compiler/backends/cpu/int8_conv_onednn.h"

#include <atomic>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "compiler/backends/cpu/onednn_isa.h"
#include "compiler/backends/cpu/onednn_support.h"

namespace fsc::cpu {

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

std::atomic<bool> g_everywhere{false};
std::atomic<uint64_t> g_runs{0};

bool hasAmx() {
    static const bool has = oneDnnIsaIncludes(dnnl_cpu_isa_avx512_core_amx);
    return has;
}

}  // namespace

struct OneDnnInt8Conv::Primitive {
    std::vector<int64_t> inDims, weightDims;
    DType xType = DType::UInt8;
    bool usable = false;  // false: oneDNN offers only kernels slower than im2col + GEMM
    dnnl::convolution_forward conv;
    dnnl::memory::desc userSrc, userDst;
    HeldWeights weights;
    dnnl::memory userSrcMemory, userDstMemory, srcMemory, dstMemory, zeroMemory;
    std::optional<dnnl::reorder> srcIn, dstOut;
    int32_t zero = 0;  // what zeroMemory points at
    std::unordered_map<int, dnnl::memory> args;
};

OneDnnInt8Conv::OneDnnInt8Conv() = default;
OneDnnInt8Conv::~OneDnnInt8Conv() = default;

bool OneDnnInt8Conv::preferred() { return g_everywhere || hasAmx(); }

void OneDnnInt8Conv::useEverywhere(bool on) { g_everywhere = on; }

uint64_t OneDnnInt8Conv::timesRun() { return g_runs; }

bool OneDnnInt8Conv::run(const ConvGeometry& g, int64_t group, const RtTensor& x, int32_t xZero, const RtTensor& w,
                         bool weightsConstant, int32_t* y) {
    if (g.in.size() != 2 || x.rank() != 4 || w.rank() != 4 || w.dtype != DType::Int8) return false;
    if (x.dtype != DType::UInt8 && x.dtype != DType::Int8) return false;
    if (x.numel() == 0 || w.numel() == 0) return false;
    std::lock_guard lock(m_mutex);
    try {
        dnnl::engine& engine = cpuEngine();
        Primitive* p = m_primitive.get();
        if (!p || p->inDims != x.dims || p->weightDims != w.dims || p->xType != x.dtype) {
            auto fresh = std::make_unique<Primitive>();
            fresh->inDims = x.dims;
            fresh->weightDims = w.dims;
            fresh->xType = x.dtype;
            const dnnl::memory::dims src(x.dims.begin(), x.dims.end());
            const dnnl::memory::dims dst{x.dims[0], w.dims[0], g.out[0], g.out[1]};
            dnnl::memory::dims weightDims(w.dims.begin(), w.dims.end());
            tag weightTag = tag::oihw;
            if (group > 1) {  // [M, C/g, k...] is [g, M/g, C/g, k...] in the same memory
                weightDims[0] /= group;
                weightDims.insert(weightDims.begin(), group);
                weightTag = tag::goihw;
            }
            const dt srcType = x.dtype == DType::UInt8 ? dt::u8 : dt::s8;
            fresh->userSrc = dnnl::memory::desc(src, srcType, tag::nchw);
            fresh->userDst = dnnl::memory::desc(dst, dt::s32, tag::nchw);
            fresh->weights.user = dnnl::memory::desc(weightDims, dt::s8, weightTag);
            const auto [strides, dilation, padL, padR] = oneDnnWindow(g);
            const dnnl::convolution_forward::desc desc(
                dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                dnnl::memory::desc(src, srcType, tag::any), dnnl::memory::desc(weightDims, dt::s8, tag::any),
                dnnl::memory::desc(dst, dt::s32, tag::any), strides, dilation, padL, padR);
            // x's zero point at run time: oneDNN subtracts it, padding included.
            dnnl::primitive_attr attr;
            attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
            // oneDNN's first choice, taken only when it is an AMX kernel: those beat
            // im2col + GEMM (tests take any JIT kernel); its reference loops and its own
            // im2col + GEMM never do, and a case it would give to those stays on ours.
            const dnnl::convolution_forward::primitive_desc pd(desc, attr, engine);
            fresh->usable = isJit(pd) && (g_everywhere || kernelNamed(pd, "amx"));
            if (!fresh->usable) {
                m_primitive = std::move(fresh);
                return false;
            }
            fresh->conv = dnnl::convolution_forward(pd);
            fresh->weights.held = dnnl::memory(pd.weights_desc(), engine);
            fresh->userSrcMemory = dnnl::memory(fresh->userSrc, engine, DNNL_MEMORY_NONE);
            fresh->userDstMemory = dnnl::memory(fresh->userDst, engine, DNNL_MEMORY_NONE);
            fresh->srcMemory = fresh->userSrcMemory;
            fresh->dstMemory = fresh->userDstMemory;
            if (pd.src_desc() != fresh->userSrc) {
                fresh->srcMemory = dnnl::memory(pd.src_desc(), engine, DNNL_MEMORY_NONE);
                fresh->srcIn = dnnl::reorder(fresh->userSrcMemory, fresh->srcMemory);
            }
            if (pd.dst_desc() != fresh->userDst) {
                fresh->dstMemory = dnnl::memory(pd.dst_desc(), engine, DNNL_MEMORY_NONE);
                fresh->dstOut = dnnl::reorder(fresh->dstMemory, fresh->userDstMemory);
            }
            fresh->zeroMemory = dnnl::memory(dnnl::memory::desc({1}, dt::s32, tag::x), engine, &fresh->zero);
            fresh->args = {{DNNL_ARG_SRC, fresh->srcMemory},
                           {DNNL_ARG_WEIGHTS, fresh->weights.held},
                           {DNNL_ARG_DST, fresh->dstMemory},
                           {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, fresh->zeroMemory}};
            m_primitive = std::move(fresh);
            p = m_primitive.get();
        }
        if (!p->usable) return false;
        thread_local dnnl::stream stream(engine);
        p->weights.refresh(stream, w.data, weightsConstant);
        thread_local Scratch srcScratch, dstScratch;
        p->userSrcMemory.set_data_handle(const_cast<void*>(x.data));
        p->userDstMemory.set_data_handle(y);
        if (p->srcIn && !reorderIntoScratch(stream, srcScratch, *p->srcIn, p->userSrcMemory, p->srcMemory)) return false;
        if (p->dstOut && !pointAtScratch(dstScratch, p->dstMemory)) return false;
        p->zero = xZero;
        p->conv.execute(stream, p->args);
        if (p->dstOut) p->dstOut->execute(stream, p->dstMemory, p->userDstMemory);
        stream.wait();
        ++g_runs;
        return true;
    } catch (const dnnl::error&) {
        m_primitive.reset();
        return false;
    }
}

}  // namespace fsc::cpu
