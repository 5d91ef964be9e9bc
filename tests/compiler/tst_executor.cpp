// The executor: lowering to kernel ids, launches reported to a listener, shapes resolved
// at run time with one cached plan per input-shape signature, the arena plan against the
// naive sum and lower bound, control flow nested two levels deep reading outer values,
// and clear errors for bad inputs and unsupported ops.
#include <QtTest>

#include <cstring>
#include <map>
#include <random>

#include <bit>
#include <functional>
#include <cmath>

#include "compiler/pass_manager.h"
#include "compiler/pipelines.h"
#include "compiler/target.h"
#include "compiler/backends/cpu/relaid_constant.h"
#include "compiler/backends/cpu/vector_math.h"
#include "compiler/runtime/executor.h"
#include "compiler/runtime/smallest_sizes.h"
#include "core/graph_builder.h"
#include "core/shape_inference.h"

using namespace fsc;

namespace {

RtTensor floats(std::vector<int64_t> dims, std::vector<float> values) {
    RtTensor t = allocateTensor(DType::Float32, std::move(dims));
    std::copy(values.begin(), values.end(), t.as<float>());
    return t;
}

std::vector<float> valuesOf(const RtTensor& t) { return {t.as<float>(), t.as<float>() + t.numel()}; }

struct Recorder : ExecutionListener {
    std::vector<std::string> kernels;
    bool ordered = true;
    void onLaunch(const LaunchEvent& e) override {
        kernels.push_back(*e.kernelId);
        ordered = ordered && e.startNs <= e.endNs;
    }
};

// y = relu(x @ W + b) with x [batch, 2], W [2, 3].
Model denseModel() {
    GraphBuilder g;
    ValueId x = g.input("x", DType::Float32, Shape({Dim::symbolic("batch"), Dim::known(2)}));
    ValueId w = g.initializer(floatTensor("W", {2, 3}, {1, 2, 3, -1, -2, -3}));
    ValueId b = g.initializer(floatTensor("b", {3}, {0.5f, 0, -10}));
    ValueId mm = g.op("MatMul", {x, w}, "mm");
    ValueId add = g.op("Add", {mm, b}, "add");
    g.output(g.op("Relu", {add}, "y"));
    Model m = g.buildModel();
    fillUnknownTypes(*m.graph);
    return m;
}

RtTensor randomInput(std::vector<int64_t> dims, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> value(-1.f, 1.f);
    RtTensor x = allocateTensor(DType::Float32, std::move(dims));
    for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = value(rng);
    return x;
}

RtTensor copyOf(const Tensor& t) {
    RtTensor r = allocateTensor(DType::Float32, t.dims());
    std::copy(t.dataAs<float>(), t.dataAs<float>() + r.numel(), r.as<float>());
    return r;
}

// The same model once with W an initializer and once fed: every run of the first (two, the
// second from the kept copy) equals the definition `exact(i, j)` and the fed model's output.
void checkConstantAgainstFed(Model (*build)(const Tensor&, bool, const void*), const Tensor& w, const void* shape,
                             const std::vector<RtTensor>& inputs, int64_t rows, int64_t cols,
                             const std::function<double(int64_t, int64_t)>& exact, const QString& what) {
    auto constant = Executor::create(build(w, true, shape), cpuExecutorOptions());
    auto fed = Executor::create(build(w, false, shape), cpuExecutorOptions());
    QVERIFY(constant.isOk() && fed.isOk());
    std::vector<RtTensor> fedInputs = inputs;
    fedInputs.push_back(copyOf(w));
    auto want = (*fed)->run(fedInputs);
    QVERIFY2(want.isOk(), want.status().message().c_str());
    for (int run = 0; run < 2; ++run) {
        auto got = (*constant)->run(inputs);
        QVERIFY2(got.isOk(), got.status().message().c_str());
        for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < cols; ++j) {
                const double e = exact(i, j);
                const float y = (*got)[0].as<float>()[i * cols + j];
                QVERIFY2(std::abs(y - e) <= 1e-5 * (1 + std::abs(e)),
                         qPrintable(QStringLiteral("%1: y[%2, %3] = %4, not %5").arg(what).arg(i).arg(j).arg(y).arg(e)));
                QVERIFY(std::abs(y - (*want)[0].as<float>()[i * cols + j]) <= 1e-5f * (1 + std::abs(y)));
            }
    }
}

struct GemmShape {
    int64_t m, k, n;
    bool transA, transB;
};

Model gemmModel(const Tensor& w, bool weightsConstant, const void* shapePtr) {
    const GemmShape& s = *static_cast<const GemmShape*>(shapePtr);
    GraphBuilder g;
    ValueId x = g.input("x", DType::Float32, Shape::ofSizes(s.transA ? std::vector<int64_t>{s.k, s.m} : std::vector<int64_t>{s.m, s.k}));
    ValueId wv = weightsConstant ? g.initializer(w) : g.input("W", DType::Float32, Shape::ofSizes(w.dims()));
    const Tensor c = randomFloatTensor("C", {s.n}, 4);
    g.output(g.op("Gemm", {x, wv, g.initializer(c)}, "y",
                  {intAttr("transA", s.transA), intAttr("transB", s.transB), floatAttr("alpha", 0.5f), floatAttr("beta", 2.f)}));
    Model built = g.buildModel();
    fillUnknownTypes(*built.graph);
    return built;
}

void checkGemmWithConstantWeights(int64_t m, int64_t k, int64_t n, bool transA, bool transB) {
    const GemmShape shape{m, k, n, transA, transB};
    const Tensor w = randomFloatTensor("W", transB ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}, 3);
    const Tensor c = randomFloatTensor("C", {n}, 4);
    const RtTensor x = randomInput(transA ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k}, 11);
    const float *pw = w.dataAs<float>(), *pc = c.dataAs<float>(), *px = x.as<float>();
    checkConstantAgainstFed(
        gemmModel, w, &shape, {x}, m, n,
        [&](int64_t i, int64_t j) {
            double e = 2.0 * pc[j];
            for (int64_t p = 0; p < k; ++p)
                e += 0.5 * double(transA ? px[p * m + i] : px[i * k + p]) * (transB ? pw[j * k + p] : pw[p * n + j]);
            return e;
        },
        QStringLiteral("Gemm n %1 transA %2 transB %3").arg(n).arg(transA).arg(transB));
}

// x [2, m, k] @ W [k, n]: the batches stacked as rows of one product.
Model matMulModel(const Tensor& w, bool weightsConstant, const void* shapePtr) {
    const GemmShape& s = *static_cast<const GemmShape*>(shapePtr);
    GraphBuilder g;
    ValueId x = g.input("x", DType::Float32, Shape::ofSizes({2, s.m, s.k}));
    ValueId wv = weightsConstant ? g.initializer(w) : g.input("W", DType::Float32, Shape::ofSizes(w.dims()));
    g.output(g.op("MatMul", {x, wv}, "y"));
    Model built = g.buildModel();
    fillUnknownTypes(*built.graph);
    return built;
}

void checkMatMulWithConstantWeights(int64_t m, int64_t k, int64_t n) {
    const GemmShape shape{m, k, n, false, false};
    const Tensor w = randomFloatTensor("W", {k, n}, 5);
    const RtTensor x = randomInput({2, m, k}, 13);
    const float *pw = w.dataAs<float>(), *px = x.as<float>();
    checkConstantAgainstFed(
        matMulModel, w, &shape, {x}, 2 * m, n,
        [&](int64_t i, int64_t j) {
            double e = 0;
            for (int64_t p = 0; p < k; ++p) e += double(px[i * k + p]) * pw[p * n + j];
            return e;
        },
        QStringLiteral("MatMul n %1").arg(n));
}

}  // namespace

class TestExecutor : public QObject {
    Q_OBJECT
private slots:
    void runsAndReportsEveryLaunch() {
        Model m = denseModel();
        auto exec = Executor::create(m, cpuExecutorOptions());
        QVERIFY2(exec.isOk(), exec.status().message().c_str());
        Recorder rec;
        RunOptions options;
        options.listener = &rec;
        auto out = (*exec)->run({floats({1, 2}, {1, 2})}, options);
        QVERIFY2(out.isOk(), out.status().message().c_str());
        // [1,2] @ W = [1-2, 2-4, 3-6] = [-1,-2,-3]; + b = [-0.5,-2,-13]; relu = 0
        QCOMPARE(valuesOf((*out)[0]), (std::vector<float>{0, 0, 0}));
        out = (*exec)->run({floats({1, 2}, {3, 1})}, options);
        QCOMPARE(valuesOf((*out)[0]), (std::vector<float>{2.5f, 4, 0}));  // [2,4,6]+b
        QCOMPARE(rec.kernels.size(), size_t(6));
        QCOMPARE(rec.kernels[0], std::string("MatMul.float32.onednn"));
        QCOMPARE(rec.kernels[2], std::string("Relu.float32.ref"));
        QVERIFY(rec.ordered);
    }

