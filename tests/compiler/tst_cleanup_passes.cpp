// The O1 clean-up passes: for each, a positive case (op counts), a negative case per guard
// (the node stays and the rejection names the reason), a numeric before/after comparison
// on the CPU runtime, and a golden text dump.
#include <QTest>

#include "compiler/passes/pass_util.h"
#include "pass_test_support.h"

using namespace fsc;
using namespace fsc::test;

namespace {

Shape dims(std::vector<int64_t> d) { return Shape::ofSizes(d); }

Model noOpChain() {
    GraphBuilder b;
    ValueId x = b.input("x", DType::Float32, dims({2, 3}));
    ValueId zero = b.initializer(floatTensor("zero", {1}, {0.0f}));
    ValueId a = b.op("Identity", {x}, "a");
    ValueId r = b.op("Relu", {a}, "r");
    ValueId d = b.op("Dropout", {r}, "d");
    ValueId c = b.op("Cast", {d}, "c", {intAttr("to", 1)});
    ValueId t = b.op("Transpose", {c}, "t", {intsAttr("perm", {0, 1})});
    ValueId s = b.op("Add", {t, zero}, "s");
    ValueId y = b.op("Sigmoid", {s}, "y");
    b.output(y);
    return withInferredTypes(b);
}

}  // namespace

class TestCleanupPasses : public QObject {
    Q_OBJECT
private slots:
    void noOpsRemoved() {
        Model m = noOpChain();
        auto r = compileWith(m, {"eliminate-no-ops"});
        const Graph& g = *r.model.graph;
        QCOMPARE(int(g.nodeCount()), 2);  // Relu, Sigmoid
        QCOMPARE(countOps(g, "Relu"), 1);
        QCOMPARE(r.trace.passes[0].counters.applied, 5);
        QVERIFY(maxRelativeError(m, r.model) == 0.0);
        checkGolden(g, QStringLiteral("eliminate_no_ops"));
    }

