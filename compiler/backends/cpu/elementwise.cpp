// Element-wise kernels: unary math and activations, broadcasting binary ops, comparisons
// and logic, variadic Sum/Mean/Max/Min, Where, Clip, Cast.
#include <cmath>
#include <functional>
#include <limits>
#include <type_traits>

#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/backends/cpu/vector_math.h"
#include "compiler/runtime/half.h"

namespace fsc::cpu {
namespace {

// ---- unary ---------------------------------------------------------------------------

struct UnaryParams {
    float alpha = 0, beta = 0, gamma = 0;
    std::string mode;
};

// A unary op over floats (and ints where `ints` is set).
template <typename Op>
Status runUnary(KernelContext& ctx, Op op, bool ints) {
    const RtTensor* x = ctx.input(0);
    if (!x) return bad(ctx, "missing input");
    auto body = [&](auto tag) -> Status {
        using T = decltype(tag);
        auto out = ctx.output(0, x->dtype, x->dims);
        if (!out) return out.status();
        const T* in = x->as<T>();
        T* o = (*out)->template as<T>();
        ctx.pool().parallelFor(x->numel(), 32768, [&](int64_t b, int64_t e) {
            mapElements(in + b, o + b, e - b, op);
        });
        return Status::ok();
    };
    return ints ? dispatchNumeric(ctx, x->dtype, body) : dispatchFloat(ctx, x->dtype, body);
}

// A unary op whose float form is one of vector_math's whole-array functions (built for the
// CPU's full vector width: this file's loops are built for the baseline, four lanes, and
// GELU ran 4.6 ns per element through them); other types through `op`.
template <typename Op>
Status runUnaryArray(KernelContext& ctx, void (*floatArray)(const float*, float*, int64_t), Op op) {
    const RtTensor* x = ctx.input(0);
    if (!x) return bad(ctx, "missing input");
    if (x->dtype != DType::Float32) return runUnary(ctx, op, false);
    auto out = ctx.output(0, x->dtype, x->dims);
    if (!out) return out.status();
    const float* in = x->as<float>();
    float* o = (*out)->template as<float>();
    ctx.pool().parallelFor(x->numel(), 32768, [&](int64_t b, int64_t e) { floatArray(in + b, o + b, e - b); });
    return Status::ok();
}

// float through the vectorizable forms (vector_math.h); double through libm.
template <typename T>
T expOf(T v) {
    if constexpr (std::is_same_v<T, float>) return expFast(v);
    else return std::exp(v);
}

template <typename T>
T sigmoid(T v) {
    if constexpr (std::is_same_v<T, float>) return sigmoidFast(v);
    else return v >= 0 ? T(1) / (T(1) + std::exp(-v)) : std::exp(v) / (T(1) + std::exp(v));
}

KernelFactory unaryFloat(std::function<double(double, const UnaryParams&)> fn,
                         std::function<UnaryParams(const KernelInit&)> params = nullptr) {
    return [fn, params](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        UnaryParams p = params ? params(init) : UnaryParams{};
        return std::unique_ptr<Kernel>(new FunctionKernel([fn, p](KernelContext& ctx) {
            return runUnary(ctx, [&](auto v) { return decltype(v)(fn(double(v), p)); }, false);
        }));
    };
}

// Float ops written for float directly where speed matters (Relu, Sigmoid, Tanh, Exp...).
template <typename F>
KernelFactory unaryFast(F fn, bool ints = false) {
    return [fn, ints](const KernelInit&) -> Result<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(
            new FunctionKernel([fn, ints](KernelContext& ctx) { return runUnary(ctx, fn, ints); }));
    };
}

// ---- binary --------------------------------------------------------------------------

template <typename TIn, typename TOut, typename Op>
Status runBroadcast2(KernelContext& ctx, const RtTensor& a, const RtTensor& b, DType outType,
                     Op op) {
    auto dims = broadcastShapes(ctx, {&a.dims, &b.dims});
    if (!dims) return dims.status();
    auto out = ctx.output(0, outType, *dims);
    if (!out) return out.status();
    const TIn* pa = a.as<TIn>();
    const TIn* pb = b.as<TIn>();
    TOut* po = (*out)->template as<TOut>();
    if ((*out)->numel() == 0) return Status::ok();
    const BroadcastRows plan = planBroadcast(*dims, {&a.dims, &b.dims});
    const int64_t len = plan.rowLength;
    const int sa = int(plan.rowStride[0]), sb = int(plan.rowStride[1]);
    const int64_t total = (*out)->numel();
    if (sa && sb && len < total && ((a.numel() == total && b.numel() == len) || (b.numel() == total && a.numel() == len))) {
        // One operand a single row repeated over the other's rows (a per-channel scale on
        // NHWC): plain pointer steps instead of every short row's offsets worked out anew.
        const int64_t stepA = a.numel() == total ? len : 0, stepB = b.numel() == total ? len : 0;
        ctx.pool().parallelFor(total / len, std::max<int64_t>(1, 16384 / len), [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) {
                const TIn* ra = pa + r * stepA;
                const TIn* rb = pb + r * stepB;
                TOut* ro = po + r * len;
                for (int64_t i = 0; i < len; ++i) ro[i] = op(ra[i], rb[i]);
            }
        });
        return Status::ok();
    }
    forEachRow(ctx.pool(), plan, [&](int64_t o, const int64_t* off) {
        const TIn* ra = pa + off[0];
        const TIn* rb = pb + off[1];
        TOut* ro = po + o;
        // Separate loops per stride pattern so each one vectorises.
        if (sa && sb)
            for (int64_t i = 0; i < len; ++i) ro[i] = op(ra[i], rb[i]);
        else if (sa)
            for (int64_t i = 0; i < len; ++i) ro[i] = op(ra[i], rb[0]);
        else if (sb)
            for (int64_t i = 0; i < len; ++i) ro[i] = op(ra[0], rb[i]);
        else
            for (int64_t i = 0; i < len; ++i) ro[i] = op(ra[0], rb[0]);
    });
    return Status::ok();
}

