#include "random_graph.h"

#include <algorithm>
#include <cmath>

#include "compiler/pass_registry.h"
#include "compiler/pipelines.h"
#include "core/graph_builder.h"
#include "core/onnx_export.h"
#include "core/onnx_import.h"

namespace fsc::fuzz {

uint32_t ByteSource::below(uint32_t n) {
    if (n <= 1 || m_position >= m_size) return 0;
    return m_data[m_position++] % n;
}

namespace {

// A value the generator can build on, with its sizes (the batch's chosen size at dim 0).
struct Tracked {
    ValueId id;
    std::vector<int64_t> dims;
    bool image = false;  // [N, C, H, W]; otherwise [N, ..., features]
};

class Generator {
public:
    explicit Generator(ByteSource& in) : m_in(in) {}

    Result<RandomModel> build() {
        m_batch = 1 + m_in.below(3);
        m_symbolicBatch = m_in.flip();
        const uint32_t inputs = m_in.below(3);  // sequence, image, or both
        if (inputs != 1) addSequenceInput();
        if (inputs != 0) addImageInput();
        const uint32_t steps = 1 + m_in.below(12);
        for (uint32_t i = 0; i < steps; ++i) step();
        m_builder.output(m_pool.back().id);
        const Tracked& extra = pick();
        if (m_in.flip() && extra.id != m_pool.back().id && !isInput(extra.id)) m_builder.output(extra.id);

        Model built = m_builder.buildModel(17);
        auto bytes = exportModelToBytes(built);
        if (!bytes) return bytes.status();
        auto imported = importModelFromBytes(bytes->data(), bytes->size(), "random.onnx");
        if (!imported) return imported.status();
        RandomModel r{std::move(*imported), {}, m_steps};
        if (m_symbolicBatch) r.symbolSizes["batch"] = m_batch;
        return r;
    }

private:
    std::string fresh(const char* prefix) { return prefix + std::to_string(++m_counter); }
    ValueId weights(std::vector<int64_t> dims, float scale = 0.5f) {
        return m_builder.initializer(randomFloatTensor(fresh("w"), std::move(dims), m_counter, scale));
    }
    ValueId scalar(float v) { return m_builder.initializer(floatTensor(fresh("c"), {}, {v})); }
    ValueId ints(std::vector<int64_t> values) {
        const int64_t n = int64_t(values.size());
        return m_builder.initializer(int64Tensor(fresh("i"), {n}, values));
    }
    ValueId op(const std::string& type, std::vector<ValueId> inputs, std::vector<Attribute> attributes = {}) {
        return m_builder.op(type, inputs, fresh("v"), std::move(attributes), fresh("n"));
    }
    Dim batchDim() const { return m_symbolicBatch ? Dim::symbolic("batch") : Dim::known(m_batch); }
    bool isInput(ValueId id) const { return std::find(m_inputs.begin(), m_inputs.end(), id) != m_inputs.end(); }

    void addSequenceInput() {
        const int64_t s = 1 + m_in.below(4), d = m_in.flip() ? 8 : 4;
        ValueId x = m_builder.input("tokens", DType::Float32, Shape({batchDim(), Dim::known(s), Dim::known(d)}));
        m_inputs.push_back(x);
        m_pool.push_back({x, {m_batch, s, d}, false});
    }
    void addImageInput() {
        const int64_t c = 1 + m_in.below(3), h = 3 + m_in.below(4), w = 3 + m_in.below(4);
        ValueId x = m_builder.input("image", DType::Float32,
                                    Shape({batchDim(), Dim::known(c), Dim::known(h), Dim::known(w)}));
        m_inputs.push_back(x);
        m_pool.push_back({x, {m_batch, c, h, w}, true});
    }

    // Most steps build on the newest value, so graphs grow deep rather than wide.
    const Tracked& pick() {
        if (m_pool.size() == 1 || m_in.below(4) != 0) return m_pool.back();
        return m_pool[m_in.below(uint32_t(m_pool.size()))];
    }
    const Tracked* pickKind(bool image) {
        for (auto it = m_pool.rbegin(); it != m_pool.rend(); ++it)
            if (it->image == image && (m_in.below(3) != 0 || it + 1 == m_pool.rend())) return &*it;
        for (auto it = m_pool.rbegin(); it != m_pool.rend(); ++it)
            if (it->image == image) return &*it;
        return nullptr;
    }
    void add(ValueId id, std::vector<int64_t> dims, bool image, const std::string& what) {
        m_pool.push_back({id, std::move(dims), image});
        m_steps.push_back(what);
    }