    void cachesOnePlanPerShapeSignature() {
        Model m = denseModel();
        auto exec = Executor::create(m, cpuExecutorOptions());
        QVERIFY(exec.isOk());
        for (int64_t batch : {1, 4, 1, 4, 7}) {
            std::vector<float> in(size_t(batch * 2), 1.0f);
            auto out = (*exec)->run({floats({batch, 2}, in)});
            QVERIFY2(out.isOk(), out.status().message().c_str());
            QCOMPARE((*out)[0].dims, (std::vector<int64_t>{batch, 3}));
            for (int64_t r = 0; r < batch; ++r) {  // [1,1] @ W = [0,0,0] + b
                QCOMPARE((*out)[0].as<float>()[r * 3], 0.5f);
                QCOMPARE((*out)[0].as<float>()[r * 3 + 2], 0.0f);
            }
        }
        QCOMPARE((*exec)->cachedSignatures(), size_t(3));
        const MemoryPlan* plan = (*exec)->lastMemoryPlan();
        QVERIFY(plan);
        // batch 7: mm and add are 84 bytes each, rounded up to 128; the Add writes over mm,
        // which nothing reads after it: one slot.
        QCOMPARE(plan->naiveBytes, size_t(128));
        QCOMPARE(plan->lowerBoundBytes, size_t(128));
        QCOMPARE(plan->arenaBytes, size_t(128));
    }

    void arenaReusesMemoryAlongAChain() {
        GraphBuilder g;
        ValueId v = g.input("x", DType::Float32, Shape::ofSizes({1, 64}));
        for (int i = 0; i < 6; ++i) v = g.op(i % 2 ? "Abs" : "Neg", {v}, "v" + std::to_string(i));
        g.output(v);
        Model m = g.buildModel();
        fillUnknownTypes(*m.graph);
        auto exec = Executor::create(m, cpuExecutorOptions());
        QVERIFY(exec.isOk());
        std::vector<float> in(64, -1.0f);
        for (int run = 0; run < 3; ++run) {
            auto out = (*exec)->run({floats({1, 64}, in)});
            QVERIFY(out.isOk());
            QCOMPARE((*out)[0].as<float>()[5], 1.0f);  // neg, abs, neg, abs, neg, abs of -1
        }
        const MemoryPlan* plan = (*exec)->lastMemoryPlan();
        QCOMPARE(plan->naiveBytes, size_t(5 * 256));
        QCOMPARE(plan->lowerBoundBytes, size_t(2 * 256));
        QCOMPARE(plan->arenaBytes, size_t(2 * 256));
    }

    // A Reshape takes its input's buffer when nothing reads the input later: a chain of
    // two shares one slot with the Neg before it, and the values come through unchanged.
    void reshapeTakesItsInputsBuffer() {
        GraphBuilder g;
        ValueId x = g.input("x", DType::Float32, Shape::ofSizes({1, 64}));
        ValueId neg = g.op("Neg", {x}, "neg");
        ValueId r1 = g.op("Reshape", {neg, g.initializer(int64Tensor("s1", {2}, {8, 8}))}, "r1");
        ValueId r2 = g.op("Reshape", {r1, g.initializer(int64Tensor("s2", {1}, {64}))}, "r2");
        g.output(g.op("Abs", {r2}, "y"));
        Model m = g.buildModel();
        fillUnknownTypes(*m.graph);
        auto exec = Executor::create(m, cpuExecutorOptions());
        QVERIFY(exec.isOk());
        std::vector<float> in(64);
        for (size_t i = 0; i < in.size(); ++i) in[i] = float(i) - 30.f;
        for (int run = 0; run < 3; ++run) {
            auto out = (*exec)->run({floats({1, 64}, in)});
            QVERIFY2(out.isOk(), out.status().message().c_str());
            QCOMPARE((*out)[0].dims, (std::vector<int64_t>{64}));
            for (size_t i = 0; i < in.size(); ++i) QCOMPARE((*out)[0].as<float>()[i], std::abs(in[i]));
        }
        const MemoryPlan* plan = (*exec)->lastMemoryPlan();
        QCOMPARE(plan->arenaBytes, size_t(256));  // neg, r1 and r2 in one slot (two if copied)
    }

    // So do Unsqueeze, Squeeze and Flatten: a chain of them is one buffer.
    void unsqueezeSqueezeAndFlattenTakeTheirInputsBuffer() {
        GraphBuilder g;
        ValueId x = g.input("x", DType::Float32, Shape::ofSizes({1, 64}));
        ValueId neg = g.op("Neg", {x}, "neg");
        ValueId u = g.op("Unsqueeze", {neg, g.initializer(int64Tensor("a", {1}, {2}))}, "u");
        ValueId q = g.op("Squeeze", {u, g.initializer(int64Tensor("b", {1}, {0}))}, "q");
        ValueId f = g.op("Flatten", {q}, "f", {intAttr("axis", 0)});
        g.output(g.op("Abs", {f}, "y"));
        Model m = g.buildModel();
        fillUnknownTypes(*m.graph);
        auto exec = Executor::create(m, cpuExecutorOptions());
        QVERIFY(exec.isOk());
        std::vector<float> in(64);
        for (size_t i = 0; i < in.size(); ++i) in[i] = float(i) - 30.f;
        for (int run = 0; run < 3; ++run) {
            auto out = (*exec)->run({floats({1, 64}, in)});
            QVERIFY2(out.isOk(), out.status().message().c_str());
            QCOMPARE((*out)[0].dims, (std::vector<int64_t>{1, 64}));
            for (size_t i = 0; i < in.size(); ++i) QCOMPARE((*out)[0].as<float>()[i], std::abs(in[i]));
        }
        QCOMPARE((*exec)->lastMemoryPlan()->arenaBytes, size_t(256));  // neg, u, q, f in one slot
    }

    // A binary op's output takes A's buffer when A is its size and dead after it; an A that
    // is broadcast (smaller than the output) keeps its own.
    void binaryOpTakesItsFirstInputsBuffer() {
        auto run = [](const char* aOp, bool aBroadcast, size_t wantArena) {
            GraphBuilder g;
            ValueId x = g.input("x", DType::Float32, Shape::ofSizes({4, 16}));
            ValueId scale = g.input("scale", DType::Float32, Shape::ofSizes({1, 16}));
            ValueId full = g.op("Neg", {x}, "full");
            ValueId small = g.op("Neg", {scale}, "small");
            ValueId a = aBroadcast ? small : full, b = aBroadcast ? full : small;
            g.output(g.op("Abs", {g.op(aOp, {a, b}, "ab")}, "y"));
            Model m = g.buildModel();
            fillUnknownTypes(*m.graph);
            auto exec = Executor::create(m, cpuExecutorOptions());
            QVERIFY(exec.isOk());
            std::vector<float> in(64), s(16);
            for (size_t i = 0; i < in.size(); ++i) in[i] = float(i) - 30.f;
            for (size_t i = 0; i < s.size(); ++i) s[i] = 0.5f + float(i);
            for (int r = 0; r < 2; ++r) {
                auto out = (*exec)->run({floats({4, 16}, in), floats({1, 16}, s)});
                QVERIFY2(out.isOk(), out.status().message().c_str());
                for (size_t i = 0; i < in.size(); ++i) {
                    const float want = std::string(aOp) == "Mul" ? std::abs(in[i] * s[i % 16]) : std::abs(in[i] + s[i % 16]);
                    QCOMPARE((*out)[0].as<float>()[i], want);
                }
            }
            QCOMPARE((*exec)->lastMemoryPlan()->arenaBytes, wantArena);
        };
        run("Mul", false, 256 + 64);      // ab in full's slot, small beside (two 256s copied)
        run("Add", true, 256 + 64 + 256);  // A is small: ab gets a slot of its own
    }

