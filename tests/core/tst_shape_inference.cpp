// Shape inference: ONNX's own first, our rules for what it leaves, symbolic dims kept.
#include <QtTest>

#include "core/einsum_equation.h"
#include "core/graph_builder.h"
#include "core/onnx_export.h"
#include "core/onnx_import.h"
#include "core/shape_inference.h"
#include "core/shape_values.h"
#include "test_support.h"

using namespace fsc;

namespace {
std::string typeOf(const Model& m, const std::string& name) {
    return m.graph->value(m.graph->findValue(name)).type.toString();
}
}  // namespace

class TestShapeInference : public QObject {
    Q_OBJECT
private slots:
    void onnxInferenceFillsIntermediatesAndKeepsSymbols() {
        auto m = importModel(FSC_SAMPLE_MODEL);
        QVERIFY(m.isOk());
        QCOMPARE(typeOf(*m, "/transformer/attn/Softmax_output_0"), std::string("float32[batch,4,64,64]"));
        QCOMPARE(typeOf(*m, "/to_tokens/Transpose_output_0"), std::string("float32[batch,64,32]"));
    }

    void withoutInferenceIntermediatesStayUnknown() {
        ImportOptions options;
        options.inferShapes = false;
        auto m = importModel(FSC_SAMPLE_MODEL, options);
        QVERIFY(m.isOk());
        QCOMPARE(typeOf(*m, "/transformer/attn/Softmax_output_0"), std::string("?"));
    }

    void ourRulesCoverOtherDomains() {
        auto m = importModel(test::fixture("good/domains.onnx"));
        QVERIFY(m.isOk());
        // ONNX does not know com.microsoft::Gelu; the pass-through rule gives its shape,
        // and ONNX's Relu inference then continues from it.
        QCOMPARE(typeOf(*m, "g"), std::string("float32[batch,8]"));
        QCOMPARE(typeOf(*m, "y"), std::string("float32[batch,8]"));
    }

