#include "app/profiling/openmp_waiting.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace fsc {

void boundOpenMpSpinning(char** argv) {
    if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return;
    // Started through the dynamic loader (ld-linux.so PROGRAM): /proc/self/exe is the loader.
    char self[4096];
    const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
    if (length <= 0) return;
    self[length] = '\0';
    if (std::strstr(self, "/ld-") || std::strstr(self, "/ld.so")) return;
    if (setenv("GOMP_SPINCOUNT", kOpenMpSpinCount, 1) != 0) return;
    execv("/proc/self/exe", argv);
    // Still here: no /proc, or exec refused. Run on with libgomp's defaults.
}

}  // namespace fsc
