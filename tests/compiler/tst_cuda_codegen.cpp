// Generated CUDA C++ for FusedElementwise nodes: the program's statements in the kernel,
// one kernel per element type, and NVRTC compiling every op of the table to PTX (no GPU
// needed), with the disk cache answering the second time. Running the kernels needs a GPU
// and is tested with the CUDA backend.
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <map>
#include <regex>

#include "compiler/backends/cuda/elementwise_codegen.h"
#include "compiler/backends/cuda/generated_kernels.h"
#include "compiler/backends/cuda/kernels/ew_ops.h"
#include "compiler/backends/cuda/kernels/generated_args.h"
#include "compiler/backends/cuda/nvrtc_compiler.h"
#include "compiler/runtime/fused_domain.h"
#include "core/graph_builder.h"

using namespace fsc;

namespace {

// Every op of the table once: unary ops chained on x0, binary ones folding in x1.
ElementwiseProgram everyOp() {
    const std::vector<std::string> unary = {"Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Neg", "Abs",
                                            "Erf", "Reciprocal", "Floor", "Ceil", "Sin", "Cos"};
    const std::vector<std::string> binary = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"};
    std::vector<std::string> ops;
    std::vector<int64_t> args;
    int last = 0;
    for (const std::string& op : unary) {
        ops.push_back(op);
        args.insert(args.end(), {last, -1});
        last = 2 + int(ops.size()) - 1;
    }
    for (const std::string& op : binary) {
        ops.push_back(op);
        args.insert(args.end(), {last, 1});
        last = 2 + int(ops.size()) - 1;
    }
    return *ElementwiseProgram::fromAttributes(ops, args, 2);
}

// `inputs` inputs summed: x0 + x1 + ... (a program of inputs - 1 Adds; one input: Relu).
ElementwiseProgram sumOf(int inputs) {
    std::vector<std::string> ops;
    std::vector<int64_t> args;
    if (inputs == 1) return *ElementwiseProgram::fromAttributes({"Relu"}, {0, -1}, 1);
    int last = 0;
    for (int i = 1; i < inputs; ++i) {
        ops.push_back("Add");
        args.insert(args.end(), {last, i});
        last = inputs + i - 1;
    }
    return *ElementwiseProgram::fromAttributes(ops, args, inputs);
}

}  // namespace

class TestCudaCodegen : public QObject {
    Q_OBJECT
private slots:
    void kernelCarriesTheProgram() {
        const ElementwiseProgram p = *ElementwiseProgram::fromAttributes({"Add", "Relu"}, {0, 1, 2, -1}, 2);
        const auto k = elementwiseCudaKernel(p, DType::Float32);
        QVERIFY(k);
        QVERIFY(k->name.rfind("fsc_ew_", 0) == 0);
        const QString src = QString::fromStdString(k->source);
        QVERIFY(src.contains(QStringLiteral("extern \"C\" __global__ void %1(").arg(QString::fromStdString(k->name))));
        QVERIFY(src.contains(QStringLiteral("const float t2 = ewApply(EwCode::Add, x0, x1);")));
        QVERIFY(src.contains(QStringLiteral("const float t3 = ewApply(EwCode::Relu, t2, 0.0f);")));
        // The op table the simulated device runs, carried verbatim.
        QVERIFY(src.contains(QString::fromUtf8(std::strstr(elementwiseOpsSource(), "FSC_HD float ewApply("))));
        QVERIFY(src.contains(QStringLiteral("fsc_store(out + i, t3);")));
        QVERIFY(src.contains(QStringLiteral("typedef float T;")));
        // 16-byte loads where nothing broadcasts, 32-bit offsets below 2^31 elements, 64-bit past.
        QVERIFY(src.contains(QStringLiteral("fsc_vector(in0, in1, out, (unsigned)v);")));
        QVERIFY(src.contains(QStringLiteral("fsc_element<unsigned>(in0, in1, out, b, (unsigned)i);")));
        QVERIFY(src.contains(QStringLiteral("fsc_element<long long>(in0, in1, out, b, i);")));
        // Another element type is another kernel; the same program and type, the same name.
        const auto half = elementwiseCudaKernel(p, DType::Float16);
        QVERIFY(half && half->name != k->name);
        QVERIFY(QString::fromStdString(half->source).contains(QStringLiteral("typedef __half T;")));
        QCOMPARE(elementwiseCudaKernel(p, DType::Float32)->name, k->name);
        const auto ints = elementwiseCudaKernel(p, DType::Int64);
        QVERIFY(!ints);
        QVERIFY(QString::fromStdString(ints.status().message()).contains(QStringLiteral("no kernel for int64")));
    }