    void nestedControlFlowReadsOuterValues() {
        // Loop (3 trips) whose body holds an If whose branches read `x` from the main
        // graph, two levels up: acc += x when flag, acc -= x otherwise.
        auto branch = [](const char* op, const char* name) {
            GraphBuilder b(name);
            ValueId acc = b.outerValue("acc_in");
            ValueId x = b.outerValue("x");
            b.output(b.op(op, {acc, x}, std::string(name) + "_out"),
                     ValueType::tensor(DType::Float32, Shape::ofSizes({2})));
            return b.takeGraph();
        };
        GraphBuilder body("body");
        body.input("iter", DType::Int64, Shape::scalar());
        ValueId condIn = body.input("cond_in", DType::Bool, Shape::scalar());
        body.input("acc_in", DType::Float32, Shape::ofSizes({2}));
        ValueId flag = body.outerValue("flag");
        ValueId accOut = body.node("If", {flag}, {"acc_out"},
                                   {graphAttr("then_branch", branch("Add", "then")),
                                    graphAttr("else_branch", branch("Sub", "else"))})[0];
        body.output(body.op("Identity", {condIn}, "cond_out"), ValueType::tensor(DType::Bool, Shape::scalar()));
        body.output(accOut, ValueType::tensor(DType::Float32, Shape::ofSizes({2})));

        GraphBuilder g;
        ValueId x = g.input("x", DType::Float32, Shape::ofSizes({2}));
        ValueId flagIn = g.input("flag", DType::Bool, Shape::scalar());
        (void)x;
        (void)flagIn;
        ValueId trips = g.initializer(int64Tensor("trips", {}, {3}));
        ValueId acc0 = g.initializer(floatTensor("acc0", {2}, {10, 20}));
        ValueId yes = g.op("Cast", {trips}, "yes", {intAttr("to", int64_t(DType::Bool))});
        ValueId result = g.node("Loop", {trips, yes, acc0}, {"acc"}, {graphAttr("body", body.takeGraph())})[0];
        g.output(result, ValueType::tensor(DType::Float32, Shape::ofSizes({2})));
        Model m = g.buildModel();
        fillUnknownTypes(*m.graph);
        auto exec = Executor::create(m, cpuExecutorOptions());
        QVERIFY2(exec.isOk(), exec.status().message().c_str());
        for (bool flag : {true, false}) {
            RtTensor f = allocateTensor(DType::Bool, {});
            f.as<bool>()[0] = flag;
            auto out = (*exec)->run({floats({2}, {1, 2}), f});
            QVERIFY2(out.isOk(), out.status().message().c_str());
            const std::vector<float> want = flag ? std::vector<float>{13, 26} : std::vector<float>{7, 14};
            QCOMPARE(valuesOf((*out)[0]), want);
        }
    }

    // PyTorch's exporter declares a carried value's body input as its first value ([0, 2]) and
    // the body output with fresh dims: the value grows a row a turn (Mask R-CNN's pasted masks).
    void loopCarriedValuesMayGrow() {
        GraphBuilder body("body");
        body.input("iter", DType::Int64, Shape::scalar());
        ValueId condIn = body.input("cond_in", DType::Bool, Shape::scalar());
        ValueId rowsIn = body.input("rows_in", DType::Float32, Shape::ofSizes({0, 2}));
        ValueId row = body.initializer(floatTensor("row", {1, 2}, {1, 2}));
        body.output(body.op("Identity", {condIn}, "cond_out"), ValueType::tensor(DType::Bool, Shape::scalar()));
        body.output(body.op("Concat", {rowsIn, row}, "rows_out", {intAttr("axis", 0)}),
                    ValueType::tensor(DType::Float32, Shape({Dim::symbolic("grown"), Dim::known(2)})));
        GraphBuilder g;
        ValueId trips = g.input("trips", DType::Int64, Shape::scalar());
        ValueId yes = g.op("Cast", {trips}, "yes", {intAttr("to", int64_t(DType::Bool))});
        ValueId empty = g.initializer(floatTensor("empty", {0, 2}, {}));
        g.output(g.node("Loop", {trips, yes, empty}, {"rows"}, {graphAttr("body", body.takeGraph())})[0]);
        Model m = g.buildModel();
        fillUnknownTypes(*m.graph);
        auto exec = Executor::create(m, cpuExecutorOptions());
        QVERIFY2(exec.isOk(), exec.status().message().c_str());
        RtTensor three = allocateTensor(DType::Int64, {});
        three.as<int64_t>()[0] = 3;
        auto out = (*exec)->run({three});
        QVERIFY2(out.isOk(), out.status().message().c_str());
        QCOMPARE((*out)[0].dims, (std::vector<int64_t>{3, 2}));
        QCOMPARE(valuesOf((*out)[0]), (std::vector<float>{1, 2, 1, 2, 1, 2}));
    }

    void wrongInputsNameTheInputAndTheExpectation() {
        Model m = denseModel();
        auto exec = Executor::create(m, cpuExecutorOptions());
        QVERIFY(exec.isOk());
        auto wrongType = (*exec)->run({allocateTensor(DType::Int64, {1, 2})});
        QVERIFY(!wrongType.isOk());
        QVERIFY2(wrongType.status().message().find("input 'x': expected float32[batch,2], got int64[1,2] (wrong dtype)") != std::string::npos,
                 wrongType.status().message().c_str());
        auto wrongRank = (*exec)->run({floats({2}, {1, 2})});
        QVERIFY(wrongRank.status().message().find("wrong rank") != std::string::npos);
        auto wrongDim = (*exec)->run({floats({1, 3}, {1, 2, 3})});
        QVERIFY(wrongDim.status().message().find("dim 1 differs") != std::string::npos);
        auto wrongCount = (*exec)->run({});
        QVERIFY(wrongCount.status().message().find("expected 1 inputs, got 0") != std::string::npos);
    }

    void unsupportedOpsNameTheNode() {
        GraphBuilder g;
        ValueId x = g.input("x", DType::Float32, Shape::ofSizes({4}));
        // TfIdfVectorizer works on token ids; no backend runs it.
        g.output(g.op("TfIdfVectorizer", {x}, "d", {}, "my_tfidf"));
        Model m = g.buildModel();
        fillUnknownTypes(*m.graph);
        auto exec = Executor::create(m, cpuExecutorOptions());
        QVERIFY(!exec.isOk());
        QCOMPARE(exec.status().code(), ErrorCode::Unsupported);
        QVERIFY2(exec.status().message().find("node 'my_tfidf' (TfIdfVectorizer): no cpu kernel for TfIdfVectorizer at opset 17") != std::string::npos,
                 exec.status().message().c_str());
    }

    void runtimeErrorsNameTheNode() {
        GraphBuilder g;
        ValueId x = g.input("x", DType::Float32, Shape({Dim::symbolic("n")}));
        ValueId shape = g.initializer(int64Tensor("shape", {1}, {5}));
        g.output(g.op("Reshape", {x, shape}, "r", {}, "bad_reshape"));
        Model m = g.buildModel();
        fillUnknownTypes(*m.graph);
        auto exec = Executor::create(m, cpuExecutorOptions());
        QVERIFY(exec.isOk());
        auto out = (*exec)->run({floats({3}, {1, 2, 3})});
        QVERIFY(!out.isOk());
        QVERIFY2(out.status().message().find("node 'bad_reshape' (Reshape): cannot reshape [3] to [5]") != std::string::npos,
                 out.status().message().c_str());
    }

