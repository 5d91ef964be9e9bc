// LargeBlockCache through the runtime's tensor allocation: a freed tensor of 1 MiB or more
// lends its block to the next tensor of its size class, a zeroed tensor is zero on a reused
// block, and the held blocks stay within their bound.
#include <QtTest>

#include <algorithm>
#include <cstring>
#include <vector>

#include "compiler/runtime/large_block_cache.h"
#include "compiler/runtime/rt_tensor.h"

using namespace fsc;

namespace {

constexpr int64_t MiB = int64_t(1) << 20;

RtTensor bytesTensor(int64_t bytes, bool zeroed) {
    return zeroed ? allocateTensor(DType::UInt8, {bytes})
                  : allocateOutputTensor(DType::UInt8, {bytes});
}

}  // namespace

class TestLargeBlockCache : public QObject {
    Q_OBJECT
private slots:
    void init() { LargeBlockCache::releaseHeld(); }
    void cleanup() { LargeBlockCache::releaseHeld(); }

    void capacitiesComeInEighths() {
        QCOMPARE(LargeBlockCache::capacityFor(1), size_t(64));
        QCOMPARE(LargeBlockCache::capacityFor(size_t(MiB) - 100), size_t(MiB) - 64);  // under 1 MiB: malloc's
        QCOMPARE(LargeBlockCache::capacityFor(size_t(MiB) + 1), size_t(MiB) + size_t(MiB) / 8);
        QCOMPARE(LargeBlockCache::capacityFor(size_t(31 * MiB) + 1), size_t(32 * MiB));
        QCOMPARE(LargeBlockCache::capacityFor(size_t(32 * MiB)), size_t(32 * MiB));
        QCOMPARE(LargeBlockCache::capacityFor(size_t(32 * MiB) + 1), size_t(36 * MiB));
        QCOMPARE(LargeBlockCache::capacityFor(size_t(36 * MiB)), size_t(36 * MiB));
        QCOMPARE(LargeBlockCache::capacityFor(size_t(63 * MiB)), size_t(64 * MiB));
        QCOMPARE(LargeBlockCache::capacityFor(size_t(65 * MiB)), size_t(72 * MiB));
        for (size_t bytes = MiB; bytes < size_t(600 * MiB); bytes = bytes * 9 / 8 + 12345) {
            const size_t capacity = LargeBlockCache::capacityFor(bytes);
            QVERIFY(capacity >= bytes);
            QVERIFY2(capacity - bytes <= bytes / 8, qPrintable(QString::number(bytes)));
        }
    }

    // Mask R-CNN's paste loop: each turn's tensor is a row longer than the last, made while
    // the last is alive and freed after it.
    void aGrowingTensorReusesItsPredecessorsBlock() {
        const size_t reusedBefore = LargeBlockCache::counts().reused;
        RtTensor previous = bytesTensor(33 * MiB, false);
        std::vector<void*> blocks{previous.data};
        for (int64_t turn = 1; turn <= 4; ++turn) {
            RtTensor next = bytesTensor(33 * MiB + turn * 400 * 1024, false);
            blocks.push_back(next.data);
            previous = next;  // frees the earlier block
        }
        previous = {};
        // Two blocks of the 36 MiB class take turns; the rest were reused.
        std::sort(blocks.begin(), blocks.end());
        QCOMPARE(std::unique(blocks.begin(), blocks.end()) - blocks.begin(), 2);
        QCOMPARE(LargeBlockCache::counts().reused - reusedBefore, size_t(3));
        QCOMPARE(LargeBlockCache::counts().heldBlocks, size_t(2));
    }

    void anotherClassGetsItsOwnBlock() {
        void* first = nullptr;
        {
            RtTensor t = bytesTensor(40 * MiB, false);
            first = t.data;
        }
        RtTensor other = bytesTensor(50 * MiB, false);
        QVERIFY(other.data != first);
        QCOMPARE(LargeBlockCache::counts().heldBlocks, size_t(1));
        RtTensor same = bytesTensor(39 * MiB, false);
        QCOMPARE(same.data, first);
    }

    void aZeroedTensorIsZeroOnAReusedBlock() {
        {
            RtTensor dirty = bytesTensor(34 * MiB, false);
            std::memset(dirty.data, 0xAB, size_t(dirty.bytes()));
        }
        RtTensor clean = bytesTensor(35 * MiB, true);
        QCOMPARE(LargeBlockCache::counts().heldBlocks, size_t(0));  // it took the dirty block
        const auto* bytes = clean.as<uint8_t>();
        QVERIFY(std::all_of(bytes, bytes + clean.bytes(), [](uint8_t b) { return b == 0; }));
    }

    void heldBlocksStayWithinTheirBound() {
        {
            std::vector<RtTensor> many;
            for (int i = 0; i < 9; ++i) many.push_back(bytesTensor(40 * MiB, false));
        }
        const auto held = LargeBlockCache::counts();
        QVERIFY(held.heldBytes <= LargeBlockCache::kHeldAtMost);
        QCOMPARE(held.heldBlocks, size_t(LargeBlockCache::kHeldAtMost / (40 * MiB)));
        {  // larger than the bound: freed at once
            RtTensor huge = bytesTensor(300 * MiB, false);
        }
        QCOMPARE(LargeBlockCache::counts().heldBytes, held.heldBytes);
        LargeBlockCache::releaseHeld();
        QCOMPARE(LargeBlockCache::counts().heldBlocks, size_t(0));
        QCOMPARE(LargeBlockCache::counts().heldBytes, size_t(0));
    }

    void smallTensorsAreNotHeld() {
        { RtTensor t = bytesTensor(MiB - 4096, false); }
        QCOMPARE(LargeBlockCache::counts().heldBlocks, size_t(0));
        { RtTensor t = bytesTensor(16 * MiB, false); }  // a WaveNet output's size
        QCOMPARE(LargeBlockCache::counts().heldBlocks, size_t(1));
    }
};

QTEST_GUILESS_MAIN(TestLargeBlockCache)
#include "tst_large_block_cache.moc"
