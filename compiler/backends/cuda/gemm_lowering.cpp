#include "compiler/backends/cuda/gemm_lowering.h"

#include <algorithm>
#include <numeric>

namespace fsc {
namespace {

Status shapeError(const std::string& why) { return Status(ErrorCode::InvalidModel, why); }

std::string dimsText(const std::vector<int64_t>& d) {
    std::string s = "[";
    for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
    return s + "]";
}

int64_t product(const std::vector<int64_t>& d, size_t from, size_t to) {
    int64_t n = 1;
    for (size_t i = from; i < to; ++i) n *= d[i];
    return n;
}

// Bias and activation: fused into the calls where cuBLASLt can, a launch after them otherwise.
void placeEpilogue(GemmPlan& plan, bool hasBias, const GemmActivation& act) {
    plan.biasInEpilogue = hasBias;
    const bool fused = ltFusesActivation(act.kind);
    plan.separateEpilogue = !fused && act.kind != dk::Act::None;
    for (PlannedGemm& g : plan.calls)
        if (fused) {
            g.call.act = act.kind;
            g.call.actAlpha = act.alpha;
            g.call.actBeta = act.beta;
        }
}

}  // namespace

bool ltFusesActivation(dk::Act act) {
    return act == dk::Act::None || act == dk::Act::Relu || act == dk::Act::GeluTanh;
}

Result<GemmPlan> planMatMul(const std::vector<int64_t>& aDims, const std::vector<int64_t>& bDims,
                            const std::vector<int64_t>* bias, const GemmAttributes& attrs) {
    if (aDims.empty() || bDims.empty()) return shapeError("MatMul of a scalar");
    std::vector<int64_t> a = aDims, b = bDims;
    const bool aVector = a.size() == 1, bVector = b.size() == 1;
    if (aVector) a.insert(a.begin(), 1);
    if (bVector) b.push_back(1);
    const int64_t M = a[a.size() - 2], K = a.back(), N = b.back();
    if (b[b.size() - 2] != K)
        return shapeError("MatMul of " + dimsText(aDims) + " and " + dimsText(bDims) + ": inner dims differ");
    // Batch dims, right-aligned and broadcast.
    const size_t aBatchRank = a.size() - 2, bBatchRank = b.size() - 2;
    const size_t batchRank = std::max(aBatchRank, bBatchRank);
    std::vector<int64_t> aBatch(batchRank, 1), bBatch(batchRank, 1), outBatch(batchRank, 1);
    for (size_t i = 0; i < aBatchRank; ++i) aBatch[batchRank - aBatchRank + i] = a[i];
    for (size_t i = 0; i < bBatchRank; ++i) bBatch[batchRank - bBatchRank + i] = b[i];
    for (size_t i = 0; i < batchRank; ++i) {
        if (aBatch[i] != bBatch[i] && aBatch[i] != 1 && bBatch[i] != 1)
            return shapeError("MatMul of " + dimsText(aDims) + " and " + dimsText(bDims) + ": batch dims do not broadcast");
        outBatch[i] = std::max(aBatch[i], bBatch[i]);
    }
    if (bias && (bias->empty() ? 1 : std::accumulate(bias->begin(), bias->end(), int64_t(1), std::multiplies<>())) != N)
        return shapeError("FusedMatMul: the bias must hold one value per output column (" + std::to_string(N) + ")");

    GemmPlan plan;
    plan.outputDims = outBatch;
    if (!aVector) plan.outputDims.push_back(M);
    if (!bVector) plan.outputDims.push_back(N);
    plan.m = M;
    plan.n = N;
    const int64_t batches = product(outBatch, 0, batchRank);
    const int64_t aCount = product(aBatch, 0, batchRank), bCount = product(bBatch, 0, batchRank);
    GemmCall base;
    base.m = M;
    base.n = N;
    base.k = K;
    base.lda = std::max<int64_t>(K, 1);  // leading dims of empty matrices are still at least 1
    base.ldb = std::max<int64_t>(N, 1);
    base.ldc = std::max<int64_t>(N, 1);
    if (bCount == 1) {
        // One B for every batch: the batches of A are rows of one taller product.
        GemmCall c = base;
        c.m = M * batches;
        plan.calls.push_back({c, 0, 0, 0});
    } else if (aCount == 1 || aBatch == bBatch) {
        GemmCall c = base;
        c.batch = batches;
        c.strideA = aCount == 1 ? 0 : M * K;
        c.strideB = K * N;
        c.strideC = M * N;
        plan.calls.push_back({c, 0, 0, 0});
    } else {
        // Mixed broadcasting ([2,1,M,K] x [1,3,K,N]): one call per output batch.
        for (int64_t i = 0; i < batches; ++i) {
            int64_t rest = i, ai = 0, bi = 0, aStride = 1, bStride = 1;
            for (size_t d = batchRank; d-- > 0;) {
                const int64_t c = rest % outBatch[d];
                rest /= outBatch[d];
                ai += (aBatch[d] == 1 ? 0 : c) * aStride;
                bi += (bBatch[d] == 1 ? 0 : c) * bStride;
                aStride *= aBatch[d];
                bStride *= bBatch[d];
            }
            plan.calls.push_back({base, ai * M * K, bi * K * N, i * M * N});
        }
    }
    placeEpilogue(plan, bias != nullptr, attrs.activation);
    return plan;
}

Result<GemmPlan> planGemm(const std::vector<int64_t>& a, const std::vector<int64_t>& b, const std::vector<int64_t>* c,
                          const GemmAttributes& attrs) {
    if (a.size() != 2 || b.size() != 2) return shapeError("Gemm needs 2-D A and B, got " + dimsText(a) + " and " + dimsText(b));
    const int64_t M = attrs.transA ? a[1] : a[0], K = attrs.transA ? a[0] : a[1];
    const int64_t Kb = attrs.transB ? b[1] : b[0], N = attrs.transB ? b[0] : b[1];
    if (K != Kb) return shapeError("Gemm of " + dimsText(a) + " and " + dimsText(b) + ": inner dims differ");
    GemmPlan plan;
    plan.outputDims = {M, N};
    plan.m = M;
    plan.n = N;
    GemmCall call;
    call.transA = attrs.transA;
    call.transB = attrs.transB;
    call.m = M;
    call.n = N;
    call.k = K;
    call.lda = std::max<int64_t>(a[1], 1);
    call.ldb = std::max<int64_t>(b[1], 1);
    call.ldc = std::max<int64_t>(N, 1);
    call.alpha = attrs.alpha;
    bool bias = false;
    if (c && attrs.beta != 0.f) {
        if (c->size() > 2) return shapeError("Gemm's C has rank above 2");
        const int64_t cRows = c->size() == 2 ? (*c)[0] : 1, cCols = c->empty() ? 1 : c->back();
        if ((cRows != 1 && cRows != M) || (cCols != 1 && cCols != N))
            return shapeError("Gemm's C " + dimsText(*c) + " does not broadcast to [" + std::to_string(M) + "," + std::to_string(N) + "]");
        if (cRows == 1 && cCols == N && attrs.beta == 1.f) {
            bias = true;
        } else {
            plan.prefillFromBias = true;
            call.beta = attrs.beta;
        }
    }
    plan.calls.push_back({call, 0, 0, 0});
    placeEpilogue(plan, bias, attrs.activation);
    return plan;
}

const char* ltEpilogueName(LtEpilogue e) {
    switch (e) {
        case LtEpilogue::Default: return "CUBLASLT_EPILOGUE_DEFAULT";
        case LtEpilogue::Relu: return "CUBLASLT_EPILOGUE_RELU";
        case LtEpilogue::Bias: return "CUBLASLT_EPILOGUE_BIAS";
        case LtEpilogue::ReluBias: return "CUBLASLT_EPILOGUE_RELU_BIAS";
        case LtEpilogue::Gelu: return "CUBLASLT_EPILOGUE_GELU";
        case LtEpilogue::GeluBias: return "CUBLASLT_EPILOGUE_GELU_BIAS";
    }
    return "?";
}

Result<LtMatmulPlan> describeForLt(const GemmCall& call) {
    FSC_RETURN_IF_ERROR(checkGemmCall(call));
    if (!ltFusesActivation(call.act))
        return Status(ErrorCode::Internal, "cuBLASLt has no epilogue for this activation; run it as a separate launch");
    LtMatmulPlan p;
    p.m = call.n;
    p.n = call.m;
    p.k = call.k;
    p.batch = int32_t(call.batch);
    // cuBLASLt's A is our B: row-major k x n (ld ldb) is column-major n x k.
    p.transA = call.transB;
    p.a = call.transB ? LtMatrixLayout{uint64_t(call.k), uint64_t(call.n), call.ldb, call.strideB}
                      : LtMatrixLayout{uint64_t(call.n), uint64_t(call.k), call.ldb, call.strideB};
    // cuBLASLt's B is our A: row-major m x k (ld lda) is column-major k x m.
    p.transB = call.transA;
    p.b = call.transA ? LtMatrixLayout{uint64_t(call.m), uint64_t(call.k), call.lda, call.strideA}
                      : LtMatrixLayout{uint64_t(call.k), uint64_t(call.m), call.lda, call.strideA};
    p.c = {uint64_t(call.n), uint64_t(call.m), call.ldc, call.strideC};
    const bool bias = call.bias != nullptr;  // per row of the column-major D: our columns
    switch (call.act) {
        case dk::Act::Relu: p.epilogue = bias ? LtEpilogue::ReluBias : LtEpilogue::Relu; break;
        case dk::Act::GeluTanh: p.epilogue = bias ? LtEpilogue::GeluBias : LtEpilogue::Gelu; break;
        default: p.epilogue = bias ? LtEpilogue::Bias : LtEpilogue::Default; break;
    }
    p.key = std::to_string(int(call.type)) + ":" + std::to_string(p.transA) + std::to_string(p.transB) + ":" +
            std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) + ":" + std::to_string(p.a.ld) +
            "," + std::to_string(p.b.ld) + "," + std::to_string(p.c.ld) + ":b" + std::to_string(p.batch) + ":" +
            std::to_string(p.a.batchStride) + "," + std::to_string(p.b.batchStride) + "," + std::to_string(p.c.batchStride) +
            ":" + ltEpilogueName(p.epilogue) + (call.beta != 0.f ? ":beta" : "") +
            (call.floatOutput ? ":f32out" : "");
    return p;
}

}  // namespace fsc
