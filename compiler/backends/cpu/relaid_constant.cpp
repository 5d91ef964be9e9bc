#include "compiler/backends/cpu/relaid_constant.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <tuple>

namespace fsc::cpu {

namespace {
std::atomic<int64_t> g_gemmCopyBytes{0};
std::atomic<int64_t> g_gemmCopyBudget{GemmConstant::kDefaultCopyBudgetBytes};

// Claims bytes of the copy budget; false (and nothing claimed) when they do not fit.
bool claimCopyBytes(int64_t bytes) {
    int64_t held = g_gemmCopyBytes.load();
    do {
        if (held + bytes > g_gemmCopyBudget.load()) return false;
    } while (!g_gemmCopyBytes.compare_exchange_weak(held, held + bytes));
    return true;
}
}  // namespace

struct KeptGemmB {
    std::vector<float> values;
    int64_t ld = 0;
    // The constant's own storage: while the copy lives, no other constant can take its
    // address, which is the copy's key.
    std::shared_ptr<void> original;
    int64_t bytes = 0;
    ~KeptGemmB() { g_gemmCopyBytes -= bytes; }
};

namespace {
// The copy of B every kernel reading it shares; null when it does not fit the budget.
std::shared_ptr<const KeptGemmB> sharedCopy(const RtTensor& b, int64_t k, int64_t n, bool transposed, int64_t ld) {
    static std::mutex mutex;
    static std::map<GemmKey, std::weak_ptr<const KeptGemmB>> copies;
    // Without an owner the constant's address could be taken by another while a kernel
    // still holds the copy: no copy then.
    if (!b.owner) return nullptr;
    std::lock_guard lock(mutex);
    const GemmKey key{b.data, k, n, transposed};
    if (auto it = copies.find(key); it != copies.end())
        if (auto alive = it->second.lock()) return alive;
    std::erase_if(copies, [](const auto& entry) { return entry.second.expired(); });
    const int64_t bytes = k * ld * int64_t(sizeof(float));
    if (!claimCopyBytes(bytes)) return nullptr;
    auto copy = std::make_shared<KeptGemmB>();
    copy->bytes = bytes;  // from here the destructor gives the bytes back, also on a throw
    copy->ld = ld;
    copy->original = b.owner;
    copy->values.assign(size_t(k * ld), 0.0f);
    const float* from = b.as<float>();
    if (transposed)
        transposeMatrix(from, n, k, copy->values.data(), ld);
    else
        for (int64_t r = 0; r < k; ++r) std::memcpy(copy->values.data() + r * ld, from + r * n, size_t(n) * sizeof(float));
    copies[key] = copy;
    return copy;
}
}  // namespace

void transposeMatrix(const float* in, int64_t rows, int64_t cols, float* out, int64_t outStride) {
    if (outStride == 0) outStride = rows;
    constexpr int64_t kTile = 32;
    for (int64_t r0 = 0; r0 < rows; r0 += kTile)
        for (int64_t c0 = 0; c0 < cols; c0 += kTile)
            for (int64_t r = r0; r < std::min(rows, r0 + kTile); ++r)
                for (int64_t c = c0; c < std::min(cols, c0 + kTile); ++c) out[c * outStride + r] = in[r * cols + c];
}

int64_t unaliasedStride(int64_t cols) {
    constexpr int64_t kAliasFloats = 4096 / sizeof(float);
    return cols > 0 && cols % kAliasFloats == 0 ? cols + 16 : cols;
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

int64_t GemmConstant::bytesKept() { return g_gemmCopyBytes.load(); }

void GemmConstant::setCopyBudgetBytes(int64_t bytes) { g_gemmCopyBudget = bytes; }

GemmB GemmConstant::of(const RtTensor& b, int64_t k, int64_t n, bool transposed) {
    const GemmB given{b.as<float>(), transposed ? k : n, transposed};
    const int64_t ld = unaliasedStride(n);
    std::lock_guard lock(m_mutex);
    if (!transposed && ld == n) {  // as given; a copy of an earlier constant goes
        m_copy.reset();
        m_keyed = false;
        return given;
    }
    const GemmKey key{b.data, k, n, transposed};
    if (!m_keyed || m_key != key) {  // once per constant, also when the budget said no
        m_copy = sharedCopy(b, k, n, transposed, ld);
        m_key = key;
        m_keyed = true;
    }
    if (!m_copy) return given;
    return {m_copy->values.data(), ld, false};
}

}  // namespace fsc::cpu
