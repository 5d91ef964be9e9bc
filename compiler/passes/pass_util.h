#pragma once
// Small queries passes share: attributes with defaults, constants read as numbers, static
// shapes, and the typical "single reader" test of a fusion's inner values.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "compiler/rewriter.h"
#include "core/graph.h"

namespace fsc::passes {

int64_t intAttr(const Node& n, const std::string& name, int64_t fallback);
float floatAttr(const Node& n, const std::string& name, float fallback);
std::vector<int64_t> intsAttr(const Node& n, const std::string& name);
std::string stringAttr(const Node& n, const std::string& name, const std::string& fallback = {});

bool isOp(const Node& n, const char* opType);  // in the default ONNX domain

// All elements of a numeric constant as doubles (empty optional when not a constant or
// of a dtype we do not read).
std::optional<std::vector<double>> constantValues(const Rewriter& rw, ValueId v);
// A constant whose every element equals `x` (a scalar or a broadcast splat).
bool isConstantSplat(const Rewriter& rw, ValueId v, double x);
// The single value of a one-element constant.
std::optional<double> constantScalar(const Rewriter& rw, ValueId v);
std::optional<std::vector<int64_t>> constantInts(const Rewriter& rw, ValueId v);
// The lengths a Split node cuts `extent` into: its `split` input (opset 13 on) or attribute, else
// equal parts (the last one shorter under opset 18's num_outputs); none when they are not known.
std::optional<std::vector<int64_t>> splitSizes(const Rewriter& rw, const Node& split, int64_t extent);

// An inference BatchNormalization as the per-channel map y = x * scale + shift, from its
// constant gamma, beta, mean and var: scale = gamma / sqrt(var + epsilon), shift = beta -
// mean * scale. Empty when a statistic is not a constant or the four differ in length.
struct ChannelAffine {
    std::vector<double> scale, shift;
};
std::optional<ChannelAffine> batchNormAffine(const Rewriter& rw, const Node& batchNorm);

// Static dims of a value, when every dim is known.
std::optional<std::vector<int64_t>> staticDims(const Graph& g, ValueId v);
DType dtypeOf(const Graph& g, ValueId v);
// Bytes of a value of known rank, symbolic dims counted as 1 (0 when the rank is unknown):
// what a collective or a stage boundary carries per batch item of a dynamic batch.
double valueBytes(const Graph& g, ValueId v);
// Both shapes are fully known and equal (named dims match by name: batch == batch).
bool sameShape(const Graph& g, ValueId a, ValueId b);

// The node producing `v` when it is a live node of `opType` whose output `v` is read by
// `reader` alone (so fusing it into the reader loses nothing).
NodeId exclusiveProducer(const Rewriter& rw, ValueId v, const char* opType);

// Why every reader of `from` cannot simply read `to` instead, or empty: a graph output or
// a captured name must keep its name, which only a plain node output can take over.
std::string forwardBlocker(const Rewriter& rw, ValueId from, ValueId to);

// Random ops (and Dropout) give a different result per call: never folded or merged.
bool isRandomOp(const Node& n);

// Whether a node, a graph output or a subgraph (by name) reads any output of `id`.
bool anyOutputRead(const Rewriter& rw, NodeId id);

// Removes `id` when nothing reads its outputs any more (the first node of a pair whose
// second node was rewritten away).
void removeIfUnread(Rewriter& rw, NodeId id);

// A float32 tensor with the given values.
Tensor makeFloatTensor(std::vector<int64_t> dims, std::vector<float> values);
// Columns [begin, begin + width) of `t` read as `rows` rows, as a new tensor of `dims`: one
// part of a packed weight or bias.
Tensor columnBlock(const Tensor& t, int64_t rows, int64_t begin, int64_t width, std::vector<int64_t> dims);

}  // namespace fsc::passes

namespace fsc::passes {

// A node for a rewrite, named after the node it replaces and in its scope.
Node makeNode(const std::string& opType, const std::string& domain, const Node& replaced,
              std::vector<ValueId> inputs, std::vector<ValueId> outputs,
              std::vector<Attribute> attributes = {});

// The other input of a binary node, given one of them; invalid when `known` is not an input.
ValueId otherInput(const Node& n, ValueId known);

// Every node of `nodes` but the last has its outputs read only inside `nodes`, so the
// group can be replaced by one node producing the last one's output.
bool internalOnly(const Rewriter& rw, const std::vector<NodeId>& nodes);

// Float approximately equal (constants exported from Python literals).
inline bool near(double a, double b, double tol = 1e-4) { return std::abs(a - b) <= tol * std::max(1.0, std::abs(b)); }

// The relative tolerance `near` needs for a constant stored as `v`: float16 keeps 11
// significant bits and bfloat16 8, so a float16 model's sqrt(2) is 1.4140625.
double storedPrecision(const Rewriter& rw, ValueId v);

// The types the fused ops take besides float64: float32, and float16 and bfloat16, which
// their kernels load and store as such but compute in float32 (the CPU widens them).
inline bool isFusableFloat(DType t) { return t == DType::Float32 || t == DType::Float16 || t == DType::BFloat16; }

}  // namespace fsc::passes
