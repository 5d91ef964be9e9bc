// com.microsoft.MatMulNBits (A, B, scales, zero_points, g_idx, bias): A times a weight stored
// in 2, 4 or 8 bits per value, blocks of block_size values along K sharing a scale and a zero
// point. What ONNX Runtime's weight-only quantizer (matmul_4bits_quantizer, Olive) and
// onnxruntime-genai write for LLM weights. Value k of output column n is
//   (code - zero_point) x scale, codes packed low bits first along K in B[n][block][byte];
// zero points packed the same way in uint8 (default 2^(bits - 1)), or in the scales' type.
// Within the shared copy budget of relaid_constant.h the weights are dequantized once; past
// it, a few rows (decoding one token) dequantize each column into its dot products, more rows
// a stripe of columns at a time for the float GEMM.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "compiler/backends/cpu/contrib_kernels.h"
#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/backends/cpu/gemm.h"
#include "compiler/backends/cpu/relaid_constant.h"
#include "compiler/backends/cpu/thread_scratch.h"
#include "compiler/runtime/thread_pool.h"

namespace fsc::cpu {
namespace {

// GCC 12 warns of the intrinsics' own undefined-vector starts.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
// 4-bit codes to floats through the block's 16-entry table, 32 codes (16 bytes) a step: each
// byte's low code, then its high one. `pairs` bytes, a multiple of 16.
[[gnu::target("avx512f")]] void dequantize4Avx512(const uint8_t* blob, int64_t pairs, const float* table, float* out) {
    const __m512 t = _mm512_loadu_ps(table);
    const __m512i lowCodes = _mm512_set1_epi32(15);
    // Output lanes alternate the low code's value (index i) and the high code's (16 + i).
    const __m512i first = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i second = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    for (int64_t j = 0; j < pairs; j += 16) {
        const __m512i bytes = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blob + j)));
        const __m512 lo = _mm512_permutexvar_ps(_mm512_and_si512(bytes, lowCodes), t);
        const __m512 hi = _mm512_permutexvar_ps(_mm512_srli_epi32(bytes, 4), t);
        _mm512_storeu_ps(out + 2 * j, _mm512_permutex2var_ps(lo, first, hi));
        _mm512_storeu_ps(out + 2 * j + 16, _mm512_permutex2var_ps(lo, second, hi));
    }
}

// One column's dot products with up to four rows of A, straight from its 4-bit codes: each
// code as a float times its block's scale, times A's value (low codes meet A's even positions,
// high codes its odd ones, as `even` and `odd` hold them); the zero point's share, zero x scale
// x the block's sum of A, taken off at the end. Four accumulators a row (low and high codes,
// even and odd blocks) keep the multiply-adds' latency off the critical path. Blocks of 32 or
// more codes (16 bytes a step). Rows is a template argument so that they stay in registers.
//
// One block into the accumulator pair First, First + 1 (a constant, so they stay registers).
template <int Rows, int First>
[[gnu::target("avx512f"), gnu::always_inline]] inline void blockDots(__m512 (&acc)[Rows][4], const uint8_t* codes, int64_t blob,
                                                                    float blockScale, const float* const* even,
                                                                    const float* const* odd, int64_t offset) {
    const __m512i lowCodes = _mm512_set1_epi32(15);
    const __m512 scale = _mm512_set1_ps(blockScale);
    for (int64_t j = 0; j < blob; j += 16) {
        const __m512i bytes = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + j)));
        const __m512 lo = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_and_si512(bytes, lowCodes)), scale);
        const __m512 hi = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(bytes, 4)), scale);
        for (int r = 0; r < Rows; ++r) {
            acc[r][First] = _mm512_fmadd_ps(lo, _mm512_loadu_ps(even[r] + offset + j), acc[r][First]);
            acc[r][First + 1] = _mm512_fmadd_ps(hi, _mm512_loadu_ps(odd[r] + offset + j), acc[r][First + 1]);
        }
    }
}

