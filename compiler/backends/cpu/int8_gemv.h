#pragma once
// Rows of uint8 bytes times a constant 8-bit matrix B [K, N] in exact int32, B packed once
// for AVX-512 VNNI (vpdpbusd: four byte products summed into each int32 lane, 16 columns a
// vector; AVX2 reads the same layout through vpmaddwd): a quantized recurrent layer's h times
// R every step (DynamicQuantizeLSTM), where a general int8 GEMM would pack B again at every
// call. Zero points come off after the sums: (a - za)(b - zb) = ab - za sum(b) - zb sum(a)
// + K za zb.
#include <cstdint>
#include <vector>

#include "compiler/runtime/thread_pool.h"

namespace fsc::cpu {

struct PackedInt8Columns {
    int64_t K = 0, N = 0;
    std::vector<int8_t> data;         // blocks of 16 columns; in each, groups of 4 rows: 16 x 4 bytes
    std::vector<int32_t> columnSums;  // of B as packed (uint8 B less 128), per column
    int32_t zero = 0;                 // B's zero point, as packed
};

// Whether int8RowsTimesColumns runs vector code here: vpdpbusd (AVX-512 with VNNI), else
// bytes widened to int16 pairs (AVX2, vpmaddwd); elsewhere it is a plain loop, exact but slow.
bool int8GemvAvailable();

// B [K, N] row-major, int8 or (isSigned false) uint8, with one zero point.
PackedInt8Columns packInt8Columns(const uint8_t* b, bool isSigned, int64_t K, int64_t N, int32_t zero);

// y[r][n] = sum over k of (a[r][k] - aZero)(B[k][n] - B's zero point) for `rows` rows of K
// bytes, columns over the pool's threads; up to 4 rows share each load of B.
void int8RowsTimesColumns(ThreadPool& pool, const uint8_t* a, int64_t rows, int32_t aZero, const PackedInt8Columns& b,
                          int32_t* y);

}  // namespace fsc::cpu
