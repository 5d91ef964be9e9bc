// Recurrent layers: LSTM, GRU and RNN (forward, reverse, bidirectional; sequence_lens,
// initial states, peepholes, clip, custom activations, layout 0 and 1). The input
// projection of every time step and direction is one matrix product, biases added to it
// once; each step adds H * R^T (at batch 1 R's rows dotted with H, as stored) and applies
// the gates' activations to whole gate vectors at the CPU's vector width. The directions of
// a bidirectional layer run side by side on the run's threads.
// com.microsoft.DynamicQuantizeLSTM (what ONNX Runtime's quantize_dynamic makes of an LSTM)
// is the same layer with 8-bit W and R, multiplied as ONNX Runtime does (QuantizedWeights).
#include <cmath>

#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/backends/cpu/dynamic_quantize.h"
#include "compiler/backends/cpu/gemm.h"
#include "compiler/backends/cpu/gemv.h"
#include "compiler/backends/cpu/int8_gemv.h"
#include "compiler/backends/cpu/relaid_constant.h"
#include "compiler/backends/cpu/vector_math.h"

namespace fsc::cpu {
namespace {

enum class Cell { Lstm, Gru, Rnn };

enum class ActKind { Sigmoid, Tanh, Relu, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus };

struct Activation {
    ActKind kind = ActKind::Tanh;
    float alpha = 0, beta = 0;

    float operator()(float v) const {
        switch (kind) {
            case ActKind::Sigmoid: return 1.0f / (1.0f + std::exp(-v));
            case ActKind::Tanh: return std::tanh(v);
            case ActKind::Relu: return std::max(0.0f, v);
            case ActKind::Affine: return alpha * v + beta;
            case ActKind::LeakyRelu: return v < 0 ? alpha * v : v;
            case ActKind::ThresholdedRelu: return v > alpha ? v : 0.0f;
            case ActKind::ScaledTanh: return alpha * std::tanh(beta * v);
            case ActKind::HardSigmoid: return std::max(0.0f, std::min(1.0f, alpha * v + beta));
            case ActKind::Elu: return v < 0 ? alpha * (std::exp(v) - 1) : v;
            case ActKind::Softsign: return v / (1 + std::fabs(v));
            case ActKind::Softplus: return std::log1p(std::exp(v));
        }
        return v;
    }
    // In place over n values: the logistic and tanh through their vector forms.
    void apply(float* x, int64_t n) const {
        if (kind == ActKind::Sigmoid) return sigmoidArray(x, x, n);
        if (kind == ActKind::Tanh) return tanhArray(x, x, n);
        for (int64_t i = 0; i < n; ++i) x[i] = (*this)(x[i]);
    }
};

bool activationKind(const std::string& n, ActKind& kind) {
    static const std::pair<const char*, ActKind> known[] = {
        {"Sigmoid", ActKind::Sigmoid}, {"Tanh", ActKind::Tanh}, {"Relu", ActKind::Relu}, {"Affine", ActKind::Affine},
        {"LeakyRelu", ActKind::LeakyRelu}, {"ThresholdedRelu", ActKind::ThresholdedRelu},
        {"ScaledTanh", ActKind::ScaledTanh}, {"HardSigmoid", ActKind::HardSigmoid}, {"Elu", ActKind::Elu},
        {"Softsign", ActKind::Softsign}, {"Softplus", ActKind::Softplus}};
    for (const auto& [name, k] : known)
        if (n == name) {
            kind = k;
            return true;
        }
    return false;
}

void clipArray(float* x, int64_t n, float clip) {
    if (clip > 0)
        for (int64_t i = 0; i < n; ++i) x[i] = std::clamp(x[i], -clip, clip);
}

// One direction's 8-bit weights as DynamicQuantizeLSTM stores them, [K, N] (W: K = input
// size, R: K = hidden size; N = 4 x hidden size), with a scale and zero point per column (or
// one repeated). A float operand is quantized to uint8 by its range (DynamicQuantizeLinear's
// arithmetic), the products summed in int32 and scaled by its scale times the column's, as
// ONNX Runtime's quantized LSTM does.
struct QuantizedWeights {
    const uint8_t* data = nullptr;
    bool isSigned = false;
    int64_t K = 0, N = 0;
    std::vector<float> scale;
    std::vector<int32_t> zero;
    static constexpr int64_t kGemmRows = 8;  // from here on the int8 GEMM
    bool oneZero = false;      // one zero point for every column (what ONNX Runtime accepts)
    PackedInt8Columns packed;  // for int8RowsTimesColumns, where it runs vector code and oneZero
    bool usePacked = false;
    // Elsewhere B - zero as floats: sums of whole numbers, exact while below 2^24 (rows of up
    // to 258 bytes always; longer ones unless the sums grow that large), through the float GEMV.
    std::vector<float> widened;