enum class Arith { Add, Sub, Mul, Div, Pow, Mod, FMod, Max, Min, PRelu };

template <typename T>
T arith(Arith kind, T a, T b) {
    switch (kind) {
        case Arith::Add: return a + b;
        case Arith::Sub: return a - b;
        case Arith::Mul: return a * b;
        case Arith::Div:
            if constexpr (std::is_integral_v<T>) return b == 0 ? T(0) : T(a / b);
            else return a / b;
        case Arith::Pow: return T(std::pow(double(a), double(b)));
        case Arith::Mod:
            if constexpr (std::is_integral_v<T>) {
                if (b == 0) return T(0);
                T r = T(a % b);
                if (r != 0 && ((r < 0) != (b < 0))) r = T(r + b);
                return r;
            } else {
                T r = std::fmod(a, b);
                if (r != 0 && ((r < 0) != (b < 0))) r += b;
                return r;
            }
        case Arith::FMod:
            if constexpr (std::is_integral_v<T>) return b == 0 ? T(0) : T(a % b);
            else return std::fmod(a, b);
        case Arith::Max:
            if constexpr (std::is_floating_point_v<T>)
                if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
            return a > b ? a : b;
        case Arith::Min:
            if constexpr (std::is_floating_point_v<T>)
                if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
            return a < b ? a : b;
        case Arith::PRelu: return a < 0 ? T(a * b) : a;
    }
    return a;
}

template <typename T>
Status binaryArithTyped(KernelContext& ctx, Arith kind, const RtTensor& a, const RtTensor& b) {
    switch (kind) {  // hot ops get a fixed lambda so the loop vectorises
        case Arith::Add: return runBroadcast2<T, T>(ctx, a, b, a.dtype, [](T x, T y) { return T(x + y); });
        case Arith::Sub: return runBroadcast2<T, T>(ctx, a, b, a.dtype, [](T x, T y) { return T(x - y); });
        case Arith::Mul: return runBroadcast2<T, T>(ctx, a, b, a.dtype, [](T x, T y) { return T(x * y); });
        case Arith::Pow:
            // Squaring (variances written out): std::pow is a call per element, 12 ns here. A
            // float's square is exact in double, so x * x rounds as pow's result does.
            if constexpr (std::is_floating_point_v<T>)
                if (b.numel() == 1 && b.as<T>()[0] == T(2))
                    return runBroadcast2<T, T>(ctx, a, b, a.dtype, [](T x, T) { return T(x * x); });
            return runBroadcast2<T, T>(ctx, a, b, a.dtype, [](T x, T y) { return arith<T>(Arith::Pow, x, y); });
        default:
            return runBroadcast2<T, T>(ctx, a, b, a.dtype,
                                       [kind](T x, T y) { return arith<T>(kind, x, y); });
    }
}

// A binary op whose output may take input A's buffer: the memory plan gives it only when A
// is the output's size and nothing reads A later, and an A of the output's size is read at
// the output's own index, each element before it is written. Saves a buffer the size of
// the output (EfficientNet's squeeze-and-excitation scales).
class InPlaceBinaryKernel : public FunctionKernel {
public:
    using FunctionKernel::FunctionKernel;
    int inPlaceInput() const override { return 0; }
};

