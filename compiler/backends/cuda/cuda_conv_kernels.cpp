// Conv and FusedConv on the device: one Device::convolution with the bias, the residual Z
// and the activation as its epilogue (cuDNN's operation graph fuses them where it has an
// engine; else the device adds one BiasActivation launch) over NCHW, or NHWC for a
// FusedConv with `channels_last`: cuDNN reads and writes that layout through its strides,
// and a constant filter is laid out KRSC for it once. cuDNN pads both sides of a dim alike; a node with other padding, or a
// device without cuDNN, runs on the CPU.
#include <cstring>

#include "compiler/runtime/window_geometry.h"
#include "compiler/backends/cuda/cuda_kernel_support.h"
#include "compiler/runtime/execution_plan.h"

namespace fsc::cudak {
namespace {

// A constant filter [K, C, R, S] laid out [K, R, S, C] (KRSC) on the host, for NHWC
// convolutions: cuDNN's NHWC kernels read that layout, and given KCRS they convert the
// filter in every call (16 to 18 conversion kernels a ResNet-50 run on an H200).
std::vector<uint8_t> krscFilter(const Tensor& w) {
    const auto& d = w.dims();
    const int64_t k = d[0], c = d[1], taps = d[2] * d[3];
    const size_t e = size_t(dtypeBits(w.dtype()) / 8);
    std::vector<uint8_t> out(w.byteSize());
    for (int64_t o = 0; o < k; ++o)
        for (int64_t i = 0; i < c; ++i)
            for (int64_t t = 0; t < taps; ++t)
                std::memcpy(out.data() + size_t((o * taps + t) * c + i) * e, w.data() + size_t((o * c + i) * taps + t) * e, e);
    return out;
}

class ConvKernel : public Kernel {
public:
    ConvKernel(WindowAttrs attrs, int64_t group, GemmActivation act, bool channelsLast, bool nchwInput,
               std::vector<uint8_t> krsc, std::shared_ptr<Device> device)
        : m_attrs(std::move(attrs)), m_group(group), m_act(act), m_channelsLast(channelsLast), m_nchwInput(nchwInput),
          m_krscHost(std::move(krsc)), m_krscBytes(m_krscHost.size()), m_krscDevice(std::move(device)) {}
    ~ConvKernel() override {
        if (m_krsc) m_krscDevice->release(m_krsc);
    }
    Status compute(KernelContext& ctx) override {
        const RtTensor *x = ctx.input(0), *w = ctx.input(1), *b = ctx.input(2), *z = ctx.input(3);
        if (!x || !w) return bad(ctx, "needs X and W");
        if (x->dtype != w->dtype || (b && b->dtype != x->dtype)) return bad(ctx, "X, W and B differ in dtype");
        if (!isFloatKind(x->dtype)) return unsupported(ctx, "not a float type");
        if (x->rank() < 3 || x->rank() > 5 || w->rank() != x->rank()) return bad(ctx, "X and W need one rank of 3 to 5");
        if (m_channelsLast && x->rank() != 4) return bad(ctx, "a channels-last convolution needs a 4-D X");
        const size_t nd = x->rank() - 2;
        const bool nhwcIn = m_channelsLast && !m_nchwInput;
        const size_t firstSpatial = nhwcIn ? 1 : 2;
        std::vector<int64_t> spatial(x->dims.begin() + firstSpatial, x->dims.begin() + firstSpatial + nd);
        std::vector<int64_t> kernel(w->dims.begin() + 2, w->dims.end());
        if (!m_attrs.kernelShape.empty() && m_attrs.kernelShape != kernel) return bad(ctx, "kernel_shape differs from W's dims");
        auto geo = convGeometry(ctx, m_attrs, spatial, kernel, false);
        if (!geo) return geo.status();
        ConvCall call;
        call.type = *elemType(x->dtype);
        call.spatial = int(nd);
        call.n = x->dims[0];
        call.c = nhwcIn ? x->dims[3] : x->dims[1];
        call.channelsLast = m_channelsLast;
        call.inputChannelsLast = nhwcIn;
        call.k = w->dims[0];
        call.group = m_group;
        if (call.c != w->dims[1] * m_group) return bad(ctx, "W's input channels times group differ from X's channels");
        if (b && b->numel() != call.k) return bad(ctx, "B must have one value per output channel");
        for (size_t d = 0; d < nd; ++d) {
            call.inDims[d] = spatial[d];
            call.kernel[d] = kernel[d];
            call.strides[d] = geo->strides[d];
            call.dilations[d] = geo->dilations[d];
            call.pads[d] = geo->padBegin[d];
            call.outDims[d] = geo->out[d];
            // Symmetric padding must give ONNX's output size; SAME and uneven pads may not.
            const int64_t span = spatial[d] + 2 * geo->padBegin[d] - (kernel[d] - 1) * geo->dilations[d] - 1;
            if (span < 0 || span / geo->strides[d] + 1 != geo->out[d])
                return unsupported(ctx, "cuDNN pads both sides alike; this convolution's padding is uneven");
        }
        std::vector<int64_t> outDims{call.n, call.k};
        outDims.insert(outDims.end(), geo->out.begin(), geo->out.end());
        if (m_channelsLast) outDims = {call.n, geo->out[0], geo->out[1], call.k};
        auto out = ctx.output(0, x->dtype, outDims);
        if (!out) return out.status();
        RtTensor& y = **out;
        if (z && (z->dims != y.dims || z->dtype != y.dtype))
            return bad(ctx, "Z must have Y's dims and dtype");
        // se-pool-fusion's second output: Y's mean over H and W, [N, 1, 1, M].
        auto channelMeans = [&]() -> Status {
            if (ctx.outputCount() < 2 || !ctx.outputWanted(1)) return Status::ok();
            if (!m_channelsLast) return bad(ctx, "channel means (a second output) need channels_last");
            auto means = ctx.output(1, y.dtype, {call.n, 1, 1, call.k});
            if (!means) return means.status();
            return launchReduce(ctx, y, {false, true, true, false}, dk::ReduceOp::Mean, **means);
        };
        if (y.numel() == 0) return channelMeans();
        call.x = x->data;
        call.w = w->data;
        if (m_krscBytes && m_krscDevice && m_krscDevice.get() == ctx.device() && nhwcIn && w->bytes() == m_krscBytes) {
            if (!m_krsc) {  // uploaded on the first run, which is never captured; the host copy goes then
                auto p = m_krscDevice->allocate(m_krscBytes);
                if (!p) return p.status().withContext(ctx.where());
                m_krsc = *p;
                FSC_RETURN_IF_ERROR(m_krscDevice->copyToDevice(m_krsc, m_krscHost.data(), m_krscBytes));
                std::vector<uint8_t>().swap(m_krscHost);
            }
            call.w = m_krsc;
            call.filterChannelsLast = true;
        }
        call.y = y.data;
        call.bias = b ? b->data : nullptr;
        call.z = z ? z->data : nullptr;
        call.act = m_act.kind;
        call.actAlpha = m_act.alpha;
        call.actBeta = m_act.beta;
        call.tf32 = ctx.tf32();
        FSC_RETURN_IF_ERROR((*deviceOf(ctx))->convolution(call).withContext(ctx.where()));
        return channelMeans();
    }

private:
    WindowAttrs m_attrs;
    int64_t m_group;
    GemmActivation m_act;
    bool m_channelsLast;  // FusedConv's `channels_last`: Y NHWC, and X unless...
    bool m_nchwInput;     // ... `input_layout` is NCHW
    std::vector<uint8_t> m_krscHost;  // the constant filter as KRSC until it is uploaded
    size_t m_krscBytes = 0;           // its size; 0: no KRSC filter
    std::shared_ptr<Device> m_krscDevice;  // the device it goes to, kept alive until it is freed
    void* m_krsc = nullptr;                // ... there, from the first run on
};

// Whether symmetric padding reproduces the node's padding for every input size: explicit
// pads equal on both sides (or VALID). SAME_* pads depend on the input size and stride.
bool padsAreSymmetric(const WindowAttrs& attrs) {
    if (attrs.autoPad == "VALID") return true;
    if (attrs.autoPad != "NOTSET" && !attrs.autoPad.empty()) return false;
    const size_t nd = attrs.pads.size() / 2;
    for (size_t d = 0; d < nd; ++d)
        if (attrs.pads[d] != attrs.pads[d + nd]) return false;
    return true;
}

KernelFactory convOp(bool fused) {
    return [fused](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        FSC_RETURN_IF_ERROR(requireFloatKind(init));
        CudaDevice* device = loweringDevice(init);
        if (device && !device->hasConvolution()) return declined("this GPU has no cuDNN 9 for convolutions");
        WindowAttrs attrs = readWindowAttrs(init);
        if (!padsAreSymmetric(attrs)) return declined("uneven or SAME padding (cuDNN pads both sides alike)");
        const int64_t rank = declaredRank(init, 0);
        if (rank >= 0 && (rank < 3 || rank > 5)) return declined("a convolution with more than 3 spatial dims");
        GemmActivation act;
        if (fused) {
            auto a = activationFromInit(init);
            if (!a) return a.status();
            act = *a;
        }
        const bool channelsLast = fused && init.getInt("channels_last", 0) != 0;
        if (channelsLast && rank >= 0 && rank != 4) return declined("a channels-last convolution that is not 2-D");
        const bool nchwInput = channelsLast && init.getString("input_layout", "NHWC") == "NCHW";
        std::vector<uint8_t> krsc;
        if (const Tensor* w = init.constantInput(1);
            channelsLast && !nchwInput && w && w->dims().size() == 4 && w->data() && elemType(w->dtype()))
            krsc = krscFilter(*w);
        std::shared_ptr<Device> target = init.lowering() ? init.lowering()->device : nullptr;
        return std::unique_ptr<Kernel>(new ConvKernel(std::move(attrs), init.getInt("group", 1), act, channelsLast,
                                                      nchwInput, std::move(krsc), std::move(target)));
    };
}

}  // namespace

void registerConvKernels(KernelRegistry& r) {
    addKernel(r, "", "Conv", convOp(false), "cudnn");
    addKernel(r, "ai.fusescope", "FusedConv", convOp(true), "cudnn");
}

}  // namespace fsc::cudak
