// O3's memory pass, schedule-for-memory (a positive case where the exported order keeps
// three large intermediates alive at once, the guard that keeps an order that cannot
// improve, numerics and a golden dump), and the executor's memory plan that every command
// reports: found from shapes without running, it is the plan a run lays out.
#include <QTest>

#include "compiler/target.h"
#include "compiler/pass_manager.h"
#include "compiler/runtime/executor.h"
#include "compiler/runtime/feeds.h"
#include "pass_test_support.h"

using namespace fsc;
using namespace fsc::test;

namespace {

// Three branches, each a large Exp reduced to a small sum; the order computes all three
// Exps before any sum, so three large buffers are live at once.
Model branchesComputedEagerly() {
    GraphBuilder b;
    ValueId x = b.input("x", DType::Float32, Shape::ofSizes({64, 256}));
    std::vector<ValueId> big, small;
    for (const char* name : {"a", "b", "c"}) big.push_back(b.op("Exp", {x}, std::string(name) + "_big", {}, std::string(name) + "_exp"));
    for (size_t i = 0; i < 3; ++i)
        small.push_back(b.op("ReduceSum", {big[i]}, "s" + std::to_string(i), {fsc::intAttr("keepdims", 0)}, "sum" + std::to_string(i)));
    b.output(b.op("Add", {b.op("Add", {small[0], small[1]}, "ab"), small[2]}, "y"));
    return withInferredTypes(b);
}

MemoryPlan plannedFor(const Model& m, const std::vector<std::vector<int64_t>>& dims) {
    auto exec = Executor::create(m, cpuExecutorOptions());
    if (!exec) qFatal("%s", exec.status().message().c_str());
    auto plan = (*exec)->plannedMemory(dims);
    if (!plan) qFatal("%s", plan.status().message().c_str());
    return *plan;
}

double figure(const CompileResult& r, const std::string& pass, const std::string& name) {
    for (const PassReport& p : r.trace.passes)
        if (p.name == pass) {
            auto it = p.counters.figures.find(name);
            return it == p.counters.figures.end() ? -1 : it->second;
        }
    return -1;
}

}  // namespace

class TestMemoryPasses : public QObject {
    Q_OBJECT
private slots:
    void scheduleShrinksTheArena() {
        Model m = branchesComputedEagerly();
        auto r = compileWith(m, {"schedule-for-memory"});
        const double before = figure(r, "schedule-for-memory", "estimated_arena_bytes_before");
        const double after = figure(r, "schedule-for-memory", "estimated_arena_bytes_after");
        const double big = 64 * 256 * 4;
        QCOMPARE(before, 3 * big + 64);  // three Exps live together, one small sum
        QVERIFY2(after < 2 * big, qPrintable(QString::number(after)));
        // The executor's plan, what a run lays out, shrinks with it.
        QVERIFY(plannedFor(m, {{64, 256}}).arenaBytes >= size_t(3 * big));
        QVERIFY(plannedFor(r.model, {{64, 256}}).arenaBytes < size_t(2 * big));
        QCOMPARE(r.trace.passes[0].changes.size(), size_t(1));
        QVERIFY(r.trace.passes[0].changes[0].reason.find("reordered 8 nodes") != std::string::npos);
        QVERIFY(maxRelativeError(m, r.model) < 1e-6);
        checkGolden(*r.model.graph, QStringLiteral("schedule_for_memory"));
    }

    void scheduleKeepsAnOrderItCannotImprove() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({8, 8}));
        b.output(b.op("Relu", {b.op("Exp", {x}, "e")}, "y"));
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"schedule-for-memory"});
        QVERIFY(r.trace.passes[0].changes.empty());
        QCOMPARE(r.trace.passes[0].rejections.size(), size_t(1));
        QCOMPARE(r.trace.passes[0].rejections[0].reason, std::string("the memory-aware order does not shrink the arena"));
    }

    // The plan found from shapes is the plan the run lays out, for the run's own sizes.
    void plannedMemoryIsTheRunsPlan() {
        Model m = branchesComputedEagerly();
        const MemoryPlan planned = plannedFor(m, {{64, 256}});
        QVERIFY(planned.arenaBytes >= planned.lowerBoundBytes);
        QVERIFY(planned.arenaBytes <= planned.naiveBytes);
        auto exec = Executor::create(m, cpuExecutorOptions());
        QVERIFY(exec.isOk());
        auto feeds = buildFeeds(**exec, FeedOptions{});
        QVERIFY(feeds.isOk());
        QVERIFY((*exec)->run(feeds->tensors).isOk());
        const MemoryPlan* ran = (*exec)->lastMemoryPlan();
        QVERIFY(ran);
        QCOMPARE(ran->arenaBytes, planned.arenaBytes);
        QCOMPARE(ran->naiveBytes, planned.naiveBytes);
        QCOMPARE(ran->lowerBoundBytes, planned.lowerBoundBytes);
        QCOMPARE(ran->assignments.size(), planned.assignments.size());

        // A symbolic batch takes the feeds' size: 16 floats a row, 64-byte aligned.
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape({Dim::symbolic("batch"), Dim::known(16)}));
        b.output(b.op("Relu", {b.op("Exp", {x}, "e")}, "y"));
        const Model sym = withInferredTypes(b);
        QCOMPARE(plannedFor(sym, {{1, 16}}).arenaBytes, size_t(64));
        QCOMPARE(plannedFor(sym, {{8, 16}}).arenaBytes, size_t(8 * 64));
    }

    void unsizedValuesAreRejectionsNotErrors() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape({Dim(), Dim::known(4)}));  // an unnamed dim
        b.output(b.op("Relu", {b.op("Exp", {x}, "e")}, "y"));
        Model m = withInferredTypes(b);
        // ONNX's inference names the dim (unk__N); a value it could not name stays unsized.
        Value& e = m.graph->value(m.graph->findValue("e"));
        QVERIFY(e.type.shape[0].isSymbolic());
        e.type.shape = Shape({Dim(), Dim::known(4)});
        auto r = compileWith(m, {"schedule-for-memory"});
        QCOMPARE(r.trace.passes[0].rejections.size(), size_t(1));
        QVERIFY(r.trace.passes[0].rejections[0].reason.find("'e'") != std::string::npos);
        // The executor's plan names the value only a run can size.
        auto exec = Executor::create(m, cpuExecutorOptions());
        QVERIFY(exec.isOk());
        auto planned = (*exec)->plannedMemory({{3, 4}});
        QVERIFY(!planned.isOk());
        QVERIFY2(planned.status().message().find("'e' is known only when the model runs") != std::string::npos,
                 planned.status().message().c_str());
    }
};

QTEST_APPLESS_MAIN(TestMemoryPasses)
#include "tst_memory_passes.moc"
