#pragma once
// What our int8 GEMM kernels for x86 share (gemm_int8_widened.cpp: any operands, both
// widened to int16; gemm_int8_bytes.cpp: B as bytes, with AVX-VNNI or A within 7 bits): the
// operands, how C is cut into work items for the threads, and how a run of rows is cut into
// register tiles of at most 6 rows.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "compiler/backends/cpu/gemm.h"

namespace fsc::cpu::int8_tiles {

constexpr int8_t flipOf(bool storedAsUint8) { return storedAsUint8 ? int8_t(-128) : int8_t(0); }

constexpr int kTileRows = 6;
constexpr int kTileColumns = 16;

struct Operands {
    bool transA, transB;
    int64_t m, n, k, lda, ldb, ldc;
    const int8_t* a;
    const int8_t* b;
    int16_t aZero, bZero;
    int32_t* c;
    // What each stored byte is XORed with to give its int8 value: 0x80 where the operand is
    // stored as uint8 (Uint8Operands), else 0.
    int8_t aFlip = 0, bFlip = 0;
    int8_t rawA(int64_t i, int64_t p) const { return int8_t((transA ? a[p * lda + i] : a[i * lda + p]) ^ aFlip); }
    int8_t rawB(int64_t p, int64_t j) const { return int8_t((transB ? b[j * ldb + p] : b[p * ldb + j]) ^ bFlip); }
};

// Whether the product has nothing to multiply (no rows, columns or K), C then written:
// zeros where K is 0.
inline bool nothingToMultiply(int64_t m, int64_t n, int64_t k, int32_t* c, int64_t ldc) {
    if (m > 0 && n > 0 && k > 0) return false;
    if (n > 0)
        for (int64_t i = 0; i < m; ++i) std::fill_n(c + i * ldc, n, 0);
    return true;
}

// A part of C: columns of the panels [firstPanel, lastPanel), rows [i0, i1).
struct WorkItem {
    int64_t firstPanel, lastPanel, i0, i1;
};

// Calls body(item, scratch) for every work item, on the OpenMP threads, each thread with
// its own `scratchElements` of T (where it packs B); rows go in tiles of `tileRows`. Work items are runs of 16-column panels,
// about 8 per thread (dynamic, for a busy core), so that threads write apart in C, not to
// the two halves of one cache line. Where there are fewer panels than that (ResNet-50's 14 x
// 14 and 7 x 7 layers: 13 and 4 panels), each run's rows are split too, into parts of at
// least 8 tiles: whole panels alone left one thread a panel more than the other. A narrow
// MatMul splits its rows among the threads however few they are.
template <typename T, typename Body>
void forEachWorkItem(const Operands& o, int tileRows, size_t scratchElements, Body&& body) {
    const int64_t panels = (o.n + kTileColumns - 1) / kTileColumns;
    const int64_t threads = omp_get_max_threads();
    const int64_t panelsPerItem = std::max<int64_t>(1, panels / (8 * threads));
    const int64_t runs = (panels + panelsPerItem - 1) / panelsPerItem;
    const int64_t rowTiles = (o.m + tileRows - 1) / tileRows;
    const int64_t fewPanelsParts = std::min(rowTiles, (2 * threads + runs - 1) / runs);
    const int64_t rowParts = std::clamp<int64_t>(
        (8 * threads + runs - 1) / runs, 1, std::max<int64_t>({1, rowTiles / 8, fewPanelsParts}));
    const int64_t tilesPerPart = (rowTiles + rowParts - 1) / rowParts;
#pragma omp parallel
    {
        std::vector<T> scratch(scratchElements);
#pragma omp for schedule(dynamic)
        for (int64_t item = 0; item < runs * rowParts; ++item) {
            const int64_t firstPanel = (item / rowParts) * panelsPerItem;
            const int64_t i0 = (item % rowParts) * tilesPerPart * tileRows;
            const int64_t i1 = std::min(o.m, i0 + tilesPerPart * tileRows);
            if (i0 < i1)
                body(WorkItem{firstPanel, std::min(panels, firstPanel + panelsPerItem), i0, i1},
                     scratch.data());
        }
    }
}

// Calls tile.template operator()<Rows>(i) for tiles of rows covering [i0, i1): MaxRows
// (at most kTileRows) each, then one of the rest.
template <int MaxRows, typename Tile>
void forEachRowTile(int64_t i0, int64_t i1, Tile&& tile) {
    static_assert(MaxRows >= 1 && MaxRows <= kTileRows);
    int64_t i = i0;
    for (; i + MaxRows <= i1; i += MaxRows) tile.template operator()<MaxRows>(i);
    switch (i1 - i) {
        case 5:
            return tile.template operator()<5>(i);
        case 4:
            return tile.template operator()<4>(i);
        case 3:
            return tile.template operator()<3>(i);
        case 2:
            return tile.template operator()<2>(i);
        case 1:
            return tile.template operator()<1>(i);
        default:
            return;
    }
}

}  // namespace fsc::cpu::int8_tiles