template <int Rows>
[[gnu::target("avx512f")]] void columnDots4(const uint8_t* codes, int64_t blocks, int64_t blob, const float* scales,
                                            const float* zeros, const float* const* even, const float* const* odd,
                                            const float* const* sums, float* out) {
    __m512 acc[Rows][4];
    for (int r = 0; r < Rows; ++r)
        for (int i = 0; i < 4; ++i) acc[r][i] = _mm512_setzero_ps();
    int64_t b = 0;
    for (; b + 2 <= blocks; b += 2) {
        blockDots<Rows, 0>(acc, codes + b * blob, blob, scales[b], even, odd, b * blob);
        blockDots<Rows, 2>(acc, codes + (b + 1) * blob, blob, scales[b + 1], even, odd, (b + 1) * blob);
    }
    if (b < blocks) blockDots<Rows, 0>(acc, codes + b * blob, blob, scales[b], even, odd, b * blob);
    // The zero points' shares, sixteen blocks a step.
    __m512 correction[Rows];
    for (int r = 0; r < Rows; ++r) correction[r] = _mm512_setzero_ps();
    for (b = 0; b < blocks; b += 16) {
        const __mmask16 m = blocks - b >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (blocks - b)) - 1);
        const __m512 zs = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, scales + b), _mm512_maskz_loadu_ps(m, zeros + b));
        for (int r = 0; r < Rows; ++r) correction[r] = _mm512_fmadd_ps(zs, _mm512_maskz_loadu_ps(m, sums[r] + b), correction[r]);
    }
    for (int r = 0; r < Rows; ++r) {
        const __m512 sum = _mm512_add_ps(_mm512_add_ps(acc[r][0], acc[r][1]), _mm512_add_ps(acc[r][2], acc[r][3]));
        out[r] = _mm512_reduce_add_ps(_mm512_sub_ps(sum, correction[r]));
    }
}
#pragma GCC diagnostic pop

bool hasAvx512() {
    static const bool yes = __builtin_cpu_supports("avx512f");
    return yes;
}

struct NBitsShape {
    int64_t k, n, bits, blockSize, blocks, blobBytes;
};

class MatMulNBitsKernel : public Kernel {
public:
    explicit MatMulNBitsKernel(NBitsShape s) : m_s(s) {}

    Status compute(KernelContext& ctx) override {
        const RtTensor *a = ctx.input(0), *b = ctx.input(1), *scales = ctx.input(2), *zeros = ctx.input(3),
                       *groups = ctx.input(4), *bias = ctx.input(5);
        if (!a || !b || !scales) return bad(ctx, "needs A, B and scales");
        if (a->dtype != DType::Float32) return unsupportedType(ctx, a->dtype);
        if (groups && groups->numel() > 0) return bad(ctx, "g_idx (act-order groups) is not supported");
        const NBitsShape& s = m_s;
        if (a->rank() == 0 || a->dims.back() != s.k)
            return bad(ctx, "A " + dimsString(a->dims) + " does not end in K = " + std::to_string(s.k));
        if (b->dtype != DType::UInt8 || b->numel() != s.n * s.blocks * s.blobBytes)
            return bad(ctx, "B " + dimsString(b->dims) + " is not uint8 (N, blocks, bytes) = (" + std::to_string(s.n) + ", " +
                                std::to_string(s.blocks) + ", " + std::to_string(s.blobBytes) + ")");
        if (scales->dtype != DType::Float32 || scales->numel() != s.n * s.blocks)
            return bad(ctx, "scales need N x blocks = " + std::to_string(s.n * s.blocks) + " float32 values");
        const int64_t zeroBytesPerColumn = (s.blocks * s.bits + 7) / 8;
        const bool packedZeros = zeros && zeros->dtype == DType::UInt8;
        if (zeros && !(packedZeros ? zeros->numel() == s.n * zeroBytesPerColumn
                                   : zeros->dtype == DType::Float32 && zeros->numel() == s.n * s.blocks))
            return bad(ctx, "zero_points are neither packed uint8 (N x " + std::to_string(zeroBytesPerColumn) +
                                " bytes) nor one float32 per block");
        if (bias && (bias->dtype != DType::Float32 || bias->numel() != s.n)) return bad(ctx, "bias needs N float32 values");
        std::vector<int64_t> outDims = a->dims;
        outDims.back() = s.n;
        auto y = ctx.output(0, DType::Float32, outDims);
        if (!y) return y.status();
        const int64_t rows = s.k ? a->numel() / s.k : 0;
        if ((*y)->numel() == 0) return Status::ok();

        const Weights w{b->as<uint8_t>(), scales->as<float>(), packedZeros ? zeros->as<uint8_t>() : nullptr,
                        zeros && !packedZeros ? zeros->as<float>() : nullptr, zeroBytesPerColumn};
        const float* pa = a->as<float>();
        float* py = (*y)->as<float>();
        // A few rows of 4-bit codes (decoding a token): read the codes, 8 times fewer bytes than
        // floats (a 1,024 x 32,000 LM head: 6.2 ms through the float copy at one thread).
        if (rows <= 4 && s.bits == 4 && s.blobBytes % 16 == 0 && hasAvx512()) {
            decodeRows(ctx, w, pa, rows, py);
            addBias(ctx, bias, rows, py);
            return Status::ok();
        }
        // Within the copy budget the weights become floats once, laid out as sgemm reads B
        // fastest: the float model's speed (BERT-base's 36 products at one thread: 393 ms
        // dequantized a stripe per call, float weights 208). Past the budget (a model of
        // gigabytes), every call dequantizes again, and memory stays at the codes' size.
        const int64_t ld = unaliasedStride(s.n);
        const float* floats = m_floats.made(*b, RelaidKey{b->data, s.k, s.n, false, ld}, [&](float* to) {
            ctx.pool().parallelFor((s.n + 63) / 64, 1, [&](int64_t t0, int64_t t1) {
                std::vector<float> columns(size_t(64 * s.k));
                for (int64_t t = t0; t < t1; ++t) {
                    const int64_t n0 = t * 64, width = std::min<int64_t>(64, s.n - n0);
                    for (int64_t c = 0; c < width; ++c) dequantizeColumn(w, n0 + c, columns.data() + c * s.k);
                    transposeMatrix(columns.data(), width, s.k, to + n0, ld);
                }
            });
        });
        if (floats) {
            gemm(false, false, rows, s.n, s.k, 1.0f, pa, s.k, floats, ld, 0.0f, py, s.n);
        } else if (rows <= 4) {
            ctx.pool().parallelFor(s.n, 16, [&](int64_t n0, int64_t n1) {
                std::vector<float> column(size_t(s.k));
                for (int64_t n = n0; n < n1; ++n) {
                    dequantizeColumn(w, n, column.data());
                    for (int64_t r = 0; r < rows; ++r) {
                        py[r * s.n + n] = dot(pa + r * s.k, column.data(), s.k);
                    }
                }
            });
        } else {
            // Stripes of columns dequantized as rows of a float matrix (each column's K values
            // contiguous, as they are stored), multiplied by the GEMM with B transposed.
            // As wide as 16 MiB of floats allows: each GEMM call packs A again, and a narrow
            // stripe left the GEMM most of the time (BERT-base's 768 x 3072: 20 ms in stripes of
            // 256 columns).
            const int64_t stripe = std::clamp<int64_t>((int64_t(4) << 20) / s.k, 64, s.n);
            float* block = threadScratch<float, ScratchSlot::DequantizedWeights>(size_t(s.k * stripe));
            for (int64_t n0 = 0; n0 < s.n; n0 += stripe) {
                const int64_t width = std::min(stripe, s.n - n0);
                ctx.pool().parallelFor(width, 8, [&](int64_t c0, int64_t c1) {
                    for (int64_t c = c0; c < c1; ++c) dequantizeColumn(w, n0 + c, block + c * s.k);
                });
                gemm(false, true, rows, width, s.k, 1.0f, pa, s.k, block, s.k, 0.0f, py + n0, s.n);
            }
        }
        addBias(ctx, bias, rows, py);
        return Status::ok();
    }

private:
    struct Weights {
        const uint8_t* codes;
        const float* scales;
        const uint8_t* packedZeros;
        const float* floatZeros;
        int64_t zeroBytesPerColumn;
    };