KernelFactory binaryArith(Arith kind) {
    return [kind](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        Arith k = kind;
        if (k == Arith::Mod && init.getInt("fmod", 0)) k = Arith::FMod;
        // Before opset 7 PRelu's 1-D slope applies per channel (axis 1).
        const bool legacyPRelu = k == Arith::PRelu && init.opset() < 7;
        return std::unique_ptr<Kernel>(new InPlaceBinaryKernel([k, legacyPRelu](KernelContext& ctx) -> Status {
            const RtTensor* a = ctx.input(0);
            const RtTensor* b = ctx.input(1);
            if (!a || !b) return bad(ctx, "needs two inputs");
            RtTensor slope;
            if (legacyPRelu && b->rank() == 1 && a->rank() >= 2 && b->dims[0] == a->dims[1] && b->dims[0] != 1) {
                slope = *b;
                slope.dims.assign(a->rank() - 1, 1);
                slope.dims[0] = b->dims[0];
                b = &slope;
            }
            if (k == Arith::Pow && a->dtype != b->dtype) {
                // Pow allows a different exponent type: compute in double.
                auto dims = broadcastShapes(ctx, {&a->dims, &b->dims});
                if (!dims) return dims.status();
                auto out = ctx.output(0, a->dtype, *dims);
                if (!out) return out.status();
                const BroadcastRows plan = planBroadcast(*dims, {&a->dims, &b->dims});
                RtTensor* o = *out;
                return dispatchNumeric(ctx, a->dtype, [&](auto tag) -> Status {
                    using T = decltype(tag);
                    T* po = o->as<T>();
                    for (int64_t r = 0; r < plan.rows; ++r) {
                        int64_t off[2];
                        rowOffsets(plan, r, off);
                        for (int64_t i = 0; i < plan.rowLength; ++i)
                            po[r * plan.rowLength + i] =
                                T(std::pow(elementAsDouble(*a, off[0] + i * plan.rowStride[0]),
                                           elementAsDouble(*b, off[1] + i * plan.rowStride[1])));
                    }
                    return Status::ok();
                });
            }
            if (a->dtype != b->dtype)
                return bad(ctx, "input dtypes differ: " + std::string(dtypeName(a->dtype)) +
                                    " and " + std::string(dtypeName(b->dtype)));
            return dispatchNumeric(ctx, a->dtype, [&](auto tag) {
                return binaryArithTyped<decltype(tag)>(ctx, k, *a, *b);
            });
        }));
    };
}

enum class Compare { Equal, Less, Greater, LessEq, GreaterEq };

KernelFactory comparison(Compare kind) {
    return [kind](const KernelInit&) -> Result<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(new FunctionKernel([kind](KernelContext& ctx) -> Status {
            const RtTensor* a = ctx.input(0);
            const RtTensor* b = ctx.input(1);
            if (!a || !b || a->dtype != b->dtype) return bad(ctx, "needs two inputs of one dtype");
            if (a->dtype == DType::String) {
                auto dims = broadcastShapes(ctx, {&a->dims, &b->dims});
                if (!dims) return dims.status();
                auto out = ctx.output(0, DType::Bool, *dims);
                if (!out) return out.status();
                const BroadcastRows plan = planBroadcast(*dims, {&a->dims, &b->dims});
                bool* o = (*out)->as<bool>();
                for (int64_t r = 0; r < plan.rows; ++r) {
                    int64_t off[2];
                    rowOffsets(plan, r, off);
                    for (int64_t i = 0; i < plan.rowLength; ++i)
                        o[r * plan.rowLength + i] =
                            (*a->strings)[off[0] + i * plan.rowStride[0]] ==
                            (*b->strings)[off[1] + i * plan.rowStride[1]];
                }
                return Status::ok();
            }
            return dispatchAll(ctx, a->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                switch (kind) {
                    case Compare::Equal: return runBroadcast2<T, bool>(ctx, *a, *b, DType::Bool, [](T x, T y) { return x == y; });
                    case Compare::Less: return runBroadcast2<T, bool>(ctx, *a, *b, DType::Bool, [](T x, T y) { return x < y; });
                    case Compare::Greater: return runBroadcast2<T, bool>(ctx, *a, *b, DType::Bool, [](T x, T y) { return x > y; });
                    case Compare::LessEq: return runBroadcast2<T, bool>(ctx, *a, *b, DType::Bool, [](T x, T y) { return x <= y; });
                    case Compare::GreaterEq: return runBroadcast2<T, bool>(ctx, *a, *b, DType::Bool, [](T x, T y) { return x >= y; });
                }
                return Status::ok();
            });
        }));
    };
}

enum class Bits { And, Or, Xor, BitAnd, BitOr, BitXor, ShiftLeft, ShiftRight };

