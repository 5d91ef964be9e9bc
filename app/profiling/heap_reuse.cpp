#include "app/profiling/heap_reuse.h"

#include <cstdlib>  // defines __GLIBC__ where glibc is the C library

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace fsc {

void keepFreedTensorsOnHeap() {
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

}  // namespace fsc
