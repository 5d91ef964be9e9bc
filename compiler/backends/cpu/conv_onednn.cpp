#include "compiler/backends/cpu/conv_onednn.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "compiler/backends/cpu/onednn_isa.h"
#include "compiler/backends/cpu/onednn_support.h"

namespace fsc::cpu {

namespace {

dnnl::memory::dims toDims(const std::vector<int64_t>& v) { return {v.begin(), v.end()}; }

// A row-major float32 layout for dims, whatever their rank.
dnnl::memory::desc plainDesc(const dnnl::memory::dims& dims) {
    dnnl::memory::dims strides(dims.size(), 1);
    for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
    return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

// [N, C, H, W] as oneDNN names the dims, stored [N, H, W, C].
dnnl::memory::desc channelsLastDesc(const std::vector<int64_t>& nhwc) {
    const dnnl::memory::dims dims{nhwc[0], nhwc[3], nhwc[1], nhwc[2]};
    const dnnl::memory::dims strides{nhwc[1] * nhwc[2] * nhwc[3], 1, nhwc[2] * nhwc[3], nhwc[3]};
    return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

}  // namespace

struct OneDnnConv::Primitive {
    std::vector<int64_t> inDims, weightDims;
    bool xChannelsLast = false, yChannelsLast = false;
    bool hasBias = false;
    bool wantsResidual = false;   // asked for z as a sum post-op...
    bool addsResidual = false;    // ... and got a kernel that adds it
    bool appliesActivation = false;
    bool winograd = false;
    dnnl::convolution_forward::primitive_desc pd;
    dnnl::convolution_forward conv;
    dnnl::memory::desc userSrc, userDst, bias;
    HeldWeights weights;
    // Made once, pointed at each call's tensors with set_data_handle: making the memory
    // objects, reorders and argument map per call cost ~5 us of a ResNet-50 1x1
    // convolution's 0.2 ms.
    dnnl::memory userSrcMemory, userDstMemory, srcMemory, dstMemory, biasMemory;
    std::optional<dnnl::reorder> srcToBlocked, dstFromBlocked;
    std::optional<dnnl::reorder> residualToBlocked;  // z into a blocked dst, for the sum post-op
    dnnl::memory residualMemory;                      // z, as the caller laid it out
    std::unordered_map<int, dnnl::memory> args;
};

OneDnnConv::OneDnnConv() = default;
OneDnnConv::~OneDnnConv() = default;

namespace {

// oneDNN's eltwise post-op for an activation, when it computes the same function and is
// not slower than applying it afterwards.
std::optional<std::tuple<dnnl::algorithm, float, float>> postOpOf(const Activation& act) {
    using K = Activation::Kind;
    switch (act.kind) {
        case K::Relu: return std::tuple{dnnl::algorithm::eltwise_relu, 0.0f, 0.0f};
        case K::LeakyRelu: return std::tuple{dnnl::algorithm::eltwise_relu, act.a, 0.0f};
        case K::Clip: return std::tuple{dnnl::algorithm::eltwise_clip_v2, act.a, act.b};  // min(max(x, a), b)
        // Swish is left to the caller's vector SiLU, one pass over the output after the
        // convolution: oneDNN's eltwise_swish post-op took longer than that pass
        // (EfficientNet-B0 at 1 thread 7.14 -> 6.79 ms with --profile, its 16 -> 96 channel
        // expansion at 112x112 0.56 -> 0.47 ms).
        default: return std::nullopt;
    }
}

std::atomic<bool> g_ownLayoutsOnly{false};
std::atomic<uint64_t> g_winogradRuns{0};

// Winograd's algorithm does a 3x3 window of stride 1 in fewer multiplies: F(4x4, 3x3) in a
// quarter, F(2x2, 3x3) in 0.44x. Their weights, transformed, are 4x and 1.8x the size, each
// used once per output tile. In whole ResNet-50 runs on an Intel Xeon (each layer's weights
// read from memory; reorders into and out of the kernels' blocked layout included):
// - 56x56 and 28x28: F(4x4) took 0.48x and 0.72x the direct kernel's time at 1 thread;
// - 14x14 (256 channels): F(4x4) took 1.15x (9 MiB of transformed weights for 16 tiles),
//   F(2x2) 0.94x at 1 thread and 0.73x at 2;
// - 7x7: both slower than direct.
// F(4x4)'s error stays within twice the direct kernel's, F(2x2)'s within the direct
// kernel's (1.2e-5 and 3e-6 against 6e-6 on outputs up to 4: docs/benchmarks.md).
// Its transforms and reorders cost in proportion to the input and output channels, what it
// saves to their product: under 32 channels on either side the direct kernel is faster
// (squeezenet1_1's 16-to-64-channel layers on 55 x 55 at one thread: 410 and 368 us through
// F(4x4) and its reorders, 342 and 341 direct; GoogLeNet's 16-to-32 and 16-to-48 layers also
// faster direct; squeezenet's 32-to-128 layers faster through Winograd).
// Returns the name oneDNN gives the kernel to take, or null for the direct one.
const char* winogradKernelFor(const ConvGeometry& g, int64_t group, int64_t inChannels, int64_t outChannels) {
    if (g.in.size() != 2 || group != 1 || std::min(inChannels, outChannels) < 32) return nullptr;
    for (size_t d = 0; d < 2; ++d)
        if (g.kernel[d] != 3 || g.strides[d] != 1 || g.dilations[d] != 1) return nullptr;
    const int64_t side = std::min(g.out[0], g.out[1]);
    return side >= 28 ? "wino_4x3" : side >= 14 ? "wino_2x3" : nullptr;
}

// That kernel for the case, where oneDNN has it (AVX-512 only): its list of kernels for
// the Winograd algorithm is searched, as it does not always put the one wanted first.
std::optional<dnnl::convolution_forward::primitive_desc> winogradFor(const char* kernel,
                                                                     const dnnl::convolution_forward::desc& desc,
                                                                     const dnnl::primitive_attr& attr,
                                                                     dnnl::engine& engine) {
    try {
        dnnl::convolution_forward::primitive_desc pd(desc, attr, engine);
        do {
            if (kernelNamed(pd, kernel)) return pd;
        } while (pd.next_impl());
    } catch (const dnnl::error&) {
    }
    return std::nullopt;
}

}  // namespace

bool OneDnnConv::hasAvx512() {
    static const bool has = oneDnnIsaIncludes(dnnl_cpu_isa_avx512_core);
    return has;
}

void OneDnnConv::useOwnLayoutsOnly(bool only) { g_ownLayoutsOnly = only; }

uint64_t OneDnnConv::winogradRuns() { return g_winogradRuns; }

void OneDnnConv::setActivation(const Activation& act) { m_act = act; }

OneDnnConv::Done OneDnnConv::run(const ConvGeometry& g, int64_t group, const RtTensor& x, const RtTensor& w,
                                 const RtTensor* b, const RtTensor* z, bool weightsConstant, bool xChannelsLast,
                                 bool yChannelsLast, RtTensor& y) {
    const size_t nd = g.in.size();
    if (x.dtype != DType::Float32 || nd < 1 || nd > 3 || x.numel() == 0 || y.numel() == 0) return {};
    if ((xChannelsLast || yChannelsLast) && (nd != 2 || x.rank() != 4 || y.rank() != 4)) return {};
    if (z && (z->dtype != DType::Float32 || z->dims != y.dims)) z = nullptr;  // the caller adds it
    std::lock_guard lock(m_mutex);
    try {
        dnnl::engine& engine = cpuEngine();
        Primitive* p = m_primitive.get();
        if (!p || p->inDims != x.dims || p->weightDims != w.dims || p->hasBias != (b != nullptr) ||
            p->wantsResidual != (z != nullptr) || p->xChannelsLast != xChannelsLast || p->yChannelsLast != yChannelsLast) {
            auto fresh = std::make_unique<Primitive>();
            fresh->inDims = x.dims;
            fresh->weightDims = w.dims;
            fresh->xChannelsLast = xChannelsLast;
            fresh->yChannelsLast = yChannelsLast;
            fresh->hasBias = b != nullptr;
            fresh->wantsResidual = z != nullptr;
            dnnl::memory::dims weightDims = toDims(w.dims);
            if (group > 1) {  // [M, C/g, k...] is [g, M/g, C/g, k...] in the same memory
                weightDims[0] /= group;
                weightDims.insert(weightDims.begin(), group);
            }
            const auto [strides, dilation, padL, padR] = oneDnnWindow(g);
            fresh->userSrc = xChannelsLast ? channelsLastDesc(x.dims) : plainDesc(toDims(x.dims));
            fresh->weights.user = plainDesc(weightDims);
            fresh->userDst = yChannelsLast ? channelsLastDesc(y.dims) : plainDesc(toDims(y.dims));
            fresh->bias = plainDesc({w.dims[0]});
            using tag = dnnl::memory::format_tag;
            // Below AVX-512 oneDNN's own choice is a blocked layout (nChw8c), which costs a
            // reorder of each NHWC activation in and out of every convolution. Its AVX2 1x1
            // kernels read and write NHWC as fast as blocked, so those are handed NHWC; its
            // NHWC kernels for wider windows are slower than the round trip (ResNet-50 at 1
            // thread on a Zen 3 VM: 1x1 layers 54-58 ms NHWC against 54-60 ms blocked plus
            // 16 ms of reorders; 3x3 layers 64-82 ms NHWC against 50-53 ms blocked plus
            // 2.4 ms of reorders). Kept to oneDNN's choice where NHWC would take it to a
            // reference kernel, and on AVX-512, where it picks its NHWC kernels for dense
            // convolutions. For grouped ones it picks nChw16c there, although the same kernel
            // reads and writes NHWC faster than its reorders (at one thread, ResNeXt-50's 32
            // groups on 28 x 28: 752 us plus 144 of reorders blocked, 732 us NHWC; RegNetX's 4
            // groups on 112 x 112 at stride 2: 439 plus 159 blocked, 352 NHWC).
            bool pointwise = true;
            for (int64_t k : g.kernel) pointwise = pointwise && k == 1;
            const bool asGiven = !g_ownLayoutsOnly && (hasAvx512() ? group > 1 : pointwise);
            auto any = [](const dnnl::memory::desc& d) {
                return dnnl::memory::desc(d.dims(), dnnl::memory::data_type::f32, tag::any);
            };
            auto srcFor = [&](bool given) { return given && xChannelsLast ? fresh->userSrc : any(fresh->userSrc); };
            auto dstFor = [&](bool given) { return given && yChannelsLast ? fresh->userDst : any(fresh->userDst); };
            auto descFor = [&](bool given, dnnl::algorithm algorithm = dnnl::algorithm::convolution_direct) {
                return b ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, algorithm,
                                                           srcFor(given), any(fresh->weights.user), fresh->bias,
                                                           dstFor(given), strides, dilation, padL, padR)
                         : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, algorithm,
                                                           srcFor(given), any(fresh->weights.user), dstFor(given),
                                                           strides, dilation, padL, padR);
            };
            auto desc = descFor(false);
            if (asGiven && (xChannelsLast || yChannelsLast)) {
                const auto given = descFor(true);
                if (isJit(dnnl::convolution_forward::primitive_desc(given, engine))) desc = given;
            }
            // The residual as a sum post-op (accumulating onto the destination, which holds z:
            // no extra read stream; a binary post-op reading z beside took oneDNN off its
            // brgemm 1x1 kernels, ResNet's layer1 0.40 -> 0.53 ms) needs a JIT kernel. Where
            // the kernel writes a blocked layout (below AVX-512, windows wider than 1x1), z is
            // reordered into the blocked destination first, like the source; without one the
            // primitive does neither the sum nor the activation (which must come after it),
            // and the caller adds both in one pass.
            const auto activation = postOpOf(m_act);
            const char* winograd = winogradKernelFor(g, group, w.dims[1], w.dims[0]);
            auto withPostOps = [&](bool residual, bool activate) {
                dnnl::primitive_attr attr;
                dnnl::post_ops ops;
                if (residual) ops.append_sum(1.0f);
                if (activate) ops.append_eltwise(1.0f, std::get<0>(*activation), std::get<1>(*activation), std::get<2>(*activation));
                attr.set_post_ops(ops);
                if (winograd)
                    if (auto pd = winogradFor(winograd, descFor(false, dnnl::algorithm::convolution_winograd), attr, engine))
                        return *pd;
                return dnnl::convolution_forward::primitive_desc(desc, attr, engine);
            };
            if (z) {
                try {
                    fresh->pd = withPostOps(true, activation.has_value());
                    fresh->addsResidual = isJit(fresh->pd);
                } catch (const dnnl::error&) {
                    fresh->addsResidual = false;
                }
            }
            if (!z) fresh->pd = withPostOps(false, activation.has_value());
            else if (!fresh->addsResidual) fresh->pd = withPostOps(false, false);
            fresh->appliesActivation = activation.has_value() && (!z || fresh->addsResidual);
            fresh->winograd = kernelNamed(fresh->pd, "wino");
            fresh->conv = dnnl::convolution_forward(fresh->pd);
            fresh->weights.held = dnnl::memory(fresh->pd.weights_desc(), engine);
            fresh->userSrcMemory = dnnl::memory(fresh->userSrc, engine, DNNL_MEMORY_NONE);
            fresh->userDstMemory = dnnl::memory(fresh->userDst, engine, DNNL_MEMORY_NONE);
            fresh->srcMemory = fresh->userSrcMemory;
            fresh->dstMemory = fresh->userDstMemory;
            if (fresh->pd.src_desc() != fresh->userSrc) {
                fresh->srcMemory = dnnl::memory(fresh->pd.src_desc(), engine, DNNL_MEMORY_NONE);
                fresh->srcToBlocked = dnnl::reorder(fresh->userSrcMemory, fresh->srcMemory);
            }
            if (fresh->pd.dst_desc() != fresh->userDst) {
                fresh->dstMemory = dnnl::memory(fresh->pd.dst_desc(), engine, DNNL_MEMORY_NONE);
                fresh->dstFromBlocked = dnnl::reorder(fresh->dstMemory, fresh->userDstMemory);
                if (fresh->addsResidual) {
                    fresh->residualMemory = dnnl::memory(fresh->userDst, engine, DNNL_MEMORY_NONE);
                    fresh->residualToBlocked = dnnl::reorder(fresh->residualMemory, fresh->dstMemory);
                }
            }
            fresh->args = {{DNNL_ARG_SRC, fresh->srcMemory}, {DNNL_ARG_WEIGHTS, fresh->weights.held}, {DNNL_ARG_DST, fresh->dstMemory}};
            if (b) {
                fresh->biasMemory = dnnl::memory(fresh->bias, engine, DNNL_MEMORY_NONE);
                fresh->args[DNNL_ARG_BIAS] = fresh->biasMemory;
            }
            m_primitive = std::move(fresh);
            p = m_primitive.get();
        }
        if (z && !p->addsResidual && z->data == y.data) return {};  // would overwrite z before it is added
        thread_local dnnl::stream stream(engine);
        p->weights.refresh(stream, w.data, weightsConstant);
        thread_local Scratch srcScratch, dstScratch;
        p->userSrcMemory.set_data_handle(const_cast<void*>(x.data));
        p->userDstMemory.set_data_handle(y.data);
        if (p->srcToBlocked && !reorderIntoScratch(stream, srcScratch, *p->srcToBlocked, p->userSrcMemory, p->srcMemory))
            return {};
        if (p->dstFromBlocked && !pointAtScratch(dstScratch, p->dstMemory)) return {};
        if (b) p->biasMemory.set_data_handle(const_cast<void*>(b->data));
        if (p->addsResidual && p->residualToBlocked) {
            p->residualMemory.set_data_handle(const_cast<void*>(z->data));
            p->residualToBlocked->execute(stream, p->residualMemory, p->dstMemory);
        } else if (p->addsResidual && z->data != y.data) {
            std::memcpy(y.data, z->data, y.bytes());
        }
        p->conv.execute(stream, p->args);
        if (p->dstFromBlocked) p->dstFromBlocked->execute(stream, p->dstMemory, p->userDstMemory);
        stream.wait();
        if (p->winograd) ++g_winogradRuns;
        return {true, p->appliesActivation, p->addsResidual};
    } catch (const dnnl::error&) {
        m_primitive.reset();
        return {};
    }
}

}  // namespace fsc::cpu