KernelFactory bitwise(Bits kind) {
    return [kind](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        Bits k = kind;
        if (k == Bits::ShiftLeft && init.getString("direction", "LEFT") == "RIGHT") k = Bits::ShiftRight;
        return std::unique_ptr<Kernel>(new FunctionKernel([k](KernelContext& ctx) -> Status {
            const RtTensor* a = ctx.input(0);
            const RtTensor* b = ctx.input(1);
            if (!a || !b || a->dtype != b->dtype) return bad(ctx, "needs two inputs of one dtype");
            if (k == Bits::And || k == Bits::Or || k == Bits::Xor) {
                if (a->dtype != DType::Bool) return unsupportedType(ctx, a->dtype);
                if (k == Bits::And) return runBroadcast2<bool, bool>(ctx, *a, *b, DType::Bool, [](bool x, bool y) { return x && y; });
                if (k == Bits::Or) return runBroadcast2<bool, bool>(ctx, *a, *b, DType::Bool, [](bool x, bool y) { return x || y; });
                return runBroadcast2<bool, bool>(ctx, *a, *b, DType::Bool, [](bool x, bool y) { return x != y; });
            }
            auto typed = [&](auto tag) -> Status {
                using T = decltype(tag);
                if constexpr (std::is_integral_v<T>) {
                    return runBroadcast2<T, T>(ctx, *a, *b, a->dtype, [k](T x, T y) -> T {
                        switch (k) {
                            case Bits::BitAnd: return T(x & y);
                            case Bits::BitOr: return T(x | y);
                            case Bits::BitXor: return T(x ^ y);
                            case Bits::ShiftLeft: return y >= T(sizeof(T) * 8) ? T(0) : T(x << y);
                            case Bits::ShiftRight: return y >= T(sizeof(T) * 8) ? T(0) : T(x >> y);
                            default: return x;
                        }
                    });
                } else {
                    return unsupportedType(ctx, a->dtype);
                }
            };
            return dispatchAll(ctx, a->dtype, typed);
        }));
    };
}

// Sum, Mean, Max, Min over any number of inputs, broadcasting.
KernelFactory variadic(Arith kind, bool mean) {
    return [kind, mean](const KernelInit&) -> Result<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(new FunctionKernel([kind, mean](KernelContext& ctx) -> Status {
            std::vector<const std::vector<int64_t>*> shapes;
            for (size_t i = 0; i < ctx.inputCount(); ++i)
                if (ctx.input(i)) shapes.push_back(&ctx.input(i)->dims);
            if (shapes.empty()) return bad(ctx, "needs at least one input");
            auto dims = broadcastShapes(ctx, shapes);
            if (!dims) return dims.status();
            const DType type = ctx.input(0)->dtype;
            auto out = ctx.output(0, type, *dims);
            if (!out) return out.status();
            RtTensor* o = *out;
            return dispatchNumeric(ctx, type, [&](auto tag) -> Status {
                using T = decltype(tag);
                T* po = o->as<T>();
                bool first = true;
                for (size_t k = 0; k < ctx.inputCount(); ++k) {
                    const RtTensor* in = ctx.input(k);
                    if (!in) continue;
                    if (in->dtype != type) return bad(ctx, "inputs have different dtypes");
                    const BroadcastRows plan = planBroadcast(*dims, {dims.operator->(), &in->dims});
                    const T* pi = in->as<T>();
                    forEachRow(ctx.pool(), plan, [&](int64_t off, const int64_t* offs) {
                        const T* ri = pi + offs[1];
                        T* ro = po + off;
                        const int64_t s = plan.rowStride[1];
                        for (int64_t i = 0; i < plan.rowLength; ++i)
                            ro[i] = first ? ri[i * s] : arith<T>(kind, ro[i], ri[i * s]);
                    });
                    first = false;
                }
                if (mean) {
                    const T n = T(shapes.size());
                    const int64_t count = o->numel();
                    for (int64_t i = 0; i < count; ++i) po[i] = T(po[i] / n);
                }
                return Status::ok();
            });
        }));
    };
}

