#include "compiler/backends/cpu/relaid_constant.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <vector>

namespace fsc::cpu {

namespace {
std::atomic<int64_t> g_copyBytes{0};
std::atomic<int64_t> g_copyBudget{kDefaultCopyBudgetBytes};

// Claims bytes of the copy budget; false (and nothing claimed) when they do not fit.
bool claimCopyBytes(int64_t bytes) {
    int64_t held = g_copyBytes.load();
    do {
        if (held + bytes > g_copyBudget.load()) return false;
    } while (!g_copyBytes.compare_exchange_weak(held, held + bytes));
    return true;
}
}  // namespace

struct RelaidCopy {
    std::vector<float> values;
    // The constant's own storage: while the copy lives, no other constant can take its
    // address, which is the copy's key.
    std::shared_ptr<void> original;
    int64_t bytes = 0;
    ~RelaidCopy() { g_copyBytes -= bytes; }
};

namespace {
// The copy every kernel reading the constant in this layout shares; null when it has no
// owner or does not fit the budget.
std::shared_ptr<const RelaidCopy> sharedCopy(const RtTensor& constant, const RelaidKey& key,
                                             const std::function<void(float*)>& fill) {
    static std::mutex mutex;
    static std::map<RelaidKey, std::weak_ptr<const RelaidCopy>> copies;
    if (!constant.owner) return nullptr;
    const auto [address, k, n, transposed, ld] = key;
    std::lock_guard lock(mutex);
    if (auto it = copies.find(key); it != copies.end())
        if (auto alive = it->second.lock()) return alive;
    std::erase_if(copies, [](const auto& entry) { return entry.second.expired(); });
    const int64_t bytes = k * ld * int64_t(sizeof(float));
    if (!claimCopyBytes(bytes)) return nullptr;
    auto copy = std::make_shared<RelaidCopy>();
    copy->bytes = bytes;  // from here the destructor gives the bytes back, also on a throw
    copy->original = constant.owner;
    copy->values.assign(size_t(k * ld), 0.0f);
    fill(copy->values.data());
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

int64_t relaidBytesKept() { return g_copyBytes.load(); }

void setRelaidCopyBudgetBytes(int64_t bytes) { g_copyBudget = bytes; }

const float* RelaidConstant::of(const RtTensor& constant, int64_t k, int64_t n, bool transposed, int64_t ld) {
    return made(constant, RelaidKey{constant.data, k, n, transposed, ld}, [&](float* to) {
        const float* from = constant.as<float>();
        if (transposed)
            transposeMatrix(from, n, k, to, ld);
        else
            for (int64_t r = 0; r < k; ++r) std::memcpy(to + r * ld, from + r * n, size_t(n) * sizeof(float));
    });
}

const float* RelaidConstant::made(const RtTensor& constant, const RelaidKey& key, const std::function<void(float*)>& fill) {
    std::lock_guard lock(m_mutex);
    if (!m_keyed || m_key != key) {
        m_copy = sharedCopy(constant, key, fill);
        m_key = key;
        m_keyed = true;
    }
    return m_copy ? m_copy->values.data() : nullptr;
}

void RelaidConstant::reset() {
    std::lock_guard lock(m_mutex);
    m_copy.reset();
    m_keyed = false;
}

GemmB GemmConstant::of(const RtTensor& b, int64_t k, int64_t n, bool transposed) {
    const GemmB given{b.as<float>(), transposed ? k : n, transposed};
    const int64_t ld = unaliasedStride(n);
    if (!transposed && ld == n) {  // as given; a copy of an earlier constant goes
        m_copy.reset();
        return given;
    }
    const float* copy = m_copy.of(b, k, n, transposed, ld);
    return copy ? GemmB{copy, ld, false} : given;
}

}  // namespace fsc::cpu