    void step() {
        switch (m_in.below(16)) {
            case 0: return unary();
            case 1: return binary();
            case 2: return linear();
            case 3: return gelu();
            case 4: return layerNorm();
            case 5: return softmax();
            case 6: return attention();
            case 7: return convBlock();
            case 8: return noOp();
            case 9: return repeated();
            case 10: return constantArithmetic();
            case 11: return transposes();
            case 12: return flatten();
            case 13: return pool();
            case 14: return concat();
            default: return rmsNorm();
        }
    }

    void unary() {
        static const char* ops[] = {"Relu", "Sigmoid", "Tanh", "Neg", "Abs", "Erf", "Softplus", "LeakyRelu"};
        const Tracked x = pick();
        const std::string type = ops[m_in.below(8)];
        add(op(type, {x.id}), x.dims, x.image, type);
    }

    void binary() {
        static const char* ops[] = {"Add", "Sub", "Mul"};
        const Tracked x = pick();
        const std::string type = ops[m_in.below(3)];
        ValueId other;
        switch (m_in.below(3)) {
            case 0: {  // another value of the same sizes, or the value itself
                other = x.id;
                for (const Tracked& t : m_pool)
                    if (t.dims == x.dims && t.id != x.id && m_in.flip()) other = t.id;
                break;
            }
            case 1: other = weights({x.dims.back()}); break;  // broadcast over the last axis
            default: other = scalar(0.5f + float(m_in.below(4)));
        }
        add(op(type, {x.id, other}), x.dims, x.image, type);
    }

    void linear() {
        const Tracked* x = pickKind(false);
        if (!x) return convBlock();
        const Tracked in = *x;
        const int64_t k = in.dims.back(), n = 4 * (1 + m_in.below(3));
        ValueId y = op("MatMul", {in.id, weights({k, n})});
        if (m_in.flip()) y = op("Add", {y, weights({n})});
        std::vector<int64_t> dims = in.dims;
        dims.back() = n;
        add(y, dims, false, "MatMul");
    }

    void gelu() {
        const Tracked x = pick();
        ValueId one = scalar(1.0f), half = scalar(0.5f), y;
        if (m_in.flip()) {
            ValueId e = op("Erf", {op("Div", {x.id, scalar(1.4142135f)})});
            y = op("Mul", {op("Mul", {x.id, op("Add", {e, one})}), half});
        } else {
            ValueId cube = op("Pow", {x.id, scalar(3.0f)});
            ValueId inner = op("Add", {x.id, op("Mul", {cube, scalar(0.044715f)})});
            ValueId t = op("Tanh", {op("Mul", {inner, scalar(0.7978845608f)})});
            y = op("Mul", {op("Mul", {x.id, half}), op("Add", {t, one})});
        }
        add(y, x.dims, x.image, "GELU written out");
    }

    void layerNorm() {
        const Tracked x = pick();
        const int64_t len = x.dims.back();
        ValueId y;
        if (m_in.flip()) {
            y = op("LayerNormalization", {x.id, weights({len}, 1.0f), weights({len})},
                   {intAttr("axis", -1), floatAttr("epsilon", 1e-5f)});
        } else {
            ValueId mean = op("ReduceMean", {x.id}, {intsAttr("axes", {-1})});
            ValueId d = op("Sub", {x.id, mean});
            ValueId var = op("ReduceMean", {op("Pow", {d, scalar(2.0f)})}, {intsAttr("axes", {-1})});
            ValueId n = op("Div", {d, op("Sqrt", {op("Add", {var, scalar(1e-5f)})})});
            y = op("Add", {op("Mul", {n, weights({len}, 1.0f)}), weights({len})});
        }
        add(y, x.dims, x.image, "LayerNorm");
    }

    void rmsNorm() {
        const Tracked x = pick();
        ValueId ms = op("ReduceMean", {op("Pow", {x.id, scalar(2.0f)})}, {intsAttr("axes", {-1})});
        ValueId n = op("Div", {x.id, op("Sqrt", {op("Add", {ms, scalar(1e-6f)})})});
        add(op("Mul", {n, weights({x.dims.back()}, 1.0f)}), x.dims, x.image, "RMSNorm written out");
    }

    void softmax() {
        const Tracked x = pick();
        add(op("Softmax", {x.id}, {intAttr("axis", -1)}), x.dims, x.image, "Softmax");
    }

