#include "views/op_category.h"

#include <set>

namespace fsc {

OpCategory opCategory(const std::string& domain, const std::string& op) {
    static const std::set<std::string> conv = {"Conv", "ConvTranspose", "FusedConv", "QLinearConv", "ConvInteger"};
    static const std::set<std::string> matmul = {"MatMul", "Gemm", "FusedMatMul", "FusedGemm", "MatMulInteger", "QLinearMatMul", "Einsum",
                                                 // ONNX Runtime's quantized and weight-only forms
                                                 "MatMulIntegerToFloat", "DynamicQuantizeMatMul", "MatMulNBits", "QGemm"};
    static const std::set<std::string> norm = {"BatchNormalization", "LayerNormalization", "SkipLayerNorm", "RmsNorm",
                                               "InstanceNormalization", "GroupNormalization", "LpNormalization", "Softmax",
                                               "LogSoftmax", "SkipLayerNormalization", "SkipSimplifiedLayerNormalization",
                                               "SimplifiedLayerNormalization", "EmbedLayerNormalization",
                                               "QEmbedLayerNormalization", "QLinearSoftmax"};
    static const std::set<std::string> act = {"Relu", "Sigmoid", "Tanh", "Gelu", "LeakyRelu", "Clip", "HardSwish",
                                              "HardSigmoid", "Elu", "Selu", "Softplus", "Mish", "PRelu", "Erf",
                                              "BiasGelu", "FastGelu", "QuickGelu", "QLinearSigmoid", "QLinearLeakyRelu"};
    static const std::set<std::string> elementwise = {"Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Exp", "Log", "Neg",
                                                      "Abs", "Reciprocal", "Max", "Min", "Where", "Equal", "Less",
                                                      "Greater", "Not", "And", "Or", "Floor", "Ceil", "Round", "Sin", "Cos",
                                                      "Cast", "Mod"};
    static const std::set<std::string> reduce = {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd",
                                                 "ReduceL2", "ArgMax", "ArgMin", "GlobalAveragePool", "GlobalMaxPool",
                                                 "MaxPool", "AveragePool", "TopK"};
    static const std::set<std::string> shape = {"Shape", "Size", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Constant",
                                                "ConstantOfShape", "Range", "Expand", "Identity", "Dropout"};
    static const std::set<std::string> memory = {"Transpose", "Concat", "Split", "Slice", "Gather", "GatherElements",
                                                 "GatherND", "ScatterND", "Pad", "Tile", "Resize", "DepthToSpace",
                                                 "SpaceToDepth", "NonZero"};
    static const std::set<std::string> control = {"If", "Loop", "Scan"};
    static const std::set<std::string> attention = {"Attention", "MultiHeadAttention", "QAttention", "GroupQueryAttention"};
    if (attention.count(op)) return OpCategory::Attention;
    if (conv.count(op)) return OpCategory::Convolution;
    if (matmul.count(op)) return OpCategory::MatMul;
    if (norm.count(op)) return OpCategory::Normalization;
    if (act.count(op)) return OpCategory::Activation;
    if (op == "FusedElementwise") return OpCategory::Fused;
    if (elementwise.count(op)) return OpCategory::Elementwise;
    if (reduce.count(op)) return OpCategory::Reduction;
    if (shape.count(op)) return OpCategory::Shape;
    if (memory.count(op)) return OpCategory::Memory;
    if (control.count(op)) return OpCategory::ControlFlow;
    return domain.empty() || domain == "ai.onnx" ? OpCategory::Other : OpCategory::Fused;
}

const char* opCategoryName(OpCategory c) {
    switch (c) {
        case OpCategory::Convolution: return "convolution";
        case OpCategory::MatMul: return "matmul";
        case OpCategory::Attention: return "attention";
        case OpCategory::Normalization: return "normalization";
        case OpCategory::Activation: return "activation";
        case OpCategory::Elementwise: return "element-wise";
        case OpCategory::Reduction: return "reduction / pool";
        case OpCategory::Shape: return "shape";
        case OpCategory::Memory: return "data movement";
        case OpCategory::ControlFlow: return "control flow";
        case OpCategory::Fused: return "fused";
        case OpCategory::Other: return "other";
    }
    return "other";
}

unsigned opCategoryColor(OpCategory c) {
    switch (c) {
        case OpCategory::Convolution: return 0x8fb8e8;
        case OpCategory::MatMul: return 0x9cc9a8;
        case OpCategory::Attention: return 0xe8a0c8;
        case OpCategory::Normalization: return 0xd9c7f0;
        case OpCategory::Activation: return 0xf5d08a;
        case OpCategory::Elementwise: return 0xf0e6b0;
        case OpCategory::Reduction: return 0xb8dde0;
        case OpCategory::Shape: return 0xdcdcdc;
        case OpCategory::Memory: return 0xc9d6c0;
        case OpCategory::ControlFlow: return 0xf2a99a;
        case OpCategory::Fused: return 0xf3b47e;
        case OpCategory::Other: return 0xe6e6e6;
    }
    return 0xe6e6e6;
}

}  // namespace fsc
