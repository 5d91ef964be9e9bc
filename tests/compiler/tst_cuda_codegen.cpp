// Generated CUDA C++ for FusedElementwise nodes: the program's statements in the kernel,
// one kernel per element type, and NVRTC compiling every op of the table to PTX (no GPU
// needed), with the disk cache answering the second time. Running the kernels needs a GPU
// and is tested with the CUDA backend.
#include <QTemporaryDir>
#include <QTest>

#include "compiler/backends/cuda/elementwise_codegen.h"
#include "compiler/backends/cuda/generated_kernels.h"
#include "compiler/backends/cuda/nvrtc_compiler.h"
#include "compiler/fused_domain.h"
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
        QVERIFY(src.contains(QStringLiteral("const float t2 = x0 + x1;")));
        QVERIFY(src.contains(QStringLiteral("const float t3 = t2 > 0.0f ? t2 : 0.0f;")));
        QVERIFY(src.contains(QStringLiteral("fsc_store(out + i, t3);")));
        QVERIFY(src.contains(QStringLiteral("typedef float T;")));
        // Another element type is another kernel; the same program and type, the same name.
        const auto half = elementwiseCudaKernel(p, DType::Float16);
        QVERIFY(half && half->name != k->name);
        QVERIFY(QString::fromStdString(half->source).contains(QStringLiteral("typedef __half T;")));
        QCOMPARE(elementwiseCudaKernel(p, DType::Float32)->name, k->name);
        const auto ints = elementwiseCudaKernel(p, DType::Int64);
        QVERIFY(!ints);
        QVERIFY(QString::fromStdString(ints.status().message()).contains(QStringLiteral("no kernel for int64")));
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
        QVERIFY(kernels[0].kernel.source.find("const float t2 = x0 * x1;") != std::string::npos);
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
};

QTEST_GUILESS_MAIN(TestCudaCodegen)
#include "tst_cuda_codegen.moc"
