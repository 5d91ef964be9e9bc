// ai.fusescope.Attention on the device, Q, K^T, V, the mask and the output read through the
// node's permutations (runtime/attention_layout.h, shared with the CPU kernel): float16 and
// bfloat16 as one fused call where the device has an engine for it (fused_attention_call.h:
// cuDNN's scaled dot-product attention), else two batched cuBLASLt GEMMs around a softmax
// (attention_gemms.h) where every operand has a unit stride, else one warp-per-row kernel
// (kernels/attention_kernel.h).
#include "compiler/backends/cuda/attention_gemms.h"
#include "compiler/backends/cuda/cuda_kernel_support.h"
#include "compiler/runtime/attention_layout.h"

namespace fsc::cudak {
namespace {

// The scores (and probabilities) of one chunk of the batch; larger batches run in chunks.
constexpr size_t kAttentionScratchBytes = size_t(256) << 20;

KernelFactory attentionOp() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        FSC_RETURN_IF_ERROR(requireFloatKind(init));
        const float scale = init.getFloat("scale", 1.0f);
        AttentionPerms perms{init.getInts("q_perm"), init.getInts("k_perm"), init.getInts("v_perm"), init.getInts("out_perm")};
        const int64_t rank = declaredRank(init, 0);
        if (rank > dk::kAttentionMaxBatchRank + 2) return declined("attention with more than 6 batch dims");
        return std::unique_ptr<Kernel>(new FunctionKernel([scale, perms](KernelContext& ctx) -> Status {
            const RtTensor *q = ctx.input(0), *kt = ctx.input(1), *v = ctx.input(2), *mask = ctx.input(3);
            if (!q || !kt || !v) return bad(ctx, "needs Q, K^T and V");
            if (kt->dtype != q->dtype || v->dtype != q->dtype || (mask && mask->dtype != q->dtype))
                return bad(ctx, "Q, K^T, V and the mask must share a dtype");
            if (!isFloatKind(q->dtype)) return unsupported(ctx, "not a float type");
            auto layout = attentionLayout(q->dims, kt->dims, v->dims, mask ? &mask->dims : nullptr, perms);
            if (!layout) return layout.status().withContext(ctx.where());
            const AttentionLayout& L = *layout;
            if (L.batchDims.size() > size_t(dk::kAttentionMaxBatchRank)) return unsupported(ctx, "more than 6 batch dims");
            auto out = ctx.output(0, q->dtype, L.outputDims);
            if (!out) return out.status();
            RtTensor& y = **out;
            if (y.numel() == 0) return Status::ok();
            if (L.lk == 0) return ctx.device()->fill(y.data, 0, y.bytes());  // no keys: an empty sum
            const dk::ElemType type = *elemType(q->dtype);
            auto found = deviceOf(ctx);
            if (!found) return found.status();
            CudaDevice& device = **found;
            if (device.hasFusedAttention()) {
                std::string why;  // why the call cannot be fused; the GEMMs below run it then
                const AttentionPointers x{q->data, kt->data, v->data, mask ? mask->data : nullptr, y.data};
                if (auto call = fusedAttentionCallOf(L, type, scale, x, &why); call && checkFusedAttentionCall(*call)) {
                    Status fused = device.fusedAttention(*call);
                    // Unsupported: the device has no engine for this shape; the GEMMs below run it.
                    if (fused.code() != ErrorCode::Unsupported) return fused.withContext(ctx.where());
                }
            }
            if (auto plan = planAttentionGemms(L, type, scale, kAttentionScratchBytes)) {
                const AttentionOperands x{q->data, kt->data, v->data, mask ? mask->data : nullptr, y.data,
                                          mask ? mask->bytes() : 0};
                return runAttentionGemms(device, *plan, x, ctx.tf32()).withContext(ctx.where());
            }
            if (L.lk > dk::kAttentionMaxKeys)
                return unsupported(ctx, "more than " + std::to_string(dk::kAttentionMaxKeys) + " keys per query");
            DeviceLaunch l;
                        dk::AttentionParams& p = l.set<dk::AttentionParams>();
            p.q = q->data;
            p.kt = kt->data;
            p.v = v->data;
            p.mask = mask ? mask->data : nullptr;
            p.out = y.data;
            p.type = *elemType(q->dtype);
            p.batchRank = int(L.batchDims.size());
            for (size_t i = 0; i < L.batchDims.size(); ++i) {
                p.batchDims[i] = L.batchDims[i];
                for (int k = 0; k < 5; ++k) p.batchStrides[k][i] = L.batchStrides[k][i];
            }
            const size_t r = L.view[AttentionLayout::Q].dims.size();
            for (int k = 0; k < 5; ++k) {
                p.rowStride[k] = L.view[k].strides[r - 2];
                p.colStride[k] = L.view[k].strides[r - 1];
            }
            p.lq = L.lq;
            p.lk = L.lk;
            p.d = L.d;
            p.dv = L.dv;
            p.scale = scale;
            p.rows = L.batchCount * L.lq;
            l.extents = {extentOf(*q, false, "Q"), extentOf(*kt, false, "K^T"), extentOf(*v, false, "V"), extentOf(y, true, "output")};
            if (mask) l.extents.push_back(extentOf(*mask, false, "mask"));
            l.geometry = dk::attentionGeometry(p.rows);
            return launch(ctx, l);
        }));
    };
}

}  // namespace

void registerAttentionKernels(KernelRegistry& r) { addKernel(r, "ai.fusescope", "Attention", attentionOp(), "gemm_softmax_gemm"); }

}  // namespace fsc::cudak
