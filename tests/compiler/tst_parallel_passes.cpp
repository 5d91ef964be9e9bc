// tensor-parallel and pipeline-parallel on a small transformer block (MLP, LayerNorm,
// packed-QKV attention): the collectives placed and their bytes against a hand count,
// shards in device scopes, every guard's rejection, the partitioned program computing the
// unpartitioned outputs on one device, and the alpha-beta / simulated timeline arithmetic.
#include <QTest>

#include "compiler/runtime/fused_domain.h"
#include "compiler/parallel/interconnect.h"
#include "compiler/parallel/simulated_timeline.h"
#include "compiler/pass_manager.h"
#include "core/shape_inference.h"
#include "compiler/passes/passes.h"
#include "pass_test_support.h"

using namespace fsc;
using namespace fsc::test;

namespace {

constexpr int64_t kBatch = 2, kSeq = 8, kHidden = 16, kHeads = 4, kHeadDim = 4;

ValueId ints(GraphBuilder& b, const std::string& name, std::vector<int64_t> v) {
    const int64_t n = int64_t(v.size());
    return b.initializer(int64Tensor(name, {n}, v));
}

// How the packed QKV product is read apart: a Slice per part (PyTorch 1.13 at opset 13 on),
// the same after a bias Add, or one Split after the bias Add (torch.chunk; opset 9 exports).
enum class PackedRead { Slices, BiasedSlices, BiasedSplit, SlicesCausalWhere };

// x -> MLP (fc1, Relu, fc2 + bias) -> residual -> LayerNorm -> attention with packed QKV
// (4 heads) -> out projection + bias -> y. `leak` also outputs the attention scores.
Model transformerBlock(bool leak = false, PackedRead read = PackedRead::Slices) {
    GraphBuilder b;
    ValueId x = b.input("x", DType::Float32, Shape::ofSizes({kBatch, kSeq, kHidden}));
    ValueId w1 = b.initializer(randomFloatTensor("w1", {kHidden, 32}, 1, 0.3f));
    ValueId b1 = b.initializer(randomFloatTensor("b1", {32}, 2, 0.1f));
    ValueId w2 = b.initializer(randomFloatTensor("w2", {32, kHidden}, 3, 0.3f));
    ValueId b2 = b.initializer(randomFloatTensor("b2", {kHidden}, 4, 0.1f));
    ValueId h = b.op("MatMul", {x, w1}, "h", {}, "fc1");
    ValueId hb = b.op("Add", {h, b1}, "hb", {}, "fc1_bias");
    ValueId r = b.op("Relu", {hb}, "r", {}, "relu");
    ValueId m = b.op("MatMul", {r, w2}, "m", {}, "fc2");
    ValueId mb = b.op("Add", {m, b2}, "mb", {}, "fc2_bias");
    ValueId res = b.op("Add", {x, mb}, "res", {}, "residual");
    ValueId gamma = b.initializer(randomFloatTensor("gamma", {kHidden}, 5, 1.0f));
    ValueId ln = b.op("LayerNormalization", {res, gamma}, "ln", {intAttr("axis", -1)}, "norm");
    ValueId wqkv = b.initializer(randomFloatTensor("wqkv", {kHidden, 3 * kHidden}, 6, 0.3f));
    ValueId qkv = b.op("MatMul", {ln, wqkv}, "qkv", {}, "qkv_proj");
    if (read != PackedRead::Slices)
        qkv = b.op("Add", {b.initializer(randomFloatTensor("bqkv", {3 * kHidden}, 9, 0.1f)), qkv}, "qkv_biased", {}, "qkv_bias");
    ValueId axes = ints(b, "axes", {-1});
    ValueId heads = ints(b, "heads_shape", {kBatch, kSeq, kHeads, kHeadDim});
    std::vector<ValueId> slices;
    if (read == PackedRead::BiasedSplit)
        slices = b.node("Split", {qkv, ints(b, "sizes", {kHidden, kHidden, kHidden})}, {"part0", "part1", "part2"},
                        {intAttr("axis", -1)}, "chunk");
    for (int64_t i = 0; i < 3 && read != PackedRead::BiasedSplit; ++i) {
        const std::string n = std::to_string(i);
        slices.push_back(b.op("Slice", {qkv, ints(b, "start" + n, {i * kHidden}), ints(b, "end" + n, {(i + 1) * kHidden}), axes},
                              "part" + n, {}, "slice" + n));
    }
    std::vector<ValueId> parts;
    for (int64_t i = 0; i < 3; ++i)
        parts.push_back(b.op("Reshape", {slices[size_t(i)], heads}, "heads" + std::to_string(i), {}, "split_heads" + std::to_string(i)));
    ValueId q = b.op("Transpose", {parts[0]}, "q", {intsAttr("perm", {0, 2, 1, 3})}, "q_t");
    ValueId kt = b.op("Transpose", {parts[1]}, "kt", {intsAttr("perm", {0, 2, 3, 1})}, "k_t");
    ValueId v = b.op("Transpose", {parts[2]}, "v", {intsAttr("perm", {0, 2, 1, 3})}, "v_t");
    ValueId scores = b.op("MatMul", {q, kt}, "scores", {}, "qk");
    ValueId scaled = b.op("Div", {scores, b.initializer(floatTensor("two", {}, {2.0f}))}, "scaled", {}, "scale");
    if (read == PackedRead::SlicesCausalWhere) {  // GPT-2's: a [1, 1, S, S] mask selects the lowest float
        std::string causal(size_t(kSeq * kSeq), '\0');
        for (int64_t i = 0; i < kSeq; ++i)
            for (int64_t j = 0; j <= i; ++j) causal[size_t(i * kSeq + j)] = 1;
        ValueId mask = b.initializer(Tensor("causal", DType::Bool, {1, 1, kSeq, kSeq}, makeBuffer(causal), 0, size_t(kSeq * kSeq)));
        scaled = b.op("Where", {mask, scaled, b.initializer(floatTensor("lowest", {}, {-3.4e38f}))}, "masked", {}, "causal_mask");
    }
    ValueId p = b.op("Softmax", {scaled}, "p", {intAttr("axis", -1)}, "softmax");
    ValueId ctx = b.op("MatMul", {p, v}, "ctx", {}, "pv");
    ValueId back = b.op("Transpose", {ctx}, "back", {intsAttr("perm", {0, 2, 1, 3})}, "merge_t");
    ValueId merged = b.op("Reshape", {back, ints(b, "merged_shape", {kBatch, kSeq, kHidden})}, "merged", {}, "merge_heads");
    ValueId wo = b.initializer(randomFloatTensor("wo", {kHidden, kHidden}, 7, 0.3f));
    ValueId bo = b.initializer(randomFloatTensor("bo", {kHidden}, 8, 0.1f));
    ValueId o = b.op("MatMul", {merged, wo}, "o", {}, "out_proj");
    ValueId y = b.op("Add", {o, bo}, "y", {}, "out_bias");
    b.output(y);
    if (leak) b.output(scores);
    return withInferredTypes(b);
}

CompileResult partition(const Model& m, std::unique_ptr<Pass> pass) {
    std::vector<std::unique_ptr<Pass>> passes;
    passes.push_back(std::move(pass));
    CompileOptions options;
    options.verifyEachPass = true;
    auto r = compileModel(m, std::move(passes), options);
    if (!r) qFatal("compile failed: %s", r.status().message().c_str());
    return std::move(*r);
}

std::vector<const Node*> collectives(const Graph& g, const std::string& op) {
    std::vector<const Node*> found;
    for (NodeId id : g.order())
        if (g.node(id).domain == kFusescopeDomain && g.node(id).opType == op) found.push_back(&g.node(id));
    return found;
}

int64_t attribute(const Node& n, const char* name) {
    for (const Attribute& a : n.attributes)
        if (a.name == name) return a.i;
    return -1;
}

}  // namespace