    // Every op of the table becomes the call of its own code in the device's op table: a
    // table written here, so a swapped or renamed op fails by name.
    void everyOpCallsItsOwnCode() {
        const std::map<std::string, std::string> expected = {
            {"Add", "ewApply(EwCode::Add, x0, x1)"},         {"Sub", "ewApply(EwCode::Sub, x0, x1)"},
            {"Mul", "ewApply(EwCode::Mul, x0, x1)"},         {"Div", "ewApply(EwCode::Div, x0, x1)"},
            {"Pow", "ewApply(EwCode::Pow, x0, x1)"},         {"Max", "ewApply(EwCode::Max, x0, x1)"},
            {"Min", "ewApply(EwCode::Min, x0, x1)"},         {"Relu", "ewApply(EwCode::Relu, x0, 0.0f)"},
            {"Sigmoid", "ewApply(EwCode::Sigmoid, x0, 0.0f)"}, {"Tanh", "ewApply(EwCode::Tanh, x0, 0.0f)"},
            {"Exp", "ewApply(EwCode::Exp, x0, 0.0f)"},       {"Log", "ewApply(EwCode::Log, x0, 0.0f)"},
            {"Sqrt", "ewApply(EwCode::Sqrt, x0, 0.0f)"},     {"Neg", "ewApply(EwCode::Neg, x0, 0.0f)"},
            {"Abs", "ewApply(EwCode::Abs, x0, 0.0f)"},       {"Erf", "ewApply(EwCode::Erf, x0, 0.0f)"},
            {"Reciprocal", "ewApply(EwCode::Reciprocal, x0, 0.0f)"}, {"Floor", "ewApply(EwCode::Floor, x0, 0.0f)"},
            {"Ceil", "ewApply(EwCode::Ceil, x0, 0.0f)"},     {"Sin", "ewApply(EwCode::Sin, x0, 0.0f)"},
            {"Cos", "ewApply(EwCode::Cos, x0, 0.0f)"}};
        const auto types = elementwiseOpTypes();
        QCOMPARE(types.size(), expected.size());
        for (const std::string& op : types) {
            QVERIFY2(expected.count(op), op.c_str());
            const int arity = elementwiseArity(elementwiseOp(op, 2) ? *elementwiseOp(op, 2) : *elementwiseOp(op, 1));
            const auto p = ElementwiseProgram::fromAttributes({op}, {0, arity == 2 ? 1 : -1}, 2);
            QVERIFY(p);
            QCOMPARE(p->statements(true), "const float t2 = " + expected.at(op) + ";\n");
        }
    }

