// keepFreedTensorsOnHeap: a tensor-sized block (16 MiB) comes from glibc's heap rather than a
// fresh mapping, and freeing it keeps the heap grown for the next one. glibc offers no way to
// read the settings back, so the test reads their effect through mallinfo2.
#include <QtTest>

#include <cstdlib>
#include <cstring>

#include "app/profiling/heap_reuse.h"

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
#include <malloc.h>
#define FSC_GLIBC_HEAP 1
#endif

class TestHeapReuse : public QObject {
    Q_OBJECT
private slots:
    void tensorSizedBlocksStayOnTheHeap() {
#ifdef FSC_GLIBC_HEAP
        fsc::keepFreedTensorsOnHeap();
        constexpr size_t kBlock = size_t(16) << 20;
        const size_t mappedBefore = mallinfo2().hblkhd;
        void* block = std::malloc(kBlock);
        QVERIFY(block);
        std::memset(block, 1, kBlock);
        const size_t mappedDuring = mallinfo2().hblkhd;
        std::free(block);
        QCOMPARE(mappedDuring, mappedBefore);  // not a mapping of its own
        QVERIFY2(mallinfo2().arena >= kBlock, "the heap gave the freed block back to the system");

        // The measure itself: a block over the 32 MiB threshold is still mapped.
        void* big = std::malloc(size_t(40) << 20);
        QVERIFY(big);
        QVERIFY(mallinfo2().hblkhd > mappedBefore);
        std::free(big);
#else
        QSKIP("glibc's own allocator is not in use here");
#endif
    }
};

QTEST_GUILESS_MAIN(TestHeapReuse)
#include "tst_heap_reuse.moc"
