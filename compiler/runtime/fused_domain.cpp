#include "compiler/runtime/fused_domain.h"

#include <map>

namespace fsc {

bool isCollective(const std::string& domain, const std::string& opType) {
    return domain == kFusescopeDomain &&
           (opType == "AllReduce" || opType == "AllGather" || opType == "Send" || opType == "Recv");
}

std::string fusedOpSummary(const std::string& opType) {
    // Short forms of the table in docs/fused_ops.md.
    static const std::map<std::string, std::string> kSummaries = {
        {"FusedConv", "activation(Conv(X, W, B) + Z): Z (optional) and the activation are applied while the output is in cache"},
        {"FusedGemm", "activation(Gemm(A, B, C)) with the activation as a GEMM epilogue"},
        {"FusedMatMul", "activation(MatMul(A, B) + bias) with bias and activation as a GEMM epilogue"},
        {"Gelu", "ONNX 20's Gelu (approximate: none or tanh) for models of older opsets"},
        {"LayerNormalization", "ONNX 17's LayerNormalization for models of older opsets"},
        {"RmsNorm", "X / sqrt(mean(X^2) + epsilon) * scale over the last axes"},
        {"Attention", "Softmax(scale * Q.K^T + mask) . V with the head transposes read as strides; the scores "
                      "are never stored whole"},
        {"FusedElementwise", "a chain of element-wise ops run as one loop (its program in 'ops'/'args', the "
                             "generated C++ in 'source')"},
        {"QuantizedLookup", "Table[X] for 8-bit X: the float steps between a DequantizeLinear and a QuantizeLinear "
                            "that depend on one byte alone, computed for all 256 bytes when compiling"},
        {"SkipLayerNorm", "LayerNormalization(input + skip) over the last axis, optionally returning the sum"},
    };
    auto it = kSummaries.find(opType);
    return it == kSummaries.end() ? std::string() : it->second;
}

}  // namespace fsc