    // The device's maths of every op, run here as the simulated device and NVRTC's kernels
    // run it, against the op's definition in double precision, NaN and infinities included.
    void everyOpsDeviceMathsMatchItsDefinition() {
        const double nan = std::nan("");
        const std::map<std::string, double (*)(double, double)> definition = {
            {"Add", [](double a, double b) { return a + b; }},
            {"Sub", [](double a, double b) { return a - b; }},
            {"Mul", [](double a, double b) { return a * b; }},
            {"Div", [](double a, double b) { return a / b; }},
            {"Pow", [](double a, double b) { return std::pow(a, b); }},
            {"Max", [](double a, double b) { return std::isnan(a) || std::isnan(b) ? std::nan("") : a > b ? a : b; }},
            {"Min", [](double a, double b) { return std::isnan(a) || std::isnan(b) ? std::nan("") : a < b ? a : b; }},
            {"Relu", [](double a, double) { return std::isnan(a) ? 0.0 : a > 0 ? a : 0.0; }},
            {"Sigmoid", [](double a, double) { return 1 / (1 + std::exp(-a)); }},
            {"Tanh", [](double a, double) { return std::tanh(a); }},
            {"Exp", [](double a, double) { return std::exp(a); }},
            {"Log", [](double a, double) { return std::log(a); }},
            {"Sqrt", [](double a, double) { return std::sqrt(a); }},
            {"Neg", [](double a, double) { return -a; }},
            {"Abs", [](double a, double) { return std::abs(a); }},
            {"Erf", [](double a, double) { return std::erf(a); }},
            {"Reciprocal", [](double a, double) { return 1 / a; }},
            {"Floor", [](double a, double) { return std::floor(a); }},
            {"Ceil", [](double a, double) { return std::ceil(a); }},
            {"Sin", [](double a, double) { return std::sin(a); }},
            {"Cos", [](double a, double) { return std::cos(a); }}};
        const std::vector<double> xs = {-7.5, -2.25, -1, -0.3, 0, 0.3, 1, 2.25, 7.5, 90, -90};
        const std::vector<double> ys = {-1.5, 0.5, 2, 3};
        for (const std::string& op : elementwiseOpTypes()) {
            QVERIFY2(definition.count(op), op.c_str());
            const auto ewOp = elementwiseOp(op, 2) ? *elementwiseOp(op, 2) : *elementwiseOp(op, 1);
            const auto code = dk::EwCode(int(ewOp));
            for (double x : xs) {
                for (double y : ys) {
                    const double got = dk::ewApply(code, float(x), float(y));
                    const double want = float(definition.at(op)(float(x), float(y)));  // overflows as float does
                    const bool same = std::isnan(want)   ? std::isnan(got)
                                      : std::isinf(want) ? got == want
                                                         : std::abs(got - want) <= 2e-6 * std::abs(want) + 1e-7;
                    QVERIFY2(same, qPrintable(QStringLiteral("%1(%2, %3): %4, expected %5")
                                                  .arg(QString::fromStdString(op)).arg(x).arg(y).arg(got).arg(want)));
                }
            }
        }
        // NaN goes through Max and Min whichever side it is on (fmaxf would drop it).
        for (auto op : {dk::EwCode::Max, dk::EwCode::Min}) {
            QVERIFY(std::isnan(dk::ewApply(op, float(nan), 1.f)));
            QVERIFY(std::isnan(dk::ewApply(op, 1.f, float(nan))));
        }
        QCOMPARE(dk::ewApply(dk::EwCode::Sigmoid, -200.f, 0.f), 0.f);  // no inf / inf
    }