    void addBias(KernelContext& ctx, const RtTensor* bias, int64_t rows, float* py) const {
        if (!bias) return;
        const float* pb = bias->as<float>();
        const int64_t n = m_s.n;
        ctx.pool().parallelFor(rows, 16, [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r)
                for (int64_t c = 0; c < n; ++c) py[r * n + c] += pb[c];
        });
    }

    // columnDots4 over every column: A's rows split by position parity within each block
    // (zero past K), each block's sum of A, every column's zero points as floats.
    void decodeRows(KernelContext& ctx, const Weights& w, const float* pa, int64_t rows, float* py) const {
        const NBitsShape& s = m_s;
        const int64_t padded = s.blocks * s.blockSize, half = padded / 2;
        std::vector<float> split(size_t(rows * padded), 0.0f), sums(size_t(rows * s.blocks), 0.0f);
        const float *even[4], *odd[4], *blockSums[4];
        for (int64_t r = 0; r < rows; ++r) {
            float* e = split.data() + r * padded;
            float* o = e + half;
            for (int64_t k = 0; k < s.k; ++k) {
                const int64_t block = k / s.blockSize, within = k % s.blockSize;
                (within % 2 ? o : e)[block * (s.blockSize / 2) + within / 2] = pa[r * s.k + k];
                sums[size_t(r * s.blocks + block)] += pa[r * s.k + k];
            }
            even[r] = e, odd[r] = o, blockSums[r] = sums.data() + r * s.blocks;
        }
        ctx.pool().parallelFor(s.n, 16, [&](int64_t n0, int64_t n1) {
            std::vector<float> zeros(size_t(s.blocks));
            float out[4];
            for (int64_t n = n0; n < n1; ++n) {
                for (int64_t b = 0; b < s.blocks; ++b)
                    zeros[size_t(b)] = w.floatZeros ? w.floatZeros[n * s.blocks + b]
                                       : w.packedZeros ? float(code<4>(w.packedZeros + n * w.zeroBytesPerColumn, b))
                                                       : 8.0f;
                const uint8_t* codes = w.codes + n * s.blocks * s.blobBytes;
                const float* scales = w.scales + n * s.blocks;
                switch (rows) {
                    case 1: columnDots4<1>(codes, s.blocks, s.blobBytes, scales, zeros.data(), even, odd, blockSums, out); break;
                    case 2: columnDots4<2>(codes, s.blocks, s.blobBytes, scales, zeros.data(), even, odd, blockSums, out); break;
                    case 3: columnDots4<3>(codes, s.blocks, s.blobBytes, scales, zeros.data(), even, odd, blockSums, out); break;
                    default: columnDots4<4>(codes, s.blocks, s.blobBytes, scales, zeros.data(), even, odd, blockSums, out); break;
                }
                for (int64_t r = 0; r < rows; ++r) py[r * s.n + n] = out[r];
            }
        });
    }

    void dequantizeColumn(const Weights& w, int64_t n, float* out) const {
        switch (m_s.bits) {
            case 2: return dequantizeColumnOf<2>(w, n, out);
            case 4: return dequantizeColumnOf<4>(w, n, out);
            default: return dequantizeColumnOf<8>(w, n, out);
        }
    }

    // Code `i` of a run packed low bits first, Bits wide (2, 4 or 8: never across a byte).
    template <int Bits>
    static uint32_t code(const uint8_t* packed, int64_t i) {
        return (packed[i * Bits / 8] >> (i * Bits % 8)) & ((1u << Bits) - 1);
    }

    template <int Bits>
    void dequantizeColumnOf(const Weights& w, int64_t n, float* out) const {
        const NBitsShape& s = m_s;
        const uint8_t* codes = w.codes + n * s.blocks * s.blobBytes;
        for (int64_t blk = 0; blk < s.blocks; ++blk) {
            const float scale = w.scales[n * s.blocks + blk];
            float zero = float(1 << (Bits - 1));
            if (w.packedZeros) zero = float(code<Bits>(w.packedZeros + n * w.zeroBytesPerColumn, blk));
            if (w.floatZeros) zero = w.floatZeros[n * s.blocks + blk];
            const uint8_t* blob = codes + blk * s.blobBytes;
            const int64_t first = blk * s.blockSize, count = std::min(s.blockSize, s.k - first);
            // Every code's value from one table, so the vector path rounds as the loop does.
            float table[1 << Bits];
            for (int c = 0; c < (1 << Bits); ++c) table[c] = (float(c) - zero) * scale;
            int64_t i = 0;
            if constexpr (Bits == 4)
                if (hasAvx512() && count >= 32) {
                    i = count / 32 * 32;
                    dequantize4Avx512(blob, i / 2, table, out + first);
                }
            for (; i < count; ++i) out[first + i] = table[code<Bits>(blob, i)];
        }
    }

    // Sixteen partial sums, so the loop runs in vector lanes (a single sum must add in order).
    static float dot(const float* x, const float* y, int64_t n) {
        float lanes[16] = {};
        int64_t i = 0;
        for (; i + 16 <= n; i += 16)
            for (int j = 0; j < 16; ++j) lanes[j] += x[i + j] * y[i + j];
        float sum = 0;
        for (; i < n; ++i) sum += x[i] * y[i];
        for (float lane : lanes) sum += lane;
        return sum;
    }

    NBitsShape m_s;
    RelaidConstant m_floats;
};

}  // namespace

KernelFactory matMulNBits() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        NBitsShape s;
        s.k = init.getInt("K", 0);
        s.n = init.getInt("N", 0);
        s.bits = init.getInt("bits", 4);
        s.blockSize = init.getInt("block_size", 0);
        if (s.k <= 0 || s.n <= 0) return init.invalid("needs K and N attributes above 0");
        if (s.bits != 2 && s.bits != 4 && s.bits != 8)
            return init.invalid("bits = " + std::to_string(s.bits) + " is not supported (2, 4 or 8)");
        if (s.blockSize < 16 || (s.blockSize & (s.blockSize - 1)))
            return init.invalid("block_size must be a power of two of 16 or more, not " + std::to_string(s.blockSize));
        s.blocks = (s.k + s.blockSize - 1) / s.blockSize;
        s.blobBytes = s.blockSize * s.bits / 8;
        return std::unique_ptr<Kernel>(new MatMulNBitsKernel(s));
    };
}

}  // namespace fsc::cpu
