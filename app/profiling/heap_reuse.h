#pragma once
// How glibc's allocator treats the runtime's tensors: a tensor up to 32 MiB comes from the
// heap and stays there when freed, for the next of its size. By default glibc maps each
// large block afresh and unmaps it when freed, once blocks outgrow its adaptive threshold,
// and every page of a new mapping faults in, zeroed by the kernel: Mask R-CNN's paste loop
// allocates a growing [n, 320, 320] a turn (up to 40 MB), 553 ms that way against 230 ms
// with the heap kept (docs/benchmarks.md, 2026-12-06). Set by the programs that run models
// (the CLI, the GUI), not by the runtime library, so a program that links it keeps its own
// allocator settings.

namespace fsc {

// Call once in main(). At most 256 MiB of freed heap is kept for reuse. No effect without glibc.
void keepFreedTensorsOnHeap();

}  // namespace fsc
