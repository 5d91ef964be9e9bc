#include "compiler/backends/cuda/attention_gemms.h"

#include <algorithm>

namespace fsc {
namespace {

// The matrices a batch index moves: the four operands the GEMMs touch, and the scores S
// (P is packed as S is, so it shares S's strides).
enum BatchOperand { BQ, BKT, BV, BY, BS, kBatchOperands };

struct BatchDim {
    int64_t extent = 1;
    int64_t stride[kBatchOperands] = {};
};

// The layout's batch dims without those of extent 1, neighbours merged where every operand
// steps through them as through one dim. The flat batch order is unchanged.
std::vector<BatchDim> gemmBatchDims(const AttentionLayout& L, int64_t scoreRowStride) {
    const size_t rank = L.batchDims.size();
    std::vector<int64_t> scoreStride(rank);
    int64_t packed = L.lq * scoreRowStride;
    for (size_t i = rank; i-- > 0;) {
        scoreStride[i] = packed;
        packed *= L.batchDims[i];
    }
    std::vector<BatchDim> dims;
    for (size_t i = 0; i < rank; ++i) {
        if (L.batchDims[i] == 1) continue;
        BatchDim d;
        d.extent = L.batchDims[i];
        d.stride[BQ] = L.batchStrides[AttentionLayout::Q][i];
        d.stride[BKT] = L.batchStrides[AttentionLayout::KT][i];
        d.stride[BV] = L.batchStrides[AttentionLayout::V][i];
        d.stride[BY] = L.batchStrides[AttentionLayout::Y][i];
        d.stride[BS] = scoreStride[i];
        if (!dims.empty()) {
            BatchDim& outer = dims.back();
            bool merges = true;
            for (int k = 0; k < kBatchOperands; ++k)
                merges = merges && outer.stride[k] == d.extent * d.stride[k];
            if (merges) {
                outer.extent *= d.extent;
                std::copy(std::begin(d.stride), std::end(d.stride), outer.stride);
                continue;
            }
        }
        dims.push_back(d);
    }
    if (dims.empty()) dims.push_back(BatchDim{});  // one matrix
    return dims;
}

// More calls than this and the warp kernel's one launch is the better deal.
constexpr int64_t kMaxCalls = 1024;

// Rows of S and P start 16-byte aligned (8 float16 or bfloat16, 4 float32 values): cuBLASLt
// picks its vectorised kernels only for aligned rows, and ViT's 197 keys are not (its
// products of P and V ran at a third of the speed on an H100).
int64_t scoreRowStride(int64_t lk) {
    return (lk + 7) / 8 * 8;
}

}  // namespace

std::optional<GemmOperand> gemmOperand(int64_t rows, int64_t cols, int64_t rowStride,
                                       int64_t colStride) {
    if (cols == 1 || colStride == 1) {
        const int64_t ld = rows == 1 ? cols : rowStride;
        if (ld >= std::max<int64_t>(1, cols)) return GemmOperand{false, ld};
    }
    if (rows == 1 || rowStride == 1) {
        const int64_t ld = cols == 1 ? rows : colStride;
        if (ld >= std::max<int64_t>(1, rows)) return GemmOperand{true, ld};
    }
    return std::nullopt;
}

Result<AttentionGemmPlan> planAttentionGemms(const AttentionLayout& L, dk::ElemType type,
                                             float scale, size_t maxScratchBytes) {
    auto matrix = [&](AttentionLayout::Operand k, int64_t rows, int64_t cols) {
        const StridedView& view = L.view[k];
        const size_t r = view.strides.size();
        return gemmOperand(rows, cols, view.strides[r - 2], view.strides[r - 1]);
    };
    const auto q = matrix(AttentionLayout::Q, L.lq, L.d);
    const auto kt = matrix(AttentionLayout::KT, L.d, L.lk);
    const auto v = matrix(AttentionLayout::V, L.lk, L.dv);
    const auto y = matrix(AttentionLayout::Y, L.lq, L.dv);
    if (!q || !kt || !v)
        return Status(ErrorCode::Unsupported, "an operand has no unit row or column stride");
    if (!y || y->trans)
        return Status(ErrorCode::Unsupported, "the output's rows are not contiguous");

    const bool separateProbs = type != dk::ElemType::F32;
    const size_t elem = size_t(dk::elemBytes(type));
    const int64_t ld = scoreRowStride(L.lk);
    const size_t matrixBytes = size_t(L.lq * ld) * (sizeof(float) + (separateProbs ? elem : 0));
    const std::vector<BatchDim> dims = gemmBatchDims(L, ld);
    int64_t perSlice = 1;  // batch elements in one index of the outermost dim
    for (size_t j = 1; j < dims.size(); ++j) perSlice *= dims[j].extent;
    const size_t sliceBytes = size_t(perSlice) * matrixBytes;
    if (sliceBytes > maxScratchBytes)
        return Status(ErrorCode::Unsupported,
                      "one batch slice's scores need " + std::to_string(sliceBytes) + " bytes");
    const int64_t chunkSlices = std::min<int64_t>(
        dims[0].extent, sliceBytes ? int64_t(maxScratchBytes / sliceBytes) : dims[0].extent);

    AttentionGemmPlan plan;
    int64_t calls = 0;
    for (int64_t first = 0; first < dims[0].extent; first += chunkSlices) {
        const int64_t slices = std::min(chunkSlices, dims[0].extent - first);
        AttentionGemmChunk chunk;
        chunk.firstBatch = first * perSlice;
        chunk.batches = slices * perSlice;
        std::vector<int64_t> extent(dims.size());
        for (size_t j = 0; j < dims.size(); ++j) extent[j] = j == 0 ? slices : dims[j].extent;
        // cuBLAS batches the largest dim; the host loops over the rest.
        const size_t inner =
            size_t(std::max_element(extent.begin(), extent.end()) - extent.begin());
        std::vector<int64_t> index(dims.size(), 0);
        for (;;) {
            int64_t off[kBatchOperands] = {};
            for (size_t j = 0; j < dims.size(); ++j) {
                const int64_t absolute = index[j] + (j == 0 ? first : 0);
                for (int k = 0; k < kBatchOperands; ++k)
                    off[k] += (k == BS ? index[j] : absolute) * dims[j].stride[k];
            }
            const BatchDim& b = dims[inner];
            PlannedGemm s;
            s.call.type = type;
            s.call.m = L.lq;
            s.call.n = L.lk;
            s.call.k = L.d;
            s.call.batch = extent[inner];
            s.call.transA = q->trans;
            s.call.lda = q->ld;
            s.call.strideA = b.stride[BQ];
            s.call.transB = kt->trans;
            s.call.ldb = kt->ld;
            s.call.strideB = b.stride[BKT];
            s.call.ldc = ld;
            s.call.strideC = b.stride[BS];
            s.call.alpha = scale;
            s.call.floatOutput = separateProbs;
            s.aOffset = off[BQ];
            s.bOffset = off[BKT];
            s.cOffset = off[BS];
            chunk.scores.push_back(s);
            PlannedGemm o;
            o.call.type = type;
            o.call.m = L.lq;
            o.call.n = L.dv;
            o.call.k = L.lk;
            o.call.batch = extent[inner];
            o.call.lda = ld;
            o.call.strideA = b.stride[BS];
            o.call.transB = v->trans;
            o.call.ldb = v->ld;
            o.call.strideB = b.stride[BV];
            o.call.ldc = y->ld;
            o.call.strideC = b.stride[BY];
            o.aOffset = off[BS];
            o.bOffset = off[BV];
            o.cOffset = off[BY];
            chunk.outputs.push_back(o);
            if (++calls > kMaxCalls)
                return Status(ErrorCode::Unsupported,
                              "more than " + std::to_string(kMaxCalls) + " GEMM calls");
            // The next index of the dims the host loops over, the last fastest.
            size_t j = dims.size();
            while (j-- > 0) {
                if (j == inner) continue;
                if (++index[j] < extent[j]) break;
                index[j] = 0;
            }
            if (j == size_t(-1)) break;
        }
        plan.chunks.push_back(std::move(chunk));
    }

    const size_t rows = size_t(chunkSlices * perSlice * L.lq);
    plan.scoresBytes = (rows * size_t(ld) * sizeof(float) + 255) / 256 * 256;  // P starts aligned
    plan.probsBytes = separateProbs ? rows * size_t(ld) * elem : 0;
    dk::AttentionSoftmaxParams& p = plan.softmax;
    p.type = type;
    p.batchRank = int(L.batchDims.size());
    for (size_t i = 0; i < L.batchDims.size(); ++i) {
        p.batchDims[i] = L.batchDims[i];
        p.maskBatchStrides[i] = L.batchStrides[AttentionLayout::Mask][i];
    }
    const StridedView& mask = L.view[AttentionLayout::Mask];
    const size_t r = mask.strides.size();
    p.maskRowStride = r >= 2 ? mask.strides[r - 2] : 0;
    p.maskColStride = r >= 1 ? mask.strides[r - 1] : 0;
    p.lq = L.lq;
    p.lk = L.lk;
    p.ld = ld;
    return plan;
}

Status runAttentionGemms(CudaDevice& device, const AttentionGemmPlan& plan,
                         const AttentionOperands& x, bool tf32) {
    auto scratch = device.workspace(plan.scoresBytes + plan.probsBytes);
    if (!scratch) return scratch.status();
    const dk::AttentionSoftmaxParams& softmax = plan.softmax;
    const size_t elem = size_t(dk::elemBytes(softmax.type));
    auto* scores = static_cast<float*>(*scratch);
    void* probs = plan.probsBytes ? static_cast<char*>(*scratch) + plan.scoresBytes : *scratch;
    auto at = [elem](const void* base, int64_t offset) {
        return static_cast<char*>(const_cast<void*>(base)) + size_t(offset) * elem;
    };
    for (const AttentionGemmChunk& chunk : plan.chunks) {
        for (const PlannedGemm& s : chunk.scores) {
            GemmCall call = s.call;
            call.a = at(x.q, s.aOffset);
            call.b = at(x.kt, s.bOffset);
            call.c = scores + s.cOffset;
            call.tf32 = tf32;
            FSC_RETURN_IF_ERROR(device.gemm(call));
        }
        DeviceLaunch l;
                dk::AttentionSoftmaxParams& p = l.set<dk::AttentionSoftmaxParams>();
        p = softmax;
        p.scores = scores;
        p.probs = probs;
        p.mask = x.mask;
        p.firstRow = chunk.firstBatch * softmax.lq;
        p.rows = chunk.batches * softmax.lq;
        const size_t cells = size_t(p.rows * p.ld);
        l.extents = {{scores, cells * sizeof(float), true, "scores"}};
        if (plan.probsBytes) l.extents.push_back({probs, cells * elem, true, "probabilities"});
        if (x.mask) l.extents.push_back({x.mask, x.maskBytes, false, "mask"});
        l.geometry = dk::rowGeometry(p.rows);
        FSC_RETURN_IF_ERROR(device.launch(l));
        for (const PlannedGemm& o : chunk.outputs) {
            GemmCall call = o.call;
            call.a = at(probs, o.aOffset);
            call.b = at(x.v, o.bOffset);
            call.c = at(x.out, o.cOffset);
            call.tf32 = tf32;
            FSC_RETURN_IF_ERROR(device.gemm(call));
        }
    }
    return Status::ok();
}

}  // namespace fsc
