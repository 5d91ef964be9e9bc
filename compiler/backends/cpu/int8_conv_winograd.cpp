#include "compiler/backends/cpu/int8_conv_winograd.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "compiler/backends/cpu/gemm.h"
#include "compiler/runtime/rt_tensor.h"
#include "compiler/runtime/thread_pool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#pragma GCC diagnostic ignored "-Wpsabi"  // vectors inside always-inlined helpers only

namespace fsc::cpu {

namespace {

std::atomic<uint64_t> g_runs{0};

constexpr int kT = 4, kPoints = kT * kT;  // F(2x2, 3x3): 4x4 input tiles, 2x2 outputs
typedef int16_t I16x16 __attribute__((vector_size(32)));
typedef uint32_t U32x8 __attribute__((vector_size(32)));
typedef int32_t I32x8 __attribute__((vector_size(32)));

// One run's geometry: the image padded so that every tile lies inside it.
struct Plan {
    int64_t n, c, k, oh, ow, tilesH, tilesW, paddedH, paddedW;
    int64_t tiles() const { return n * tilesH * tilesW; }
};

// x - x_zero_point as int16, [n, paddedH, paddedW, c] with the padding (and what the last
// tiles reach past the image) zero: NHWC so that 16 channels fill a vector.
void widenImage(ThreadPool& pool, const Plan& p, const ConvGeometry& g, const RtTensor& x,
                int32_t zero, int16_t* out) {
    const int64_t h = g.in[0], w = g.in[1];
    const bool isUint8 = x.dtype == DType::UInt8;
    const uint8_t* u8 = static_cast<const uint8_t*>(x.data);
    const int8_t* s8 = static_cast<const int8_t*>(x.data);
    pool.parallelFor(p.n * p.paddedH, 1, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const int64_t img = r / p.paddedH, y = r % p.paddedH - g.padBegin[0];
            int16_t* row = out + r * p.paddedW * p.c;
            std::memset(row, 0, size_t(p.paddedW * p.c) * sizeof(int16_t));
            if (y < 0 || y >= h) continue;
            for (int64_t ch = 0; ch < p.c; ++ch) {
                const int64_t plane = ((img * p.c + ch) * h + y) * w;
                int16_t* at = row + g.padBegin[1] * p.c + ch;
                if (isUint8)
                    for (int64_t i = 0; i < w; ++i)
                        at[i * p.c] = int16_t(int32_t(u8[plane + i]) - zero);
                else
                    for (int64_t i = 0; i < w; ++i)
                        at[i * p.c] = int16_t(int32_t(s8[plane + i]) - zero);
            }
        }
    });
}

// inputs [16, tiles, c] = B^T d B for tiles [begin, end), 16 channels per vector; `inputs`
// holds tiles from `first` on, `plane` values per transform point.
[[gnu::target("avx2")]] void transformInputs(const Plan& p, const int16_t* image, int64_t begin,
                                             int64_t end, int16_t* inputs, int64_t first, int64_t plane) {
    const int64_t perImage = p.tilesH * p.tilesW;
    for (int64_t tile = begin; tile < end; ++tile) {
        const int64_t img = tile / perImage, ty = tile % perImage / p.tilesW, tx = tile % p.tilesW;
        const int16_t* origin = image + ((img * p.paddedH + 2 * ty) * p.paddedW + 2 * tx) * p.c;
        for (int64_t ch = 0; ch < p.c; ch += 16) {
            I16x16 d[kPoints], r[kPoints];
            for (int i = 0; i < kT; ++i)
                for (int j = 0; j < kT; ++j)
                    std::memcpy(&d[i * kT + j], origin + (i * p.paddedW + j) * p.c + ch, 32);
            for (int j = 0; j < kT; ++j) {  // B^T's rows: 1 0 -1 0, 0 1 1 0, 0 -1 1 0, 0 1 0 -1
                r[j] = d[j] - d[2 * kT + j];
                r[kT + j] = d[kT + j] + d[2 * kT + j];
                r[2 * kT + j] = d[2 * kT + j] - d[kT + j];
                r[3 * kT + j] = d[kT + j] - d[3 * kT + j];
            }
            for (int i = 0; i < kT; ++i) {
                const I16x16* q = r + i * kT;
                d[i * kT] = q[0] - q[2];
                d[i * kT + 1] = q[1] + q[2];
                d[i * kT + 2] = q[2] - q[1];
                d[i * kT + 3] = q[1] - q[3];
            }
            int16_t* out = inputs + (tile - first) * p.c + ch;
            for (int e = 0; e < kPoints; ++e) std::memcpy(out + e * plane, &d[e], 32);
        }
    }
}