Status whereKernel(KernelContext& ctx) {
    const RtTensor* c = ctx.input(0);
    const RtTensor* x = ctx.input(1);
    const RtTensor* y = ctx.input(2);
    if (!c || !x || !y || c->dtype != DType::Bool || x->dtype != y->dtype)
        return bad(ctx, "needs a bool condition and two inputs of one dtype");
    auto dims = broadcastShapes(ctx, {&c->dims, &x->dims, &y->dims});
    if (!dims) return dims.status();
    auto out = ctx.output(0, x->dtype, *dims);
    if (!out) return out.status();
    RtTensor* o = *out;
    const BroadcastRows plan = planBroadcast(*dims, {&c->dims, &x->dims, &y->dims});
    if (x->dtype == DType::String) {
        for (int64_t r = 0; r < plan.rows; ++r) {
            int64_t off[3];
            rowOffsets(plan, r, off);
            for (int64_t i = 0; i < plan.rowLength; ++i)
                (*o->strings)[r * plan.rowLength + i] =
                    c->as<bool>()[off[0] + i * plan.rowStride[0]]
                        ? (*x->strings)[off[1] + i * plan.rowStride[1]]
                        : (*y->strings)[off[2] + i * plan.rowStride[2]];
        }
        return Status::ok();
    }
    return dispatchBySize(ctx, x->dtype, [&](auto tag) -> Status {
        using T = decltype(tag);
        const bool* pc = c->as<bool>();
        const T* px = x->as<T>();
        const T* py = y->as<T>();
        T* po = o->as<T>();
        forEachRow(ctx.pool(), plan, [&](int64_t off, const int64_t* offs) {
            const int64_t s0 = plan.rowStride[0], s1 = plan.rowStride[1], s2 = plan.rowStride[2];
            for (int64_t i = 0; i < plan.rowLength; ++i)
                po[off + i] = pc[offs[0] + i * s0] ? px[offs[1] + i * s1] : py[offs[2] + i * s2];
        });
        return Status::ok();
    });
}

// Clip: min/max as attributes (opset < 11) or optional inputs.
class ClipKernel : public Kernel {
public:
    ClipKernel(const KernelInit& init, Status&) {
        if (init.opset() < 11) {
            m_min = init.getFloat("min", -std::numeric_limits<float>::infinity());
            m_max = init.getFloat("max", std::numeric_limits<float>::infinity());
        }
    }
    Status compute(KernelContext& ctx) override {
        const RtTensor* x = ctx.input(0);
        if (!x) return bad(ctx, "missing input");
        return dispatchNumeric(ctx, x->dtype, [&](auto tag) -> Status {
            using T = decltype(tag);
            T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
            if constexpr (std::is_floating_point_v<T>) {
                lo = T(m_min);
                hi = T(m_max);
            }
            if (const RtTensor* mn = ctx.input(1); mn && mn->numel()) lo = mn->as<T>()[0];
            if (const RtTensor* mx = ctx.input(2); mx && mx->numel()) hi = mx->as<T>()[0];
            auto out = ctx.output(0, x->dtype, x->dims);
            if (!out) return out.status();
            const T* in = x->as<T>();
            T* o = (*out)->template as<T>();
            ctx.pool().parallelFor(x->numel(), 32768, [&](int64_t b, int64_t e) {
                mapElements(in + b, o + b, e - b, [lo, hi](T v) { return std::min(std::max(v, lo), hi); });
            });
            return Status::ok();
        });
    }

private:
    float m_min = -std::numeric_limits<float>::infinity();
    float m_max = std::numeric_limits<float>::infinity();
};

// ---- Cast ----------------------------------------------------------------------------

Status castTensor(const KernelContext& ctx, const RtTensor& in, RtTensor& out) {
    const int64_t n = in.numel();
    if (in.dtype == out.dtype) {
        if (in.dtype == DType::String) *out.strings = *in.strings;
        else std::memcpy(out.data, in.data, in.bytes());
        return Status::ok();
    }
    if (in.dtype == DType::String) {
        for (int64_t i = 0; i < n; ++i) {
            const std::string& s = (*in.strings)[i];
            double v = std::strtod(s.c_str(), nullptr);
            if (s == "INF" || s == "+INF" || s == "inf") v = INFINITY;
            if (s == "-INF" || s == "-inf") v = -INFINITY;
            switch (out.dtype) {
                case DType::Float16: out.as<uint16_t>()[i] = floatToHalf(float(v)); break;
                case DType::BFloat16: out.as<uint16_t>()[i] = floatToBfloat16(float(v)); break;
                default:
                    FSC_RETURN_IF_ERROR(dispatchAll(ctx, out.dtype, [&](auto tag) -> Status {
                        using T = decltype(tag);
                        out.as<T>()[i] = T(v);
                        return Status::ok();
                    }));
            }
        }
        return Status::ok();
    }
    if (out.dtype == DType::String) {
        for (int64_t i = 0; i < n; ++i) {
            const double v = elementAsDouble(in, i);
            char buf[64];
            if (isFloatingPoint(in.dtype)) {
                // The shortest form that reads back to the same value (as numpy prints).
                for (int precision = 1; precision <= 17; ++precision) {
                    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
                    if (in.dtype == DType::Float64 ? std::strtod(buf, nullptr) == v
                                                   : std::strtof(buf, nullptr) == float(v))
                        break;
                }
            }
            else std::snprintf(buf, sizeof buf, "%lld", (long long)elementAsInt(in, i));
            (*out.strings)[i] = buf;
        }
        return Status::ok();
    }
    // Read as double (int64 exactly), write as the target.
    const bool intSource = !isFloatingPoint(in.dtype);
    if (out.dtype == DType::Float16 || out.dtype == DType::BFloat16) {
        uint16_t* o = out.as<uint16_t>();
        for (int64_t i = 0; i < n; ++i) {
            const float v = float(elementAsDouble(in, i));
            o[i] = out.dtype == DType::Float16 ? floatToHalf(v) : floatToBfloat16(v);
        }
        return Status::ok();
    }
    return dispatchAll(ctx, out.dtype, [&](auto tag) -> Status {
        using T = decltype(tag);
        T* o = out.as<T>();
        if (intSource && std::is_integral_v<T>) {
            for (int64_t i = 0; i < n; ++i) o[i] = T(elementAsInt(in, i));
        } else if (in.dtype == DType::Float32) {
            const float* p = in.as<float>();
            for (int64_t i = 0; i < n; ++i) {
                if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
                    o[i] = std::isfinite(p[i]) ? T(p[i]) : T(0);
                else
                    o[i] = T(p[i]);
            }
        } else {
            for (int64_t i = 0; i < n; ++i) {
                const double v = elementAsDouble(in, i);
                if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
                    o[i] = std::isfinite(v) ? T(v) : T(0);
                else
                    o[i] = T(v);
            }
        }
        return Status::ok();
    });
}

