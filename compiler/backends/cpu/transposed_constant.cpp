#include "compiler/backends/cpu/transposed_constant.h"

#include <algorithm>

namespace fsc::cpu {

void transposeMatrix(const float* in, int64_t rows, int64_t cols, float* out) {
    constexpr int64_t kTile = 32;
    for (int64_t r0 = 0; r0 < rows; r0 += kTile)
        for (int64_t c0 = 0; c0 < cols; c0 += kTile)
            for (int64_t r = r0; r < std::min(rows, r0 + kTile); ++r)
                for (int64_t c = c0; c < std::min(cols, c0 + kTile); ++c) out[c * rows + r] = in[r * cols + c];
}

const float* TransposedConstant::of(const float* constant, int64_t rows, int64_t cols) {
    std::lock_guard lock(m_mutex);
    if (m_from != constant || m_transposed.size() != size_t(rows * cols)) {
        m_transposed.resize(size_t(rows * cols));
        transposeMatrix(constant, rows, cols, m_transposed.data());
        m_from = constant;
    }
    return m_transposed.data();
}

}  // namespace fsc::cpu
