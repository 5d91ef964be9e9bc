#pragma once

#include <cstddef>

namespace fsc {

// Tensors of 1 MiB and more, kept for reuse when freed. glibc maps such blocks afresh and
// hands them back to the kernel on free (from 32 MiB always, below that as its moving mmap
// and trim thresholds decide), so every large tensor of every run is faulted in again page by
// page (Mask R-CNN's paste loop grows a [n, 320, 320] tensor a turn: 89,000 page faults a run;
// WaveNet's 16 MB output took 4,000 faults a run, 6 of its 1 x 1 layer's 11 ms). Blocks are
// sized in classes an eighth of a power of two apart, so a tensor that grows a little reuses
// the block its predecessor freed, and a run's tensors reuse the last run's.
class LargeBlockCache {
public:
    static constexpr size_t kSmallest = size_t(1) << 20;
    static constexpr size_t kHeldAtMost = size_t(256) << 20;

    // The capacity a block for `bytes` gets: `bytes` itself under kSmallest, else rounded up
    // to its class (at most an eighth more).
    static size_t capacityFor(size_t bytes);

    // A 64-byte aligned block of capacityFor(bytes), a held one when there is one; null when
    // memory runs out.
    static void* take(size_t bytes);
    // Gives back a block of capacityFor(its bytes) that take() returned: held while the held
    // blocks stay within kHeldAtMost (the oldest freed first), else freed.
    static void give(void* block, size_t bytes);
    // Frees every held block (a closed model's).
    static void releaseHeld();

    struct Counts {
        size_t heldBlocks = 0;
        size_t heldBytes = 0;
        size_t reused = 0;  // take() calls served by a held block, since the process started
    };
    static Counts counts();
};

}  // namespace fsc