class TestParallelPasses : public QObject {
    Q_OBJECT
private slots:
    void tensorParallelPlacesOneAllReducePerPair_data() {
        QTest::addColumn<int>("devices");
        QTest::addColumn<int>("read");  // a PackedRead
        QTest::newRow("tp2") << 2 << int(PackedRead::Slices);
        QTest::newRow("tp4") << 4 << int(PackedRead::Slices);
        QTest::newRow("tp2, slices after a bias") << 2 << int(PackedRead::BiasedSlices);
        QTest::newRow("tp2, one Split after a bias") << 2 << int(PackedRead::BiasedSplit);
        QTest::newRow("tp2, a causal mask by Where") << 2 << int(PackedRead::SlicesCausalWhere);
    }
    void tensorParallelPlacesOneAllReducePerPair() {
        QFETCH(int, devices);
        QFETCH(int, read);
        Model m = transformerBlock(false, PackedRead(read));
        auto r = partition(m, passes::tensorParallel(devices));
        const Graph& g = *r.model.graph;
        // Hand count: 2 all-reduces per layer (MLP, attention), each of batch x seq x hidden floats.
        const auto reduces = collectives(g, "AllReduce");
        QCOMPARE(reduces.size(), size_t(2));
        for (const Node* n : reduces) {
            QCOMPARE(attribute(*n, "bytes"), kBatch * kSeq * kHidden * 4);
            QCOMPARE(attribute(*n, "devices"), int64_t(devices));
            QCOMPARE(n->inputs.size(), size_t(devices));
        }
        QCOMPARE(r.trace.passes[0].counters.figures.at("all-reduce bytes"), double(2 * kBatch * kSeq * kHidden * 4));
        // Each device holds its share of every weight; LayerNorm and residual stay whole.
        int perDevice[4] = {0, 0, 0, 0};
        for (NodeId id : g.order()) {
            const int d = deviceOfNode(g.node(id));
            if (d >= 0) ++perDevice[d];
            if (g.node(id).opType == "LayerNormalization") QCOMPARE(d, -1);
        }
        for (int d = 1; d < devices; ++d) QCOMPARE(perDevice[d], perDevice[0]);
        QCOMPARE(countOps(g, "MatMul"), 6 * devices);  // fc1, fc2, qkv, qk, pv, out_proj on each device; none whole
        for (ValueId w : g.initializers)
            if (g.value(w).name.find("wqkv") != std::string::npos && g.value(w).initializer->dims().size() == 2)
                QCOMPARE(g.value(w).initializer->dims()[1], 3 * kHidden / devices);
        // Every shard on one device computes the unpartitioned outputs.
        QVERIFY(maxRelativeError(m, r.model) < 1e-5);
    }