    void prepare() {
        oneZero = std::all_of(zero.begin(), zero.end(), [&](int32_t z) { return z == zero[0]; });
        usePacked = oneZero && int8GemvAvailable();
        if (usePacked) {
            packed = packInt8Columns(data, isSigned, K, N, zero.empty() ? 0 : zero[0]);
            return;
        }
        widened.resize(size_t(K * N));
        for (int64_t k = 0; k < K; ++k)
            for (int64_t n = 0; n < N; ++n) {
                const int32_t b = isSigned ? int32_t(int8_t(data[k * N + n])) : int32_t(data[k * N + n]);
                widened[size_t(k * N + n)] = float(b - zero[size_t(n)]);
            }
    }

    // y [rows, N] = a [rows, K] W.
    void multiply(ThreadPool& pool, const float* a, int64_t rows, float* y) const {
        std::vector<uint8_t> q(size_t(rows * K));
        const DynamicQuantization aq = dynamicQuantizeUint8(pool, a, rows * K, q.data());
        std::vector<float> multiplier(static_cast<size_t>(N));
        for (int64_t n = 0; n < N; ++n) multiplier[size_t(n)] = aq.scale * scale[size_t(n)];
        if (oneZero && (rows >= kGemmRows || usePacked)) {
            std::vector<int32_t> acc(size_t(rows * N));
            if (rows >= kGemmRows)  // the input projection of every step: one GEMM
                gemmS8S8(false, false, rows, N, K, reinterpret_cast<const int8_t*>(q.data()), K, int8_t(int32_t(aq.zero) - 128),
                         reinterpret_cast<const int8_t*>(data), N, int8_t(isSigned ? zero[0] : zero[0] - 128), acc.data(), N,
                         nullptr, {true, !isSigned});
            else
                int8RowsTimesColumns(pool, q.data(), rows, aq.zero, packed, acc.data());
            for (int64_t r = 0; r < rows; ++r)
                for (int64_t n = 0; n < N; ++n) y[r * N + n] = float(acc[size_t(r * N + n)]) * multiplier[size_t(n)];
            return;
        }
        std::vector<float> row(static_cast<size_t>(K));
        for (int64_t r = 0; r < rows; ++r) {
            for (int64_t k = 0; k < K; ++k) row[size_t(k)] = float(int32_t(q[size_t(r * K + k)]) - int32_t(aq.zero));
            gemvRowMajor(K, N, 1.0f, row.data(), 1, widened.data(), N, 0.0f, y + r * N);
            for (int64_t n = 0; n < N; ++n) y[r * N + n] *= multiplier[size_t(n)];
        }
    }
};

// Direction d's weights from DynamicQuantizeLSTM's W or R [dirs, K, N] and its scale and zero
// point ([dirs] per direction, or [dirs, N] per column).
Result<QuantizedWeights> quantizedWeights(const RtTensor& w, const RtTensor& scale, const RtTensor* zero, int64_t d) {
    const int64_t dirs = w.dims[0], N = w.dims[2];
    const bool perColumn = scale.dims.size() == 2;
    if ((scale.numel() != dirs && scale.numel() != dirs * N) || scale.dtype != DType::Float32 ||
        (zero && (zero->numel() != scale.numel() || zero->dtype != w.dtype)))
        return Status(ErrorCode::InvalidModel, "the weights' scale and zero point must hold one value per direction or per column");
    QuantizedWeights q;
    q.isSigned = w.dtype == DType::Int8;
    q.K = w.dims[1];
    q.N = N;
    q.data = static_cast<const uint8_t*>(w.data) + d * q.K * N;
    for (int64_t n = 0; n < N; ++n) {
        const int64_t at = perColumn ? d * N + n : d;
        q.scale.push_back(scale.as<float>()[at]);
        q.zero.push_back(zero ? int32_t(elementAsInt(*zero, at)) : 0);
    }
    return q;
}

class RnnKernel : public Kernel {
public:
    RnnKernel(const KernelInit& init, Cell cell, bool quantizedWeights, Status& status)
        : m_cell(cell), m_quantized(quantizedWeights) {
        m_hidden = init.getInt("hidden_size", 0);
        m_direction = init.getString("direction", "forward");
        m_clip = init.getFloat("clip", 0.0f);
        m_inputForget = init.getInt("input_forget", 0) != 0;
        m_linearBeforeReset = init.getInt("linear_before_reset", 0) != 0;
        m_layout = init.getInt("layout", 0);
        const int dirs = m_direction == "bidirectional" ? 2 : 1;
        std::vector<std::string> defaults;
        if (cell == Cell::Lstm) defaults = {"Sigmoid", "Tanh", "Tanh"};
        else if (cell == Cell::Gru) defaults = {"Sigmoid", "Tanh"};
        else defaults = {"Tanh"};
        auto names = init.getStrings("activations");
        auto alphas = init.getFloats("activation_alpha");
        auto betas = init.getFloats("activation_beta");
        if (names.empty())
            for (int d = 0; d < dirs; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
        for (size_t i = 0; i < names.size(); ++i) {
            Activation a;
            if (!activationKind(names[i], a.kind)) status = init.invalid("unknown activation '" + names[i] + "'");
            // Defaults per ONNX's activation list.
            if (a.kind == ActKind::LeakyRelu) a.alpha = 0.01f;
            if (a.kind == ActKind::ThresholdedRelu || a.kind == ActKind::Elu) a.alpha = 1.0f;
            if (a.kind == ActKind::HardSigmoid) { a.alpha = 0.2f; a.beta = 0.5f; }
            if (a.kind == ActKind::ScaledTanh || a.kind == ActKind::Affine) { a.alpha = 1.0f; a.beta = 1.0f; }
            if (i < alphas.size()) a.alpha = alphas[i];
            if (i < betas.size()) a.beta = betas[i];
            m_acts.push_back(a);
        }
        if (m_acts.size() != defaults.size() * size_t(dirs)) status = init.invalid("wrong number of activations");
        if (m_direction != "forward" && m_direction != "reverse" && m_direction != "bidirectional")
            status = init.invalid("unknown direction '" + m_direction + "'");
    }

    Status compute(KernelContext& ctx) override {
        const RtTensor* X = ctx.input(0);
        const RtTensor* W = ctx.input(1);
        const RtTensor* R = ctx.input(2);
        if (!X || !W || !R || X->rank() != 3 || X->dtype != DType::Float32) return bad(ctx, "needs float32 X (3-D), W and R");
        Shape shape;
        shape.gates = m_cell == Cell::Lstm ? 4 : (m_cell == Cell::Gru ? 3 : 1);
        shape.seq = m_layout ? X->dims[1] : X->dims[0];
        shape.batch = m_layout ? X->dims[0] : X->dims[1];
        shape.in = X->dims[2];
        shape.H = m_hidden ? m_hidden : (m_quantized ? R->dims.back() / shape.gates : R->dims.back());
        shape.dirs = m_direction == "bidirectional" ? 2 : 1;
        const int64_t G = shape.gates, H = shape.H, dirs = shape.dirs, seq = shape.seq, batch = shape.batch, in = shape.in;
        if (m_quantized) {
            if (W->dims != std::vector<int64_t>{dirs, in, G * H} || R->dims != std::vector<int64_t>{dirs, H, G * H} ||
                (W->dtype != DType::Int8 && W->dtype != DType::UInt8) || (R->dtype != DType::Int8 && R->dtype != DType::UInt8))
                return bad(ctx, "8-bit W " + dimsString(W->dims) + " and R " + dimsString(R->dims) +
                                    " must be [directions, input or hidden size, 4 x hidden_size]");
            const RtTensor *wScale = ctx.input(8), *rScale = ctx.input(10);
            if (!wScale || !rScale) return bad(ctx, "needs W_scale and R_scale");
            // Constant weights are packed once; weights fed at run time, every run.
            const bool constant = ctx.inputConstant(1) && ctx.inputConstant(2);
            const std::pair<const void*, const void*> source{W->data, R->data};
            if (!constant || m_packedFrom != source) {
                m_directionWeights.clear();
                for (int64_t d = 0; d < dirs; ++d) {
                    auto w = quantizedWeights(*W, *wScale, ctx.input(9), d);
                    auto r = quantizedWeights(*R, *rScale, ctx.input(11), d);
                    if (!w) return w.status().withContext(ctx.where());
                    if (!r) return r.status().withContext(ctx.where());
                    w->prepare();
                    r->prepare();
                    m_directionWeights.push_back({std::move(*w), std::move(*r)});
                }
                m_packedFrom = constant ? source : std::pair<const void*, const void*>{};
            }
        } else if (W->dims != std::vector<int64_t>{dirs, G * H, in} || R->dims != std::vector<int64_t>{dirs, G * H, H}) {
            return bad(ctx, "W " + dimsString(W->dims) + " or R " + dimsString(R->dims) + " do not fit hidden_size " + std::to_string(H));
        }
        const RtTensor* B = ctx.input(3);
        const RtTensor* lens = ctx.input(4);
        const RtTensor* h0 = ctx.input(5);
        const RtTensor* c0 = m_cell == Cell::Lstm ? ctx.input(6) : nullptr;
        const RtTensor* P = m_cell == Cell::Lstm ? ctx.input(7) : nullptr;
        for (const RtTensor* t : {B, h0, c0, P})
            if (t && t->dtype != DType::Float32) return bad(ctx, "needs float32 B, initial_h, initial_c and P");
        auto holds = [](const RtTensor* t, int64_t n) { return !t || t->numel() == n; };
        if (!holds(B, dirs * 2 * G * H) || !holds(h0, dirs * batch * H) || !holds(c0, dirs * batch * H) ||
            !holds(P, dirs * 3 * H) || (lens && lens->numel() != batch))
            return bad(ctx, "B, sequence_lens, initial_h, initial_c or P does not fit " + std::to_string(dirs) +
                                " direction(s), batch " + std::to_string(batch) + " and hidden_size " + std::to_string(H));

        std::vector<int64_t> seqLens(size_t(batch), seq);
        if (lens)
            for (int64_t b = 0; b < batch; ++b) seqLens[size_t(b)] = std::clamp<int64_t>(elementAsInt(*lens, b), 0, seq);

        // Inputs as [seq, batch, in] whatever the layout.
        std::vector<float> reordered;
        const float* x = X->as<float>();
        if (m_layout) {
            reordered.resize(size_t(seq * batch * in));
            for (int64_t t = 0; t < seq; ++t)
                for (int64_t b = 0; b < batch; ++b)
                    std::memcpy(&reordered[size_t((t * batch + b) * in)], x + (b * seq + t) * in, size_t(in) * 4);
            x = reordered.data();
        }
        // Initial states as [dirs, batch, H]: layout 1 gives them batch first.
        std::vector<float> h0Reordered, c0Reordered;
        auto directionsFirst = [&](const RtTensor* t, std::vector<float>& into) -> const float* {
            if (!t || !m_layout) return t ? t->as<float>() : nullptr;
            into.resize(size_t(dirs * batch * H));
            for (int64_t b = 0; b < batch; ++b)
                for (int64_t d = 0; d < dirs; ++d)
                    std::memcpy(&into[size_t((d * batch + b) * H)], t->as<float>() + (b * dirs + d) * H, size_t(H) * 4);
            return into.data();
        };
        const float* initialH = directionsFirst(h0, h0Reordered);
        const float* initialC = directionsFirst(c0, c0Reordered);
        // Every step's input projection for every direction, [seq * batch, dirs * G * H],
        // with the biases that add straight to it.
        const int64_t width = dirs * G * H;
        std::vector<float> xw(size_t(seq * batch * width));
        if (m_quantized) {
            std::vector<float> part(size_t(seq * batch * G * H));
            for (int64_t d = 0; d < dirs; ++d) {
                m_directionWeights[size_t(d)].w.multiply(ctx.pool(), x, seq * batch, part.data());
                for (int64_t row = 0; row < seq * batch; ++row)
                    std::memcpy(&xw[size_t(row * width + d * G * H)], &part[size_t(row * G * H)], size_t(G * H) * 4);
            }
        } else {
            const GemmB w = ctx.inputConstant(1) ? m_w.of(*W, in, width, true) : GemmB{W->as<float>(), in, true};
            gemm(false, w.transposed, seq * batch, width, in, 1.0f, x, in, w.data, w.ld, 0.0f, xw.data(), width);
        }
        std::vector<float> bias(size_t(width), 0.0f), lateBias(size_t(dirs * H), 0.0f);
        if (B)
            for (int64_t d = 0; d < dirs; ++d)
                for (int64_t i = 0; i < G * H; ++i) {
                    const float wb = B->as<float>()[d * 2 * G * H + i], rb = B->as<float>()[d * 2 * G * H + G * H + i];
                    // GRU's linear_before_reset: the reset gate scales R_h's product plus its bias.
                    const bool late = m_cell == Cell::Gru && m_linearBeforeReset && i >= 2 * H;
                    bias[size_t(d * G * H + i)] = wb + (late ? 0.0f : rb);
                    if (late) lateBias[size_t(d * H + i - 2 * H)] = rb;
                }
        if (B)
            for (int64_t row = 0; row < seq * batch; ++row) addArrays(&xw[size_t(row * width)], bias.data(), &xw[size_t(row * width)], width);

        std::vector<float> Y(size_t(seq * dirs * batch * H), 0.0f), Yh(size_t(dirs * batch * H)), Yc(size_t(dirs * batch * H));
        // One direction per task: the two of a bidirectional layer run side by side.
        ctx.pool().parallelFor(dirs, 1, [&](int64_t d0, int64_t d1) {
            for (int64_t d = d0; d < d1; ++d) {
                DirectionIo io{xw.data() + d * G * H, width, lateBias.data() + d * H, seqLens, Y.data(), Yh.data() + d * batch * H,
                               Yc.data() + d * batch * H};
                io.h0 = initialH ? initialH + d * batch * H : nullptr;
                io.c0 = initialC ? initialC + d * batch * H : nullptr;
                io.peepholes = P ? P->as<float>() + d * 3 * H : nullptr;
                runDirection(ctx.pool(), shape, d, *R, io);
            }
        });

        auto emit = [&](size_t i, std::vector<int64_t> dims, const std::vector<float>& src) -> Status {
            if (!ctx.outputWanted(i)) return Status::ok();
            auto out = ctx.output(i, DType::Float32, dims);
            if (!out) return out.status();
            std::memcpy((*out)->data, src.data(), src.size() * 4);
            return Status::ok();
        };
        if (m_layout) {
            // [seq, dirs, batch, H] -> [batch, seq, dirs, H]; states [dirs, batch, H] -> [batch, dirs, H]
            std::vector<float> y2(Y.size()), h2(Yh.size()), c2(Yc.size());
            for (int64_t t = 0; t < seq; ++t)
                for (int64_t d = 0; d < dirs; ++d)
                    for (int64_t b = 0; b < batch; ++b)
                        std::memcpy(&y2[size_t(((b * seq + t) * dirs + d) * H)], &Y[size_t(((t * dirs + d) * batch + b) * H)], size_t(H) * 4);
            for (int64_t d = 0; d < dirs; ++d)
                for (int64_t b = 0; b < batch; ++b) {
                    std::memcpy(&h2[size_t((b * dirs + d) * H)], &Yh[size_t((d * batch + b) * H)], size_t(H) * 4);
                    std::memcpy(&c2[size_t((b * dirs + d) * H)], &Yc[size_t((d * batch + b) * H)], size_t(H) * 4);
                }
            FSC_RETURN_IF_ERROR(emit(0, {batch, seq, dirs, H}, y2));
            FSC_RETURN_IF_ERROR(emit(1, {batch, dirs, H}, h2));
            return emit(2, {batch, dirs, H}, c2);
        }
        FSC_RETURN_IF_ERROR(emit(0, {seq, dirs, batch, H}, Y));
        FSC_RETURN_IF_ERROR(emit(1, {dirs, batch, H}, Yh));
        return m_cell == Cell::Lstm ? emit(2, {dirs, batch, H}, Yc) : Status::ok();
    }

private:
    struct Shape {
        int64_t gates = 1, seq = 0, batch = 0, in = 0, H = 0, dirs = 1;
    };
    // What one direction reads and writes.
    struct DirectionIo {
        const float* xw;        // step t, row b at xw + (t * batch + b) * xwStride: its input projection and biases
        int64_t xwStride;
        const float* lateBias;  // GRU with linear_before_reset: R_h's bias, H values
        const std::vector<int64_t>& seqLens;
        float* Y;               // [seq, dirs, batch, H]
        float* lastH;           // [batch, H]
        float* lastC;           // [batch, H]
        const float* h0 = nullptr;
        const float* c0 = nullptr;
        const float* peepholes = nullptr;  // LSTM: P's i, o, f, H each
    };

    void runDirection(ThreadPool& pool, const Shape& shape, int64_t d, const RtTensor& R, const DirectionIo& io) {
        const int64_t G = shape.gates, H = shape.H, batch = shape.batch, dirs = shape.dirs;
        const bool reverse = m_direction == "reverse" || d == 1;
        const float* rd = m_quantized ? nullptr : R.as<float>() + d * G * H * H;  // [G * H, H]
        const Activation* act = &m_acts[size_t(d) * (m_acts.size() / size_t(dirs))];
        std::vector<float> h(size_t(batch * H), 0.0f), c(size_t(batch * H), 0.0f);
        if (io.h0) std::memcpy(h.data(), io.h0, h.size() * 4);
        if (io.c0) std::memcpy(c.data(), io.c0, c.size() * 4);
        std::vector<float> hr(size_t(batch * G * H)), g(size_t(G * H)), t1(static_cast<size_t>(H)), t2(static_cast<size_t>(H));
        for (int64_t s = 0; s < shape.seq; ++s) {
            // hr = h R^T for every batch row
            if (m_quantized)
                for (int64_t b = 0; b < batch; ++b)  // each row its own range, as ONNX Runtime's
                    m_directionWeights[size_t(d)].r.multiply(pool, &h[size_t(b * H)], 1, &hr[size_t(b * G * H)]);
            else if (batch == 1) matrixTimesVector(G * H, H, rd, H, h.data(), hr.data());
            else gemm(false, true, batch, G * H, H, 1.0f, h.data(), H, rd, H, 0.0f, hr.data(), G * H);
            for (int64_t b = 0; b < batch; ++b) {
                const int64_t len = io.seqLens[size_t(b)];
                if (s >= len) continue;
                const int64_t t = reverse ? len - 1 - s : s;
                const float* gx = io.xw + (t * batch + b) * io.xwStride;
                const float* gh = &hr[size_t(b * G * H)];
                float* hb = &h[size_t(b * H)];
                float* cb = &c[size_t(b * H)];
                if (m_cell == Cell::Lstm) lstmStep(gx, gh, act, io.peepholes, H, g.data(), t1.data(), hb, cb);
                else if (m_cell == Cell::Gru) gruStep(gx, gh, act, io.lateBias, rd, H, g.data(), t1.data(), t2.data(), hb);
                else {
                    addArrays(gx, gh, hb, H);
                    clipArray(hb, H, m_clip);
                    act[0].apply(hb, H);
                }
                std::memcpy(io.Y + ((t * dirs + d) * batch + b) * H, hb, size_t(H) * 4);
            }
        }
        std::memcpy(io.lastH, h.data(), h.size() * 4);
        std::memcpy(io.lastC, c.data(), c.size() * 4);
    }

    // Gates i, o, f, c (ONNX's order); g holds 4H pre-activations, then the gates.
    void lstmStep(const float* gx, const float* gh, const Activation* act, const float* p, int64_t H, float* g, float* cell,
                  float* h, float* c) const {
        addArrays(gx, gh, g, 4 * H);
        clipArray(g, 4 * H, m_clip);
        float *ig = g, *og = g + H, *fg = g + 2 * H, *cg = g + 3 * H;
        if (p) {
            for (int64_t j = 0; j < H; ++j) {
                ig[j] += p[j] * c[j];
                fg[j] += p[2 * H + j] * c[j];
            }
            clipArray(ig, H, m_clip);
            clipArray(fg, H, m_clip);
        }
        act[0].apply(ig, H);
        if (m_inputForget)
            for (int64_t j = 0; j < H; ++j) fg[j] = 1 - ig[j];
        else
            act[0].apply(fg, H);
        act[1].apply(cg, H);
        for (int64_t j = 0; j < H; ++j) c[j] = fg[j] * c[j] + ig[j] * cg[j];
        if (p) {
            for (int64_t j = 0; j < H; ++j) og[j] += p[H + j] * c[j];
            clipArray(og, H, m_clip);
        }
        act[0].apply(og, H);
        std::memcpy(cell, c, size_t(H) * 4);
        act[2].apply(cell, H);
        for (int64_t j = 0; j < H; ++j) h[j] = og[j] * cell[j];
    }

    // Gates z, r, h (ONNX's order); g holds the pre-activations of z and r, then the gates.
    void gruStep(const float* gx, const float* gh, const Activation* act, const float* lateBias, const float* rd, int64_t H,
                 float* g, float* candidate, float* resetH, float* h) const {
        addArrays(gx, gh, g, 2 * H);
        clipArray(g, 2 * H, m_clip);
        act[0].apply(g, 2 * H);
        const float *z = g, *r = g + H;
        if (m_linearBeforeReset) {
            for (int64_t j = 0; j < H; ++j) candidate[j] = gx[2 * H + j] + r[j] * (gh[2 * H + j] + lateBias[j]);
        } else {  // the reset gate applies to H before the product with R_h
            for (int64_t j = 0; j < H; ++j) resetH[j] = r[j] * h[j];
            matrixTimesVector(H, H, rd + 2 * H * H, H, resetH, candidate);
            addArrays(candidate, gx + 2 * H, candidate, H);
        }
        clipArray(candidate, H, m_clip);
        act[1].apply(candidate, H);
        for (int64_t j = 0; j < H; ++j) h[j] = candidate[j] + z[j] * (h[j] - candidate[j]);
    }

private:
    Cell m_cell;
    bool m_quantized = false;  // DynamicQuantizeLSTM: W and R 8-bit, [dirs, K, 4 x hidden]
    struct DirectionWeights {
        QuantizedWeights w, r;
    };
    std::vector<DirectionWeights> m_directionWeights;  // per direction
    std::pair<const void*, const void*> m_packedFrom{};   // the constant W and R they hold
    int64_t m_hidden = 0;
    std::string m_direction;
    float m_clip = 0;
    bool m_inputForget = false;
    bool m_linearBeforeReset = false;
    int64_t m_layout = 0;
    std::vector<Activation> m_acts;
    GemmConstant m_w;                         // W as sgemm reads it fastest
};

}  // namespace
}  // namespace fsc::cpu

namespace fsc {
using namespace cpu;

void registerRnnKernels(KernelRegistry& r) {
    r.add("LSTM", factoryOf<RnnKernel>(Cell::Lstm, false), {.variant = "onednn"});
    r.add("GRU", factoryOf<RnnKernel>(Cell::Gru, false), {.variant = "onednn"});
    r.add("RNN", factoryOf<RnnKernel>(Cell::Rnn, false), {.variant = "onednn"});
    KernelDef quantized;
    quantized.domain = "com.microsoft";
    quantized.op = "DynamicQuantizeLSTM";
    quantized.factory = factoryOf<RnnKernel>(Cell::Lstm, true);
    r.add(std::move(quantized));
}

}  // namespace fsc