// products[point] rows [i0, i0 + R) x columns [k0, k0 + 16) = inputs[point] . weights[point],
// the weights as int32 words of two consecutive channels' int16 (one vpmaddwd each).
template <int R>
[[gnu::target("avx2"), gnu::always_inline]] inline void productTile(const int16_t* a, int64_t lda,
                                                                    const int32_t* b, int64_t ldb,
                                                                    int64_t pairs, int32_t* c,
                                                                    int64_t ldc) {
    // Unrolled, so that the accumulators stay in registers (12 of the 16 at R = 6).
    __m256i acc[R][2];
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    for (int64_t q = 0; q < pairs; ++q) {
        const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + q * ldb));
        const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + q * ldb + 8));
#pragma GCC unroll 6
        for (int r = 0; r < R; ++r) {
            int32_t word;
            std::memcpy(&word, a + r * lda + 2 * q, sizeof word);
            const __m256i av = _mm256_set1_epi32(word);
            acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(av, b0));
            acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(av, b1));
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + r * ldc), acc[r][0]);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + r * ldc + 8), acc[r][1]);
    }
}

[[gnu::target("avx2")]] void multiplyPanel(const int16_t* a, int64_t rows, int64_t c,
                                           const int32_t* b, int64_t k, int32_t* out) {
    const int64_t pairs = c / 2;
    int64_t i = 0;
    for (; i + 6 <= rows; i += 6) productTile<6>(a + i * c, c, b, k, pairs, out + i * k, k);
    switch (rows - i) {
        case 5:
            productTile<5>(a + i * c, c, b, k, pairs, out + i * k, k);
            break;
        case 4:
            productTile<4>(a + i * c, c, b, k, pairs, out + i * k, k);
            break;
        case 3:
            productTile<3>(a + i * c, c, b, k, pairs, out + i * k, k);
            break;
        case 2:
            productTile<2>(a + i * c, c, b, k, pairs, out + i * k, k);
            break;
        case 1:
            productTile<1>(a + i * c, c, b, k, pairs, out + i * k, k);
            break;
        default:
            break;
    }
}

// y's 2x2 outputs of tiles [begin, end) from products [16, tiles, k] (tiles from `first`
// on, `plane` values per transform point): A^T P A (rows 1 1 1 0, 0 1 -1 -1) in wrapping
// arithmetic, then / 4, written into NCHW planes.
[[gnu::target("avx2")]] void transformOutputs(const Plan& p, const int32_t* products, int64_t begin,
                                              int64_t end, int32_t* y, int64_t first, int64_t plane) {
    const int64_t perImage = p.tilesH * p.tilesW, outPlane = p.oh * p.ow;
    for (int64_t tile = begin; tile < end; ++tile) {
        const int64_t img = tile / perImage, ty = tile % perImage / p.tilesW, tx = tile % p.tilesW;
        const int rows = int(std::min<int64_t>(2, p.oh - 2 * ty)),
                  cols = int(std::min<int64_t>(2, p.ow - 2 * tx));
        for (int64_t ch = 0; ch < p.k; ch += 8) {
            U32x8 q[kPoints], half[2 * kT];
            for (int e = 0; e < kPoints; ++e)
                std::memcpy(&q[e], products + e * plane + (tile - first) * p.k + ch, 32);
            for (int j = 0; j < kT; ++j) {
                half[j] = q[j] + q[kT + j] + q[2 * kT + j];
                half[kT + j] = q[kT + j] - q[2 * kT + j] - q[3 * kT + j];
            }
            I32x8 o[4];
            for (int i = 0; i < 2; ++i) {
                const U32x8* h = half + i * kT;
                o[2 * i] = I32x8(h[0] + h[1] + h[2]) >> 2;
                o[2 * i + 1] = I32x8(h[1] - h[2] - h[3]) >> 2;
            }
            alignas(32) int32_t lanes[4][8];
            std::memcpy(lanes, o, sizeof lanes);
            int32_t* at = y + (img * p.k + ch) * outPlane + 2 * ty * p.ow + 2 * tx;
            for (int i = 0; i < rows; ++i)
                for (int j = 0; j < cols; ++j)
                    for (int l = 0; l < 8; ++l)
                        at[l * outPlane + i * p.ow + j] = lanes[2 * i + j][l];
        }
    }
}

bool cpuTakesIt() {
#if defined(__x86_64__) || defined(__i386__)
    static const bool avx2 = __builtin_cpu_supports("avx2");
    return avx2;
#else
    return false;
#endif
}

}  // namespace

// The weights, transformed: [16, c / 2, k] words of two channels' int16, (2G) g (2G)^T.
struct Int8Winograd::Weights {
    const void* of = nullptr;  // the constant weights they were made from, or null
    int64_t c = 0, k = 0;
    std::vector<int32_t> words;
    int32_t largest = 0;  // the largest magnitude among them
};

