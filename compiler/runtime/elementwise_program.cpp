#include "compiler/runtime/elementwise_program.h"

#include <array>

namespace fsc {
namespace {

struct OpInfo {
    EwOp op;
    const char* name;
    int arity;
    const char* cpp;  // expression over {a} (and {b}), host C++
};

constexpr std::array kOps = {
    OpInfo{EwOp::Add, "Add", 2, "{a} + {b}"},
    OpInfo{EwOp::Sub, "Sub", 2, "{a} - {b}"},
    OpInfo{EwOp::Mul, "Mul", 2, "{a} * {b}"},
    OpInfo{EwOp::Div, "Div", 2, "{a} / {b}"},
    OpInfo{EwOp::Pow, "Pow", 2, "std::pow({a}, {b})"},
    OpInfo{EwOp::Max, "Max", 2, "std::max({a}, {b})"},
    OpInfo{EwOp::Min, "Min", 2, "std::min({a}, {b})"},
    OpInfo{EwOp::Relu, "Relu", 1, "{a} > 0.0f ? {a} : 0.0f"},
    OpInfo{EwOp::Sigmoid, "Sigmoid", 1, "1.0f / (1.0f + std::exp(-{a}))"},
    OpInfo{EwOp::Tanh, "Tanh", 1, "std::tanh({a})"},
    OpInfo{EwOp::Exp, "Exp", 1, "std::exp({a})"},
    OpInfo{EwOp::Log, "Log", 1, "std::log({a})"},
    OpInfo{EwOp::Sqrt, "Sqrt", 1, "std::sqrt({a})"},
    OpInfo{EwOp::Neg, "Neg", 1, "-{a}"},
    OpInfo{EwOp::Abs, "Abs", 1, "std::abs({a})"},
    OpInfo{EwOp::Erf, "Erf", 1, "std::erf({a})"},
    OpInfo{EwOp::Reciprocal, "Reciprocal", 1, "1.0f / {a}"},
    OpInfo{EwOp::Floor, "Floor", 1, "std::floor({a})"},
    OpInfo{EwOp::Ceil, "Ceil", 1, "std::ceil({a})"},
    OpInfo{EwOp::Sin, "Sin", 1, "std::sin({a})"},
    OpInfo{EwOp::Cos, "Cos", 1, "std::cos({a})"},
};

const OpInfo& info(EwOp op) {
    for (const OpInfo& i : kOps)
        if (i.op == op) return i;
    return kOps[0];
}

std::string reg(const ElementwiseProgram& p, int r) {
    return r < p.inputs ? "x" + std::to_string(r) : "t" + std::to_string(r);
}

}  // namespace

std::optional<EwOp> elementwiseOp(const std::string& onnxOp, size_t inputs) {
    for (const OpInfo& i : kOps)
        if (onnxOp == i.name && inputs == size_t(i.arity)) return i.op;
    return std::nullopt;
}

const char* elementwiseOpName(EwOp op) { return info(op).name; }

std::set<std::string> elementwiseOpTypes() {
    std::set<std::string> types;
    for (const OpInfo& i : kOps) types.insert(i.name);
    return types;
}
int elementwiseArity(EwOp op) { return info(op).arity; }

Result<ElementwiseProgram> ElementwiseProgram::fromAttributes(const std::vector<std::string>& ops,
                                                              const std::vector<int64_t>& args, int inputs) {
    auto invalid = [](const std::string& why) { return Status(ErrorCode::InvalidModel, "FusedElementwise: " + why); };
    if (ops.empty()) return invalid("the program has no ops");
    if (args.size() != 2 * ops.size()) return invalid("`args` must hold two registers per op");
    ElementwiseProgram p;
    p.inputs = inputs;
    for (size_t k = 0; k < ops.size(); ++k) {
        bool known = false;
        for (const OpInfo& i : kOps) {
            if (ops[k] != i.name) continue;
            known = true;
            Instruction in{i.op, int(args[2 * k]), int(args[2 * k + 1])};
            const int defined = inputs + int(k);  // registers below this exist
            if (in.a < 0 || in.a >= defined || (i.arity == 2 && (in.b < 0 || in.b >= defined)))
                return invalid("op " + std::to_string(k) + " (" + ops[k] + ") reads a register not yet written");
            if (i.arity == 1) in.b = -1;
            p.code.push_back(in);
        }
        if (!known) return invalid("unknown op '" + ops[k] + "'");
    }
    return p;
}

std::vector<std::string> ElementwiseProgram::opNames() const {
    std::vector<std::string> names;
    for (const Instruction& i : code) names.push_back(info(i.op).name);
    return names;
}

std::vector<int64_t> ElementwiseProgram::args() const {
    std::vector<int64_t> out;
    for (const Instruction& i : code) {
        out.push_back(i.a);
        out.push_back(i.b);
    }
    return out;
}

std::string ElementwiseProgram::cppLoopBody() const {
    std::string s;
    for (int k = 0; k < inputs; ++k) s += "const float x" + std::to_string(k) + " = in" + std::to_string(k) + "[o" + std::to_string(k) + "];\n";
    s += statements(false);
    s += "out[i] = " + reg(*this, outputRegister()) + ";\n";
    return s;
}

std::string ElementwiseProgram::statements(bool cuda) const {
    std::string s;
    for (size_t k = 0; k < code.size(); ++k) {
        const Instruction& in = code[k];
        // CUDA: the op's code in the device's shared op table (kernels/ew_ops.h), which the
        // kernel source carries; the simulated device runs the same function.
        std::string expr = cuda ? std::string("ewApply(EwCode::") + info(in.op).name + ", {a}, " +
                                      (info(in.op).arity == 2 ? "{b}" : "0.0f") + ")"
                                : info(in.op).cpp;
        for (const auto& [mark, r] : {std::pair{std::string("{a}"), in.a}, std::pair{std::string("{b}"), in.b}})
            for (size_t at = expr.find(mark); at != std::string::npos; at = expr.find(mark))
                expr.replace(at, mark.size(), reg(*this, r));
        const std::string out = expr;
        s += "const float " + reg(*this, inputs + int(k)) + " = " + out + ";\n";
    }
    return s;
}

}  // namespace fsc
