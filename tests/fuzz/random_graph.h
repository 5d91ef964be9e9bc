#pragma once
// Random valid models for the compiler fuzzer. A byte string picks the ops, shapes and
// weights of a small graph written the way exporters write them (MLPs, attention with
// run-time Reshape targets, GELU, LayerNorm and RMSNorm written out, Conv + BatchNorm +
// activation, arithmetic on constants, repeated subexpressions, Identity and Dropout), and
// an order of passes to run over it.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/graph.h"

namespace fsc::fuzz {

// Reads choices from the fuzzer's bytes. Once they run out every choice is the first
// option, so every byte string, the empty one included, gives a valid graph.
class ByteSource {
public:
    ByteSource(const uint8_t* data, size_t size) : m_data(data), m_size(size) {}
    uint32_t below(uint32_t n);  // in [0, n)
    bool flip() { return below(2) == 1; }

private:
    const uint8_t* m_data;
    size_t m_size, m_position = 0;
};

struct RandomModel {
    Model model;  // exported and imported again, so it carries ONNX's inferred types
    std::map<std::string, int64_t> symbolSizes;  // the size to feed for each symbolic dim
    std::vector<std::string> steps;              // what the generator built, in order
};

// Fails only when the generator itself built something ONNX refuses (a generator bug).
Result<RandomModel> randomModel(ByteSource& bytes);
// 1 to 8 registered passes, repeats allowed, in any order.
std::vector<std::string> randomPassOrder(ByteSource& bytes);

}  // namespace fsc::fuzz
