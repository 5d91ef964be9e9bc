// LSTM, GRU (linear_before_reset 0 and 1) and RNN against ONNX's equations written out here
// in double: forward, reverse and bidirectional, batch rows of different sequence lengths,
// initial states, LSTM peepholes, clip, layout 0 and 1, R given as a constant (kept
// transposed by the kernel) and as a graph input, on one and two threads (a bidirectional
// layer's directions run side by side). matrixTimesVector, each step's product at batch 1,
// against double sums over row and column counts with and without vector remainders.
#include <QtTest>

#include <omp.h>

#include <cmath>
#include <random>

#include "compiler/backends/cpu/gemv.h"

#include "compiler/runtime/executor.h"
#include "compiler/target.h"
#include "core/graph_builder.h"
#include "core/shape_inference.h"

using namespace fsc;

namespace {

enum class Cell { Lstm, Gru, Rnn };

struct Case {
    Cell cell;
    std::string direction;
    bool linearBeforeReset = false;
    int64_t layout = 0;
    float clip = 0;
    bool constantR = true;
    int threads = 1;
    int64_t seq = 5, batch = 3, in = 7, H = 6;
    std::vector<int32_t> lens{5, 2, 4};
};

int64_t gatesOf(Cell c) { return c == Cell::Lstm ? 4 : (c == Cell::Gru ? 3 : 1); }
int64_t dirsOf(const Case& c) { return c.direction == "bidirectional" ? 2 : 1; }

std::vector<float> randomValues(size_t n, std::mt19937& rng, float scale) {
    std::uniform_real_distribution<float> u(-scale, scale);
    std::vector<float> v(n);
    for (float& x : v) x = u(rng);
    return v;
}

struct Data {
    std::vector<float> X, W, R, B, h0, c0, P;  // X as [seq, batch, in] (layout 0)
};

struct Result3 {
    std::vector<double> Y, Yh, Yc;  // [seq, dirs, batch, H], [dirs, batch, H] x 2
};

double sigmoid(double v) { return 1 / (1 + std::exp(-v)); }

// ONNX's equations, one batch row and step at a time.
Result3 byDefinition(const Case& c, const Data& d) {
    const int64_t G = gatesOf(c.cell), H = c.H, dirs = dirsOf(c), in = c.in, batch = c.batch;
    const size_t hs = size_t(H);
    Result3 r;
    r.Y.assign(size_t(c.seq * dirs * batch * H), 0.0);
    r.Yh.assign(size_t(dirs * batch * H), 0.0);
    r.Yc.assign(size_t(dirs * batch * H), 0.0);
    auto clip = [&](double v) { return c.clip > 0 ? std::clamp(v, -double(c.clip), double(c.clip)) : v; };
    for (int64_t dir = 0; dir < dirs; ++dir) {
        const bool reverse = c.direction == "reverse" || dir == 1;
        const float* W = d.W.data() + dir * G * H * in;
        const float* R = d.R.data() + dir * G * H * H;
        const float* Wb = d.B.data() + dir * 2 * G * H;
        const float* Rb = Wb + G * H;
        for (int64_t b = 0; b < batch; ++b) {
            std::vector<double> h(hs), cell(hs);
            for (int64_t j = 0; j < H; ++j) {
                h[size_t(j)] = d.h0[size_t((dir * batch + b) * H + j)];
                if (c.cell == Cell::Lstm) cell[size_t(j)] = d.c0[size_t((dir * batch + b) * H + j)];
            }
            const int64_t len = c.lens[size_t(b)];
            for (int64_t s = 0; s < len; ++s) {
                const int64_t t = reverse ? len - 1 - s : s;
                const float* x = d.X.data() + (t * batch + b) * in;
                // xw[k] = x . W_k + Wb_k; hr[k] = h . R_k + Rb_k, k over every gate row
                auto xw = [&](int64_t k) {
                    double a = Wb[k];
                    for (int64_t i = 0; i < in; ++i) a += double(x[i]) * W[k * in + i];
                    return a;
                };
                auto hr = [&](int64_t k, const std::vector<double>& hv) {
                    double a = Rb[k];
                    for (int64_t i = 0; i < H; ++i) a += hv[size_t(i)] * R[k * H + i];
                    return a;
                };
                std::vector<double> next(hs);
                if (c.cell == Cell::Rnn) {
                    for (int64_t j = 0; j < H; ++j) next[size_t(j)] = std::tanh(clip(xw(j) + hr(j, h)));
                } else if (c.cell == Cell::Gru) {
                    std::vector<double> z(hs), rg(hs), rh(hs);
                    for (int64_t j = 0; j < H; ++j) {
                        z[size_t(j)] = sigmoid(clip(xw(j) + hr(j, h)));
                        rg[size_t(j)] = sigmoid(clip(xw(H + j) + hr(H + j, h)));
                        rh[size_t(j)] = rg[size_t(j)] * h[size_t(j)];
                    }
                    for (int64_t j = 0; j < H; ++j) {
                        const double pre = c.linearBeforeReset ? xw(2 * H + j) + rg[size_t(j)] * hr(2 * H + j, h)
                                                               : xw(2 * H + j) + hr(2 * H + j, rh);
                        const double n = std::tanh(clip(pre));
                        next[size_t(j)] = (1 - z[size_t(j)]) * n + z[size_t(j)] * h[size_t(j)];
                    }
                } else {
                    const float* P = d.P.data() + dir * 3 * H;
                    for (int64_t j = 0; j < H; ++j) {
                        const double i = sigmoid(clip(clip(xw(j) + hr(j, h)) + P[j] * cell[size_t(j)]));
                        const double f = sigmoid(clip(clip(xw(2 * H + j) + hr(2 * H + j, h)) + P[2 * H + j] * cell[size_t(j)]));
                        const double g = std::tanh(clip(xw(3 * H + j) + hr(3 * H + j, h)));
                        const double cNew = f * cell[size_t(j)] + i * g;
                        const double o = sigmoid(clip(clip(xw(H + j) + hr(H + j, h)) + P[H + j] * cNew));
                        next[size_t(j)] = o * std::tanh(cNew);
                        cell[size_t(j)] = cNew;
                    }
                }
                h = next;
                for (int64_t j = 0; j < H; ++j) r.Y[size_t(((t * dirs + dir) * batch + b) * H + j)] = h[size_t(j)];
            }
            for (int64_t j = 0; j < H; ++j) {
                r.Yh[size_t((dir * batch + b) * H + j)] = h[size_t(j)];
                r.Yc[size_t((dir * batch + b) * H + j)] = cell[size_t(j)];
            }
        }
    }
    return r;
}

// The kernel's outputs, brought back to layout 0.
Result3 byKernel(const Case& c, const Data& d) {
    const int64_t G = gatesOf(c.cell), H = c.H, dirs = dirsOf(c), in = c.in, batch = c.batch, seq = c.seq;
    const bool lstm = c.cell == Cell::Lstm;
    GraphBuilder g;
    const std::vector<int64_t> xDims = c.layout ? std::vector<int64_t>{batch, seq, in} : std::vector<int64_t>{seq, batch, in};
    const std::vector<int64_t> stateDims = c.layout ? std::vector<int64_t>{batch, dirs, H} : std::vector<int64_t>{dirs, batch, H};
    ValueId x = g.input("X", DType::Float32, Shape::ofSizes(xDims));
    ValueId w = g.initializer(floatTensor("W", {dirs, G * H, in}, d.W));
    ValueId r = c.constantR ? g.initializer(floatTensor("R", {dirs, G * H, H}, d.R))
                            : g.input("R", DType::Float32, Shape::ofSizes({dirs, G * H, H}));
    ValueId bias = g.initializer(floatTensor("B", {dirs, 2 * G * H}, d.B));
    ValueId lens = g.input("lens", DType::Int32, Shape::ofSizes({batch}));
    ValueId h0 = g.input("h0", DType::Float32, Shape::ofSizes(stateDims));
    std::vector<ValueId> inputs{x, w, r, bias, lens, h0};
    if (lstm) {
        inputs.push_back(g.input("c0", DType::Float32, Shape::ofSizes(stateDims)));
        inputs.push_back(g.initializer(floatTensor("P", {dirs, 3 * H}, d.P)));
    }
    std::vector<Attribute> attrs{intAttr("hidden_size", H), stringAttr("direction", c.direction), intAttr("layout", c.layout)};
    if (c.clip > 0) attrs.push_back(floatAttr("clip", c.clip));
    if (c.cell == Cell::Gru) attrs.push_back(intAttr("linear_before_reset", c.linearBeforeReset ? 1 : 0));
    const char* op = lstm ? "LSTM" : (c.cell == Cell::Gru ? "GRU" : "RNN");
    std::vector<std::string> names{"Y", "Y_h"};
    if (lstm) names.push_back("Y_c");
    auto outs = g.node(op, inputs, names, attrs);
    for (ValueId o : outs) g.output(o);
    Model m = g.buildModel(17);
    fillUnknownTypes(*m.graph);
    auto exec = Executor::create(m, cpuExecutorOptions(c.threads));
    if (!exec) qFatal("%s", exec.status().message().c_str());

    // Layout 1 puts batch first in X and the states.
    auto toLayout = [&](const std::vector<float>& v, int64_t outer, int64_t mid, int64_t inner) {
        if (!c.layout) return v;
        std::vector<float> o(v.size());  // [outer, mid, inner] -> [mid, outer, inner]
        for (int64_t a = 0; a < outer; ++a)
            for (int64_t b = 0; b < mid; ++b)
                for (int64_t k = 0; k < inner; ++k) o[size_t((b * outer + a) * inner + k)] = v[size_t((a * mid + b) * inner + k)];
        return o;
    };
    auto tensorOf = [](DType t, std::vector<int64_t> dims, const void* src, size_t bytes) {
        RtTensor tensor = allocateTensor(t, std::move(dims));
        std::memcpy(tensor.data, src, bytes);
        return tensor;
    };
    const auto xv = toLayout(d.X, seq, batch, in);
    std::vector<RtTensor> feeds{tensorOf(DType::Float32, xDims, xv.data(), xv.size() * 4)};
    if (!c.constantR) feeds.push_back(tensorOf(DType::Float32, {dirs, G * H, H}, d.R.data(), d.R.size() * 4));
    feeds.push_back(tensorOf(DType::Int32, {batch}, c.lens.data(), c.lens.size() * 4));
    const auto hv = toLayout(d.h0, dirs, batch, H);
    feeds.push_back(tensorOf(DType::Float32, stateDims, hv.data(), hv.size() * 4));
    if (lstm) {
        const auto cv = toLayout(d.c0, dirs, batch, H);
        feeds.push_back(tensorOf(DType::Float32, stateDims, cv.data(), cv.size() * 4));
    }
    auto out = (*exec)->run(feeds);
    if (!out) qFatal("%s", out.status().message().c_str());
    auto back = [&](const RtTensor& t, int64_t outer, int64_t mid, int64_t inner) {
        // layout 1: [mid, outer, inner] -> [outer, mid, inner]
        std::vector<double> o(size_t(t.numel()));
        for (int64_t a = 0; a < outer; ++a)
            for (int64_t b = 0; b < mid; ++b)
                for (int64_t k = 0; k < inner; ++k) {
                    const int64_t from = c.layout ? (b * outer + a) * inner + k : (a * mid + b) * inner + k;
                    o[size_t((a * mid + b) * inner + k)] = t.as<float>()[from];
                }
        return o;
    };
    Result3 r3;
    r3.Y = back((*out)[0], seq, dirs * batch, H);
    if (c.layout) {  // Y is [batch, seq, dirs, H]: [seq, dirs, batch, H] wanted
        r3.Y.assign(size_t(seq * dirs * batch * H), 0.0);
        for (int64_t t = 0; t < seq; ++t)
            for (int64_t dir = 0; dir < dirs; ++dir)
                for (int64_t b = 0; b < batch; ++b)
                    for (int64_t j = 0; j < H; ++j)
                        r3.Y[size_t(((t * dirs + dir) * batch + b) * H + j)] =
                            (*out)[0].as<float>()[((b * seq + t) * dirs + dir) * H + j];
    }
    r3.Yh = back((*out)[1], dirs, batch, H);
    if (lstm) r3.Yc = back((*out)[2], dirs, batch, H);
    return r3;
}

QString describe(const Case& c) {
    return QStringLiteral("%1 %2 lbr %3 layout %4 clip %5 constantR %6 threads %7")
        .arg(c.cell == Cell::Lstm ? "LSTM" : (c.cell == Cell::Gru ? "GRU" : "RNN"))
        .arg(QString::fromStdString(c.direction))
        .arg(c.linearBeforeReset)
        .arg(c.layout)
        .arg(c.clip)
        .arg(c.constantR)
        .arg(c.threads);
}

}  // namespace

