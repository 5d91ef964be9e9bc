#pragma once
// The program of an ai.fusescope.FusedElementwise node: element-wise ops over registers,
// in SSA form. Registers 0..inputs-1 hold the node's inputs (broadcast to the output's
// shape); instruction k writes register inputs+k; the last register is the output. The
// node stores it as attributes `ops` (names) and `args` (two register numbers per op, -1
// when unused); the compiler also stores the C++ loop body generated from it (`source`).
// The CPU kernel runs the same program; both read the op table in the .cpp.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"

namespace fsc {

enum class EwOp { Add, Sub, Mul, Div, Pow, Max, Min, Relu, Sigmoid, Tanh, Exp, Log, Sqrt, Neg, Abs, Erf, Reciprocal, Floor, Ceil, Sin, Cos };

// The op of an ONNX node of the default domain with `inputs` inputs, when it is one of
// the table's.
std::optional<EwOp> elementwiseOp(const std::string& onnxOp, size_t inputs);
const char* elementwiseOpName(EwOp op);
int elementwiseArity(EwOp op);
// The ONNX op types of the table.
std::set<std::string> elementwiseOpTypes();

struct ElementwiseProgram {
    struct Instruction {
        EwOp op;
        int a = -1, b = -1;  // registers
    };
    int inputs = 0;
    std::vector<Instruction> code;

    int outputRegister() const { return inputs + int(code.size()) - 1; }

    // Reads the attributes back, checking every register is defined before it is read.
    static Result<ElementwiseProgram> fromAttributes(const std::vector<std::string>& ops,
                                                     const std::vector<int64_t>& args, int inputs);
    std::vector<std::string> opNames() const;
    std::vector<int64_t> args() const;

    // The C++ body of a loop over output elements, for float; `in<k>[o<k>]` is input k at
    // the element's broadcast offset and `out[i]` the output.
    std::string cppLoopBody() const;
    // One `const float tK = ...;` statement per instruction over registers x0.. (the inputs,
    // as float) in host C++, or in CUDA C++ as calls of the device's op table
    // (`ewApply(EwCode::Max, x0, x1)`, backends/cuda/kernels/ew_ops.h); the output is
    // register `outputRegisterName()`.
    std::string statements(bool cuda) const;
    std::string outputRegisterName() const { return "t" + std::to_string(outputRegister()); }
};

}  // namespace fsc
