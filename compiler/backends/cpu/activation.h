#pragma once
// The activations a fused Conv, Gemm or MatMul applies in its epilogue (FusedConv's
// `activation` and `activation_params`), over a run of outputs while they are in cache.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "compiler/backends/cpu/vector_math.h"
#include "compiler/runtime/kernel.h"

namespace fsc::cpu {

// The activations an epilogue can apply, with their parameters.
struct Activation {
    enum class Kind { None, Relu, LeakyRelu, Clip, Sigmoid, Tanh, HardSigmoid, HardSwish, Gelu, GeluTanh, Swish };
    Kind kind = Kind::None;
    float a = 0, b = 0;  // LeakyRelu alpha; Clip min/max; HardSigmoid alpha/beta; Swish alpha

    static Result<Activation> fromInit(const KernelInit& init) {
        const std::string name = init.getString("activation", "");
        const std::vector<float> p = init.getFloats("activation_params");
        Activation act;
        auto param = [&](size_t i, float fallback) { return i < p.size() ? p[i] : fallback; };
        if (name.empty()) act.kind = Kind::None;
        else if (name == "Relu") act.kind = Kind::Relu;
        else if (name == "LeakyRelu") act = {Kind::LeakyRelu, param(0, 0.01f), 0};
        else if (name == "Clip") act = {Kind::Clip, param(0, -INFINITY), param(1, INFINITY)};
        else if (name == "Sigmoid") act.kind = Kind::Sigmoid;
        else if (name == "Tanh") act.kind = Kind::Tanh;
        else if (name == "HardSigmoid") act = {Kind::HardSigmoid, param(0, 0.2f), param(1, 0.5f)};
        else if (name == "HardSwish") act.kind = Kind::HardSwish;
        else if (name == "Gelu") act.kind = Kind::Gelu;
        else if (name == "GeluTanh") act.kind = Kind::GeluTanh;
        else if (name == "Swish") act = {Kind::Swish, param(0, 1.f), 0};  // x * Sigmoid(alpha x): SiLU, QuickGELU
        else return init.invalid("unknown activation '" + name + "'");
        return act;
    }

    template <typename T>
    void apply(T* __restrict x, int64_t n) const {
        switch (kind) {
            case Kind::None: return;
            case Kind::Relu:
                if constexpr (std::is_same_v<T, float>)
                    return reluArray(x, n);
                for (int64_t i = 0; i < n; ++i) x[i] = x[i] > T(0) ? x[i] : T(0);
                return;
            case Kind::LeakyRelu:
                if constexpr (std::is_same_v<T, float>)
                    return leakyReluArray(x, n, a);
                for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= T(0) ? x[i] : T(a) * x[i];
                return;
            case Kind::Clip:
                if constexpr (std::is_same_v<T, float>)
                    return clampArray(x, n, a, b);
                for (int64_t i = 0; i < n; ++i) x[i] = std::min(std::max(x[i], T(a)), T(b));
                return;
            case Kind::Sigmoid:
                if constexpr (std::is_same_v<T, float>)
                    sigmoidArray(x, x, n);
                else
                    for (int64_t i = 0; i < n; ++i) x[i] = T(1) / (T(1) + std::exp(-x[i]));
                return;
            case Kind::Swish:
                if constexpr (std::is_same_v<T, float>)
                    swishArray(x, x, n, a);
                else
                    for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (T(1) + std::exp(-T(a) * x[i]));
                return;
            case Kind::Tanh:
                if constexpr (std::is_same_v<T, float>)
                    tanhArray(x, x, n);
                else
                    for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
                return;
            case Kind::HardSigmoid:
                if constexpr (std::is_same_v<T, float>)
                    return hardSigmoidArray(x, n, a, b);
                for (int64_t i = 0; i < n; ++i) x[i] = std::max(T(0), std::min(T(1), T(a) * x[i] + T(b)));
                return;
            case Kind::HardSwish:
                if constexpr (std::is_same_v<T, float>)
                    return hardSwishArray(x, n);
                for (int64_t i = 0; i < n; ++i) x[i] = x[i] * std::max(T(0), std::min(T(1), x[i] / T(6) + T(0.5)));
                return;
            case Kind::Gelu:
                if constexpr (std::is_same_v<T, float>) {
                    geluArray(x, x, n);
                    return;
                }
                for (int64_t i = 0; i < n; ++i) x[i] = T(0.5) * x[i] * (T(1) + std::erf(x[i] * T(0.7071067811865476)));
                return;
            case Kind::GeluTanh:
                if constexpr (std::is_same_v<T, float>) {
                    geluTanhArray(x, x, n);
                    return;
                }
                for (int64_t i = 0; i < n; ++i)
                    x[i] = T(0.5) * x[i] * (T(1) + std::tanh(T(0.7978845608028654) * (x[i] + T(0.044715) * x[i] * x[i] * x[i])));
                return;
        }
    }
};

}  // namespace fsc::cpu