    // nn.MultiheadAttention as PyTorch's TorchScript exporter writes it: sequence-first
    // [L, N, E], heads merged with the batch into one axis ([L, N x H, D]), batched MatMuls over
    // that axis, then back to [L x N, E] for a Gemm. Per device that axis is still one axis of
    // N x H/2, so attention splits by heads: one AllReduce, and outputs as unsplit with a batch
    // of 2 (whose heads interleave with the batch in the merged axis).
    void tensorParallelSplitsHeadsMergedWithTheBatch() {
        const int64_t L = 5, N = 2, E = 16, H = 4, D = 4;
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({L, N, E}));
        ValueId qkv = b.op("MatMul", {x, b.initializer(randomFloatTensor("wqkv", {E, 3 * E}, 61, 0.3f))}, "qkv", {}, "in_proj");
        ValueId axes = ints(b, "axes", {-1});
        std::vector<ValueId> heads;
        for (int64_t i = 0; i < 3; ++i) {
            const std::string n = std::to_string(i);
            ValueId part = b.op("Slice", {qkv, ints(b, "s" + n, {i * E}), ints(b, "e" + n, {(i + 1) * E}), axes}, "part" + n,
                                {}, "slice" + n);
            ValueId merged = b.op("Reshape", {part, ints(b, "shape" + n, {L, N * H, D})}, "merged" + n, {}, "reshape" + n);
            heads.push_back(b.op("Transpose", {merged}, "heads" + n, {intsAttr("perm", {1, 0, 2})}, "transpose" + n));
        }
        ValueId kt = b.op("Transpose", {heads[1]}, "kt", {intsAttr("perm", {0, 2, 1})}, "k_t");
        ValueId scores = b.op("MatMul", {heads[0], kt}, "scores", {}, "qk");
        ValueId p = b.op("Softmax", {b.op("Div", {scores, b.initializer(floatTensor("two", {}, {2.0f}))}, "scaled", {}, "scale")},
                         "p", {intAttr("axis", -1)}, "softmax");
        ValueId ctx = b.op("MatMul", {p, heads[2]}, "ctx", {}, "pv");
        ValueId back = b.op("Transpose", {ctx}, "back", {intsAttr("perm", {1, 0, 2})}, "back_t");
        ValueId rows = b.op("Reshape", {back, ints(b, "rows_shape", {L * N, E})}, "rows", {}, "to_rows");
        ValueId o = b.op("Gemm", {rows, b.initializer(randomFloatTensor("wo", {E, E}, 62, 0.3f)),
                                  b.initializer(randomFloatTensor("bo", {E}, 63, 0.1f))},
                         "o", {intAttr("transB", 1)}, "out_proj");
        b.output(b.op("Reshape", {o, ints(b, "out_shape", {L, N, E})}, "y", {}, "to_sequence"));
        const Model m = withInferredTypes(b);
        auto r = partition(m, passes::tensorParallel(2));
        QCOMPARE(collectives(*r.model.graph, "AllReduce").size(), size_t(1));
        // Each device's merged Reshape targets N x H/2 = 4 rows of heads per position.
        bool sawShardShape = false;
        for (ValueId v : r.model.graph->initializers)
            if (r.model.graph->value(v).name == "reshape0/shard_shape")
                sawShardShape = std::vector<int64_t>(r.model.graph->value(v).initializer->dataAs<int64_t>(),
                                                     r.model.graph->value(v).initializer->dataAs<int64_t>() + 3) ==
                                std::vector<int64_t>{L, N * H / 2, D};
        QVERIFY(sawShardShape);
        QVERIFY(maxRelativeError(m, r.model) < 1e-5);
    }

    // LLaMA's rotary embedding turns each head with rotate-half: its halves Sliced along the
    // head's own axis, one Negated, Concatenated back. Each shard does that to its own heads;
    // a Concat along the split axis (heads) would join shards and is refused.
    void rotaryConcatWithinHeadsKeepsTheSplit_data() {
        QTest::addColumn<int>("concatAxis");
        QTest::addColumn<int>("allReduces");
        QTest::newRow("within each head") << 3 << 1;
        QTest::newRow("across heads") << 2 << 0;
    }
    void rotaryConcatWithinHeadsKeepsTheSplit() {
        QFETCH(int, concatAxis);
        QFETCH(int, allReduces);
        const int64_t S = 4, H = 4, D = 4, E = H * D;
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({1, S, E}));
        ValueId q = b.op("MatMul", {x, b.initializer(randomFloatTensor("wq", {E, E}, 71, 0.3f))}, "q", {}, "q_proj");
        ValueId heads = b.op("Reshape", {q, ints(b, "heads_shape", {1, S, H, D})}, "heads", {}, "split_heads");
        ValueId axis = ints(b, "axis", {3});
        ValueId first = b.op("Slice", {heads, ints(b, "s0", {0}), ints(b, "e0", {D / 2}), axis}, "first", {}, "slice0");
        ValueId second = b.op("Slice", {heads, ints(b, "s1", {D / 2}), ints(b, "e1", {D}), axis}, "second", {}, "slice1");
        ValueId turned = b.op("Concat", {b.op("Neg", {second}, "minus", {}, "neg"), first}, "turned",
                              {intAttr("axis", concatAxis)}, "rotate_half");
        ValueId merged = b.op("Reshape", {turned, ints(b, "merged_shape", {1, S, E})}, "merged", {}, "merge_heads");
        b.output(b.op("MatMul", {merged, b.initializer(randomFloatTensor("wo", {E, E}, 72, 0.3f))}, "y", {}, "o_proj"));
        const Model m = withInferredTypes(b);
        auto r = partition(m, passes::tensorParallel(2));
        QCOMPARE(collectives(*r.model.graph, "AllReduce").size(), size_t(allReduces));
        if (!allReduces) QVERIFY(rejectedFor(r, "along the split axis"));
        QVERIFY(maxRelativeError(m, r.model) < 1e-5);
    }

    void headsStayTogether() {
        // Device 0 gets heads 0-1 of each of Q, K and V: its packed weight is columns 0-7,
        // 16-23 and 32-39 of the original.
        Model m = transformerBlock();
        auto r = partition(m, passes::tensorParallel(2));
        const Graph& g = *r.model.graph;
        const Tensor& original = *m.graph->value(m.graph->findValue("wqkv")).initializer;
        const Tensor* shard = nullptr;
        for (ValueId w : g.initializers)
            if (g.value(w).name.rfind("device0/wqkv", 0) == 0) shard = g.value(w).initializer.get();
        QVERIFY(shard);
        for (int64_t row = 0; row < kHidden; ++row)
            for (int64_t seg = 0; seg < 3; ++seg)
                for (int64_t c = 0; c < kHidden / 2; ++c)
                    QCOMPARE(shard->dataAs<float>()[row * 24 + seg * 8 + c],
                             original.dataAs<float>()[row * 48 + seg * kHidden + c]);
    }

    void pairsThatWouldMixShardsAreRejectedWithReasons() {
        auto leaked = partition(transformerBlock(true), passes::tensorParallel(2));
        QCOMPARE(collectives(*leaked.model.graph, "AllReduce").size(), size_t(1));  // the MLP alone
        QVERIFY(rejectedFor(leaked, "'scores' is a graph output"));
        auto three = partition(transformerBlock(), passes::tensorParallel(3));
        QCOMPARE(collectives(*three.model.graph, "AllReduce").size(), size_t(0));
        QVERIFY(rejectedFor(three, "does not divide by 3"));
    }

    void outputLayersSplitByColumnsAndGather() {
        // A classifier head whose 10 scores are a graph output: 5 per device, gathered.
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({3, 16}));
        ValueId w = b.initializer(randomFloatTensor("w", {10, 16}, 1, 0.3f));
        ValueId c = b.initializer(randomFloatTensor("c", {10}, 2, 0.1f));
        ValueId y = b.op("Gemm", {x, w, c}, "y", {intAttr("transB", 1)}, "head");
        b.output(y);
        Model m = withInferredTypes(b);
        auto r = partition(m, passes::tensorParallel(2));
        const auto gathers = collectives(*r.model.graph, "AllGather");
        QCOMPARE(gathers.size(), size_t(1));
        QCOMPARE(attribute(*gathers[0], "bytes"), int64_t(3 * 10 * 4));
        QCOMPARE(gathers[0]->inputs.size(), size_t(2));
        QCOMPARE(r.model.graph->value(gathers[0]->inputs[1]).type.shape.dims()[1].size(), int64_t(5));
        QVERIFY(maxRelativeError(m, r.model) < 1e-6);
        auto three = partition(m, passes::tensorParallel(3));
        QVERIFY(rejectedFor(three, "10 outputs do not divide by 3"));
    }

    // Between the two layers, a MatMul of two first layers' outputs, one of unknown rank (a
    // model whose inference gave up there): the pass rejects the pair with a reason instead
    // of reading the rank.
    void aMatMulByAValueOfUnknownRankIsRejected() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({2, 8}));
        ValueId h = b.op("MatMul", {x, b.initializer(randomFloatTensor("w1", {8, 8}, 1))}, "h", {}, "first");
        ValueId z = b.op("MatMul", {x, b.initializer(randomFloatTensor("w3", {8, 8}, 3))}, "z", {}, "other");
        ValueId m = b.op("Mul", {h, z}, "m", {}, "mix");
        ValueId y = b.op("MatMul", {m, b.initializer(randomFloatTensor("w2", {8, 8}, 2))}, "y", {}, "second");
        b.output(y, ValueType::tensor(DType::Float32, Shape::ofSizes({2, 8})));
        Model model = b.buildModel();
        Graph& g = *model.graph;
        g.value(h).type = ValueType::tensor(DType::Float32, Shape::ofSizes({2, 8}));
        g.value(z).type = ValueType::tensor(DType::Float32, Shape());
        g.value(m).type = ValueType::tensor(DType::Float32, Shape::ofSizes({2, 8}));
        auto r = partition(model, passes::tensorParallel(2));
        QCOMPARE(collectives(*r.model.graph, "AllReduce").size(), size_t(0));
        QVERIFY(rejectedFor(r, "'z' has no known rank"));
    }

    void pipelineParallelSendsWhatCrossesEachCut() {
        Model m = transformerBlock();
        auto r = partition(m, passes::pipelineParallel(2));
        const Graph& g = *r.model.graph;
        const auto sends = collectives(g, "Send"), recvs = collectives(g, "Recv");
        QVERIFY(!sends.empty());
        QCOMPARE(sends.size(), recvs.size());
        for (const Node* s : sends) {
            QCOMPARE(attribute(*s, "from"), int64_t(0));
            QCOMPARE(attribute(*s, "to"), int64_t(1));
            const ValueType& t = g.value(s->inputs[0]).type;
            int64_t bytes = 4;
            for (const Dim& d : t.shape.dims()) bytes *= d.size();
            QCOMPARE(attribute(*s, "bytes"), bytes);
            QCOMPARE(deviceOfNode(*s), 0);
        }
        for (const Node* n : recvs) QCOMPARE(deviceOfNode(*n), 1);
        // Every node is on a stage, and no stage-1 node reads a stage-0 value except through Recv.
        for (NodeId id : g.order()) {
            const Node& n = g.node(id);
            QVERIFY(deviceOfNode(n) >= 0);
            if (deviceOfNode(n) != 1 || n.opType == "Recv") continue;
            for (ValueId in : n.inputs) {
                const NodeId p = in.valid() ? g.value(in).producer : NodeId();
                if (p.valid()) QVERIFY2(deviceOfNode(g.node(p)) == 1, n.name.c_str());
                else if (in.valid()) QVERIFY(g.value(in).initializer);
            }
        }
        QVERIFY(maxRelativeError(m, r.model) < 1e-6);
    }

    // A control-flow node moved to its stage keeps the initializers only its bodies read (an
    // audio model's If once lost its branches' weights, and the ONNX checker refused the graph).
    void pipelineParallelKeepsWhatBodiesRead() {
        GraphBuilder body("then");
        ValueId w = body.outerValue("w");
        ValueId outerX = body.outerValue("x2");
        body.output(body.op("Mul", {outerX, w}, "o"));
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({16}));
        ValueId cond = b.input("c", DType::Bool, Shape::scalar());
        b.initializer(randomFloatTensor("w", {16}, 3));
        ValueId x2 = b.op("Relu", {b.op("Neg", {x}, "x1")}, "x2");
        ValueId r = b.node("If", {cond}, {"r"}, {graphAttr("then_branch", body.takeGraph()),
                                                 graphAttr("else_branch", [] {
                                                     GraphBuilder e("else");
                                                     e.output(e.op("Identity", {e.outerValue("x2")}, "e"));
                                                     return e.takeGraph();
                                                 }())},
                           "if")[0];
        b.output(b.op("Sigmoid", {r}, "y"));
        Model m = b.buildModel();
        m.graph->value(r).type = ValueType::tensor(DType::Float32, Shape::ofSizes({16}));
        fillUnknownTypes(*m.graph);
        auto split = partition(m, passes::pipelineParallel(2));
        const Graph& g = *split.model.graph;
        const ValueId kept = g.findValue("w");
        QVERIFY(kept.valid());
        QVERIFY(std::find(g.initializers.begin(), g.initializers.end(), kept) != g.initializers.end());
        QVERIFY(maxRelativeError(m, split.model) < 1e-6);
    }

    void alphaBetaArithmetic() {
        const Interconnect link{"test", 1e-6, 1e9};
        // Ring: 2(N-1) steps of alpha + bytes / N / bandwidth.
        QVERIFY(std::abs(allReduceSeconds(1e6, 4, link) - 6 * (1e-6 + 250e3 / 1e9)) < 1e-12);
        QCOMPARE(allReduceSeconds(1e6, 1, link), 0.0);
        QVERIFY(std::abs(sendSeconds(1e6, link) - (1e-6 + 1e-3)) < 1e-12);
        QVERIFY(interconnectPreset("nvlink4"));
        QVERIFY(!interconnectPreset("carrier-pigeon"));
    }

    void simulatedTimelinesAccountForCommunicationAndBubbles() {
        Model m = transformerBlock();
        auto tp = partition(m, passes::tensorParallel(2));
        const Interconnect link = *interconnectPreset("pcie5");
        const SimulatedRun run = simulateTensorParallel(*tp.model.graph, 2, link);
        QCOMPARE(run.communicationBytes, double(2 * kBatch * kSeq * kHidden * 4));
        QVERIFY(std::abs(run.communicationSeconds - 2 * allReduceSeconds(kBatch * kSeq * kHidden * 4, 2, link)) < 1e-12);
        int reduces = 0;
        for (const SimulatedEvent& e : run.events) reduces += e.kind == "all-reduce";
        QCOMPARE(reduces, 4);  // two collectives, on both lanes
        QVERIFY(run.totalSeconds > run.communicationSeconds);
        QVERIFY(run.singleDeviceSeconds > 0);

        auto pp = partition(m, passes::pipelineParallel(2));
        const SimulatedRun one = simulatePipelineParallel(*pp.model.graph, 2, 1, link);
        const SimulatedRun many = simulatePipelineParallel(*pp.model.graph, 2, 16, link);
        // More micro-batches fill the pipeline: fewer bubbles, shorter time.
        QVERIFY2(many.bubbleFraction < one.bubbleFraction, std::to_string(many.bubbleFraction).c_str());
        QVERIFY(one.bubbleFraction > 0.3);
        QVERIFY(many.totalSeconds < one.totalSeconds);
    }
};

QTEST_APPLESS_MAIN(TestParallelPasses)
#include "tst_parallel_passes.moc"
