#pragma once
// What qdq-folding's patterns read off the QDQ form (fold_qdq.cpp, fold_qdq_operators.cpp).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/pass.h"
#include "compiler/rewriter.h"

namespace fsc::passes {

// A DequantizeLinear producing `v`, read back: its integer input, its constant scale (one,
// or one per channel) and its zero point (one value, however many elements hold it).
struct Dequantized {
    NodeId node;
    ValueId quantized, scale, zeroPoint;
    std::vector<double> scales;
    double zero = 0;
};
std::optional<Dequantized> dequantizedInput(const Rewriter& rw, ValueId v);

// The patterns of ops other than Conv/MatMul/Gemm: Add, Mul, GlobalAveragePool, and MaxPool or
// a reshaping op between a DequantizeLinear and a QuantizeLinear. Each declines with `declineAll` when
// it is not empty (a backend without the integer kernels).
std::vector<std::unique_ptr<RewritePattern>> qdqOperatorPatterns(const std::string& declineAll);

}  // namespace fsc::passes
