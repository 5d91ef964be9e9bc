#include "compiler/backends/cpu/einsum_products.h"

#include <algorithm>
#include <map>
#include <vector>

#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/backends/cpu/gemm.h"

namespace fsc::cpu {
namespace {

// One dim of a gather or scatter: its size and the stride it has in the strided tensor.
struct Axis {
    int64_t size, stride;
};

// Visits every element of the dims in order (the last fastest), calling f(contiguous index,
// strided offset); the innermost dim in a loop of its own.
template <typename F>
void forEachElement(const std::vector<Axis>& axes, F f) {
    int64_t total = 1;
    for (const Axis& ax : axes) total *= ax.size;
    if (total == 0) return;
    if (axes.empty()) return f(0, 0);
    const Axis inner = axes.back();
    std::vector<int64_t> index(axes.size() - 1, 0);
    int64_t offset = 0;
    for (int64_t flat = 0; flat < total; flat += inner.size) {
        for (int64_t i = 0; i < inner.size; ++i) f(flat + i, offset + i * inner.stride);
        for (size_t d = index.size(); d-- > 0;) {
            offset += axes[d].stride;
            if (++index[d] < axes[d].size) break;
            offset -= axes[d].stride * axes[d].size;
            index[d] = 0;
        }
    }
}

}  // namespace

bool einsumByProducts(const std::string& termA, const std::string& termB, const std::string& termOut,
                      const RtTensor& a, const RtTensor& b, RtTensor& out) {
    if (a.dtype != DType::Float32 || b.dtype != DType::Float32 || out.dtype != DType::Float32) return false;
    std::map<char, int64_t> size;
    std::map<char, int64_t> strideA, strideB, strideOut;
    auto read = [&](const std::string& term, const std::vector<int64_t>& dims, std::map<char, int64_t>& strides) {
        const std::vector<int64_t> st = stridesOf(dims);
        for (size_t d = 0; d < term.size(); ++d) {
            if (strides.count(term[d])) return false;  // a diagonal
            auto [it, fresh] = size.emplace(term[d], dims[d]);
            if (!fresh && it->second != dims[d]) return false;  // broadcasting
            strides[term[d]] = st[d];
        }
        return true;
    };
    if (!read(termA, a.dims, strideA) || !read(termB, b.dims, strideB) || !read(termOut, out.dims, strideOut))
        return false;
    std::string batch, rows, summed, columns;
    for (const auto& [label, n] : size) {
        const bool inA = strideA.count(label), inB = strideB.count(label), inOut = strideOut.count(label);
        if (inA && inB) (inOut ? batch : summed) += label;
        else if (!inOut) return false;  // summed within one operand
        else (inA ? rows : columns) += label;
    }
    // Rows and columns in the output's order, so the scatter reads the product in long runs.
    auto byOutput = [&](std::string& labels) {
        std::sort(labels.begin(), labels.end(), [&](char x, char y) { return termOut.find(x) < termOut.find(y); });
    };
    byOutput(batch);
    byOutput(rows);
    byOutput(columns);
    auto axes = [&](const std::string& labels, const std::map<char, int64_t>& strides) {
        std::vector<Axis> result;
        for (char label : labels) result.push_back({size[label], strides.at(label)});
        return result;
    };
    auto count = [&](const std::string& labels) {
        int64_t n = 1;
        for (char label : labels) n *= size[label];
        return n;
    };
    const int64_t nb = count(batch), m = count(rows), k = count(summed), n = count(columns);
    std::vector<float> packedA(size_t(nb * m * k)), packedB(size_t(nb * k * n)), product(size_t(nb * m * n));
    const float* pa = a.as<float>();
    const float* pb = b.as<float>();
    forEachElement(axes(batch + rows + summed, strideA), [&](int64_t i, int64_t off) { packedA[size_t(i)] = pa[off]; });
    forEachElement(axes(batch + summed + columns, strideB), [&](int64_t i, int64_t off) { packedB[size_t(i)] = pb[off]; });
    for (int64_t e = 0; e < nb && m > 0 && n > 0 && k > 0; ++e)
        gemm(false, false, m, n, k, 1.f, packedA.data() + e * m * k, std::max<int64_t>(k, 1), packedB.data() + e * k * n,
             std::max<int64_t>(n, 1), 0.f, product.data() + e * m * n, std::max<int64_t>(n, 1));
    float* po = out.as<float>();
    forEachElement(axes(batch + rows + columns, strideOut), [&](int64_t i, int64_t off) { po[off] = product[size_t(i)]; });
    return true;
}

}  // namespace fsc::cpu