KernelFactory castFactory(bool like) {
    return [like](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        DType to = DType::Undefined;
        if (!like) {
            auto t = dtypeFromOnnx(int32_t(init.getInt("to", 0)));
            if (!t) return init.invalid("attribute 'to' is not a known dtype");
            to = *t;
        }
        return std::unique_ptr<Kernel>(new FunctionKernel([to, like](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            if (!x) return bad(ctx, "missing input");
            DType target = to;
            if (like) {
                if (!ctx.input(1)) return bad(ctx, "missing target_type input");
                target = ctx.input(1)->dtype;
            }
            auto out = ctx.output(0, target, x->dims);
            if (!out) return out.status();
            if (x->dtype == DType::Int32 && target == DType::Float32) {  // integer accumulators to float: hot in INT8 graphs
                const int32_t* px = x->as<int32_t>();
                float* py = (*out)->as<float>();
                ctx.pool().parallelFor(x->numel(), 1 << 14, [&](int64_t b, int64_t e) {
                    for (int64_t i = b; i < e; ++i) py[i] = float(px[i]);
                });
                return Status::ok();
            }
            return castTensor(ctx, *x, **out);
        }));
    };
}

Status identity(KernelContext& ctx) {
    const RtTensor* x = ctx.input(0);
    if (!x) return bad(ctx, "missing input");
    if (x->isSequence()) return ctx.outputSequence(0, x->dtype, *x->sequence);
    auto out = ctx.output(0, x->dtype, x->dims);
    if (!out) return out.status();
    if (x->dtype == DType::String) *(*out)->strings = *x->strings;
    else if (x->bytes()) std::memcpy((*out)->data, x->data, x->bytes());
    return Status::ok();
}

UnaryParams alphaParam(const KernelInit& i, float fallback) {
    UnaryParams p;
    p.alpha = i.getFloat("alpha", fallback);
    return p;
}

}  // namespace
}  // namespace fsc::cpu

