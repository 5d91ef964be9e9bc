// O3's memory passes: schedule-for-memory (a positive case where the exported order keeps
// three large intermediates alive at once, the guard that keeps an order that cannot
// improve, numerics and a golden dump) and plan-memory's figures.
#include <QTest>

#include "compiler/pass_manager.h"
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
        auto r = compileWith(m, {"schedule-for-memory", "plan-memory"});
        const double before = figure(r, "schedule-for-memory", "arena_bytes_before");
        const double after = figure(r, "schedule-for-memory", "arena_bytes_after");
        const double big = 64 * 256 * 4;
        QCOMPARE(before, 3 * big + 64);  // three Exps live together, one small sum
        QVERIFY2(after < 2 * big, qPrintable(QString::number(after)));
        QCOMPARE(figure(r, "plan-memory", "arena_bytes"), after);
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

    void planFiguresBracketTheArena() {
        Model m = branchesComputedEagerly();
        auto r = compileWith(m, {"plan-memory"});
        const double arena = figure(r, "plan-memory", "arena_bytes");
        QVERIFY(arena >= figure(r, "plan-memory", "lower_bound_bytes"));
        QVERIFY(arena <= figure(r, "plan-memory", "naive_bytes"));
        QCOMPARE(figure(r, "plan-memory", "buffers"), 7.0);  // every node output but y
        QCOMPARE(figure(r, "plan-memory", "symbols_bound_to_1"), 0.0);

        // Symbolic batch: planned at 1, and said so.
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape({Dim::symbolic("batch"), Dim::known(16)}));
        b.output(b.op("Relu", {b.op("Exp", {x}, "e")}, "y"));
        auto sym = compileWith(withInferredTypes(b), {"plan-memory"});
        QCOMPARE(figure(sym, "plan-memory", "symbols_bound_to_1"), 1.0);
        QCOMPARE(figure(sym, "plan-memory", "arena_bytes"), 64.0);  // 16 floats, 64-byte aligned
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
        auto r = compileWith(m, {"schedule-for-memory", "plan-memory"});
        QCOMPARE(r.trace.passes[1].rejections.size(), size_t(1));
        QVERIFY(r.trace.passes[1].rejections[0].reason.find("'e'") != std::string::npos);
        QCOMPARE(figure(r, "plan-memory", "arena_bytes"), -1.0);
    }
};

QTEST_APPLESS_MAIN(TestMemoryPasses)
#include "tst_memory_passes.moc"