    void noOpGuards() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({2, 3}));
        ValueId zeros = b.initializer(floatTensor("zeros", {4, 2, 3}, std::vector<float>(24, 0.0f)));
        ValueId id = b.op("Identity", {x}, "id");  // graph output fed by a graph input
        auto dropout = b.node("Dropout", {x}, {"dy", "mask"});  // mask is read
        ValueId grown = b.op("Add", {x, zeros}, "grown");  // zeros broadcast to [4,2,3]
        b.output(id);
        b.output(dropout[1]);
        b.output(dropout[0]);
        b.output(grown);
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"eliminate-no-ops"});
        QCOMPARE(int(r.model.graph->nodeCount()), 3);
        QVERIFY(rejectedFor(r, "graph output that must keep its name"));
        QVERIFY(rejectedFor(r, "mask output is read"));
        QVERIFY(rejectedFor(r, "broadcast the result"));
        QCOMPARE(r.model.graph->value(r.model.graph->outputs[0]).name, std::string("id"));
    }

    // Pools of one element go (AlexNet's AdaptiveAvgPool2d((6, 6)) on a 6 x 6 map); a 1 x 1
    // window at stride 2 and a 2 x 2 window stay.
    void onePixelPoolsRemoved() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({1, 4, 6, 6}));
        ValueId avg = b.op("AveragePool", {x}, "avg", {intsAttr("kernel_shape", {1, 1}), intsAttr("strides", {1, 1})});
        ValueId mx = b.op("MaxPool", {b.op("Relu", {avg}, "r1")}, "mx", {intsAttr("kernel_shape", {1, 1})});
        ValueId strided = b.op("MaxPool", {b.op("Relu", {mx}, "r2")}, "strided", {intsAttr("kernel_shape", {1, 1}), intsAttr("strides", {2, 2})});
        ValueId wide = b.op("AveragePool", {strided}, "wide", {intsAttr("kernel_shape", {2, 2})});
        ValueId global = b.op("GlobalAveragePool", {b.op("GlobalMaxPool", {wide}, "gmax")}, "gavg");
        b.output(b.op("Relu", {global}, "y"));
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"eliminate-no-ops"});
        const Graph& g = *r.model.graph;
        QCOMPARE(countOps(g, "AveragePool"), 1);  // the 2 x 2 window
        QCOMPARE(countOps(g, "MaxPool"), 1);      // the strided one
        QCOMPARE(countOps(g, "GlobalMaxPool"), 1);
        QCOMPARE(countOps(g, "GlobalAveragePool"), 0);  // over the 1 x 1 that GlobalMaxPool leaves
        QVERIFY(maxRelativeError(m, r.model) == 0.0);
    }

    void graphOutputKeepsItsName() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({4}));
        ValueId r = b.op("Relu", {x}, "r");
        ValueId y = b.op("Identity", {r}, "y");
        b.output(y);
        Model m = withInferredTypes(b);
        auto c = compileWith(m, {"eliminate-no-ops"});
        const Graph& g = *c.model.graph;
        QCOMPARE(int(g.nodeCount()), 1);
        QCOMPARE(g.value(g.outputs[0]).name, std::string("y"));
        QCOMPARE(g.node(g.order()[0]).opType, std::string("Relu"));
    }

    void constantsFolded() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({2, 2}));
        ValueId w = b.initializer(floatTensor("w", {2, 2}, {1, 2, 3, 4}));
        ValueId k = b.op("Constant", {}, "k", {tensorAttr("value", floatTensor("", {2, 2}, {0.5f, 0.5f, 0.5f, 0.5f}))});
        ValueId wk = b.op("Mul", {w, k}, "wk");
        ValueId t = b.op("Transpose", {wk}, "t", {intsAttr("perm", {1, 0})});
        ValueId y = b.op("MatMul", {x, t}, "y");
        b.output(y);
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"fold-constants"});
        const Graph& g = *r.model.graph;
        QCOMPARE(int(g.nodeCount()), 1);
        QCOMPARE(countOps(g, "MatMul"), 1);
        QVERIFY(maxRelativeError(m, r.model) < 1e-7);
        checkGolden(g, QStringLiteral("fold_constants"));
    }

    void constantFoldingGuards() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({2}));
        ValueId shape = b.initializer(int64Tensor("shape", {1}, {6 << 20}));  // 24 MiB of floats
        ValueId big = b.op("ConstantOfShape", {shape}, "big", {tensorAttr("value", floatTensor("", {1}, {1.0f}))});
        ValueId noise = b.op("RandomNormal", {}, "noise", {intsAttr("shape", {2})});
        ValueId s = b.op("Add", {x, noise}, "s");
        ValueId n = b.op("ReduceSum", {big}, "n", {intAttr("keepdims", 0)});
        b.output(s);
        b.output(n);
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"fold-constants"});
        QCOMPARE(countOps(*r.model.graph, "RandomNormal"), 1);
        QCOMPARE(countOps(*r.model.graph, "ConstantOfShape"), 1);
        QVERIFY(rejectedFor(r, "the op is random"));
        QVERIFY(rejectedFor(r, "over 16 MiB"));
    }

    void shapeComputationFolded() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({2, 3, 4}));
        ValueId idx = b.initializer(int64Tensor("idx", {}, {0}));
        ValueId axes = b.initializer(int64Tensor("axes", {1}, {0}));
        ValueId minus1 = b.initializer(int64Tensor("minus1", {1}, {-1}));
        ValueId shape = b.op("Shape", {x}, "shape");
        ValueId batch = b.op("Gather", {shape, idx}, "batch");
        ValueId batch1 = b.op("Unsqueeze", {batch, axes}, "batch1");
        ValueId target = b.op("Concat", {batch1, minus1}, "target", {intAttr("axis", 0)});
        ValueId y = b.op("Reshape", {x, target}, "y");
        b.output(y);
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"fold-shape-computation"});
        const Graph& g = *r.model.graph;
        QCOMPARE(int(g.nodeCount()), 1);
        QCOMPARE(countOps(g, "Reshape"), 1);
        const Node& reshape = g.node(g.order()[0]);
        const Tensor* t = g.value(reshape.inputs[1]).initializer.get();
        QVERIFY(t);
        QCOMPARE(t->dataAs<int64_t>()[0], int64_t(2));
        QCOMPARE(t->dataAs<int64_t>()[1], int64_t(-1));
        QVERIFY(maxRelativeError(m, r.model) == 0.0);
        checkGolden(g, QStringLiteral("fold_shape_computation"));
    }

    // PyTorch's dynamic-batch attention: the heads' Reshape target is Concat(Shape(x)[0],
    // Shape(x)[1], 2, 4) and the merge's is (Shape[0] * Shape[1], 8). The symbolic dims at
    // their own place become 0, the product -1; the Shape arithmetic is then dead.
    void reshapeTargetsOfSymbolicDims() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape({Dim::symbolic("batch"), Dim::symbolic("seq"), Dim::known(8)}));
        ValueId axes = b.initializer(int64Tensor("axes", {1}, {0}));
        auto dimOf = [&](ValueId v, int64_t i, const std::string& name) {
            ValueId shape = b.op("Shape", {v}, name + "_shape");
            return b.op("Gather", {shape, b.initializer(int64Tensor(name + "_i", {}, {i}))}, name);
        };
        auto unsqueeze = [&](ValueId v, const std::string& name) { return b.op("Unsqueeze", {v, axes}, name); };
        ValueId heads = b.initializer(int64Tensor("heads", {2}, {2, 4}));
        ValueId split = b.op("Concat", {unsqueeze(dimOf(x, 0, "b0"), "ub0"), unsqueeze(dimOf(x, 1, "s0"), "us0"), heads},
                             "split_target", {intAttr("axis", 0)});
        ValueId y = b.op("Reshape", {x, split}, "y");
        ValueId rows = b.op("Mul", {dimOf(y, 0, "b1"), dimOf(y, 1, "s1")}, "rows");
        ValueId width = b.initializer(int64Tensor("width", {1}, {8}));
        ValueId flat = b.op("Concat", {unsqueeze(rows, "urows"), width}, "flat_target", {intAttr("axis", 0)});
        ValueId z = b.op("Reshape", {y, flat}, "z");
        // (seq, batch) against data (batch, seq): neither is the data's own dim, two unknowns.
        ValueId swapped = b.op("Concat", {unsqueeze(dimOf(x, 1, "s2"), "us2"), unsqueeze(dimOf(x, 0, "b2"), "ub2"), width},
                               "swapped_target", {intAttr("axis", 0)});
        ValueId w = b.op("Reshape", {x, swapped}, "w");
        b.output(z);
        b.output(w);
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"fold-shape-computation", "eliminate-dead-code"});
        const Graph& g = *r.model.graph;
        auto targetOf = [&](const std::string& output) -> std::vector<int64_t> {
            for (NodeId id : g.order()) {
                const Node& n = g.node(id);
                if (n.opType != "Reshape" || g.value(n.outputs[0]).name != output) continue;
                const Tensor* t = g.value(n.inputs[1]).initializer.get();
                if (!t) return {};
                return std::vector<int64_t>(t->dataAs<int64_t>(), t->dataAs<int64_t>() + t->numElements());
            }
            return {};
        };
        QCOMPARE(targetOf("y"), (std::vector<int64_t>{0, 0, 2, 4}));
        QCOMPARE(targetOf("z"), (std::vector<int64_t>{-1, 8}));
        QVERIFY(targetOf("w").empty());  // still computed at run time
        QVERIFY(rejectedFor(r, "more than one dim"));
        QCOMPARE(countOps(g, "Shape"), 2);  // the swapped target's; y's and z's went
        QVERIFY(maxRelativeError(m, r.model) == 0.0);
    }

    // Before opset 10 Slice takes starts/ends/axes as attributes (paddle2onnx's LayerNorm
    // reshapes gamma to Slice(Shape(x), 2, 3)).
    void attributeSliceOfShapeFolds() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape({Dim::symbolic("batch"), Dim::known(3), Dim::known(4)}));
        ValueId shape = b.op("Shape", {x}, "shape");
        ValueId tail = b.op("Slice", {shape}, "tail", {intsAttr("starts", {1}), intsAttr("ends", {3}), intsAttr("axes", {0})});
        ValueId gamma = b.initializer(floatTensor("gamma", {12}, std::vector<float>(12, 2.0f)));
        ValueId g2 = b.op("Reshape", {gamma, tail}, "g2");
        b.output(b.op("Mul", {x, g2}, "y"));
        Model m = withInferredTypes(b, 9);
        auto r = compileWith(m, {"fold-shape-computation", "eliminate-dead-code"});
        QCOMPARE(countOps(*r.model.graph, "Slice"), 0);
        QCOMPARE(countOps(*r.model.graph, "Shape"), 0);
        QVERIFY(maxRelativeError(m, r.model) == 0.0);
    }

    // A detector's pre-processing: the image is resized to sizes worked out in float from its
    // own shape (Cast, Mul, Floor), which only fold-constants computes; a Conv then reads it
    // and a Reshape target comes from the Conv's shape. The pass folds the float arithmetic,
    // infers shapes again (ONNX's rule sizes the Conv, ours the Resize) and folds the rest.
    void shapesBehindFloatArithmeticFold() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({1, 3, 8, 8}));
        ValueId shape = b.op("Shape", {x}, "shape");
        ValueId hw = b.op("Slice", {shape, b.initializer(int64Tensor("from", {1}, {2})),
                                    b.initializer(int64Tensor("to", {1}, {4}))}, "hw");
        ValueId hwf = b.op("Cast", {hw}, "hwf", {intAttr("to", int64_t(DType::Float32))});
        ValueId half = b.op("Mul", {hwf, b.initializer(floatTensor("half", {1}, {0.5f}))}, "half_hw");
        ValueId floored = b.op("Floor", {half}, "floored");
        ValueId hwi = b.op("Cast", {floored}, "hwi", {intAttr("to", int64_t(DType::Int64))});
        ValueId sizes = b.op("Concat", {b.initializer(int64Tensor("nc", {2}, {1, 3})), hwi}, "sizes", {intAttr("axis", 0)});
        ValueId small = b.op("Resize", {x, ValueId(), ValueId(), sizes}, "small", {stringAttr("mode", "nearest")});
        ValueId w = b.initializer(floatTensor("w", {2, 3, 3, 3}, std::vector<float>(54, 0.1f)));
        ValueId conv = b.op("Conv", {small, w}, "conv", {intsAttr("pads", {1, 1, 1, 1})});
        ValueId convShape = b.op("Shape", {conv}, "conv_shape");
        ValueId width = b.op("Gather", {convShape, b.initializer(int64Tensor("three", {}, {3}))}, "width");
        ValueId width1 = b.op("Unsqueeze", {width, b.initializer(int64Tensor("axes", {1}, {0}))}, "width1");
        ValueId target = b.op("Concat", {b.initializer(int64Tensor("minus1", {1}, {-1})), width1}, "target", {intAttr("axis", 0)});
        b.output(b.op("Reshape", {conv, target}, "y"));
        Model m = withInferredTypes(b);
        QVERIFY(!m.graph->value(m.graph->findValue("conv")).type.shape.isStatic());  // what import leaves: ONNX cannot size it
        auto r = compileWith(m, {"fold-shape-computation", "eliminate-dead-code"});
        const Graph& g = *r.model.graph;
        QCOMPARE(countOps(g, "Shape"), 0);
        QCOMPARE(countOps(g, "Floor"), 0);
        QCOMPARE(int(g.nodeCount()), 3);  // Resize, Conv, Reshape
        for (NodeId id : g.order()) {
            const Node& n = g.node(id);
            if (n.opType == "Conv") QCOMPARE(g.value(n.outputs[0]).type.shape, dims({1, 2, 4, 4}));
            if (n.opType == "Reshape") QVERIFY(g.value(n.inputs[1]).initializer);
        }
        QVERIFY(maxRelativeError(m, r.model) == 0.0);
    }

    // x.size(-2) after a permute and x.view(...).size(): a Transpose and a Reshape that only
    // Shapes read. The Shapes read x (Gather picks the dims, Concat adds the known numbers)
    // and both go; a Transpose something else reads stays.
    void shapeOfALayoutOpReadsItsInput() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape({Dim::symbolic("batch"), Dim::symbolic("seq"), Dim::known(4), Dim::known(16)}));
        ValueId heads = b.op("Transpose", {x}, "heads", {intsAttr("perm", {0, 2, 1, 3})});
        ValueId keyLength = b.op("Shape", {heads}, "key_length", {intAttr("start", -2), intAttr("end", -1)});
        ValueId merged = b.op("Reshape", {x, b.initializer(int64Tensor("merge", {3}, {0, 0, 64}))}, "merged");
        ValueId mergedShape = b.op("Shape", {merged}, "merged_shape");
        ValueId read = b.op("Transpose", {x}, "read", {intsAttr("perm", {1, 0, 2, 3})});
        ValueId readShape = b.op("Shape", {read}, "read_shape");
        b.output(keyLength);
        b.output(mergedShape);
        b.output(readShape);
        b.output(b.op("Relu", {read}, "y"));
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"fold-shape-computation", "eliminate-dead-code"});
        const Graph& g = *r.model.graph;
        QCOMPARE(countOps(g, "Transpose"), 1);
        QCOMPARE(countOps(g, "Reshape"), 0);
        QCOMPARE(countOps(g, "Shape"), 3);
        for (NodeId id : g.order())
            if (g.node(id).opType == "Shape" && g.value(g.node(id).outputs[0]).name != "read_shape")
                QCOMPARE(g.value(g.node(id).inputs[0]).name, std::string("x"));
        QVERIFY(maxRelativeError(m, r.model) == 0.0);
    }

    void symbolicShapeStays() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape({Dim::symbolic("batch"), Dim::known(3)}));
        ValueId idx = b.initializer(int64Tensor("idx", {}, {0}));
        ValueId shape = b.op("Shape", {x}, "shape");
        ValueId batch = b.op("Gather", {shape, idx}, "batch");
        b.output(batch);
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"fold-shape-computation"});
        QCOMPARE(int(r.model.graph->nodeCount()), 2);
    }

    void inversePairs() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({2, 3, 4}));
        ValueId t1 = b.op("Transpose", {x}, "t1", {intsAttr("perm", {0, 2, 1})});
        ValueId t2 = b.op("Transpose", {t1}, "t2", {intsAttr("perm", {0, 2, 1})});  // cancels
        ValueId t3 = b.op("Transpose", {t2}, "t3", {intsAttr("perm", {1, 0, 2})});
        ValueId t4 = b.op("Transpose", {t3}, "t4", {intsAttr("perm", {2, 0, 1})});  // merges with t3
        ValueId c1 = b.op("Cast", {t4}, "c1", {intAttr("to", int64_t(DType::Float64))});
        ValueId c2 = b.op("Cast", {c1}, "c2", {intAttr("to", int64_t(DType::Float32))});  // exact
        ValueId h1 = b.op("Cast", {c2}, "h1", {intAttr("to", int64_t(DType::Float16))});
        ValueId h2 = b.op("Cast", {h1}, "h2", {intAttr("to", int64_t(DType::Float32))});  // lossy: stays
        ValueId s1 = b.initializer(int64Tensor("s1", {2}, {4, 6}));
        ValueId s2 = b.initializer(int64Tensor("s2", {1}, {-1}));
        ValueId r1 = b.op("Reshape", {h2, s1}, "r1");
        ValueId r2 = b.op("Reshape", {r1, s2}, "r2");  // one Reshape is enough
        ValueId y = b.op("Relu", {r2}, "y");
        b.output(y);
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"cancel-inverse-pairs", "eliminate-dead-code"});
        const Graph& g = *r.model.graph;
        QCOMPARE(countOps(g, "Transpose"), 1);
        QCOMPARE(countOps(g, "Cast"), 2);
        QCOMPARE(countOps(g, "Reshape"), 1);
        QVERIFY(rejectedFor(r, "loses values of float32"));
        QVERIFY(maxRelativeError(m, r.model) == 0.0);
        checkGolden(g, QStringLiteral("cancel_inverse_pairs"));
    }

    // A Transpose that moves only axes of size 1 is a Reshape (nn.MultiheadAttention's
    // batch-first transposes at batch 1); one that reorders other axes stays.
    void unitAxesTransposeIsAReshape() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({1, 5, 8}));
        ValueId w = b.initializer(floatTensor("w", {8, 4}, std::vector<float>(32, 0.5f)));
        ValueId seqFirst = b.op("Transpose", {x}, "seq_first", {intsAttr("perm", {1, 0, 2})});  // [5, 1, 8]
        b.output(b.op("Relu", {b.op("MatMul", {seqFirst, w}, "mm")}, "y"));
        ValueId z = b.input("z", DType::Float32, dims({2, 5, 1}));
        b.output(b.op("Transpose", {z}, "unit_last", {intsAttr("perm", {0, 2, 1})}));  // [2, 1, 5]
        b.output(b.op("Transpose", {x}, "reversed", {intsAttr("perm", {2, 1, 0})}));  // 8 before 5: stays
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"cancel-inverse-pairs"});
        const Graph& g = *r.model.graph;
        QCOMPARE(countOps(g, "Transpose"), 1);
        QCOMPARE(countOps(g, "Reshape"), 2);
        QVERIFY(maxRelativeError(m, r.model) == 0.0);
    }

    // PyTorch's LSTM exports output.transpose(0, 1)[:, -1]: one index gathered after a
    // Transpose that leaves the other dims in order is a Gather of the untransposed tensor.
    void gatherThroughTranspose() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({5, 2, 3}));
        ValueId last = b.initializer(int64Tensor("last", {}, {-1}));
        ValueId t = b.op("Transpose", {x}, "t", {intsAttr("perm", {1, 0, 2})});
        b.output(b.op("Gather", {t, last}, "y", {intAttr("axis", 1)}));
        ValueId t2 = b.op("Transpose", {x}, "t2", {intsAttr("perm", {2, 0, 1})});
        b.output(b.op("Gather", {t2, last}, "y2", {intAttr("axis", 0)}));  // leaves (5, 2): in order
        ValueId t3 = b.op("Transpose", {x}, "t3", {intsAttr("perm", {0, 2, 1})});
        b.output(b.op("Gather", {t3, last}, "y3", {intAttr("axis", 0)}));  // leaves (3, 2): permuted
        ValueId pair = b.initializer(int64Tensor("pair", {2}, {0, 1}));
        ValueId t4 = b.op("Transpose", {x}, "t4", {intsAttr("perm", {1, 0, 2})});
        b.output(b.op("Gather", {t4, pair}, "y4", {intAttr("axis", 1)}));  // two indices
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"cancel-inverse-pairs"});
        const Graph& g = *r.model.graph;
        QCOMPARE(countOps(g, "Transpose"), 2);
        QVERIFY(rejectedFor(r, "stay permuted"));
        QVERIFY(rejectedFor(r, "more than one index"));
        for (NodeId id : g.order()) {
            const Node& n = g.node(id);
            if (g.value(n.outputs[0]).name == "y") QCOMPARE(fsc::passes::intAttr(n, "axis", -1), int64_t(0));
            if (g.value(n.outputs[0]).name == "y2") QCOMPARE(fsc::passes::intAttr(n, "axis", -1), int64_t(2));
        }
        QVERIFY(maxRelativeError(m, r.model) == 0.0);
    }

    void commonSubexpressions() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({2, 3}));
        ValueId k1 = b.initializer(floatTensor("k1", {1}, {2.0f}));
        ValueId k2 = b.initializer(floatTensor("k2", {1}, {2.0f}));  // same value, other name
        ValueId a = b.op("Mul", {x, k1}, "a");
        ValueId c = b.op("Mul", {x, k2}, "c");
        ValueId ra = b.op("Relu", {a}, "ra");
        ValueId rc = b.op("Relu", {c}, "rc");
        ValueId n1 = b.op("RandomUniformLike", {x}, "n1");
        ValueId n2 = b.op("RandomUniformLike", {x}, "n2");  // random: never merged
        ValueId s = b.op("Add", {ra, rc}, "s");
        ValueId y = b.op("Add", {s, b.op("Sub", {n1, n2}, "d")}, "y");
        b.output(y);
        b.output(ra);
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"eliminate-common-subexpressions"});
        const Graph& g = *r.model.graph;
        QCOMPARE(countOps(g, "Mul"), 1);
        QCOMPARE(countOps(g, "Relu"), 1);
        QCOMPARE(countOps(g, "RandomUniformLike"), 2);
        QCOMPARE(g.value(g.outputs[1]).name, std::string("ra"));
        checkGolden(g, QStringLiteral("eliminate_common_subexpressions"));

        // Numerics on a graph without random ops.
        GraphBuilder b2;
        ValueId x2 = b2.input("x", DType::Float32, dims({2, 3}));
        ValueId e1 = b2.op("Exp", {x2}, "e1");
        ValueId e2 = b2.op("Exp", {x2}, "e2");
        b2.output(b2.op("Sub", {e1, b2.op("Neg", {e2}, "ne")}, "y"));
        Model m2 = withInferredTypes(b2);
        auto r2 = compileWith(m2, {"eliminate-common-subexpressions"});
        QCOMPARE(countOps(*r2.model.graph, "Exp"), 1);
        QVERIFY(maxRelativeError(m2, r2.model) == 0.0);
    }

    void deadCode() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({4}));
        ValueId unused = b.op("Exp", {x}, "unused");
        b.op("Relu", {unused}, "unused2");
        auto split = b.node("Split", {x}, {"p", "q"}, {intAttr("axis", 0)});  // only p is read
        ValueId y = b.op("Abs", {split[0]}, "y");
        b.output(y);
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"eliminate-dead-code"});
        const Graph& g = *r.model.graph;
        QCOMPARE(int(g.nodeCount()), 2);
        QCOMPARE(countOps(g, "Split"), 1);
        QCOMPARE(r.trace.passes[0].counters.applied, 2);
        QVERIFY(maxRelativeError(m, r.model) == 0.0);
        checkGolden(g, QStringLiteral("eliminate_dead_code"));
    }
};

QTEST_APPLESS_MAIN(TestCleanupPasses)
#include "tst_cleanup_passes.moc"
