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
        if (bias) {
            const float* pb = bias->as<float>();
            ctx.pool().parallelFor(rows, 16, [&](int64_t r0, int64_t r1) {
                for (int64_t r = r0; r < r1; ++r)
                    for (int64_t n = 0; n < s.n; ++n) py[r * s.n + n] += pb[n];
            });
        }
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