    // A target shape for [batch, rest...]: a constant (0 copies the batch), or computed at
    // run time from the input's Shape as dynamic-batch exports do.
    ValueId reshapeTarget(ValueId from, const std::vector<int64_t>& rest) {
        std::vector<int64_t> all{m_batch};
        all.insert(all.end(), rest.begin(), rest.end());
        switch (m_in.below(3)) {
            case 0:
                if (!m_symbolicBatch) return ints(all);
                [[fallthrough]];
            case 1:
                all[0] = 0;
                return ints(all);
            default: {
                ValueId b = op("Gather", {op("Shape", {from}), ints({0})}, {intAttr("axis", 0)});
                return op("Concat", {b, ints(rest)}, {intAttr("axis", 0)});
            }
        }
    }

    void attention() {
        const Tracked* found = nullptr;
        for (auto it = m_pool.rbegin(); it != m_pool.rend() && !found; ++it)
            if (!it->image && it->dims.size() == 3 && it->dims[2] % 2 == 0) found = &*it;
        if (!found) return linear();
        const Tracked x = *found;
        const int64_t s = x.dims[1], d = x.dims[2], heads = m_in.flip() ? 2 : 1, dh = d / heads;
        auto project = [&](std::vector<int64_t> perm) {
            ValueId p = op("MatMul", {x.id, weights({d, d})});
            ValueId r = op("Reshape", {p, reshapeTarget(x.id, {s, heads, dh})});
            return op("Transpose", {r}, {intsAttr("perm", perm)});
        };
        ValueId q = op("Div", {project({0, 2, 1, 3}), scalar(std::sqrt(float(dh)))});
        ValueId kt = project({0, 2, 3, 1});
        ValueId v = project({0, 2, 1, 3});
        ValueId scores = op("MatMul", {q, kt});
        if (m_in.flip()) scores = op("Add", {scores, weights({s}, 1.0f)});  // an additive mask
        ValueId p = op("Softmax", {scores}, {intAttr("axis", -1)});
        ValueId ctx = op("Transpose", {op("MatMul", {p, v})}, {intsAttr("perm", {0, 2, 1, 3})});
        ValueId merged = op("Reshape", {ctx, reshapeTarget(x.id, {s, d})});
        ValueId out = op("MatMul", {merged, weights({d, d})});
        add(out, x.dims, false, heads == 2 ? "attention, 2 heads" : "attention, 1 head");
    }

    void convBlock() {
        const Tracked* found = pickKind(true);
        if (!found) return linear();
        const Tracked x = *found;
        const int64_t c = x.dims[1], oc = m_in.flip() ? 4 : 2, k = m_in.flip() ? 3 : 1;
        const bool small = x.dims[2] < 3 || x.dims[3] < 3;  // a 3x3 kernel needs padding there
        const int64_t pad = k == 3 && (small || m_in.flip()) ? 1 : 0;
        std::vector<int64_t> dims{x.dims[0], oc, x.dims[2] + 2 * pad - k + 1, x.dims[3] + 2 * pad - k + 1};
        std::vector<ValueId> conv{x.id, weights({oc, c, k, k})};
        if (m_in.flip()) conv.push_back(weights({oc}));
        ValueId y = op("Conv", conv, {intsAttr("pads", {pad, pad, pad, pad})});
        std::string what = "Conv";
        if (m_in.flip()) {
            ValueId var = m_builder.initializer(floatTensor(fresh("var"), {oc}, std::vector<float>(size_t(oc), 0.8f)));
            y = op("BatchNormalization", {y, weights({oc}, 1.0f), weights({oc}), weights({oc}), var},
                   {floatAttr("epsilon", 1e-5f)});
            what += " + BatchNormalization";
        }
        switch (m_in.below(4)) {
            case 1: y = op("Relu", {y}), what += " + Relu"; break;
            case 2: y = op("Clip", {y, scalar(0.0f), scalar(6.0f)}), what += " + Clip"; break;
            case 3: y = op("HardSwish", {y}), what += " + HardSwish"; break;
            default: break;
        }
        add(y, dims, true, what);
    }

    void noOp() {
        const Tracked x = pick();
        switch (m_in.below(3)) {
            case 0: add(op("Identity", {x.id}), x.dims, x.image, "Identity"); break;
            case 1: add(op("Dropout", {x.id}), x.dims, x.image, "Dropout"); break;
            default: add(op("Cast", {x.id}, {intAttr("to", 1)}), x.dims, x.image, "Cast to float");
        }
    }