    // The smallest length of an open axis, walked back from the windows that slide over it:
    // a Conv (kernel 9, stride 2) after 3 + 3 pads, a SAME MaxPool, then a kernel-5 Conv.
    void smallestSizesWalkWindowsBack() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape({Dim::known(1), Dim::known(1), Dim::symbolic("length")}));
        ValueId padded = b.op("Pad", {x, b.initializer(int64Tensor("pads", {6}, {0, 0, 3, 0, 0, 3}))}, "padded");
        ValueId c1 = b.op("Conv", {padded, b.initializer(randomFloatTensor("w1", {2, 1, 9}, 1))}, "c1",
                          {intsAttr("strides", {2})});
        ValueId p = b.op("MaxPool", {c1}, "p", {intsAttr("kernel_shape", {3}), stringAttr("auto_pad", "SAME_UPPER")});
        b.output(b.op("Conv", {p, b.initializer(randomFloatTensor("w2", {2, 2, 5}, 2))}, "y"));
        Model m = b.buildModel();
        fillUnknownTypes(*m.graph);
        // conv2 needs 5; the SAME pool 5; conv1 (5 - 1) * 2 + 9 = 17; less the 6 pads: 11.
        QCOMPARE(smallestValidSize(*m.graph, m.graph->inputs[0], 2), int64_t(11));
        QCOMPARE(smallestValidSize(*m.graph, m.graph->inputs[0], 1), int64_t(1));  // channels: no window
        // And it runs at 11, not at 10.
        auto exec = Executor::create(m, cpuExecutorOptions());
        QVERIFY(exec.isOk());
        QVERIFY((*exec)->run({floats({1, 1, 11}, std::vector<float>(11, 0.5f))}).isOk());
        QVERIFY(!(*exec)->run({floats({1, 1, 10}, std::vector<float>(10, 0.5f))}).isOk());
    }

    void cancelStopsBetweenSteps() {
        Model m = denseModel();
        auto exec = Executor::create(m, cpuExecutorOptions());
        std::atomic<bool> cancel{true};
        RunOptions options;
        options.cancel = &cancel;
        auto out = (*exec)->run({floats({1, 2}, {1, 2})}, options);
        QVERIFY(!out.isOk());
        QCOMPARE(out.status().code(), ErrorCode::Cancelled);
        QVERIFY(out.status().message().find("cancelled") != std::string::npos);
    }

    void halfInputsComputeInFloat() {
        GraphBuilder g;
        ValueId x = g.input("x", DType::Float16, Shape::ofSizes({3}));
        g.output(g.op("Sigmoid", {x}, "s"));
        Model m = g.buildModel();
        fillUnknownTypes(*m.graph);
        auto exec = Executor::create(m, cpuExecutorOptions());
        QVERIFY(exec.isOk());
        RtTensor in = allocateTensor(DType::Float16, {3});
        in.as<uint16_t>()[0] = 0x0000;  // 0
        in.as<uint16_t>()[1] = 0x3c00;  // 1
        in.as<uint16_t>()[2] = 0xc000;  // -2
        auto out = (*exec)->run({in});
        QVERIFY2(out.isOk(), out.status().message().c_str());
        QCOMPARE((*out)[0].dtype, DType::Float16);
        QCOMPARE(elementAsDouble((*out)[0], 0), 0.5);
        QVERIFY(std::fabs(elementAsDouble((*out)[0], 1) - 0.7311) < 1e-3);
        QVERIFY(std::fabs(elementAsDouble((*out)[0], 2) - 0.1192) < 1e-3);
    }

    // Instance and group norms against the definition in double: 37 values a channel (the
    // vector loop and its tail); affine per channel (instance; group from opset 21) or per
    // group (group at opset 18).
    // Short rows one group per thread; then a batch of one with one group of 160,036 values
    // (PoolFormer's GroupNorm), whose statistics and normalization the threads split, with
    // channel boundaries inside the threads' chunks.
    void groupAndInstanceNormsMatchTheDefinition_data() {
        QTest::addColumn<int>("images");
        QTest::addColumn<int>("length");
        QTest::newRow("short rows") << 2 << 37;
        QTest::newRow("one long group") << 1 << 40009;
    }
    void groupAndInstanceNormsMatchTheDefinition() {
        QFETCH(int, images);
        QFETCH(int, length);
        const int64_t n = images, c = 4, spatial = length;
        std::mt19937 rng(9);
        std::uniform_real_distribution<float> real(-2.f, 6.f);
        std::vector<float> x(static_cast<size_t>(n * c * spatial));
        for (float& v : x) v = real(rng);
        struct Case { const char* op; int64_t groups, affine; };
        for (const Case& t : {Case{"InstanceNormalization", c, c}, Case{"GroupNormalization", 2, 2},
                              Case{"GroupNormalization", 2, c}, Case{"GroupNormalization", 1, c}, Case{"GroupNormalization", 1, 1}}) {
            const bool group = std::string(t.op) == "GroupNormalization";
            std::vector<float> scale, bias;
            for (int64_t k = 0; k < t.affine; ++k) scale.push_back(0.5f + float(k)), bias.push_back(float(k) - 1.5f);
            GraphBuilder g;
            ValueId in = g.input("x", DType::Float32, Shape::ofSizes({n, c, spatial}));
            ValueId s = g.initializer(floatTensor("scale", {t.affine}, scale));
            ValueId b = g.initializer(floatTensor("bias", {t.affine}, bias));
            std::vector<Attribute> attrs{floatAttr("epsilon", 1e-3f)};
            if (group) attrs.push_back(intAttr("num_groups", t.groups));
            g.output(g.op(t.op, {in, s, b}, "y", attrs));
            Model m = g.buildModel(18);
            fillUnknownTypes(*m.graph);
            auto exec = Executor::create(m, cpuExecutorOptions(4));
            QVERIFY2(exec.isOk(), exec.status().message().c_str());
            auto out = (*exec)->run({floats({n, c, spatial}, x)});
            QVERIFY2(out.isOk(), out.status().message().c_str());
            const int64_t perGroup = c / t.groups * spatial;
            for (int64_t r = 0; r < n * t.groups; ++r) {
                double mean = 0, var = 0;
                for (int64_t i = 0; i < perGroup; ++i) mean += x[size_t(r * perGroup + i)];
                mean /= double(perGroup);
                for (int64_t i = 0; i < perGroup; ++i) var += std::pow(x[size_t(r * perGroup + i)] - mean, 2);
                const double inv = 1.0 / std::sqrt(var / double(perGroup) + 1e-3);
                for (int64_t i = 0; i < perGroup; ++i) {
                    const int64_t grp = r % t.groups;
                    const int64_t k = t.affine == t.groups ? grp : grp * (c / t.groups) + i / spatial;
                    const double want = (x[size_t(r * perGroup + i)] - mean) * inv * scale[size_t(k)] + bias[size_t(k)];
                    const double got = (*out)[0].as<float>()[r * perGroup + i];
                    QVERIFY2(std::fabs(got - want) < 1e-5 * (1 + std::fabs(want)),
                             qPrintable(QStringLiteral("%1/%2 element %3: %4, not %5").arg(t.op).arg(t.affine)
                                            .arg(r * perGroup + i).arg(got).arg(want)));
                }
            }
        }
    }

    // GELU, Sigmoid and Exp over float take vector_math's whole-array forms: against libm
    // over a length that several threads split, with the chunks' ends in the middle.
    void unaryArrayKernelsMatchLibm() {
        const int64_t len = 70001;
        std::vector<float> x(static_cast<size_t>(len));
        for (int64_t i = 0; i < len; ++i) x[size_t(i)] = float(i - len / 2) * 3e-4f;
        for (const char* op : {"Gelu", "Sigmoid", "Exp"}) {
            GraphBuilder g;
            ValueId in = g.input("x", DType::Float32, Shape::ofSizes({len}));
            g.output(g.op(op, {in}, "y"));
            Model m = g.buildModel(20);
            fillUnknownTypes(*m.graph);
            ExecutorOptions options = cpuExecutorOptions();
            options.threads = 2;
            auto exec = Executor::create(m, options);
            QVERIFY2(exec.isOk(), exec.status().message().c_str());
            auto out = (*exec)->run({floats({len}, x)});
            QVERIFY2(out.isOk(), out.status().message().c_str());
            for (int64_t i = 0; i < len; ++i) {
                const double v = x[size_t(i)];
                const double want = std::string(op) == "Gelu" ? 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)))
                                    : std::string(op) == "Sigmoid" ? 1 / (1 + std::exp(-v)) : std::exp(v);
                const double got = (*out)[0].as<float>()[i];
                // GELU's erf is a float approximation a few ulp from erff: in the far negative
                // tail 1 + erf cancels, so its error is bounded by |x|, not by the result.
                const double scale = std::string(op) == "Gelu" ? 1 + std::fabs(v) : 1 + std::fabs(want);
                QVERIFY2(std::fabs(got - want) < 2e-6 * scale,
                         qPrintable(QStringLiteral("%1(%2) = %3, not %4").arg(op).arg(v).arg(got).arg(want)));
            }
        }
    }

    static int countOps(const Graph& g, const std::string& op) {
        int n = 0;
        for (NodeId id : g.order()) n += g.node(id).opType == op;
        return n;
    }

    // Sequences as PyTorch's exporter writes them: a tensor cut into a sequence, an element
    // erased and read back from the end, the sequence's length, the rest stacked along a new
    // axis, and pieces of unequal size joined again; the sequence-valued ops stay unfolded.
    void sequenceOpsMatchTheDefinition() {
        GraphBuilder g;
        ValueId x = g.input("x", DType::Float32, Shape::ofSizes({2, 5}));
        auto scalar = [&](const std::string& name, int64_t v) { return g.initializer(int64Tensor(name, {}, {v})); };
        ValueId columns = g.op("SplitToSequence", {x}, "columns", {intAttr("axis", 1), intAttr("keepdims", 0)});
        ValueId fewer = g.op("SequenceErase", {columns, scalar("minus2", -2)}, "fewer");
        ValueId last = g.op("SequenceAt", {fewer, scalar("minus1", -1)}, "last");
        ValueId length = g.op("SequenceLength", {columns}, "length");
        ValueId stacked = g.op("ConcatFromSequence", {fewer}, "stacked", {intAttr("axis", 1), intAttr("new_axis", 1)});
        ValueId pieces = g.op("SplitToSequence", {x, scalar("two", 2)}, "pieces", {intAttr("axis", 1)});
        ValueId joined = g.op("ConcatFromSequence", {pieces}, "joined", {intAttr("axis", 1)});
        ValueId grown = g.op("SequenceInsert", {g.op("SequenceEmpty", {}, "empty"), last, scalar("zero", 0)}, "grown");
        ValueId first = g.op("SequenceAt", {grown, scalar("zero2", 0)}, "first");
        for (ValueId out : {last, length, stacked, joined, first}) g.output(out);
        Model m = g.buildModel(17);
        fillUnknownTypes(*m.graph);
        std::vector<float> values(10);
        for (size_t i = 0; i < values.size(); ++i) values[i] = float(i) * 1.5f - 3.f;
        for (const char* pipeline : {"none", "O2"}) {
            Model compiled = m;
            if (std::string(pipeline) == "O2") {
                auto passes = pipelinePasses("O2");
                QVERIFY(passes.isOk());
                CompileOptions options;
                options.verifyEachPass = true;
                auto c = compileModel(m, *passes, options);
                QVERIFY2(c.isOk(), c.status().message().c_str());
                compiled = std::move(c->model);
                QCOMPARE(countOps(*compiled.graph, "SequenceEmpty"), 1);  // not folded into a constant
            }
            auto exec = Executor::create(compiled, cpuExecutorOptions());
            QVERIFY2(exec.isOk(), exec.status().message().c_str());
            auto out = (*exec)->run({floats({2, 5}, values)});
            QVERIFY2(out.isOk(), out.status().message().c_str());
            auto at = [&](int64_t r, int64_t c) { return values[size_t(r * 5 + c)]; };
            QCOMPARE((*out)[0].dims, (std::vector<int64_t>{2}));  // column 4: column 3 was erased
            QCOMPARE(valuesOf((*out)[0]), (std::vector<float>{at(0, 4), at(1, 4)}));
            QCOMPARE(elementAsInt((*out)[1], 0), int64_t(5));
            QCOMPARE((*out)[2].dims, (std::vector<int64_t>{2, 4}));
            QCOMPARE(valuesOf((*out)[2]), (std::vector<float>{at(0, 0), at(0, 1), at(0, 2), at(0, 4), at(1, 0), at(1, 1),
                                                              at(1, 2), at(1, 4)}));
            QCOMPARE(valuesOf((*out)[3]), values);  // pieces of 2, 2 and 1 columns joined
            QCOMPARE(valuesOf((*out)[4]), valuesOf((*out)[0]));
        }
    }

    // Two-operand equations that are batches of matrix products run as GEMMs: against the sum
    // over every label written out here, with batch labels inside the terms (MViT's relative
    // positions), an output in another order, an outer product and an inner product.
    void einsumProductsMatchTheDefinition() {
        struct Case { const char* equation; std::vector<int64_t> a, b; };
        const std::vector<Case> cases{{"bythwc,hkc->bythwk", {2, 1, 3, 2, 4, 5}, {2, 3, 5}},
                                      {"bij,bkj->kib", {2, 3, 4}, {2, 5, 4}},
                                      {"i,j->ji", {3}, {4}},
                                      {"i,i->", {7}, {7}},
                                      {"ij,jk", {3, 4}, {4, 2}}};
        std::mt19937 rng(13);
        std::uniform_real_distribution<float> real(-1.f, 1.f);
        for (const Case& c : cases) {
            GraphBuilder g;
            ValueId a = g.input("a", DType::Float32, Shape::ofSizes(c.a));
            ValueId b = g.input("b", DType::Float32, Shape::ofSizes(c.b));
            g.output(g.op("Einsum", {a, b}, "y", {stringAttr("equation", c.equation)}));
            Model m = g.buildModel(17);
            fillUnknownTypes(*m.graph);
            auto exec = Executor::create(m, cpuExecutorOptions());
            QVERIFY2(exec.isOk(), exec.status().message().c_str());
            auto values = [&](const std::vector<int64_t>& dims) {
                int64_t n = 1;
                for (int64_t d : dims) n *= d;
                std::vector<float> v(static_cast<size_t>(n));
                for (float& x : v) x = real(rng);
                return v;
            };
            const std::vector<float> va = values(c.a), vb = values(c.b);
            auto out = (*exec)->run({floats(c.a, va), floats(c.b, vb)});
            QVERIFY2(out.isOk(), out.status().message().c_str());
            // The definition: every combination of the labels' values, products summed into the output.
            std::string eq = c.equation;
            const size_t comma = eq.find(','), arrow = eq.find("->");
            const std::string ta = eq.substr(0, comma), tb = eq.substr(comma + 1, arrow == std::string::npos ? std::string::npos : arrow - comma - 1);
            std::string to = arrow == std::string::npos ? "ik" : eq.substr(arrow + 2);
            std::map<char, int64_t> size;
            for (size_t d = 0; d < ta.size(); ++d) size[ta[d]] = c.a[d];
            for (size_t d = 0; d < tb.size(); ++d) size[tb[d]] = c.b[d];
            std::vector<char> labels;
            for (auto& [label, n] : size) labels.push_back(label);
            std::map<char, int64_t> at;
            int64_t total = 1;
            for (char l : labels) total *= size[l];
            std::vector<int64_t> outDims;
            for (char l : to) outDims.push_back(size[l]);
            QCOMPARE((*out)[0].dims, outDims);
            std::vector<double> want(size_t((*out)[0].numel()), 0.0);
            auto offset = [&](const std::string& term) {
                int64_t o = 0;
                for (char l : term) o = o * size[l] + at[l];
                return o;
            };
            for (int64_t flat = 0; flat < total; ++flat) {
                int64_t rest = flat;
                for (size_t i = labels.size(); i-- > 0;) at[labels[i]] = rest % size[labels[i]], rest /= size[labels[i]];
                want[size_t(offset(to))] += double(va[size_t(offset(ta))]) * double(vb[size_t(offset(tb))]);
            }
            for (size_t i = 0; i < want.size(); ++i)
                QVERIFY2(std::fabs((*out)[0].as<float>()[i] - want[i]) < 1e-5,
                         qPrintable(QStringLiteral("%1: element %2 is %3, not %4").arg(c.equation).arg(i)
                                        .arg((*out)[0].as<float>()[i]).arg(want[i])));
        }
    }

    // NaN has no integer: QuantizeLinear and DynamicQuantizeLinear give 0 for it (converting
    // NaN to an integer type is undefined behaviour; the compiler fuzzer met it).
    void quantizingNaNGivesZero() {
        GraphBuilder g;
        ValueId x = g.input("x", DType::Float32, Shape::ofSizes({4}));
        ValueId scale = g.initializer(floatTensor("scale", {}, {0.5f}));
        g.output(g.op("QuantizeLinear", {x, scale}, "q"));
        g.output(g.node("DynamicQuantizeLinear", {x}, {"d", "d_scale", "d_zero"})[0]);
        Model m = g.buildModel();
        fillUnknownTypes(*m.graph);
        auto exec = Executor::create(m, cpuExecutorOptions());
        QVERIFY2(exec.isOk(), exec.status().message().c_str());
        const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
        auto out = (*exec)->run({floats({4}, {nan, 1.0f, -inf, 2.0f})});
        QVERIFY2(out.isOk(), out.status().message().c_str());
        QCOMPARE(elementAsDouble((*out)[0], 0), 0.0);
        QCOMPARE(elementAsDouble((*out)[0], 1), 2.0);
        QCOMPARE(elementAsDouble((*out)[1], 0), 0.0);
    }

    // The vectorizable exp and sigmoid against libm over the whole float range: within 2 ulp
    // where the result is a normal float, within one denormal step below, and NaN, the
    // infinities, overflow and underflow exactly as expf.
    // The epilogue activations at full vector width against their scalar definitions, bit for
    // bit: Relu takes NaN to 0, Clip keeps it, -0 and the infinities as the comparisons give
    // them, over lengths with and without a remainder past 16 lanes.
    void epilogueActivationsMatchTheDefinition() {
        const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
        std::vector<float> x{nan, -0.f, 0.f, inf, -inf, 6.f, 6.5f, -1e-40f, 1e-40f, 1e30f, -3.f};
        std::mt19937 rng(5);
        std::uniform_real_distribution<float> real(-8.f, 8.f);
        while (x.size() < 70) x.push_back(real(rng));
        const auto same = [](float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; };
        for (int64_t n : {int64_t(0), int64_t(5), int64_t(16), int64_t(33), int64_t(x.size())}) {
            std::vector<float> relu(x), leaky(x), clip(x);
            cpu::reluArray(relu.data(), n);
            cpu::leakyReluArray(leaky.data(), n, 0.1f);
            cpu::clampArray(clip.data(), n, 0.f, 6.f);
            for (size_t i = 0; i < x.size(); ++i) {
                const bool inside = int64_t(i) < n;
                const float v = x[i];
                const float wantRelu = inside ? (v > 0.f ? v : 0.f) : v;
                const float wantLeaky = inside ? (v >= 0.f ? v : 0.1f * v) : v;
                const float wantClip = inside ? std::min(std::max(v, 0.f), 6.f) : v;
                QVERIFY2(same(relu[i], wantRelu), qPrintable(QStringLiteral("relu(%1) = %2").arg(v).arg(relu[i])));
                QVERIFY2(same(leaky[i], wantLeaky), qPrintable(QStringLiteral("leaky(%1) = %2").arg(v).arg(leaky[i])));
                QVERIFY2(same(clip[i], wantClip), qPrintable(QStringLiteral("clip(%1) = %2").arg(v).arg(clip[i])));
            }
        }
    }

    // DynamicQuantizeLinear's vector loops against the scalar definition: the range skips
    // NaN, ties round to even (q = k + 0.5 exactly), NaN quantizes to 0, far values saturate.
    void vectorQuantizeMatchesTheDefinition() {
        std::mt19937 rng(3);
        std::uniform_real_distribution<float> real(-3.f, 5.f);
        const float scale = 8.f / 255.f, zero = 96.f;
        std::vector<float> x(1000);
        for (float& v : x) v = real(rng);
        for (int k = -100; k < 160; ++k) x.push_back((float(k) + 0.5f) * scale);  // ties, as x / scale sees them
        const float nan = std::numeric_limits<float>::quiet_NaN();
        // At both ends: the AVX2 loop takes 32 at a time, the scalar loop the rest.
        const std::vector<float> special{nan, 1e30f, -1e30f, std::numeric_limits<float>::infinity(),
                                         -std::numeric_limits<float>::infinity(), 0.f, -0.f};
        x.insert(x.begin(), special.begin(), special.end());
        x.insert(x.end(), special.begin(), special.end());
        for (int64_t n : {int64_t(0), int64_t(7), int64_t(16), int64_t(x.size())}) {
            float lo = 0, hi = 0, wantLo = 0, wantHi = 0;
            cpu::minMaxArray(x.data(), n, lo, hi);
            for (int64_t i = 0; i < n; ++i) wantLo = std::min(wantLo, x[size_t(i)]), wantHi = std::max(wantHi, x[size_t(i)]);
            QCOMPARE(lo, wantLo);
            QCOMPARE(hi, wantHi);
        }
        std::vector<uint8_t> y(x.size());
        cpu::quantizeUint8Array(x.data(), y.data(), int64_t(x.size()), scale, zero);
        std::vector<int8_t> s(x.size());
        cpu::quantizeInt8Array(x.data(), s.data(), int64_t(x.size()), scale, -3.f);
        for (size_t i = 0; i < x.size(); ++i) {
            const float q = std::nearbyint(x[i] / scale) + zero;
            const uint8_t want = std::isnan(q) ? 0 : uint8_t(std::clamp(q, 0.f, 255.f));
            QVERIFY2(y[i] == want, qPrintable(QStringLiteral("x = %1: %2, not %3").arg(x[i]).arg(y[i]).arg(want)));
            const float qs = std::nearbyint(x[i] / scale) - 3.f;
            const int8_t wantSigned = std::isnan(qs) ? 0 : int8_t(std::clamp(qs, -128.f, 127.f));
            QVERIFY2(s[i] == wantSigned, qPrintable(QStringLiteral("x = %1: %2, not %3").arg(x[i]).arg(s[i]).arg(wantSigned)));
        }
    }

    // The vectorized softmax against the definition in double, over lengths with and
    // without a remainder past the 16 lanes; a NaN makes every output NaN, as before. And
    // the mean and variance the normalizations use, against the scalar loops in double.
    // A constant B with transB = 1 is multiplied from a copy made once in stored order: the
    // same values as the B fed as an input (which oneDNN reads transposed), on every run.
    // Constant weights are multiplied from a copy laid out for sgemm (untransposed, rows not
    // 4 KiB apart; 1024 columns are); fed weights are not. Both must equal the definition.
    void gemmAndMatMulWithConstantWeightsMatchTheDefinition() {
        const int64_t m = 5, k = 37;
        for (int64_t n : {int64_t(29), int64_t(1024)})
            for (bool transB : {false, true})
                for (bool transA : {false, true}) checkGemmWithConstantWeights(m, k, n, transA, transB);
        for (int64_t n : {int64_t(29), int64_t(1024)}) checkMatMulWithConstantWeights(m, k, n);
    }

    void gemmConstantKeepsOneUnaliasedUntransposedCopy() {
        const int64_t k = 3, n = 1024;
        RtTensor b = allocateTensor(DType::Float32, {k, n});
        for (int64_t i = 0; i < b.numel(); ++i) b.as<float>()[i] = float(i);
        const float* pb = b.as<float>();
        const int64_t before = cpu::relaidBytesKept();
        const int64_t padded = k * (n + 16) * int64_t(sizeof(float));
        {
            cpu::GemmConstant kept, sameWeights;
            const cpu::GemmB stored = kept.of(b, k, n, false);
            QCOMPARE(stored.ld, n + 16);
            QVERIFY(!stored.transposed && stored.data != pb);
            for (int64_t r = 0; r < k; ++r)
                for (int64_t c = 0; c < n; ++c) QCOMPARE(stored.data[r * stored.ld + c], pb[r * n + c]);
            QCOMPARE(cpu::relaidBytesKept(), before + padded);
            QCOMPARE(kept.of(b, k, n, false).data, stored.data);         // kept, not made again
            QCOMPARE(sameWeights.of(b, k, n, false).data, stored.data);  // shared by a second kernel
            QCOMPARE(cpu::relaidBytesKept(), before + padded);
            // Given transposed as [n', k'] = [3, 1024]: stored [1024, 3], nothing to pad.
            const cpu::GemmB untransposed = kept.of(b, n, k, true);
            QCOMPARE(untransposed.ld, k);
            QVERIFY(!untransposed.transposed);
            for (int64_t r = 0; r < n; ++r)
                for (int64_t c = 0; c < k; ++c) QCOMPARE(untransposed.data[r * k + c], pb[c * n + r]);
            QCOMPARE(cpu::relaidBytesKept(), before + padded + n * k * int64_t(sizeof(float)));
            // Rows already fine as given: no copy; the padded one lives while sameWeights holds it.
            const cpu::GemmB given = kept.of(b, 4, 768, false);
            QCOMPARE(given.data, pb);
            QCOMPARE(given.ld, int64_t(768));
            QCOMPARE(cpu::relaidBytesKept(), before + padded);
            // A tensor with no owner could see its address reused: used as given.
            RtTensor view = b;
            view.owner.reset();
            QCOMPARE(kept.of(view, n, k, true).data, pb);
            // A convolution's weights by input channel: [3, 1024] as [1024, 3], rows 3 apart,
            // one copy for two kernels, and not the product's copy of another layout.
            cpu::RelaidConstant byInput, sameByInput;
            const float* taps = byInput.of(b, n, k, true, k);
            QVERIFY(taps && taps != pb);
            QCOMPARE(sameByInput.of(b, n, k, true, k), taps);
            for (int64_t r = 0; r < n; ++r)
                for (int64_t c = 0; c < k; ++c) QCOMPARE(taps[r * k + c], pb[c * n + r]);
            QCOMPARE(cpu::relaidBytesKept(), before + padded + n * k * int64_t(sizeof(float)));
            QVERIFY(byInput.of(b, n, k, true, k + 1) != taps);
            byInput.reset();
            sameByInput.reset();
            QVERIFY(!byInput.of(view, n, k, true, k));
        }
        QCOMPARE(cpu::relaidBytesKept(), before);
        // Past the budget a weight is used as given, and asking again does not change that.
        cpu::setRelaidCopyBudgetBytes(before + padded - 1);
        cpu::GemmConstant overBudget;
        for (int run = 0; run < 2; ++run) {
            const cpu::GemmB given = overBudget.of(b, k, n, false);
            QCOMPARE(given.data, pb);
            QCOMPARE(given.ld, n);
        }
        QCOMPARE(cpu::relaidBytesKept(), before);
        cpu::setRelaidCopyBudgetBytes(cpu::kDefaultCopyBudgetBytes);
        QCOMPARE(cpu::GemmConstant().of(b, k, n, false).ld, n + 16);
    }

    void vectorSoftmaxAndStatisticsMatchTheDefinition() {
        std::mt19937 rng(7);
        std::normal_distribution<float> value(0.f, 6.f);
        for (int64_t n : {int64_t(1), int64_t(5), int64_t(16), int64_t(49), int64_t(197)}) {
            std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
            for (float& v : x) v = value(rng);
            cpu::softmaxArray(x.data(), y.data(), n);
            const double best = *std::max_element(x.begin(), x.end());
            double sum = 0;
            for (float v : x) sum += std::exp(double(v) - best);
            for (int64_t i = 0; i < n; ++i) {
                const double want = std::exp(double(x[size_t(i)]) - best) / sum;
                QVERIFY2(std::abs(y[size_t(i)] - want) <= 1e-6 * want + 1e-12,
                         qPrintable(QStringLiteral("n %1, element %2: %3, not %4").arg(n).arg(i).arg(y[size_t(i)]).arg(want)));
            }
            cpu::softmaxArray(x.data(), x.data(), n);  // in place
            QCOMPARE(x, y);
        }
        // The normalizations' statistics: in double lanes, so values far from zero with a
        // small spread keep their variance.
        for (int64_t n : {int64_t(0), int64_t(3), int64_t(16), int64_t(768), int64_t(771)}) {
            std::vector<float> x(static_cast<size_t>(n));
            for (float& v : x) v = 1000.f + value(rng) * 1e-2f;
            double mean = -1, variance = -1, wantMean = 0, wantVariance = 0;
            cpu::meanVariance(x.data(), n, mean, variance);
            for (float v : x) wantMean += v;
            wantMean = n ? wantMean / double(n) : 0;
            for (float v : x) wantVariance += (v - wantMean) * (v - wantMean);
            wantVariance = n ? wantVariance / double(n) : 0;
            QVERIFY2(std::abs(mean - wantMean) <= 1e-9 * std::abs(wantMean), qPrintable(QString::number(mean - wantMean)));
            QVERIFY2(std::abs(variance - wantVariance) <= 1e-9 * wantVariance + 1e-15, qPrintable(QString::number(variance - wantVariance)));
        }
        std::vector<float> withNan{1.f, std::numeric_limits<float>::quiet_NaN(), 2.f}, out(3);
        cpu::softmaxArray(withNan.data(), out.data(), 3);
        for (float v : out) QVERIFY(std::isnan(v));
        // Weights that would be subnormal are 0 (Swin's -100 mask): no output between 0 and
        // FLT_MIN, each within FLT_MIN * e * n of the exact value.
        std::vector<float> masked(49, 0.f), weights(49);
        for (size_t i = 0; i < masked.size(); ++i) masked[i] = i % 2 ? -100.f : float(i % 5) - 88.f;
        masked[7] = 3.f;
        cpu::softmaxArray(masked.data(), weights.data(), 49);
        const double bound = std::numeric_limits<float>::min() * std::exp(1.0) * 49;
        double sum = 0;
        for (float v : masked) sum += std::exp(double(v) - 3.0);
        for (size_t i = 0; i < weights.size(); ++i) {
            QVERIFY2(weights[i] == 0.f || weights[i] >= std::numeric_limits<float>::min(),
                     qPrintable(QStringLiteral("element %1 is subnormal: %2").arg(i).arg(weights[i])));
            QVERIFY(std::abs(weights[i] - std::exp(double(masked[i]) - 3.0) / sum) <= bound * 1.01);
        }
        QCOMPARE(weights[7], 1.f);
    }

    // ReduceMax/Min/Sum/Mean over a row: the vector lanes, the tail, and NaN anywhere.
    void rowExtremesAndSumsMatchTheScalarLoop() {
        std::mt19937 rng(11);
        std::normal_distribution<float> value(0.f, 50.f);
        for (int64_t n : {int64_t(1), int64_t(15), int64_t(16), int64_t(17), int64_t(1024), int64_t(1031)}) {
            std::vector<float> x(static_cast<size_t>(n));
            for (float& v : x) v = value(rng);
            x[size_t(n - 1)] = 1e6f;  // the extreme in the tail, then in the lanes
            QCOMPARE(cpu::maxOfArray(x.data(), n), *std::max_element(x.begin(), x.end()));
            x[0] = -1e6f;
            QCOMPARE(cpu::minOfArray(x.data(), n), *std::min_element(x.begin(), x.end()));
            double sum = 0;
            for (float v : x) sum += v;
            QVERIFY2(std::abs(cpu::sumOfArray(x.data(), n) - sum) <= 1e-9 * std::abs(sum) + 1e-9,
                     qPrintable(QString::number(cpu::sumOfArray(x.data(), n) - sum)));
            for (size_t at : {size_t(0), size_t(n / 2), size_t(n - 1)}) {
                std::vector<float> withNan = x;
                withNan[at] = std::numeric_limits<float>::quiet_NaN();
                QVERIFY2(std::isnan(cpu::maxOfArray(withNan.data(), n)), qPrintable(QStringLiteral("n %1, NaN at %2").arg(n).arg(at)));
                QVERIFY(std::isnan(cpu::minOfArray(withNan.data(), n)));
            }
        }
    }

    void vectorExpMatchesLibm() {
        auto ulps = [](float a, float b) {
            return std::abs(int64_t(std::bit_cast<int32_t>(a)) - int64_t(std::bit_cast<int32_t>(b)));
        };
        int64_t worst = 0;
        for (double x = -110; x <= 95; x += 1.0 / 4096) {
            const float v = float(x), want = std::exp(v), got = cpu::expFast(v);
            if (want >= std::numeric_limits<float>::min()) {
                worst = std::max(worst, ulps(got, want));
                QVERIFY2(ulps(got, want) <= 2, qPrintable(QStringLiteral("exp(%1): %2 vs %3").arg(v).arg(got).arg(want)));
            } else {
                QVERIFY2(std::abs(got - want) <= std::numeric_limits<float>::denorm_min() * 2,
                         qPrintable(QStringLiteral("exp(%1): %2 vs %3").arg(v).arg(got).arg(want)));
            }
            const float sigmoid = float(1 / (1 + std::exp(-double(v))));
            QVERIFY2(std::abs(cpu::sigmoidFast(v) - sigmoid) <= 2.5e-7f * sigmoid + 1e-30f, qPrintable(QString::number(v)));
            const float swish = float(double(v) / (1 + std::exp(-double(v))));
            QVERIFY2(std::abs(cpu::swishFast(v, 1.f) - swish) <= 2.5e-7f * std::abs(swish) + 1e-30f,
                     qPrintable(QStringLiteral("swish(%1): %2 vs %3").arg(v).arg(cpu::swishFast(v, 1.f)).arg(swish)));
        }
        qInfo("worst exp error over the sweep: %lld ulp", static_cast<long long>(worst));
        const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
        QVERIFY(std::isnan(cpu::expFast(nan)) && std::isnan(cpu::sigmoidFast(nan)));
        QCOMPARE(cpu::expFast(inf), inf);
        QCOMPARE(cpu::expFast(-inf), 0.f);
        QCOMPARE(cpu::expFast(89.f), inf);
        QCOMPARE(cpu::expFast(-200.f), 0.f);
        QCOMPARE(cpu::sigmoidFast(-inf), 0.f);
        QCOMPARE(cpu::sigmoidFast(inf), 1.f);
        QVERIFY(std::isnan(cpu::swishFast(nan, 1.f)) && std::isnan(cpu::swishFast(-inf, 1.f)));  // -inf * 0
        QCOMPARE(cpu::swishFast(inf, 1.f), inf);
        QCOMPARE(cpu::swishFast(-200.f, 1.702f), -0.f);
        QCOMPARE(cpu::expFast(0.f), 1.f);

        // erf: within 4e-7 of libm's everywhere (GELU's error stays below float's own
        // rounding of 0.5 * x * (1 + erf)), exactly +-1 far out, NaN through.
        double worstErf = 0;
        for (double x = -8; x <= 8; x += 1.0 / 8192) {
            const float v = float(x);
            const double error = std::abs(double(cpu::erfFast(v)) - double(std::erf(v)));
            if (!(error <= worstErf)) worstErf = error;  // a NaN error sticks (std::max would drop it)
        }
        qInfo("worst erf error over the sweep: %.3g", worstErf);
        QVERIFY2(worstErf < 4e-7, qPrintable(QString::number(worstErf)));
        QCOMPARE(cpu::erfFast(inf), 1.f);
        QCOMPARE(cpu::erfFast(-inf), -1.f);
        QCOMPARE(cpu::erfFast(0.f), 0.f);
        QVERIFY(std::isnan(cpu::erfFast(nan)));
    }

    // tanh (Tanh, the recurrent cells' gates): within 8 ulp of libm's over [-12, 12] and
    // within 4e-7 absolute, x itself near 0, exactly +-1 far out, odd, NaN through; the array
    // form equal to the scalar one element by element.
    void vectorTanhMatchesLibm() {
        const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
        std::vector<float> x;
        for (double v = -12; v <= 12; v += 1.0 / 4096) x.push_back(float(v));
        for (float tiny : {1e-30f, 1e-7f, 3e-4f, 5e-4f}) x.insert(x.end(), {tiny, -tiny});
        std::vector<float> y(x.size());
        cpu::tanhArray(x.data(), y.data(), int64_t(x.size()));
        int64_t worst = 0;
        for (size_t i = 0; i < x.size(); ++i) {
            const float want = std::tanh(x[i]);
            QCOMPARE(y[i], cpu::tanhFast(x[i]));
            QCOMPARE(cpu::tanhFast(-x[i]), -y[i]);
            const int64_t ulps = std::abs(int64_t(std::bit_cast<int32_t>(y[i])) - int64_t(std::bit_cast<int32_t>(want)));
            worst = std::max(worst, ulps);
            QVERIFY2(ulps <= 8 && std::abs(double(y[i]) - std::tanh(double(x[i]))) < 4e-7,
                     qPrintable(QStringLiteral("tanh(%1): %2 vs %3").arg(x[i]).arg(y[i]).arg(want)));
        }
        qInfo("worst tanh error over the sweep: %lld ulp", static_cast<long long>(worst));
        QCOMPARE(cpu::tanhFast(inf), 1.f);
        QCOMPARE(cpu::tanhFast(-inf), -1.f);
        QCOMPARE(cpu::tanhFast(9.f), 1.f);
        QCOMPARE(cpu::tanhFast(0.f), 0.f);
        QVERIFY(std::isnan(cpu::tanhFast(nan)));
    }

    // align_corners maps output x to x (in - 1) / (out - 1) with the output's whole length, as
    // PyTorch (F.interpolate with scale_factor) and ONNX Runtime do; ONNX's reference takes
    // in x scale unrounded (2.4 here, giving 3.14 instead of 4). Expected: ONNX Runtime's.
    void alignCornersReadsTheOutputLength() {
        auto resized = [](std::vector<int64_t> dims, std::vector<float> scales, const std::string& mode) {
            GraphBuilder g;
            ValueId x = g.input("x", DType::Float32, Shape::ofSizes(dims));
            ValueId y = g.node("Resize", {x, g.initializer(floatTensor("roi", {0}, {})), g.initializer(floatTensor("scales", {4}, scales))},
                               {"y"}, {stringAttr("mode", mode), stringAttr("coordinate_transformation_mode", "align_corners")},
                               "resize")[0];
            g.output(y);
            Model m = g.buildModel();
            fillUnknownTypes(*m.graph);
            std::vector<float> values(size_t(dims[2] * dims[3]));
            for (size_t i = 0; i < values.size(); ++i) values[i] = float(i + 1);
            auto exec = Executor::create(m, cpuExecutorOptions());
            if (!exec) return std::vector<float>{};
            auto out = (*exec)->run({floats(dims, values)});
            return out ? valuesOf((*out)[0]) : std::vector<float>{};
        };
        QCOMPARE(resized({1, 1, 2, 4}, {1, 1, 0.6f, 0.6f}, "linear"), (std::vector<float>{1, 4}));
        const std::vector<float> up = resized({1, 1, 2, 2}, {1, 1, 1.7f, 2.3f}, "linear");
        const std::vector<float> want{1, 4 / 3.f, 5 / 3.f, 2, 2, 7 / 3.f, 8 / 3.f, 3, 3, 10 / 3.f, 11 / 3.f, 4};
        QCOMPARE(up.size(), want.size());
        for (size_t i = 0; i < want.size(); ++i) QVERIFY(std::abs(up[i] - want[i]) < 1e-6f);
    }

    // GPT-2's GELU (tanh form): within 1e-5 relative of the double-precision formula over
    // [-20, 20], the negative tail included (where 1 + tanh would cancel in float); large
    // inputs pass through.
    void geluTanhArrayMatchesTheFormula() {
        std::vector<float> x;
        for (double v = -20; v <= 20; v += 1.0 / 1024) x.push_back(float(v));
        std::vector<float> y(x.size());
        cpu::geluTanhArray(x.data(), y.data(), int64_t(x.size()));
        for (size_t i = 0; i < x.size(); ++i) {
            const double v = x[i], u = 0.7978845608028654 * (v + 0.044715 * v * v * v);
            const double want = v / (1 + std::exp(-2 * u));  // = 0.5 v (1 + tanh u), without its cancellation
            QVERIFY2(std::abs(y[i] - want) <= 1e-5 * std::abs(want) + 1e-37,
                     qPrintable(QStringLiteral("gelu_tanh(%1): %2 vs %3").arg(x[i]).arg(y[i]).arg(want)));
        }
        const float big = 1e4f;
        cpu::geluTanhArray(&big, y.data(), 1);
        QCOMPARE(y[0], big);
    }

    // The array forms the kernels call (on AVX-512 their own vector code, with a scalar
    // tail): within 2.5e-7 of the double-precision logistic everywhere, NaN and the
    // infinities as the scalar forms give them, at SiLU's alpha and at QuickGELU's.
    void logisticArraysMatchLibm() {
        const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
        std::vector<float> x{inf, -inf, nan, 1e30f, -1e30f, 0.f, -0.f};  // in the first vector
        for (double v = -120; v <= 120; v += 1.0 / 1024) x.push_back(float(v));
        x.push_back(nan);  // an odd count: the last few go through the scalar tail
        std::vector<float> sig(x.size()), swish(x.size());
        cpu::sigmoidArray(x.data(), sig.data(), int64_t(x.size()));
        for (float alpha : {1.f, 1.702f}) {
            cpu::swishArray(x.data(), swish.data(), int64_t(x.size()), alpha);
            for (size_t i = 0; i < x.size(); ++i) {
                const double v = x[i];
                if (std::isnan(v) || std::isinf(v)) {
                    const float scalar = cpu::swishFast(x[i], alpha);
                    QVERIFY2(std::isnan(swish[i]) ? std::isnan(scalar) : swish[i] == scalar, qPrintable(QString::number(v)));
                    continue;
                }
                // alpha x rounded to float as the kernels round it: its error, times |alpha x|
                // in e^(alpha x), is the input's, not the function's.
                const float want = float(v / (1 + std::exp(-double(alpha * x[i]))));
                QVERIFY2(std::abs(swish[i] - want) <= 2.5e-7f * std::abs(want) + 1e-30f,
                         qPrintable(QStringLiteral("swish(%1, %2): %3 vs %4").arg(v).arg(alpha).arg(swish[i]).arg(want)));
            }
        }
        for (size_t i = 0; i < x.size(); ++i) {
            if (std::isnan(x[i])) {
                QVERIFY(std::isnan(sig[i]));
                continue;
            }
            const float want = float(1 / (1 + std::exp(-double(x[i]))));
            QVERIFY2(std::abs(sig[i] - want) <= 2.5e-7f * want + 1e-30f,
                     qPrintable(QStringLiteral("sigmoid(%1): %2 vs %3").arg(x[i]).arg(sig[i]).arg(want)));
        }
        QCOMPARE(sig[0], 1.f);  // +inf
        QCOMPARE(sig[1], 0.f);  // -inf
    }
};

QTEST_APPLESS_MAIN(TestExecutor)
#include "tst_executor.moc"
