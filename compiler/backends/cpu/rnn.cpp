// Recurrent layers: LSTM, GRU and RNN (forward, reverse, bidirectional; sequence_lens,
// initial states, peepholes, clip, custom activations, layout 0 and 1). The input
// projection of every time step is one matrix product; each step adds H * R^T.
#include <cmath>

#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/backends/cpu/gemm.h"

namespace fsc::cpu {
namespace {

enum class Cell { Lstm, Gru, Rnn };

struct Activation {
    std::string name;
    float alpha = 0, beta = 0;
    float operator()(float v) const {
        if (name == "Sigmoid") return 1.0f / (1.0f + std::exp(-v));
        if (name == "Tanh") return std::tanh(v);
        if (name == "Relu") return std::max(0.0f, v);
        if (name == "Affine") return alpha * v + beta;
        if (name == "LeakyRelu") return v < 0 ? alpha * v : v;
        if (name == "ThresholdedRelu") return v > alpha ? v : 0.0f;
        if (name == "ScaledTanh") return alpha * std::tanh(beta * v);
        if (name == "HardSigmoid") return std::max(0.0f, std::min(1.0f, alpha * v + beta));
        if (name == "Elu") return v < 0 ? alpha * (std::exp(v) - 1) : v;
        if (name == "Softsign") return v / (1 + std::fabs(v));
        if (name == "Softplus") return std::log1p(std::exp(v));
        return v;
    }
};

bool knownActivation(const std::string& n) {
    for (const char* k : {"Sigmoid", "Tanh", "Relu", "Affine", "LeakyRelu", "ThresholdedRelu", "ScaledTanh", "HardSigmoid", "Elu", "Softsign", "Softplus"})
        if (n == k) return true;
    return false;
}

class RnnKernel : public Kernel {
public:
    RnnKernel(const KernelInit& init, Cell cell, Status& status) : m_cell(cell) {
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
            Activation a{names[i]};
            // Defaults per ONNX's activation list.
            if (a.name == "LeakyRelu") a.alpha = 0.01f;
            if (a.name == "ThresholdedRelu" || a.name == "Elu") a.alpha = 1.0f;
            if (a.name == "HardSigmoid") { a.alpha = 0.2f; a.beta = 0.5f; }
            if (a.name == "ScaledTanh" || a.name == "Affine") { a.alpha = 1.0f; a.beta = 1.0f; }
            if (i < alphas.size()) a.alpha = alphas[i];
            if (i < betas.size()) a.beta = betas[i];
            if (!knownActivation(a.name)) status = init.invalid("unknown activation '" + a.name + "'");
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
        const int64_t gates = m_cell == Cell::Lstm ? 4 : (m_cell == Cell::Gru ? 3 : 1);
        const int64_t seq = m_layout ? X->dims[1] : X->dims[0];
        const int64_t batch = m_layout ? X->dims[0] : X->dims[1];
        const int64_t in = X->dims[2];
        const int64_t H = m_hidden ? m_hidden : R->dims.back();
        const int64_t dirs = m_direction == "bidirectional" ? 2 : 1;
        if (W->dims != std::vector<int64_t>{dirs, gates * H, in} || R->dims != std::vector<int64_t>{dirs, gates * H, H})
            return bad(ctx, "W " + dimsString(W->dims) + " or R " + dimsString(R->dims) + " do not fit hidden_size " + std::to_string(H));
        const RtTensor* B = ctx.input(3);
        const RtTensor* lens = ctx.input(4);
        const RtTensor* h0 = ctx.input(5);
        const RtTensor* c0 = m_cell == Cell::Lstm ? ctx.input(6) : nullptr;
        const RtTensor* P = m_cell == Cell::Lstm ? ctx.input(7) : nullptr;

        std::vector<int64_t> seqLens(size_t(batch), seq);
        if (lens)
            for (int64_t b = 0; b < batch; ++b) seqLens[size_t(b)] = std::clamp<int64_t>(elementAsInt(*lens, b), 0, seq);

        // Inputs as [seq, batch, in] whatever the layout.
        std::vector<float> x(size_t(seq * batch * in));
        for (int64_t t = 0; t < seq; ++t)
            for (int64_t b = 0; b < batch; ++b)
                std::memcpy(&x[size_t((t * batch + b) * in)], X->as<float>() + (m_layout ? (b * seq + t) : (t * batch + b)) * in, size_t(in) * 4);

        std::vector<float> Y(size_t(seq * dirs * batch * H), 0.0f), Yh(size_t(dirs * batch * H)), Yc(size_t(dirs * batch * H));
        std::vector<float> xw(size_t(seq * batch * gates * H)), hr(size_t(batch * gates * H));
        for (int64_t d = 0; d < dirs; ++d) {
            const bool reverse = m_direction == "reverse" || d == 1;
            const float* w = W->as<float>() + d * gates * H * in;
            const float* r = R->as<float>() + d * gates * H * H;
            std::vector<float> wb(size_t(gates * H), 0.0f), rb(size_t(gates * H), 0.0f);
            if (B)
                for (int64_t i = 0; i < gates * H; ++i) {
                    wb[size_t(i)] = B->as<float>()[d * 2 * gates * H + i];
                    rb[size_t(i)] = B->as<float>()[d * 2 * gates * H + gates * H + i];
                }
            std::vector<float> h(size_t(batch * H), 0.0f), c(size_t(batch * H), 0.0f);
            if (h0) std::memcpy(h.data(), h0->as<float>() + d * batch * H, size_t(batch * H) * 4);
            if (c0) std::memcpy(c.data(), c0->as<float>() + d * batch * H, size_t(batch * H) * 4);
            const float* p = P ? P->as<float>() + d * 3 * H : nullptr;
            const Activation* act = &m_acts[size_t(d) * (m_acts.size() / size_t(dirs))];
            gemm(false, true, seq * batch, gates * H, in, 1.0f, x.data(), in, w, in, 0.0f, xw.data(), gates * H);
            for (int64_t s = 0; s < seq; ++s) {
                gemm(false, true, batch, gates * H, H, 1.0f, h.data(), H, r, H, 0.0f, hr.data(), gates * H);
                for (int64_t b = 0; b < batch; ++b) {
                    const int64_t len = seqLens[size_t(b)];
                    if (s >= len) continue;
                    const int64_t t = reverse ? len - 1 - s : s;
                    const float* gx = &xw[size_t((t * batch + b) * gates * H)];
                    const float* gh = &hr[size_t(b * gates * H)];
                    float* hb = &h[size_t(b * H)];
                    float* cb = &c[size_t(b * H)];
                    auto clip = [&](float v) { return m_clip > 0 ? std::clamp(v, -m_clip, m_clip) : v; };
                    if (m_cell == Cell::Lstm) {
                        for (int64_t j = 0; j < H; ++j) {
                            auto g = [&](int64_t k) { return clip(gx[k * H + j] + gh[k * H + j] + wb[size_t(k * H + j)] + rb[size_t(k * H + j)]); };
                            float ig = g(0), og = g(1), fg = g(2), cg = g(3);
                            if (p) {
                                ig += p[j] * cb[j];
                                fg += p[2 * H + j] * cb[j];
                            }
                            ig = act[0](clip(ig));
                            fg = m_inputForget ? 1 - ig : act[0](clip(fg));
                            const float cc = act[1](cg);
                            const float cNew = fg * cb[j] + ig * cc;
                            if (p) og += p[H + j] * cNew;
                            og = act[0](clip(og));
                            cb[j] = cNew;
                            hb[j] = og * act[2](cNew);
                        }
                    } else if (m_cell == Cell::Gru) {
                        std::vector<float>& z = m_z;
                        std::vector<float>& rg = m_r;
                        std::vector<float>& newH = m_newH;
                        z.resize(size_t(H));
                        rg.resize(size_t(H));
                        newH.resize(size_t(H));
                        for (int64_t j = 0; j < H; ++j) {
                            z[size_t(j)] = act[0](clip(gx[j] + gh[j] + wb[size_t(j)] + rb[size_t(j)]));
                            rg[size_t(j)] = act[0](clip(gx[H + j] + gh[H + j] + wb[size_t(H + j)] + rb[size_t(H + j)]));
                        }
                        for (int64_t j = 0; j < H; ++j) {
                            float pre;
                            if (m_linearBeforeReset) {
                                pre = gx[2 * H + j] + wb[size_t(2 * H + j)] + rg[size_t(j)] * (gh[2 * H + j] + rb[size_t(2 * H + j)]);
                            } else {  // the reset gate applies to H before the product with R_h
                                const float* rh = r + (2 * H + j) * H;
                                float acc = 0;
                                for (int64_t k = 0; k < H; ++k) acc += rh[k] * rg[size_t(k)] * hb[k];
                                pre = gx[2 * H + j] + wb[size_t(2 * H + j)] + acc + rb[size_t(2 * H + j)];
                            }
                            const float hh = act[1](clip(pre));
                            newH[size_t(j)] = (1 - z[size_t(j)]) * hh + z[size_t(j)] * hb[j];
                        }
                        std::memcpy(hb, newH.data(), size_t(H) * 4);
                    } else {
                        for (int64_t j = 0; j < H; ++j) hb[j] = act[0](clip(gx[j] + gh[j] + wb[size_t(j)] + rb[size_t(j)]));
                    }
                    std::memcpy(&Y[size_t(((t * dirs + d) * batch + b) * H)], hb, size_t(H) * 4);
                }
            }
            std::memcpy(&Yh[size_t(d * batch * H)], h.data(), size_t(batch * H) * 4);
            std::memcpy(&Yc[size_t(d * batch * H)], c.data(), size_t(batch * H) * 4);
        }
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
    Cell m_cell;
    int64_t m_hidden = 0;
    std::string m_direction;
    float m_clip = 0;
    bool m_inputForget = false;
    bool m_linearBeforeReset = false;
    int64_t m_layout = 0;
    std::vector<Activation> m_acts;
    std::vector<float> m_newH, m_z, m_r;  // GRU scratch per batch row
};

}  // namespace
}  // namespace fsc::cpu

namespace fsc {
using namespace cpu;

void registerRnnKernels(KernelRegistry& r) {
    r.add("LSTM", factoryOf<RnnKernel>(Cell::Lstm), {.variant = "onednn"});
    r.add("GRU", factoryOf<RnnKernel>(Cell::Gru), {.variant = "onednn"});
    r.add("RNN", factoryOf<RnnKernel>(Cell::Rnn), {.variant = "onednn"});
}

}  // namespace fsc