    // The same op on the same input twice, both read.
    void repeated() {
        const Tracked x = pick();
        ValueId a = op("Sigmoid", {x.id}), b = op("Sigmoid", {x.id});
        add(op("Mul", {a, b}), x.dims, x.image, "repeated Sigmoid");
    }

    // Arithmetic on weights alone, which constant folding computes once.
    void constantArithmetic() {
        const Tracked x = pick();
        const int64_t len = x.dims.back();
        ValueId w = op("Mul", {op("Add", {weights({len}), weights({len})}), scalar(0.5f)});
        add(op("Mul", {x.id, w}), x.dims, x.image, "constant arithmetic");
    }

    void transposes() {
        const Tracked x = pick();
        const size_t rank = x.dims.size();
        std::vector<int64_t> perm(rank);
        for (size_t i = 0; i < rank; ++i) perm[i] = int64_t(i);
        std::swap(perm[rank - 1], perm[rank - 2]);
        ValueId t = op("Transpose", {x.id}, {intsAttr("perm", perm)});
        // Dim 0 stays the batch (the reshapes' targets rely on it): a rank-2 value only gets
        // a pair.
        if (rank == 2 || m_in.flip()) {  // and back: a pair that cancels
            add(op("Transpose", {t}, {intsAttr("perm", perm)}), x.dims, x.image, "Transpose pair");
            return;
        }
        std::vector<int64_t> dims = x.dims;
        std::swap(dims[rank - 1], dims[rank - 2]);
        add(t, dims, x.image, "Transpose");
    }

    void flatten() {
        const Tracked x = pick();
        int64_t rest = 1;
        for (size_t i = 1; i < x.dims.size(); ++i) rest *= x.dims[i];
        if (m_in.flip()) {
            add(op("Flatten", {x.id}, {intAttr("axis", 1)}), {x.dims[0], rest}, false, "Flatten");
            return;
        }
        add(op("Reshape", {x.id, reshapeTarget(x.id, {rest})}), {x.dims[0], rest}, false, "Reshape flat");
    }

    void pool() {
        const Tracked* found = pickKind(true);
        if (!found) return unary();
        const Tracked x = *found;
        if (m_in.flip() || x.dims[2] < 2 || x.dims[3] < 2) {
            ValueId g = op("GlobalAveragePool", {x.id});
            add(op("Flatten", {g}, {intAttr("axis", 1)}), {x.dims[0], x.dims[1]}, false, "GlobalAveragePool");
            return;
        }
        std::vector<int64_t> dims{x.dims[0], x.dims[1], x.dims[2] - 1, x.dims[3] - 1};
        add(op("MaxPool", {x.id}, {intsAttr("kernel_shape", {2, 2})}), dims, true, "MaxPool");
    }

    void concat() {
        const Tracked x = pick();
        const Tracked* other = &x;
        for (const Tracked& t : m_pool)
            if (t.id != x.id && t.dims.size() == x.dims.size() &&
                std::equal(t.dims.begin(), t.dims.end() - 1, x.dims.begin()) && m_in.flip())
                other = &t;
        std::vector<int64_t> dims = x.dims;
        dims.back() += other->dims.back();
        const ValueId otherId = other->id;
        add(op("Concat", {x.id, otherId}, {intAttr("axis", -1)}), dims, x.image, "Concat");
    }

    ByteSource& m_in;
    GraphBuilder m_builder{"random"};
    std::vector<Tracked> m_pool;
    std::vector<ValueId> m_inputs;
    std::vector<std::string> m_steps;
    int64_t m_batch = 1;
    bool m_symbolicBatch = false;
    int m_counter = 0;
};

}  // namespace

Result<RandomModel> randomModel(ByteSource& bytes) { return Generator(bytes).build(); }

std::vector<std::string> randomPassOrder(ByteSource& bytes) {
    const auto& passes = PassRegistry::builtin().passes();
    auto anyPass = [&] { return passes[bytes.below(uint32_t(passes.size()))].name; };
    std::vector<std::string> order;
    if (bytes.flip()) {
        // A named pipeline, with one pass inserted anywhere: the fusions only meet their
        // patterns after the clean-up, which a uniform order rarely runs first.
        auto named = pipelinePasses(bytes.flip() ? "O3" : "O2");
        if (named) order = *named;
        order.insert(order.begin() + bytes.below(uint32_t(order.size() + 1)), anyPass());
        return order;
    }
    const uint32_t count = 1 + bytes.below(8);
    for (uint32_t i = 0; i < count; ++i) order.push_back(anyPass());
    return order;
}

}  // namespace fsc::fuzz
