#include "compiler/backends/cpu/conv_winograd.h"

#include <algorithm>
#include <atomic>

#include "compiler/backends/cpu/conv_onednn.h"
#include "compiler/backends/cpu/gemm.h"
#include "compiler/backends/cpu/onednn_isa.h"
#include "compiler/backends/cpu/relaid_constant.h"
#include "compiler/backends/cpu/vec16.h"
#include "compiler/runtime/thread_pool.h"

#pragma GCC diagnostic ignored "-Wpsabi"  // vectors inside always-inlined helpers only

namespace fsc::cpu {

namespace {

using vec16::Vec8;
constexpr int kLanes = 8;

std::atomic<uint64_t> g_runs{0};

// The transforms of F(m x m, 3 x 3), one dimension at a time, on 8 channels per vector:
// input: r = B^T d (t = m + 2 values to t), output: o = A^T p (t to m); kG is G (t x 3),
// which makes the weights' transform G g G^T. The points are Lavin's: 0, 1, -1 for m = 2;
// 0, 1, -1, 2, -2 and infinity for m = 4.
template <int M>
struct Transform;

template <>
struct Transform<2> {
    static constexpr int kT = 4;
    static constexpr double kG[kT][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
    [[gnu::always_inline]] static inline void input(const Vec8* d, int s, Vec8* r, int rs) {
        const Vec8 d0 = d[0], d1 = d[s], d2 = d[2 * s], d3 = d[3 * s];
        r[0] = d0 - d2;
        r[rs] = d1 + d2;
        r[2 * rs] = d2 - d1;
        r[3 * rs] = d1 - d3;
    }
    [[gnu::always_inline]] static inline void output(const Vec8* p, int s, Vec8* o, int os) {
        const Vec8 p1 = p[s], p2 = p[2 * s];
        o[0] = p[0] + p1 + p2;
        o[os] = p1 - p2 - p[3 * s];
    }
};

template <>
struct Transform<4> {
    static constexpr int kT = 6;
    static constexpr double kG[kT][3] = {{1.0 / 4, 0, 0},
                                         {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                         {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                         {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                         {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                         {0, 0, 1}};
    [[gnu::always_inline]] static inline void input(const Vec8* d, int s, Vec8* r, int rs) {
        const Vec8 d0 = d[0], d1 = d[s], d2 = d[2 * s], d3 = d[3 * s], d4 = d[4 * s], d5 = d[5 * s];
        r[0] = 4.f * d0 - 5.f * d2 + d4;
        r[rs] = (d3 + d4) - 4.f * (d1 + d2);
        r[2 * rs] = 4.f * (d1 - d2) + (d4 - d3);
        r[3 * rs] = 2.f * (d3 - d1) + (d4 - d2);
        r[4 * rs] = 2.f * (d1 - d3) + (d4 - d2);
        r[5 * rs] = 4.f * d1 - 5.f * d3 + d5;
    }
    [[gnu::always_inline]] static inline void output(const Vec8* p, int s, Vec8* o, int os) {
        const Vec8 p1 = p[s], p2 = p[2 * s], p3 = p[3 * s], p4 = p[4 * s];
        const Vec8 a = p1 + p2, b = p1 - p2, c = p3 + p4, d = p3 - p4;
        o[0] = p[0] + a + c;
        o[os] = b + 2.f * d;
        o[2 * os] = a + 4.f * c;
        o[3 * os] = b + 8.f * d + p[5 * s];
    }
};

// One run's geometry. Tiles are numbered image by image, row by row; a chunk is a run of
// whole tile rows, so its outputs are whole rows of Y.
struct Plan {
    int64_t n, c, k, ih, iw, oh, ow, ph, pw;
    int64_t tilesH, tilesW;
    int64_t ldu;  // between the transformed weights' rows
};

// The epilogue activations done on the vectors; the rest run over the chunk's rows after.
bool inlineActivation(const Activation& act) {
    using K = Activation::Kind;
    return act.kind == K::None || act.kind == K::Relu || act.kind == K::LeakyRelu ||
           act.kind == K::Clip;
}

// inputs [t * t, count, c] = B^T d B for each tile of [first, first + count) and 8 channels.
template <int M>
[[gnu::target("avx2,fma")]] void transformInputs(const Plan& p, const float* x, int64_t first,
                                                 int64_t count, int64_t begin, int64_t end,
                                                 float* inputs) {
    constexpr int T = Transform<M>::kT;
    const int64_t perImage = p.tilesH * p.tilesW, plane = count * p.c;
    for (int64_t local = begin; local < end; ++local) {
        const int64_t tile = first + local, img = tile / perImage;
        const int64_t ty = tile % perImage / p.tilesW, tx = tile % p.tilesW;
        const int64_t y0 = ty * M - p.ph, x0 = tx * M - p.pw;
        // The tile's rows and columns inside the image; the rest are the zero padding.
        const int i0 = int(std::max<int64_t>(0, -y0)), i1 = int(std::min<int64_t>(T, p.ih - y0));
        const int j0 = int(std::max<int64_t>(0, -x0)), j1 = int(std::min<int64_t>(T, p.iw - x0));
        const int64_t origin = ((img * p.ih + y0) * p.iw + x0) * p.c;  // (y0, x0) may be padding
        for (int64_t ch = 0; ch < p.c; ch += kLanes) {
            Vec8 d[T * T], rows[T * T];
            for (int i = 0; i < T; ++i)
                for (int j = 0; j < T; ++j)
                    d[i * T + j] = i >= i0 && i < i1 && j >= j0 && j < j1
                                       ? vec16::load<Vec8>(x + origin + (i * p.iw + j) * p.c + ch)
                                       : Vec8{};
            for (int j = 0; j < T; ++j) Transform<M>::input(d + j, T, rows + j, T);
            for (int i = 0; i < T; ++i) Transform<M>::input(rows + i * T, 1, d + i * T, 1);
            float* out = inputs + local * p.c + ch;
            for (int e = 0; e < T * T; ++e) vec16::store(out + e * plane, d[e]);
        }
    }
}

// y's tiles from products [t * t, count, k]: A^T P A, then the bias, z and the activation
// where it is one of inlineActivation's.
template <int M>
[[gnu::target("avx2,fma")]] void transformOutputs(const Plan& p, const float* products,
                                                  int64_t first, int64_t count, int64_t begin,
                                                  int64_t end, const float* bias, const float* z,
                                                  float* y, const Activation& act) {
    constexpr int T = Transform<M>::kT;
    using K = Activation::Kind;
    const int64_t perImage = p.tilesH * p.tilesW, plane = count * p.k;
    const bool inlined = inlineActivation(act);
    const Vec8 lo = Vec8{} + act.a, hi = Vec8{} + act.b;
    for (int64_t local = begin; local < end; ++local) {
        const int64_t tile = first + local, img = tile / perImage;
        const int64_t ty = tile % perImage / p.tilesW, tx = tile % p.tilesW;
        const int rows = int(std::min<int64_t>(M, p.oh - ty * M)),
                  cols = int(std::min<int64_t>(M, p.ow - tx * M));
        const int64_t at = ((img * p.oh + ty * M) * p.ow + tx * M) * p.k;
        for (int64_t ch = 0; ch < p.k; ch += kLanes) {
            Vec8 q[T * T], half[M * T], o[M * M];
            const float* in = products + local * p.k + ch;
            for (int e = 0; e < T * T; ++e) q[e] = vec16::load<Vec8>(in + e * plane);
            for (int j = 0; j < T; ++j) Transform<M>::output(q + j, T, half + j, T);
            for (int i = 0; i < M; ++i) Transform<M>::output(half + i * T, 1, o + i * M, 1);
            const Vec8 b = bias ? vec16::load<Vec8>(bias + ch) : Vec8{};
            for (int i = 0; i < rows; ++i)
                for (int j = 0; j < cols; ++j) {
                    const int64_t offset = at + (i * p.ow + j) * p.k + ch;
                    Vec8 v = o[i * M + j] + b;
                    if (z) v += vec16::load<Vec8>(z + offset);
                    if (inlined) switch (act.kind) {
                            case K::Relu:
                                v = v > 0.f ? v : Vec8{};
                                break;
                            case K::LeakyRelu:
                                v = v >= 0.f ? v : lo * v;
                                break;
                            case K::Clip:
                                v = v < lo ? lo : (v > hi ? hi : v);
                                break;
                            default:
                                break;
                        }
                    vec16::store(y + offset, v);
                }
        }
    }
}

// u [t * t, c, ldu] = G g G^T for each output channel's 3x3 window g over each input channel.
template <int M>
void transformWeights(ThreadPool& pool, const Plan& p, const float* w, float* u) {
    constexpr int T = Transform<M>::kT;
    const auto& G = Transform<M>::kG;
    pool.parallelFor(p.k, 8, [&](int64_t k0, int64_t k1) {
        for (int64_t ko = k0; ko < k1; ++ko)
            for (int64_t ci = 0; ci < p.c; ++ci) {
                const float* g = w + (ko * p.c + ci) * 9;
                double gg[T][3];  // G g
                for (int i = 0; i < T; ++i)
                    for (int b = 0; b < 3; ++b)
                        gg[i][b] = G[i][0] * g[b] + G[i][1] * g[3 + b] + G[i][2] * g[6 + b];
                for (int i = 0; i < T; ++i)
                    for (int j = 0; j < T; ++j)
                        u[((i * T + j) * p.c + ci) * p.ldu + ko] =
                            float(gg[i][0] * G[j][0] + gg[i][1] * G[j][1] + gg[i][2] * G[j][2]);
            }
    });
}

bool cpuHasIt() {
    static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return has && oneDnnIsaIncludes(dnnl_cpu_isa_avx2);
}

// A chunk's transformed inputs and products together stay within about this many bytes,
// about an L2's worth: ResNet-50's layers each take one chunk, a 1024 x 1024 image many.
constexpr int64_t kChunkBytes = int64_t(4) << 20;
// Past these the buffers grow too large to be worth it, and oneDNN's direct kernel takes the
// layer: one tile row's chunk (an image hundreds of thousands of pixels wide) or the
// transformed weights (thousands of channels).
constexpr int64_t kMostChunkBytes = int64_t(64) << 20, kMostWeightBytes = int64_t(256) << 20;

// A chunk of one tile row: its transformed inputs and products.
int64_t tileRowBytes(const Plan& p, int t) {
    return int64_t(t * t) * p.tilesW * (p.c + p.k) * int64_t(sizeof(float));
}

template <int M>
void runTiles(ThreadPool& pool, const Plan& p, const float* x, const float* u, const float* bias,
              const float* z, float* y, const Activation& act, std::vector<float>& inputs,
              std::vector<float>& products) {
    constexpr int T = Transform<M>::kT;
    const int64_t tileRows = p.n * p.tilesH;
    const int64_t rowsPerChunk = std::clamp<int64_t>(kChunkBytes / tileRowBytes(p, T), 1, tileRows);
    inputs.resize(size_t(T * T * rowsPerChunk * p.tilesW * p.c));
    products.resize(size_t(T * T * rowsPerChunk * p.tilesW * p.k));
    const int64_t tileGrain = std::max<int64_t>(1, 4096 / (T * T * std::max(p.c, p.k)));
    for (int64_t row = 0; row < tileRows; row += rowsPerChunk) {
        const int64_t first = row * p.tilesW,
                      count = std::min(rowsPerChunk, tileRows - row) * p.tilesW;
        pool.parallelFor(count, tileGrain, [&](int64_t b, int64_t e) {
            transformInputs<M>(p, x, first, count, b, e, inputs.data());
        });
        // One single-threaded GEMM per item: a point's product, or a block of its rows where
        // the points alone would leave threads idle (36 or 16 of them over many cores).
        const int64_t blocks = std::clamp<int64_t>((4 * pool.size() + T * T - 1) / (T * T), 1,
                                                   std::max<int64_t>(1, count / 32));
        const int64_t blockRows = (count + blocks - 1) / blocks;
        pool.parallelFor(T * T * blocks, 1, [&](int64_t b, int64_t e) {
            for (int64_t item = b; item < e; ++item) {
                const int64_t point = item / blocks, r0 = item % blocks * blockRows,
                              rows = std::min(blockRows, count - r0);
                if (rows <= 0) continue;
                gemm(false, false, rows, p.k, p.c, 1.f, inputs.data() + (point * count + r0) * p.c,
                     p.c, u + point * p.c * p.ldu, p.ldu, 0.f,
                     products.data() + (point * count + r0) * p.k, p.k);
            }
        });
        pool.parallelFor(count, tileGrain, [&](int64_t b, int64_t e) {
            transformOutputs<M>(p, products.data(), first, count, b, e, bias, z, y, act);
        });
        if (!inlineActivation(act)) {
            // The chunk's outputs are whole rows of Y, one run of memory per image.
            for (int64_t r = row; r < std::min(row + rowsPerChunk, tileRows);) {
                const int64_t img = r / p.tilesH,
                              last = std::min({row + rowsPerChunk, tileRows, (img + 1) * p.tilesH});
                const int64_t y0 = (r % p.tilesH) * M,
                              y1 = std::min(p.oh, (last - img * p.tilesH) * M);
                float* begin = y + (img * p.oh + y0) * p.ow * p.k;
                pool.parallelFor((y1 - y0) * p.ow * p.k, 16384,
                                 [&](int64_t b, int64_t e) { act.apply(begin + b, e - b); });
                r = last;
            }
        }
    }
}

}  // namespace

int WinogradConv::tileFor(const NhwcWindow& s, int64_t outChannels, int64_t group) {
    if (group != 1 || s.kh != 3 || s.kw != 3 || s.sh != 1 || s.sw != 1 || s.dh != 1 || s.dw != 1)
        return 0;
    if (s.c % kLanes || outChannels % kLanes || !cpuHasIt() || OneDnnConv::hasAvx512()) return 0;
    const int64_t side = std::min(s.oh, s.ow);
    return side >= 28 ? 4 : side >= 14 ? 2 : 0;
}

uint64_t WinogradConv::runs() {
    return g_runs;
}

bool WinogradConv::run(ThreadPool& pool, const NhwcWindow& s, int64_t outChannels, int tile,
                       const float* x, const float* w, bool weightsConstant, const float* bias,
                       const float* z, float* y, const Activation& act) {
    if (s.kh != 3 || s.kw != 3 || s.sh != 1 || s.sw != 1 || s.dh != 1 || s.dw != 1) return false;
    if (s.c % kLanes || outChannels % kLanes || (tile != 2 && tile != 4) || !cpuHasIt())
        return false;
    if (s.n * s.oh * s.ow * outChannels == 0) return true;
    const int t = tile + 2;
    const Plan p{.n = s.n,
                 .c = s.c,
                 .k = outChannels,
                 .ih = s.ih,
                 .iw = s.iw,
                 .oh = s.oh,
                 .ow = s.ow,
                 .ph = s.ph,
                 .pw = s.pw,
                 .tilesH = (s.oh + tile - 1) / tile,
                 .tilesW = (s.ow + tile - 1) / tile,
                 .ldu = unaliasedStride(outChannels)};
    if (tileRowBytes(p, t) > kMostChunkBytes || int64_t(t * t) * p.c * p.ldu * 4 > kMostWeightBytes)
        return false;
    std::lock_guard lock(m_mutex);
    const bool kept = weightsConstant && m_uOf == w && m_uTile == tile &&
                      m_u.size() == size_t(t * t * p.c * p.ldu);
    if (!kept) {
        m_u.assign(size_t(t * t * p.c * p.ldu), 0.f);
        if (tile == 4)
            transformWeights<4>(pool, p, w, m_u.data());
        else
            transformWeights<2>(pool, p, w, m_u.data());
        m_uOf = weightsConstant ? w : nullptr;
        m_uTile = tile;
    }
    // The chunk buffers are the calling thread's, shared by every layer it runs: each
    // layer's own would hold up to 2 * kChunkBytes for the model's lifetime.
    thread_local std::vector<float> inputs, products;
    if (tile == 4)
        runTiles<4>(pool, p, x, m_u.data(), bias, z, y, act, inputs, products);
    else
        runTiles<2>(pool, p, x, m_u.data(), bias, z, y, act, inputs, products);
    ++g_runs;
    return true;
}

}  // namespace fsc::cpu
