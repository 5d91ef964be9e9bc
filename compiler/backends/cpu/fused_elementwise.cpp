// ai.fusescope.FusedElementwise on the CPU: runs the node's program over blocks of output
// elements, one op at a time over a whole block, so each step is a tight loop the C++
// compiler vectorizes (exp and sigmoid too: vector_math.h) and the block's registers stay in
// L1. Inputs broadcast numpy-style; one broadcast along the row (a per-channel scale) is a
// single value per row, never expanded where the step has a scalar form. A float32 program
// may read int32 inputs (a Cast to float32 that elementwise-fusion took in: an integer
// convolution's sums), converted as they are loaded into the block.
#include <cmath>
#include <type_traits>

#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/backends/cpu/fused_kernels.h"
#include "compiler/backends/cpu/vector_math.h"
#include "compiler/runtime/elementwise_program.h"

namespace fsc::cpu {
namespace {


template <typename T>
T expOf(T v) {
    if constexpr (std::is_same_v<T, float>) return expFast(v);
    else return std::exp(v);
}

template <typename T>
[[gnu::always_inline]] inline void step(EwOp op, const T* __restrict a, const T* __restrict b, T* __restrict y, int64_t n) {
    switch (op) {
        case EwOp::Add: for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i]; return;
        case EwOp::Sub: for (int64_t i = 0; i < n; ++i) y[i] = a[i] - b[i]; return;
        case EwOp::Mul: for (int64_t i = 0; i < n; ++i) y[i] = a[i] * b[i]; return;
        case EwOp::Div: for (int64_t i = 0; i < n; ++i) y[i] = a[i] / b[i]; return;
        case EwOp::Pow: for (int64_t i = 0; i < n; ++i) y[i] = std::pow(a[i], b[i]); return;
        case EwOp::Max: for (int64_t i = 0; i < n; ++i) y[i] = std::max(a[i], b[i]); return;
        case EwOp::Min: for (int64_t i = 0; i < n; ++i) y[i] = std::min(a[i], b[i]); return;
        case EwOp::Relu: for (int64_t i = 0; i < n; ++i) y[i] = a[i] > T(0) ? a[i] : T(0); return;
        case EwOp::Sigmoid: for (int64_t i = 0; i < n; ++i) y[i] = T(1) / (T(1) + expOf(-a[i])); return;
        case EwOp::Tanh:
            if constexpr (std::is_same_v<T, float>)
                for (int64_t i = 0; i < n; ++i) y[i] = tanhFast(a[i]);
            else
                for (int64_t i = 0; i < n; ++i) y[i] = std::tanh(a[i]);
            return;
        case EwOp::Exp: for (int64_t i = 0; i < n; ++i) y[i] = expOf(a[i]); return;
        case EwOp::Log: for (int64_t i = 0; i < n; ++i) y[i] = std::log(a[i]); return;
        case EwOp::Sqrt: for (int64_t i = 0; i < n; ++i) y[i] = std::sqrt(a[i]); return;
        case EwOp::Neg: for (int64_t i = 0; i < n; ++i) y[i] = -a[i]; return;
        case EwOp::Abs: for (int64_t i = 0; i < n; ++i) y[i] = std::abs(a[i]); return;
        case EwOp::Erf:
            if constexpr (std::is_same_v<T, float>)
                for (int64_t i = 0; i < n; ++i) y[i] = erfFast(a[i]);
            else
                for (int64_t i = 0; i < n; ++i) y[i] = std::erf(a[i]);
            return;
        case EwOp::Reciprocal: for (int64_t i = 0; i < n; ++i) y[i] = T(1) / a[i]; return;
        case EwOp::Floor: for (int64_t i = 0; i < n; ++i) y[i] = std::floor(a[i]); return;
        case EwOp::Ceil: for (int64_t i = 0; i < n; ++i) y[i] = std::ceil(a[i]); return;
        case EwOp::Sin: for (int64_t i = 0; i < n; ++i) y[i] = std::sin(a[i]); return;
        case EwOp::Cos: for (int64_t i = 0; i < n; ++i) y[i] = std::cos(a[i]); return;
    }
}

// The float steps built for AVX-512, AVX2 and the baseline, picked at load time.
[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void stepFloat(EwOp op, const float* __restrict a,
                                                                   const float* __restrict b, float* __restrict y,
                                                                   int64_t n) {
    step<float>(op, a, b, y, n);
}

template <typename T>
void runStep(EwOp op, const T* a, const T* b, T* y, int64_t n) {
    if constexpr (std::is_same_v<T, float>) stepFloat(op, a, b, y, n);
    else step<T>(op, a, b, y, n);
}

// int32 to float, rounding to nearest as Cast does.
[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void convertInt32(const int32_t* __restrict a,
                                                                       float* __restrict y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = float(a[i]);
}

// The block after this one of every input read in place, asked into L2 while this block's
// steps run: the steps go over the block one at a time, so otherwise the next block's loads
// start only when they are all done (an INT8 residual block's int32 sums and skip input).
template <typename T>
void prefetchNextBlock(const std::vector<const T*>& inputs, const std::vector<const int32_t*>& integers,
                       const std::vector<int64_t>& off, const BroadcastRows& plan, int64_t start, int64_t n) {
    constexpr int64_t kLine = 64;
    for (size_t k = 0; k < inputs.size(); ++k) {
        if (!plan.rowStride[k] || n <= 0) continue;
        const char* p = inputs[k] ? reinterpret_cast<const char*>(inputs[k] + off[k] + start)
                                  : reinterpret_cast<const char*>(integers[k] + off[k] + start);
        const int64_t bytes = n * int64_t(inputs[k] ? sizeof(T) : sizeof(int32_t));
        for (int64_t b = 0; b < bytes; b += kLine) __builtin_prefetch(p + b, 0, 2);
    }
}

// A binary step with one operand the same for the whole block (an input broadcast along the
// row, such as a per-channel scale, or a value computed from such inputs alone), so it is
// neither expanded into a register nor read back from one. False for ops without a
// scalar form here; the caller then expands the operand.
template <typename T>
[[gnu::always_inline]] inline bool stepWithScalar(EwOp op, const T* __restrict a, T b, bool scalarFirst,
                                                  T* __restrict y, int64_t n) {
    switch (op) {
        case EwOp::Add: for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b; return true;
        case EwOp::Mul: for (int64_t i = 0; i < n; ++i) y[i] = a[i] * b; return true;
        case EwOp::Max: for (int64_t i = 0; i < n; ++i) y[i] = std::max(a[i], b); return true;
        case EwOp::Min: for (int64_t i = 0; i < n; ++i) y[i] = std::min(a[i], b); return true;
        case EwOp::Sub:
            if (scalarFirst) for (int64_t i = 0; i < n; ++i) y[i] = b - a[i];
            else for (int64_t i = 0; i < n; ++i) y[i] = a[i] - b;
            return true;
        case EwOp::Div:
            if (scalarFirst) for (int64_t i = 0; i < n; ++i) y[i] = b / a[i];
            else for (int64_t i = 0; i < n; ++i) y[i] = a[i] / b;
            return true;
        default: return false;
    }
}

[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] bool stepFloatWithScalar(
    EwOp op, const float* __restrict a, float b, bool scalarFirst, float* __restrict y, int64_t n) {
    return stepWithScalar<float>(op, a, b, scalarFirst, y, n);
}

template <typename T>
bool runStepWithScalar(EwOp op, const T* a, T b, bool scalarFirst, T* y, int64_t n) {
    if constexpr (std::is_same_v<T, float>) return stepFloatWithScalar(op, a, b, scalarFirst, y, n);
    else return stepWithScalar<T>(op, a, b, scalarFirst, y, n);
}

// One register of a block: a run of n values, or one value standing for all of them.
template <typename T>
struct Register {
    const T* values = nullptr;
    bool scalar = false;
    T value{};
};

// Rows of the broadcast plan are cut into chunks so one long row (same-shape inputs merge
// into one) still spreads over the pool. Contiguous inputs are read in place; an input
// broadcast along the row is one scalar per row, and so is every step on scalars alone (a
// per-channel scale times a per-channel weight), computed once per block; a scalar is
// expanded into its register only for a step without a scalar form. `inputs[k]` is null
// where input k is int32, read from `integers[k]` and converted into its register instead.
template <typename T>
void runProgram(ThreadPool& pool, const ElementwiseProgram& program, const std::vector<const T*>& inputs,
                const std::vector<const int32_t*>& integers, T* out, const BroadcastRows& plan) {
    const size_t registers = size_t(program.outputRegister() + 1);
    // Long blocks amortize the per-op loop; all registers of a block should fit in L2.
    const int64_t kBlock = std::clamp<int64_t>(int64_t(65536 / registers), 128, 1024);
    const int64_t len = plan.rowLength;
    constexpr int64_t kChunk = 16384;
    const int64_t chunks = (len + kChunk - 1) / kChunk;
    pool.parallelFor(plan.rows * chunks, 1, [&](int64_t t0, int64_t t1) {
        std::vector<T> regs(registers * kBlock);
        std::vector<Register<T>> reg(registers);
        std::vector<int64_t> off(inputs.size());
        auto expanded = [&](size_t r, int64_t n) -> const T* {
            if (!reg[r].scalar) return reg[r].values;
            T* slot = regs.data() + r * kBlock;
            std::fill(slot, slot + n, reg[r].value);
            return slot;
        };
        for (int64_t task = t0; task < t1; ++task) {
            const int64_t row = task / chunks, first = (task % chunks) * kChunk;
            const int64_t last = std::min(len, first + kChunk);
            rowOffsets(plan, row, off.data());
            const int64_t o = row * len;
            for (int64_t start = first; start < last; start += kBlock) {
                const int64_t n = std::min(kBlock, last - start);
                prefetchNextBlock(inputs, integers, off, plan, start + n, std::min(kBlock, last - start - n));
                for (size_t k = 0; k < inputs.size(); ++k) {
                    if (!plan.rowStride[k]) {
                        reg[k] = {nullptr, true, inputs[k] ? inputs[k][off[k]] : T(integers[k][off[k]])};
                    } else if (inputs[k]) {
                        reg[k] = {inputs[k] + off[k] + start, false, T{}};
                    } else {
                        T* slot = regs.data() + k * kBlock;
                        const int32_t* src = integers[k] + off[k] + start;
                        if constexpr (std::is_same_v<T, float>) convertInt32(src, slot, n);
                        else std::copy(src, src + n, slot);
                        reg[k] = {slot, false, T{}};
                    }
                }
                for (size_t k = 0; k < program.code.size(); ++k) {
                    const auto& in = program.code[k];
                    const size_t target = size_t(program.inputs) + k;
                    const bool lastStep = k + 1 == program.code.size();
                    T* y = lastStep ? out + o + start : regs.data() + target * kBlock;
                    const Register<T>& a = reg[size_t(in.a)];
                    const Register<T>* b = in.b >= 0 ? &reg[size_t(in.b)] : nullptr;
                    if (a.scalar && (!b || b->scalar)) {  // the same for the whole block
                        T value{};
                        const T bValue = b ? b->value : T{};
                        runStep<T>(in.op, &a.value, b ? &bValue : nullptr, &value, 1);
                        if (lastStep) std::fill(y, y + n, value);
                        reg[target] = {nullptr, true, value};
                        continue;
                    }
                    if (b && (a.scalar || b->scalar)) {
                        const bool scalarFirst = a.scalar;
                        const Register<T>& vector = scalarFirst ? *b : a;
                        const T scalar = scalarFirst ? a.value : b->value;
                        if (runStepWithScalar<T>(in.op, vector.values, scalar, scalarFirst, y, n)) {
                            reg[target] = {y, false, T{}};
                            continue;
                        }
                    }
                    runStep<T>(in.op, expanded(size_t(in.a), n), b ? expanded(size_t(in.b), n) : nullptr, y, n);
                    reg[target] = {y, false, T{}};
                }
            }
        }
    });
}

}  // namespace

KernelFactory fusedElementwise() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        auto program = ElementwiseProgram::fromAttributes(init.getStrings("ops"), init.getInts("args"),
                                                          int(init.inputCount()));
        if (!program) return init.invalid(program.status().message());
        const Node& node = init.node();
        const DType declared = node.outputs.empty() || !node.outputs[0].valid()
                                   ? DType::Undefined
                                   : init.graph().value(node.outputs[0]).type.elemType;
        return std::unique_ptr<Kernel>(new FunctionKernel([p = *program, declared](KernelContext& ctx) -> Status {
            std::vector<const RtTensor*> ins;
            std::vector<const std::vector<int64_t>*> shapes;
            DType type = DType::Undefined;  // of the float inputs, and the output
            for (size_t k = 0; k < ctx.inputCount(); ++k) {
                const RtTensor* t = ctx.input(k);
                if (!t) return bad(ctx, "input " + std::to_string(k) + " is missing");
                if (t->dtype != DType::Int32 && type == DType::Undefined) type = t->dtype;
                else if (t->dtype != DType::Int32 && t->dtype != type) return bad(ctx, "inputs differ in dtype");
                ins.push_back(t);
                shapes.push_back(&t->dims);
            }
            if (type == DType::Undefined)  // int32 inputs only: the fused Cast's type
                type = declared == DType::Undefined ? DType::Float32 : declared;
            auto dims = broadcastShapes(ctx, shapes);
            if (!dims) return dims.status();
            auto out = ctx.output(0, type, *dims);
            if (!out) return out.status();
            if ((*out)->numel() == 0) return Status::ok();
            const BroadcastRows plan = planBroadcast(*dims, shapes);
            return dispatchFloat(ctx, type, [&](auto tag) -> Status {
                using T = decltype(tag);
                std::vector<const T*> data;
                std::vector<const int32_t*> ints;
                for (const RtTensor* t : ins) {
                    const bool integer = t->dtype == DType::Int32;
                    data.push_back(integer ? nullptr : t->as<T>());
                    ints.push_back(integer ? t->as<int32_t>() : nullptr);
                }
                runProgram<T>(ctx.pool(), p, data, ints, (*out)->template as<T>(), plan);
                return Status::ok();
            });
        }));
    };
}

}  // namespace fsc::cpu