    void kernelsOfAGraph() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({4}));
        ValueId relu = b.op("Relu", {x}, "r", {}, "/r");
        ValueId y = b.op("FusedElementwise", {x, relu}, "y", {stringsAttr("ops", {"Mul"}), intsAttr("args", {0, 1})}, "/ew");
        b.output(y);
        Graph g = b.graph();
        for (NodeId id : g.order())
            if (g.node(id).opType == "FusedElementwise") g.node(id).domain = kFusescopeDomain;
        const auto kernels = generatedCudaKernels(g);
        QCOMPARE(kernels.size(), size_t(1));
        QCOMPARE(kernels[0].nodeName, std::string("/ew"));
        QVERIFY(kernels[0].error.empty());
        QVERIFY(kernels[0].kernel.source.find("const float t2 = ewApply(EwCode::Mul, x0, x1);") != std::string::npos);
        // Not a FusedElementwise: an error naming the node.
        for (NodeId id : g.order())
            if (g.node(id).opType == "Relu") {
                const auto none = cudaKernelForNode(g, g.node(id));
                QVERIFY(!none);
                QVERIFY(none.status().message().find("'/r' is not a FusedElementwise node") != std::string::npos);
            }
    }

    void nvrtcCompilesEveryOpAndCaches() {
        std::string why;
        if (!NvrtcCompiler::available(&why)) QSKIP(("skipped: " + why).c_str());
        QTemporaryDir cache;
        const NvrtcCompiler compiler(cache.path().toStdString());
        for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
            const auto k = elementwiseCudaKernel(everyOp(), t);
            QVERIFY(k);
            const auto ptx = compiler.compile(k->name, k->source);
            QVERIFY2(ptx, ptx ? "" : ptx.status().message().c_str());
            QVERIFY(!ptx->fromCache);
            QVERIFY(ptx->ptx.find(".entry " + k->name) != std::string::npos);  // the entry point, unmangled
            QVERIFY(std::filesystem::exists(ptx->cacheFile));
            const auto again = compiler.compile(k->name, k->source);
            QVERIFY(again && again->fromCache);
            QCOMPARE(again->ptx, ptx->ptx);
        }
        // A kernel NVRTC rejects: the error carries its log.
        const auto bad = compiler.compile("broken", "extern \"C\" __global__ void broken() { undeclared(); }");
        QVERIFY(!bad);
        QVERIFY2(bad.status().message().find("undeclared") != std::string::npos, bad.status().message().c_str());
    }

    // The arguments the GPU device passes a generated kernel have the layout NVRTC gave its
    // parameters: the PTX declares the broadcast struct's size and alignment, which the host
    // mirror (kernels/generated_args.h) must match for every input count.
    void generatedArgumentsMatchThePtx() {
        std::string why;
        if (!NvrtcCompiler::available(&why)) QSKIP(("skipped: " + why).c_str());
        QTemporaryDir cache;
        const NvrtcCompiler compiler(cache.path().toStdString());
        for (int n = 1; n <= dk::kEwMaxInputs; ++n) {
            const auto k = elementwiseCudaKernel(sumOf(n), DType::Float32);
            QVERIFY(k);
            const auto ptx = compiler.compile(k->name, k->source);
            QVERIFY2(ptx, ptx ? "" : ptx.status().message().c_str());
            // Parameters: n inputs and the output (pointers), the struct, the count.
            const std::regex param(k->name + "_param_(\\d+)(\\[(\\d+)\\])?");
            std::map<int, int> structBytes;
            int params = 0;
            for (std::sregex_iterator it(ptx->ptx.begin(), ptx->ptx.end(), param), end; it != end; ++it) {
                params = std::max(params, std::stoi((*it)[1]) + 1);
                if ((*it)[3].matched) structBytes[std::stoi((*it)[1])] = std::stoi((*it)[3]);
            }
            QCOMPARE(params, n + 3);
            QCOMPARE(int(structBytes.size()), 1);
            QCOMPARE(structBytes.begin()->first, n + 1);

            dk::EwParams p{};
            p.inputs = n;
            p.rank = 2;
            p.dims[0] = 3, p.dims[1] = 5;
            for (int i = 0; i < n; ++i) p.strides[i][0] = 5, p.strides[i][1] = 1, p.sameAsOutput[i] = i != 1;
            p.count = 15;
            dk::GeneratedArgs args = dk::generatedArgs(p);
            QCOMPARE(int(args.broadcastBytes), structBytes.begin()->second);
            void* pointers[dk::kEwMaxInputs + 3];
            QCOMPARE(args.pointers(pointers), n + 3);
            QCOMPARE(*static_cast<long long*>(pointers[n + 2]), 15LL);
            // The struct's fields where the generated code reads them: rank, dims from 8, n rows
            // of strides from 72, n flags, the all-flag.
            QCOMPARE(int(args.broadcastBytes), (72 + 68 * n + 4 + 7) / 8 * 8);
            int allSame = -1;
            std::memcpy(&allSame, args.broadcast + 72 + 68 * n, 4);
            QCOMPARE(allSame, n == 1 ? 1 : 0);
            long long dim1 = 0;
            std::memcpy(&dim1, args.broadcast + 16, 8);
            QCOMPARE(dim1, 5LL);
        }
    }
};

QTEST_GUILESS_MAIN(TestCudaCodegen)
#include "tst_cuda_codegen.moc"