Int8Winograd::Int8Winograd() = default;
Int8Winograd::~Int8Winograd() = default;

uint64_t Int8Winograd::runs() {
    return g_runs;
}

bool Int8Winograd::run(ThreadPool& pool, const ConvGeometry& g, int64_t group, const RtTensor& x,
                       const RtTensor* xZero, const RtTensor& w, const RtTensor* wZero,
                       bool weightsConstant, int32_t* y) {
    // With VNNI the int8 kernels multiply four bytes a lane per instruction; below 14x14
    // outputs too few tiles pay for the transforms.
    if (oneDnnInt8IsExact() || g.out.size() != 2 || std::min(g.out[0], g.out[1]) < 14) return false;
    return runAnywhere(pool, g, group, x, xZero, w, wZero, weightsConstant, y);
}

bool Int8Winograd::runAnywhere(ThreadPool& pool, const ConvGeometry& g, int64_t group,
                               const RtTensor& x, const RtTensor* xZero, const RtTensor& w,
                               const RtTensor* wZero, bool weightsConstant, int32_t* y) {
    if (!cpuTakesIt() || group != 1 || g.in.size() != 2 || x.rank() != 4 || w.rank() != 4)
        return false;
    for (size_t d = 0; d < 2; ++d)
        if (g.kernel[d] != 3 || g.strides[d] != 1 || g.dilations[d] != 1) return false;
    const int64_t c = x.dims[1], k = w.dims[0];
    if (c % 16 || k % 16 || w.dims[1] != c) return false;
    auto eightBit = [](const RtTensor& t) {
        return t.dtype == DType::Int8 || t.dtype == DType::UInt8;
    };
    // One zero point each, or per channel when all are 0 (symmetric per-channel weights).
    auto oneZero = [](const RtTensor* zero, int32_t& value) {
        value = zero && zero->numel() > 0 ? int32_t(elementAsInt(*zero, 0)) : 0;
        for (int64_t i = 1; zero && i < zero->numel(); ++i)
            if (elementAsInt(*zero, i) != value) return false;
        return true;
    };
    int32_t xz = 0, wz = 0;
    if (!eightBit(x) || !eightBit(w) || !oneZero(xZero, xz) || !oneZero(wZero, wz)) return false;

    std::lock_guard lock(m_mutex);
    if (!m_weights || !weightsConstant || m_weights->of != w.data || m_weights->c != c ||
        m_weights->k != k) {
        auto made = std::make_unique<Weights>();
        made->of = weightsConstant ? w.data : nullptr;
        made->c = c;
        made->k = k;
        made->words.assign(size_t(kPoints * (c / 2) * k), 0);
        int16_t* halves = reinterpret_cast<int16_t*>(made->words.data());
        int32_t largest = 0, weightLargest = 0;
        for (int64_t ko = 0; ko < k; ++ko)
            for (int64_t ci = 0; ci < c; ++ci) {
                int32_t gw[9], gg[kT][3];
                for (int e = 0; e < 9; ++e) {
                    const int64_t at = (ko * c + ci) * 9 + e;
                    gw[e] = (w.dtype == DType::UInt8 ? int32_t(w.as<uint8_t>()[at])
                                                     : int32_t(w.as<int8_t>()[at])) -
                            wz;
                    weightLargest = std::max(weightLargest, std::abs(gw[e]));
                }
                for (int b = 0; b < 3; ++b) {  // (2G) g
                    gg[0][b] = 2 * gw[b];
                    gg[1][b] = gw[b] + gw[3 + b] + gw[6 + b];
                    gg[2][b] = gw[b] - gw[3 + b] + gw[6 + b];
                    gg[3][b] = 2 * gw[6 + b];
                }
                for (int i = 0; i < kT; ++i) {
                    const int32_t row[kT] = {2 * gg[i][0], gg[i][0] + gg[i][1] + gg[i][2],
                                             gg[i][0] - gg[i][1] + gg[i][2], 2 * gg[i][2]};
                    for (int j = 0; j < kT; ++j) {
                        // word (point, ci / 2, ko), half ci % 2
                        halves[((int64_t(i * kT + j) * (c / 2) + ci / 2) * k + ko) * 2 + ci % 2] =
                            int16_t(row[j]);
                        largest = std::max(largest, std::abs(row[j]));
                    }
                }
            }
        // Weights within [-64, 64] of their zero point go to the byte kernel, faster there.
        made->largest = weightLargest <= 64 ? -1 : largest;
        m_weights = std::move(made);
    }
    if (m_weights->largest < 0) return false;
    // A tile's transformed inputs are at most 4 x 255 in magnitude.
    if (int64_t(c) * 4 * 255 * m_weights->largest >= (int64_t(1) << 31)) return false;

    Plan p{};
    p.n = x.dims[0];
    p.c = c;
    p.k = k;
    p.oh = g.out[0];
    p.ow = g.out[1];
    p.tilesH = (p.oh + 1) / 2;
    p.tilesW = (p.ow + 1) / 2;
    p.paddedH = 2 * p.tilesH + 2;
    p.paddedW = 2 * p.tilesW + 2;
    // The image and the whole-layer route's buffers are the calling thread's, shared by every
    // layer it runs; a layer whose buffers would pass 64 MiB is left to the GEMM.
    const int64_t imageSize = p.n * p.paddedH * p.paddedW * c, inputsSize = kPoints * p.tiles() * c;
    const int64_t productsSize = kPoints * p.tiles() * k;
    if ((imageSize + inputsSize) * 2 + productsSize * 4 > (int64_t(64) << 20)) return false;
    thread_local std::vector<int16_t> imageBuffer;
    imageBuffer.resize(size_t(imageSize));
    // The pool's threads see their own thread_locals: they get this pointer.
    int16_t* image = imageBuffer.data();
    widenImage(pool, p, g, x, xz, image);
    const int64_t panels = k / 16;
    const int32_t* weights = m_weights->words.data();
    // Tiles [t0, t1) start to finish: transformed, multiplied at every point, transformed back.
    auto runTiles = [&](int64_t t0, int64_t t1, int16_t* in, int32_t* prod) {
        const int64_t n = t1 - t0;
        transformInputs(p, image, t0, t1, in, t0, n * c);
        for (int64_t point = 0; point < kPoints; ++point)
            for (int64_t k0 = 0; k0 < k; k0 += 16)
                multiplyPanel(in + point * n * c, n, c, weights + point * (c / 2) * k + k0, k, prod + point * n * k + k0);
        transformOutputs(p, prod, t0, t1, y, t0, n * k);
    };
    // Where there are tiles enough and the transformed weights are small, each thread runs
    // whole chunks of tiles in buffers of its own that stay in its L2 (up to 1 MiB of
    // transformed inputs and products), the same number of chunks each. Otherwise the whole
    // layer's buffers go through memory between the steps, shared by the threads.
    constexpr int64_t kChunkBytes = int64_t(1) << 20, kMinChunkTiles = 16;
    const int64_t perTile = kPoints * (c * int64_t(sizeof(int16_t)) + k * int64_t(sizeof(int32_t)));
    const int64_t threads = pool.size();
    const int64_t chunks = ((p.tiles() * perTile + kChunkBytes - 1) / kChunkBytes + threads - 1) / threads * threads;
    const int64_t chunkTiles = (p.tiles() + chunks - 1) / chunks;
    const bool smallWeights = kPoints * c * k * int64_t(sizeof(int16_t)) <= kChunkBytes;
    if (smallWeights && chunkTiles >= kMinChunkTiles) {
        pool.parallelFor(chunks, 1, [&](int64_t b, int64_t e) {
            thread_local std::vector<int16_t> chunkInputs;
            thread_local std::vector<int32_t> chunkProducts;
            chunkInputs.resize(size_t(kPoints * chunkTiles * c));
            chunkProducts.resize(size_t(kPoints * chunkTiles * k));
            for (int64_t chunk = b; chunk < e; ++chunk)
                runTiles(chunk * chunkTiles, std::min(p.tiles(), (chunk + 1) * chunkTiles), chunkInputs.data(),
                         chunkProducts.data());
        });
        ++g_runs;
        return true;
    }
    // Few tiles or large weights (layer 3's 14 x 14 outputs, 256 channels): each step across
    // the threads over all the tiles.
    thread_local std::vector<int16_t> inputsBuffer;
    thread_local std::vector<int32_t> productsBuffer;
    inputsBuffer.resize(size_t(inputsSize));
    productsBuffer.resize(size_t(productsSize));
    int16_t* inputs = inputsBuffer.data();
    int32_t* products = productsBuffer.data();
    const int64_t grain = std::max<int64_t>(1, 2048 / c), plane = p.tiles();
    pool.parallelFor(p.tiles(), grain,
                     [&](int64_t b, int64_t e) { transformInputs(p, image, b, e, inputs, 0, plane * c); });
    pool.parallelFor(kPoints * panels, 1, [&](int64_t b, int64_t e) {
        for (int64_t item = b; item < e; ++item) {
            const int64_t point = item / panels, k0 = item % panels * 16;
            multiplyPanel(inputs + point * plane * c, plane, c, weights + point * (c / 2) * k + k0, k,
                          products + point * plane * k + k0);
        }
    });
    pool.parallelFor(p.tiles(), grain,
                     [&](int64_t b, int64_t e) { transformOutputs(p, products, b, e, y, 0, plane * k); });
    ++g_runs;
    return true;
}

}  // namespace fsc::cpu