    // quantize_dynamic's form between com.microsoft ops, 40 times over: each op ONNX does not
    // know stops its inference there for a round, so our rules must carry the standard ops
    // between them too, or the rounds run out before the last layer (a 12-layer BERT did at
    // layer 7).
    void deepContribChainsAreTypedToTheEnd() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape({Dim::symbolic("batch"), Dim::known(5), Dim::known(8)}));
        std::string bytes(8 * 8, char(1));
        ValueId w = b.initializer(Tensor("w", DType::Int8, {8, 8}, makeBuffer(bytes), 0, bytes.size()));
        ValueId scale = b.initializer(floatTensor("scale", {}, {0.5f}));
        for (int layer = 0; layer < 40; ++layer) {
            const std::string p = "l" + std::to_string(layer) + "_";
            ValueId gelu = b.node("Gelu", {x}, {p + "gelu"}, {}, p + "gelu", "com.microsoft")[0];
            auto q = b.node("DynamicQuantizeLinear", {gelu}, {p + "q", p + "q_scale", p + "q_zero"});
            ValueId product = b.op("MatMulInteger", {q[0], w, q[2]}, p + "product");
            ValueId wide = b.op("Cast", {product}, p + "wide", {intAttr("to", 1)});
            x = b.op("Mul", {wide, scale}, p + "y");
        }
        b.output(x);
        Model built = b.buildModel(17);
        built.opsetImports.push_back({"com.microsoft", 1});
        auto bytesOut = exportModelToBytes(built);
        QVERIFY(bytesOut.isOk());
        auto m = importModelFromBytes(bytesOut->data(), bytesOut->size(), "deep.onnx");
        QVERIFY2(m.isOk(), m.status().message().c_str());
        QCOMPARE(typeOf(*m, "l39_product"), std::string("int32[batch,5,8]"));
        QCOMPARE(typeOf(*m, "l39_y"), std::string("float32[batch,5,8]"));
    }

    // ONNX Runtime's attention ops with their inputs missing (a malformed or truncated model):
    // the later outputs' rules skip them, and the import finishes.
    void malformedAttentionNodesGetNoRule() {
        for (const char* op : {"Attention", "QAttention", "MultiHeadAttention", "GroupQueryAttention"}) {
            GraphBuilder b;
            ValueId x = b.input("x", DType::Float32, Shape::ofSizes({1, 4, 8}));
            auto outs = b.node(op, {x}, {"y", "present"}, {intAttr("num_heads", 2)}, "broken", "com.microsoft");
            b.output(outs[0]);
            b.output(outs[1]);
            Model built = b.buildModel(17);
            built.opsetImports.push_back({"com.microsoft", 1});
            auto bytes = exportModelToBytes(built);
            QVERIFY(bytes.isOk());
            auto m = importModelFromBytes(bytes->data(), bytes->size(), "broken.onnx");
            QVERIFY2(m.isOk(), m.status().message().c_str());
        }
    }

    void broadcastRuleForCustomElementwise() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape({Dim::symbolic("n"), Dim::known(1), Dim::known(8)}));
        ValueId y = b.input("y", DType::Float32, Shape({Dim::known(5), Dim::known(8)}));
        b.node("BiasAdd", {x, y}, {"z"}, {}, "custom", "com.microsoft");
        fillUnknownTypes(b.graph());
        const Graph& g = b.graph();
        QCOMPARE(g.value(g.findValue("z")).type.toString(), std::string("float32[n,5,8]"));
    }

    // The chain torch exports for x.flatten(2): Shape -> Gather -> Div -> Cast -> Unsqueeze
    // -> Concat -> Reshape, which ONNX 1.12's data propagation gives up on at Div.
    void shapeComputationChainsReachReshape() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape({Dim::symbolic("batch"), Dim::known(8), Dim::known(4), Dim::known(6)}));
        ValueId shape = b.op("Shape", {x}, "shape");
        ValueId zero = b.initializer(int64Tensor("zero", {}, {0}));
        ValueId two = b.initializer(int64Tensor("two", {}, {2}));
        ValueId axes = b.initializer(int64Tensor("axes", {1}, {0}));
        ValueId n = b.op("Gather", {shape, zero}, "n");
        ValueId h = b.op("Gather", {shape, two}, "h");
        ValueId half = b.op("Div", {h, two}, "half");
        ValueId halfCast = b.op("Cast", {half}, "half_cast", {intAttr("to", 7)});
        ValueId heads = b.op("Mul", {n, two}, "n_times_2");
        ValueId nU = b.op("Unsqueeze", {heads, axes}, "n_u");
        ValueId halfU = b.op("Unsqueeze", {halfCast, axes}, "half_u");
        ValueId minusOne = b.initializer(int64Tensor("minus_one", {1}, {-1}));
        ValueId target = b.op("Concat", {nU, halfU, minusOne}, "target", {intAttr("axis", 0)});
        ValueId r = b.op("Reshape", {x, target}, "r");
        ValueId sliced = b.op("Slice", {x, b.initializer(int64Tensor("s", {1}, {1})),
                                        b.initializer(int64Tensor("e", {1}, {-1})),
                                        b.initializer(int64Tensor("ax", {1}, {-1}))}, "sliced");
        ValueId filled = b.op("ConstantOfShape", {shape}, "filled");
        b.output(r);
        b.output(sliced);
        b.output(filled);
        fillUnknownTypes(b.graph());
        const Graph& g = b.graph();
        auto type = [&](ValueId v) { return g.value(v).type.toString(); };
        // The target is [batch*2, 2, -1]: batch*2 counts as batch and a factor 2, so the
        // -1 takes what is left of batch*8*4*6.
        QCOMPARE(type(r), std::string("float32[batch*2,2,48]"));
        QCOMPARE(type(sliced), std::string("float32[batch,8,4,4]"));
        QCOMPARE(type(filled), std::string("float32[batch,8,4,6]"));
    }

    // torch's F.pad in windowed attention (swin_t): pads computed with Mod, packed into a
    // [4, 2] tensor, rows reversed, transposed and flattened before Pad reads them.
    void paddingComputedFromShapesThroughA2DTensor() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({1, 54, 54, 96}));
        auto i64 = [&](const std::string& name, std::vector<int64_t> dims, std::vector<int64_t> v) {
            return b.initializer(int64Tensor(name, std::move(dims), v));
        };
        ValueId w = b.op("Gather", {b.op("Shape", {x}, "shape"), i64("two", {}, {2})}, "w");
        ValueId seven = i64("seven", {}, {7});
        ValueId pad = b.op("Mod", {b.op("Sub", {seven, b.op("Mod", {w, seven}, "m")}, "s"), seven}, "pad");
        ValueId padU = b.op("Unsqueeze", {pad, i64("axis0", {1}, {0})}, "pad_u");
        ValueId zero = i64("zero", {1}, {0});
        // [0, 0, 0, pad, 0, pad, 0, 0] as (begin, end) rows for dims 3, 2, 1, 0.
        ValueId flat = b.op("Concat", {zero, zero, zero, padU, zero, padU, zero, zero}, "flat",
                            {intAttr("axis", 0)});
        ValueId pairs = b.op("Reshape", {flat, i64("pairs_shape", {2}, {-1, 2})}, "pairs");
        ValueId reversed = b.op("Slice", {pairs, i64("start", {1}, {-1}), i64("end", {1}, {INT64_MIN}),
                                          i64("axes", {1}, {0}), i64("step", {1}, {-1})}, "reversed");
        ValueId transposed = b.op("Transpose", {reversed}, "transposed", {intsAttr("perm", {1, 0})});
        ValueId pads = b.op("Reshape", {transposed, i64("flat_shape", {1}, {-1})}, "pads");
        ValueId padded = b.op("Pad", {x, pads}, "padded");
        ValueId range = b.op("Range", {i64("r0", {}, {0}), w, i64("r1", {}, {2})}, "range");
        b.output(padded);
        b.output(range);
        fillUnknownTypes(b.graph());
        const Graph& g = b.graph();
        QCOMPARE(g.value(padded).type.toString(), std::string("float32[1,56,56,96]"));
        QCOMPARE(g.value(range).type.toString(), std::string("int64[27]"));
    }

    // GPT-2 as Hugging Face writes it: positions torch.arange(sequence), and the causal mask, a
    // [1, 1, 16, 16] buffer, sliced [k - q, k) by the key and query lengths. The slice keeps
    // its rank (its dims are min(k, 16), unknown), so everything after it keeps one too.
    void runTimeSlicesAndRangesKeepRankAndSymbols() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape({Dim::symbolic("batch"), Dim::symbolic("sequence"), Dim::known(8)}));
        auto i64 = [&](const std::string& name, std::vector<int64_t> dims, std::vector<int64_t> v) {
            return b.initializer(int64Tensor(name, std::move(dims), v));
        };
        ValueId length = b.op("Gather", {b.op("Shape", {x}, "shape"), i64("one", {}, {1})}, "length");
        ValueId positions = b.op("Range", {i64("zero", {}, {0}), length, i64("step", {}, {1})}, "positions");
        ValueId end = b.op("Unsqueeze", {length, i64("axis0", {1}, {0})}, "end");
        ValueId start = b.op("Unsqueeze", {b.op("Sub", {length, length}, "k_minus_q"), i64("axis0b", {1}, {0})}, "start");
        Tensor buffer("bias", DType::Bool, {1, 1, 16, 16}, makeBuffer(std::string(256, '\1')), 0, 256);
        ValueId mask = b.op("Slice", {b.initializer(std::move(buffer)), start, end, i64("axes2", {1}, {2})}, "rows");
        ValueId causal = b.op("Slice", {mask, i64("s0", {1}, {0}), end, i64("axes3", {1}, {3})}, "causal");
        ValueId own = b.op("Slice", {x, start, end, i64("axes1", {1}, {1})}, "own");  // [0, sequence) of sequence
        ValueId anyAxis = b.op("Slice", {x, start, end, b.op("Unsqueeze", {length, i64("axis0c", {1}, {0})}, "axes_u")}, "any_axis");
        for (ValueId v : {positions, causal, own, anyAxis}) b.output(v);
        fillUnknownTypes(b.graph());
        const Graph& g = b.graph();
        QCOMPARE(g.value(positions).type.toString(), std::string("int64[sequence]"));
        QCOMPARE(g.value(causal).type.toString(), std::string("bool[1,1,?,?]"));
        QCOMPARE(g.value(own).type.toString(), std::string("float32[batch,sequence,8]"));
        QCOMPARE(g.value(anyAxis).type.toString(), std::string("float32[?,?,?]"));
    }

    // A WaveNet's causal Conv1d: each left pad is computed, so ONNX's rule stops at every Pad
    // and needed a round per layer. Our rules carry Conv and the pools on in the same pass.
    // DETR's sine positions: a float Range to the feature map's height cast to float; its
    // learned queries Tiled by the batch.
    void windowsFloatRangesAndTilesInOnePass() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape({Dim::symbolic("batch"), Dim::known(4), Dim::known(100)}));
        auto i64 = [&](const std::string& name, std::vector<int64_t> dims, std::vector<int64_t> v) {
            return b.initializer(int64Tensor(name, std::move(dims), v));
        };
        ValueId leftPad = b.op("Concat", {i64("zeros", {2}, {0, 0}), i64("two", {1}, {2}), i64("zeros3", {3}, {0, 0, 0})}, "pads_raw",
                               {intAttr("axis", 0)});
        ValueId pads = b.op("Identity", {leftPad}, "pads");  // pads ONNX cannot see through
        ValueId y = x;
        for (int layer = 0; layer < 40; ++layer) {
            const std::string p = "l" + std::to_string(layer) + "_";
            ValueId padded = b.op("Pad", {y, pads}, p + "padded");
            ValueId w = b.initializer(floatTensor(p + "w", {4, 4, 3}, std::vector<float>(48, 0.1f)));
            y = b.op("Conv", {padded, w}, p + "conv", {intsAttr("dilations", {1})});
        }
        ValueId strided = b.op("Conv", {y, b.initializer(floatTensor("ws", {6, 4, 5}, std::vector<float>(120, 0.f)))}, "strided",
                               {intsAttr("strides", {3}), intsAttr("pads", {1, 1})});
        ValueId same = b.op("MaxPool", {strided}, "same", {intsAttr("kernel_shape", {4}), intsAttr("strides", {2}), stringAttr("auto_pad", "SAME_UPPER")});
        ValueId valid = b.op("AveragePool", {strided}, "valid", {intsAttr("kernel_shape", {4}), stringAttr("auto_pad", "VALID")});
        ValueId ceil = b.op("MaxPool", {strided}, "ceil", {intsAttr("kernel_shape", {4}), intAttr("ceil_mode", 1)});
        ValueId height = b.op("Cast", {b.op("Gather", {b.op("Shape", {strided}, "shape"), i64("axis2", {}, {2})}, "h")}, "h_float",
                              {intAttr("to", int64_t(DType::Float32))});
        ValueId positions = b.op("Range", {b.initializer(floatTensor("f0", {}, {0.f})), height, b.initializer(floatTensor("f1", {}, {2.f}))}, "positions");
        ValueId batch = b.op("Gather", {b.op("Shape", {x}, "xshape"), i64("axis0", {1}, {0})}, "batch");
        ValueId repeats = b.op("Concat", {i64("one", {1}, {1}), batch, i64("one_more", {1}, {1})}, "repeats", {intAttr("axis", 0)});
        ValueId queries = b.op("Tile", {b.initializer(floatTensor("queries", {10, 1, 8}, std::vector<float>(80, 0.f))), repeats}, "tiled");
        for (ValueId v : {y, same, valid, ceil, positions, queries}) b.output(v);
        fillUnknownTypes(b.graph());
        const Graph& g = b.graph();
        QCOMPARE(g.value(y).type.toString(), std::string("float32[batch,4,100]"));
        QCOMPARE(g.value(strided).type.toString(), std::string("float32[batch,6,33]"));  // (100 + 2 - 5) / 3 + 1
        QCOMPARE(g.value(same).type.toString(), std::string("float32[batch,6,17]"));
        QCOMPARE(g.value(valid).type.toString(), std::string("float32[batch,6,30]"));
        QCOMPARE(g.value(ceil).type.toString(), std::string("float32[batch,6,?]"));
        QCOMPARE(g.value(positions).type.toString(), std::string("float32[17]"));
        QCOMPARE(g.value(queries).type.toString(), std::string("float32[10,batch,8]"));
    }

    void symbolicProductsDivideBack() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape({Dim::symbolic("batch"), Dim::known(64), Dim::known(3)}));
        ValueId shape = b.op("Shape", {x}, "shape");
        ValueId n = b.op("Gather", {shape, b.initializer(int64Tensor("i0", {}, {0}))}, "n");
        ValueId sixtyFour = b.initializer(int64Tensor("k", {}, {64}));
        ValueId windows = b.op("Mul", {n, sixtyFour}, "windows");
        ValueId back = b.op("Div", {windows, sixtyFour}, "back");
        ValueId half = b.op("Div", {windows, b.initializer(int64Tensor("two", {}, {2}))}, "half");
        ValueId target = b.op("Concat", {b.op("Unsqueeze", {back, b.initializer(int64Tensor("ax", {1}, {0}))}, "u0"),
                                         b.op("Unsqueeze", {half, b.initializer(int64Tensor("ax1", {1}, {0}))}, "u1")},
                              "target", {intAttr("axis", 0)});
        ValueId r = b.op("ConstantOfShape", {target}, "r");
        b.output(r);
        fillUnknownTypes(b.graph());
        QCOMPARE(b.graph().value(r).type.toString(), std::string("float32[batch,batch*32]"));
    }

    // Rules ONNX has too: ours let one pass carry new facts forward (fewer ONNX rounds).
    void transposeMatMulAndConcatRules() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape({Dim::symbolic("n"), Dim::known(4), Dim::known(8)}));
        ValueId w = b.input("w", DType::Float32, Shape::ofSizes({8, 3}));
        ValueId v = b.input("v", DType::Float32, Shape::ofSizes({8}));
        ValueId t = b.op("Transpose", {x}, "t", {intsAttr("perm", {0, 2, 1})});
        ValueId tDefault = b.op("Transpose", {x}, "t_default");
        ValueId mm = b.op("MatMul", {x, w}, "mm");
        ValueId mv = b.op("MatMul", {x, v}, "mv");
        ValueId cat = b.op("Concat", {x, x, x}, "cat", {intAttr("axis", -2)});
        ValueId catSym = b.op("Concat", {x, x}, "cat_sym", {intAttr("axis", 0)});
        for (ValueId o : {t, tDefault, mm, mv, cat, catSym}) b.output(o);
        fillUnknownTypes(b.graph());
        auto type = [&](ValueId id) { return b.graph().value(id).type.toString(); };
        QCOMPARE(type(t), std::string("float32[n,8,4]"));
        QCOMPARE(type(tDefault), std::string("float32[8,4,n]"));
        QCOMPARE(type(mm), std::string("float32[n,4,3]"));
        QCOMPARE(type(mv), std::string("float32[n,4]"));
        QCOMPARE(type(cat), std::string("float32[n,12,8]"));
        QCOMPARE(type(catSym), std::string("float32[?,4,8]"));
    }

    // Einsum: explicit and implied outputs, spaces (MaxViT's equations, which ONNX 1.12 only
    // ranks), "..." aligned from the right, and 1s broadcasting.
    void einsumRule() {
        GraphBuilder b;
        ValueId q = b.input("q", DType::Float32, Shape({Dim::symbolic("batch"), Dim::known(64), Dim::known(2), Dim::known(49), Dim::known(32)}));
        ValueId k = b.input("k", DType::Float32, Shape({Dim::symbolic("batch"), Dim::known(64), Dim::known(2), Dim::known(49), Dim::known(32)}));
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({5, 1, 3, 4}));
        ValueId w = b.input("w", DType::Float32, Shape::ofSizes({2, 4, 6}));
        ValueId scores = b.op("Einsum", {q, k}, "scores", {stringAttr("equation", "B G H I D, B G H J D -> B G H I J")});
        ValueId ell = b.op("Einsum", {x, w}, "ell", {stringAttr("equation", "...ij,...jk->...ik")});
        ValueId implied = b.op("Einsum", {w}, "implied", {stringAttr("equation", "bAc")});
        ValueId broken = b.op("Einsum", {x, w}, "broken", {stringAttr("equation", "ij,jk->ik")});
        for (ValueId o : {scores, ell, implied, broken}) b.output(o);
        fillUnknownTypes(b.graph());
        auto type = [&](ValueId id) { return b.graph().value(id).type.toString(); };
        QCOMPARE(type(scores), std::string("float32[batch,64,2,49,49]"));
        QCOMPARE(type(ell), std::string("float32[5,2,3,6]"));
        QCOMPARE(type(implied), std::string("float32[4,2,6]"));  // ASCII order: A, b, c
        QCOMPARE(type(broken), std::string("?"));  // ranks 4 and 3 for two-label terms
        QVERIFY(!parseEinsumEquation("ab,b1->a"));
        QVERIFY(!parseEinsumEquation("a...b...->ab"));
        auto labels = labelEinsum(*parseEinsumEquation("...ij,...jk->...ik"), {4, 3});
        QVERIFY(labels);
        QCOMPARE(labels->inputs[0], std::string("01ij"));
        QCOMPARE(labels->inputs[1], std::string("1jk"));
        QCOMPARE(labels->output, std::string("01ik"));
        QVERIFY(!labelEinsum(*parseEinsumEquation("...ij->ij"), {3}));  // NumPy refuses it
    }

    // Resize to sizes computed from shapes: torchvision's LRASPP and DeepLabV3 heads resize
    // to [N, C] of one tensor and [H, W] of another.
    void resizeToComputedSizes() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape({Dim::symbolic("batch"), Dim::known(21), Dim::known(20), Dim::known(20)}));
        ValueId image = b.input("image", DType::Float32, Shape({Dim::symbolic("batch"), Dim::known(3), Dim::known(320), Dim::known(320)}));
        auto i64 = [&](const std::string& name, std::vector<int64_t> v) {
            return b.initializer(int64Tensor(name, {int64_t(v.size())}, v));
        };
        ValueId nc = b.op("Slice", {b.op("Shape", {x}, "xs"), i64("s0", {0}), i64("e2", {2}), i64("a0", {0})}, "nc");
        ValueId hw = b.op("Slice", {b.op("Shape", {image}, "is"), i64("s2", {2}), i64("e4", {4}), i64("a0b", {0})}, "hw");
        ValueId sizes = b.op("Concat", {nc, b.op("Cast", {hw}, "hw_cast", {intAttr("to", 7)})}, "sizes", {intAttr("axis", 0)});
        ValueId none;
        b.output(b.op("Resize", {x, none, none, sizes}, "up", {stringAttr("mode", "linear")}));
        fillUnknownTypes(b.graph());
        QCOMPARE(b.graph().value(b.graph().findValue("up")).type.toString(), std::string("float32[batch,21,320,320]"));
    }

    void resizeByConstantScalesKeepsTheBatch() {
        // torch exports F.interpolate(scale_factor=2) with its scales in a Constant; ONNX's
        // rule names the batch afresh (unk__0), which hid every later shape from the folds.
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape({Dim::symbolic("batch"), Dim::known(256), Dim::known(16), Dim::known(5)}));
        ValueId scales = b.op("Constant", {}, "scales", {tensorAttr("value", floatTensor("s", {4}, {1, 1, 2, 1.5f}))});
        ValueId none;
        ValueId up = b.op("Resize", {x, none, scales}, "up", {stringAttr("mode", "nearest")});
        b.graph().value(up).type = ValueType::tensor(DType::Float32, Shape({Dim::symbolic("unk__0"), Dim::known(256), Dim::known(32), Dim::known(7)}));
        b.output(up);
        fillUnknownTypes(b.graph());
        QCOMPARE(b.graph().value(up).type.toString(), std::string("float32[batch,256,32,7]"));
    }

    void reshapeInfersMinusOneWhenSymbolsCancel() {
        const Shape data({Dim::symbolic("batch"), Dim::known(768), Dim::known(14), Dim::known(14)});
        auto s = reshapeResult(data, {Dim::symbolic("batch"), Dim::known(768), Dim::known(-1)}, false);
        QCOMPARE(s->toString(), std::string("[batch,768,196]"));
        s = reshapeResult(data, {Dim::known(0), Dim::known(-1)}, false);  // 0 copies the dim
        QCOMPARE(s->toString(), std::string("[batch,150528]"));
        QVERIFY(!reshapeResult(data, {Dim::known(-1), Dim::known(-1)}, false));
        // Windows folded into the batch: -1 becomes batch*14, and an unmatched symbol stays unknown.
        s = reshapeResult(data, {Dim::known(-1), Dim::known(768), Dim::known(14)}, false);
        QCOMPARE(s->toString(), std::string("[batch*14,768,14]"));
        s = reshapeResult(data, {Dim::symbolic("other"), Dim::known(-1)}, false);
        QCOMPARE(s->toString(), std::string("[other,?]"));
    }

    void mergeNeverOverridesKnownDims() {
        ValueType declared = ValueType::tensor(DType::Float32, Shape({Dim::symbolic("b"), Dim()}));
        mergeType(declared, ValueType::tensor(DType::Float32, Shape::ofSizes({1, 7})));
        QCOMPARE(declared.toString(), std::string("float32[b,7]"));
        ValueType unknown;
        mergeType(unknown, ValueType::tensor(DType::Int64, Shape::ofSizes({3})));
        QCOMPARE(unknown.toString(), std::string("int64[3]"));
        ValueType mismatch = ValueType::tensor(DType::Float32, Shape::ofSizes({2}));
        mergeType(mismatch, ValueType::tensor(DType::Float32, Shape::ofSizes({2, 2})));
        QCOMPARE(mismatch.toString(), std::string("float32[2]"));
    }

    void subgraphValuesGetTypes() {
        auto m = importModel(test::fixture("good/nested.onnx"));
        QVERIFY(m.isOk());
        const Graph& body = *m->graph->node(m->graph->order()[0]).attribute("body")->g;
        QCOMPARE(body.value(body.findValue("carry_out")).type.toString(), std::string("float32[4]"));
    }
};

QTEST_GUILESS_MAIN(TestShapeInference)
#include "tst_shape_inference.moc"