namespace fsc {
using namespace cpu;

void registerElementwiseKernels(KernelRegistry& r) {
    auto add = [&r](const std::string& op, KernelFactory f, bool halfViaFloat = true) {
        r.add(op, std::move(f), {.halfViaFloat = halfViaFloat});
    };
    add("Abs", unaryFast([](auto v) { return v < decltype(v)(0) ? decltype(v)(-v) : v; }, true));
    add("Neg", unaryFast([](auto v) { return decltype(v)(-v); }, true));
    add("Sign", unaryFast([](auto v) { return decltype(v)(v > decltype(v)(0) ? 1 : (v < decltype(v)(0) ? -1 : 0)); }, true));
    add("Relu", unaryFast([](auto v) { return v > decltype(v)(0) ? v : decltype(v)(0); }, true));
    add("Floor", unaryFast([](auto v) { return std::floor(v); }));
    add("Ceil", unaryFast([](auto v) { return std::ceil(v); }));
    add("Round", unaryFast([](auto v) { return std::nearbyint(v); }));
    add("Sqrt", unaryFast([](auto v) { return std::sqrt(v); }));
    add("Reciprocal", unaryFast([](auto v) { return decltype(v)(1) / v; }));
    add("Exp", [](const KernelInit&) -> Result<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(new FunctionKernel(
            [](KernelContext& ctx) { return runUnaryArray(ctx, expArray, [](auto v) { return expOf(v); }); }));
    });
    add("Log", unaryFast([](auto v) { return std::log(v); }));
    add("Tanh", [](const KernelInit&) -> Result<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(new FunctionKernel(
            [](KernelContext& ctx) { return runUnaryArray(ctx, tanhArray, [](auto v) { return std::tanh(v); }); }));
    });
    add("Sigmoid", [](const KernelInit&) -> Result<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(new FunctionKernel(
            [](KernelContext& ctx) { return runUnaryArray(ctx, sigmoidArray, [](auto v) { return sigmoid(v); }); }));
    });
    add("Erf", unaryFast([](auto v) {
        if constexpr (std::is_same_v<decltype(v), float>) return erfFast(v);
        else return std::erf(v);
    }));
    add("Sin", unaryFloat([](double v, const UnaryParams&) { return std::sin(v); }));
    add("Cos", unaryFloat([](double v, const UnaryParams&) { return std::cos(v); }));
    add("Tan", unaryFloat([](double v, const UnaryParams&) { return std::tan(v); }));
    add("Asin", unaryFloat([](double v, const UnaryParams&) { return std::asin(v); }));
    add("Acos", unaryFloat([](double v, const UnaryParams&) { return std::acos(v); }));
    add("Atan", unaryFloat([](double v, const UnaryParams&) { return std::atan(v); }));
    add("Sinh", unaryFloat([](double v, const UnaryParams&) { return std::sinh(v); }));
    add("Cosh", unaryFloat([](double v, const UnaryParams&) { return std::cosh(v); }));
    add("Asinh", unaryFloat([](double v, const UnaryParams&) { return std::asinh(v); }));
    add("Acosh", unaryFloat([](double v, const UnaryParams&) { return std::acosh(v); }));
    add("Atanh", unaryFloat([](double v, const UnaryParams&) { return std::atanh(v); }));
    add("Softplus", unaryFloat([](double v, const UnaryParams&) { return v > 0 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v)); }));
    add("Softsign", unaryFloat([](double v, const UnaryParams&) { return v / (1 + std::fabs(v)); }));
    add("Mish", unaryFloat([](double v, const UnaryParams&) { return v * std::tanh(std::log1p(std::exp(v))); }));
    // In the input's type, in lanes (through std::function and double, HardSigmoid took ten
    // times ONNX Runtime's time on MobileNetV3); a NaN stays NaN.
    add("HardSwish", unaryFast([](auto v) {
        using T = decltype(v);
        const T s = v / T(6) + T(0.5);
        return v * (s < T(0) ? T(0) : (s > T(1) ? T(1) : s));
    }));
    add("LeakyRelu", unaryFloat([](double v, const UnaryParams& p) { return v < 0 ? v * p.alpha : v; },
                                   [](const KernelInit& i) { return alphaParam(i, 0.01f); }));
    add("Elu", unaryFloat([](double v, const UnaryParams& p) { return v < 0 ? p.alpha * (std::exp(v) - 1) : v; },
                             [](const KernelInit& i) { return alphaParam(i, 1.0f); }));
    add("Celu", unaryFloat([](double v, const UnaryParams& p) { return std::max(0.0, v) + std::min(0.0, p.alpha * (std::exp(v / p.alpha) - 1)); },
                              [](const KernelInit& i) { return alphaParam(i, 1.0f); }));
    add("ThresholdedRelu", unaryFloat([](double v, const UnaryParams& p) { return v > p.alpha ? v : 0.0; },
                                         [](const KernelInit& i) { return alphaParam(i, 1.0f); }));
    add("Selu", unaryFloat([](double v, const UnaryParams& p) { return v <= 0 ? p.gamma * (p.alpha * std::exp(v) - p.alpha) : p.gamma * v; },
                              [](const KernelInit& i) {
                                  UnaryParams p;
                                  p.alpha = i.getFloat("alpha", 1.67326319217681884765625f);
                                  p.gamma = i.getFloat("gamma", 1.05070102214813232421875f);
                                  return p;
                              }));
    add("HardSigmoid", [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const float alpha = init.getFloat("alpha", 0.2f), beta = init.getFloat("beta", 0.5f);
        return std::unique_ptr<Kernel>(new FunctionKernel([alpha, beta](KernelContext& ctx) {
            return runUnary(ctx, [alpha, beta](auto v) {
                using T = decltype(v);
                const T s = T(alpha) * v + T(beta);
                return s < T(0) ? T(0) : (s > T(1) ? T(1) : s);
            }, false);
        }));
    });
    add("Shrink", unaryFloat([](double v, const UnaryParams& p) { return v < -p.gamma ? v + p.beta : (v > p.gamma ? v - p.beta : 0.0); },
                                [](const KernelInit& i) {
                                    UnaryParams p;
                                    p.beta = i.getFloat("bias", 0.0f);
                                    p.gamma = i.getFloat("lambd", 0.5f);
                                    return p;
                                }));
    add("Gelu", [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const bool tanhApprox = init.getString("approximate", "none") == "tanh";
        return std::unique_ptr<Kernel>(new FunctionKernel([tanhApprox](KernelContext& ctx) {
            if (tanhApprox)
                return runUnaryArray(ctx, geluTanhArray, [](auto v) {
                    using T = decltype(v);
                    return T(0.5) * v * (T(1) + std::tanh(T(0.7978845608028654) * (v + T(0.044715) * v * v * v)));
                });
            return runUnaryArray(ctx, geluArray, [](auto v) {
                using T = decltype(v);
                return T(0.5) * v * (T(1) + std::erf(v * T(0.7071067811865476)));
            });
        }));
    });
    add("IsNaN", [](const KernelInit&) -> Result<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(new FunctionKernel([](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            auto out = ctx.output(0, DType::Bool, x->dims);
            if (!out) return out.status();
            bool* po = (*out)->as<bool>();
            const int64_t n = x->numel();
            for (int64_t i = 0; i < n; ++i) po[i] = std::isnan(elementAsDouble(*x, i));
            return Status::ok();
        }));
    }, false);
    add("IsInf", [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const bool pos = init.getInt("detect_positive", 1), neg = init.getInt("detect_negative", 1);
        return std::unique_ptr<Kernel>(new FunctionKernel([pos, neg](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            auto out = ctx.output(0, DType::Bool, x->dims);
            if (!out) return out.status();
            bool* po = (*out)->as<bool>();
            const int64_t n = x->numel();
            for (int64_t i = 0; i < n; ++i) {
                const double v = elementAsDouble(*x, i);
                po[i] = std::isinf(v) && ((v > 0 && pos) || (v < 0 && neg));
            }
            return Status::ok();
        }));
    }, false);
    add("Not", [](const KernelInit&) -> Result<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(new FunctionKernel([](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            if (!x || x->dtype != DType::Bool) return bad(ctx, "needs a bool input");
            auto out = ctx.output(0, DType::Bool, x->dims);
            if (!out) return out.status();
            bool* po = (*out)->as<bool>();
            const bool* px = x->as<bool>();
            const int64_t n = x->numel();
            for (int64_t i = 0; i < n; ++i) po[i] = !px[i];
            return Status::ok();
        }));
    });
    add("BitwiseNot", [](const KernelInit&) -> Result<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(new FunctionKernel([](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            auto out = ctx.output(0, x->dtype, x->dims);
            if (!out) return out.status();
            return dispatchBySize(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                T* po = (*out)->template as<T>();
                const T* px = x->as<T>();
                const int64_t n = x->numel();
                for (int64_t i = 0; i < n; ++i) po[i] = T(~px[i]);
                return Status::ok();
            });
        }));
    });

    add("Add", binaryArith(Arith::Add));
    add("Sub", binaryArith(Arith::Sub));
    add("Mul", binaryArith(Arith::Mul));
    add("Div", binaryArith(Arith::Div));
    add("Pow", binaryArith(Arith::Pow));
    add("Mod", binaryArith(Arith::Mod));
    add("PRelu", binaryArith(Arith::PRelu));
    add("Sum", variadic(Arith::Add, false));
    add("Mean", variadic(Arith::Add, true));
    add("Max", variadic(Arith::Max, false));
    add("Min", variadic(Arith::Min, false));
    add("Equal", comparison(Compare::Equal));
    add("Less", comparison(Compare::Less));
    add("Greater", comparison(Compare::Greater));
    add("LessOrEqual", comparison(Compare::LessEq));
    add("GreaterOrEqual", comparison(Compare::GreaterEq));
    add("And", bitwise(Bits::And));
    add("Or", bitwise(Bits::Or));
    add("Xor", bitwise(Bits::Xor));
    add("BitwiseAnd", bitwise(Bits::BitAnd));
    add("BitwiseOr", bitwise(Bits::BitOr));
    add("BitwiseXor", bitwise(Bits::BitXor));
    add("BitShift", bitwise(Bits::ShiftLeft));
    add("Where", functionKernel(whereKernel), false);
    add("Clip", factoryOf<ClipKernel>());
    add("Cast", castFactory(false), false);
    add("CastLike", castFactory(true), false);
    add("Identity", functionKernel(identity), false);
}

}  // namespace fsc