class TestRecurrentOps : public QObject {
    Q_OBJECT
private slots:
    void matrixTimesVectorMatchesDoubleSums() {
        std::mt19937 rng(3);
        const int before = omp_get_max_threads();
        for (int threads : {1, 2}) {
            omp_set_num_threads(threads);
            for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1, 1}, {3, 15}, {5, 16}, {7, 17}, {9, 33}, {37, 100},
                                      {3072, 768}, {1027, 129}}) {
                const int64_t lda = cols + 3;
                const auto a = randomValues(size_t(rows * lda), rng, 1.f);
                const auto x = randomValues(size_t(cols), rng, 1.f);
                std::vector<float> y(size_t(rows), -7.f);
                cpu::matrixTimesVector(rows, cols, a.data(), lda, x.data(), y.data());
                for (int64_t i = 0; i < rows; ++i) {
                    double want = 0, scale = 0;
                    for (int64_t j = 0; j < cols; ++j) {
                        want += double(a[size_t(i * lda + j)]) * x[size_t(j)];
                        scale += std::abs(double(a[size_t(i * lda + j)]) * x[size_t(j)]);
                    }
                    QVERIFY2(std::abs(y[size_t(i)] - want) <= 1e-6 * scale + 1e-30,
                             qPrintable(QStringLiteral("%1 x %2, %3 threads, row %4: %5 vs %6")
                                            .arg(rows).arg(cols).arg(threads).arg(i).arg(y[size_t(i)]).arg(want)));
                }
            }
        }
        omp_set_num_threads(before);
    }

    // Inputs that do not fit the layer are an error naming the node, not a read past them.
    void misfitInputsAreRefused() {
        GraphBuilder g;
        ValueId x = g.input("X", DType::Float32, Shape::ofSizes({4, 2, 3}));
        ValueId w = g.initializer(randomFloatTensor("W", {1, 3 * 5, 3}, 1));
        ValueId r = g.initializer(randomFloatTensor("R", {1, 3 * 5, 5}, 2));
        ValueId b = g.initializer(randomFloatTensor("B", {1, 2 * 3 * 5}, 3));
        ValueId lens = g.input("lens", DType::Int32, Shape::ofSizes({2}));
        ValueId h0 = g.input("h0", DType::Float32, Shape::ofSizes({1, 1, 5}));  // batch is 2
        auto outs = g.node("GRU", {x, w, r, b, lens, h0}, {"Y", "Y_h"}, {intAttr("hidden_size", 5)}, "gru");
        g.output(outs[0]);
        Model m = g.buildModel(17);
        fillUnknownTypes(*m.graph);
        auto exec = Executor::create(m, cpuExecutorOptions());
        QVERIFY(exec);
        RtTensor xs = allocateTensor(DType::Float32, {4, 2, 3}), ls = allocateTensor(DType::Int32, {2}),
                 hs = allocateTensor(DType::Float32, {1, 1, 5});
        auto out = (*exec)->run({xs, ls, hs});
        QVERIFY(!out);
        QVERIFY2(out.status().message().find("gru") != std::string::npos &&
                     out.status().message().find("initial_h") != std::string::npos,
                 out.status().message().c_str());
    }

    void cellsMatchTheirEquations() {
        std::vector<Case> cases;
        for (Cell cell : {Cell::Lstm, Cell::Gru, Cell::Rnn})
            for (const char* dir : {"forward", "reverse", "bidirectional"})
                for (int threads : {1, 2}) {
                    Case c{cell, dir};
                    c.threads = threads;
                    cases.push_back(c);
                    if (cell == Cell::Gru) {
                        c.linearBeforeReset = true;
                        cases.push_back(c);
                    }
                }
        for (Cell cell : {Cell::Lstm, Cell::Gru, Cell::Rnn}) {
            Case c{cell, "bidirectional"};
            c.threads = 2;
            c.layout = 1;
            c.clip = 0.7f;
            c.constantR = false;
            c.batch = 1;  // one row times R^T
            c.lens = {4};
            cases.push_back(c);
            c.linearBeforeReset = true;
            c.layout = 0;
            c.constantR = true;
            cases.push_back(c);
            c.layout = 1;  // batch-first initial states of three rows
            c.batch = 3;
            c.lens = {3, 5, 1};
            c.threads = 1;
            cases.push_back(c);
        }
        std::mt19937 rng(11);
        for (const Case& c : cases) {
            const int64_t G = gatesOf(c.cell), H = c.H, dirs = dirsOf(c);
            Data d;
            d.X = randomValues(size_t(c.seq * c.batch * c.in), rng, 1.5f);
            d.W = randomValues(size_t(dirs * G * H * c.in), rng, 0.6f);
            d.R = randomValues(size_t(dirs * G * H * H), rng, 0.6f);
            d.B = randomValues(size_t(dirs * 2 * G * H), rng, 0.4f);
            d.h0 = randomValues(size_t(dirs * c.batch * H), rng, 0.8f);
            d.c0 = randomValues(size_t(dirs * c.batch * H), rng, 0.8f);
            d.P = randomValues(size_t(dirs * 3 * H), rng, 0.5f);
            const Result3 want = byDefinition(c, d), got = byKernel(c, d);
            auto compare = [&](const std::vector<double>& a, const std::vector<double>& b, const char* what) {
                QVERIFY2(a.size() == b.size(), qPrintable(describe(c) + " " + what));
                for (size_t i = 0; i < a.size(); ++i)
                    QVERIFY2(std::abs(a[i] - b[i]) < 2e-5,
                             qPrintable(describe(c) + QStringLiteral(" %1[%2]: %3 vs %4").arg(what).arg(i).arg(a[i]).arg(b[i])));
            };
            compare(got.Y, want.Y, "Y");
            compare(got.Yh, want.Yh, "Y_h");
            if (c.cell == Cell::Lstm) compare(got.Yc, want.Yc, "Y_c");
        }
    }
};

QTEST_GUILESS_MAIN(TestRecurrentOps)
#include "tst_recurrent_ops.moc"
