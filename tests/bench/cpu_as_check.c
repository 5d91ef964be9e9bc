// Run by cpu_as.sh (ctest cpu_as_*): fails where a feature the mode masks still shows, through
// CPUID or GCC's __builtin_cpu_supports, where AVX2 or (avx2-vnni) AVX-VNNI went missing,
// or where the program's own SIGSEGV handler no longer sees its own faults.
#define _GNU_SOURCE
#include <cpuid.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static sigjmp_buf landed;
static volatile sig_atomic_t ownFaults;
// Only the one store below may land here: a CPUID that lands here too would loop.
static void onOwnFault(int sig) {
    if (++ownFaults > 1) {
        static const char said[] = "cpu_as_check: the program's SIGSEGV handler got a CPUID fault\n";
        (void)!write(2, said, sizeof said - 1);
        _exit(1);
    }
    siglongjmp(landed, sig);
}

// Whether the kernel, which sees the real CPUID, lists `flag` in /proc/cpuinfo.
static int kernelLists(const char* flag) {
    FILE* f = fopen("/proc/cpuinfo", "r");
    char line[8192];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        if (strncmp(line, "flags", 5) == 0) {
            for (char* word = strtok(line, " \t\n:"); word && !found; word = strtok(NULL, " \t\n:"))
                found = strcmp(word, flag) == 0;
            break;
        }
    if (f) fclose(f);
    return found;
}

static int failures;
static void expect(int ok, const char* what) {
    if (!ok) {
        fprintf(stderr, "cpu_as_check: %s\n", what);
        ++failures;
    }
}

int main(int argc, char** argv) {
    if (argc != 2) return 64;
    const int keepVnni = strcmp(argv[1], "avx2-vnni") == 0;
    if (!kernelLists("avx2")) {
        puts("cpu_as_check: this CPU has no AVX2; nothing to check");
        return 77;
    }
    unsigned a, b, c, d;
    __cpuid_count(7, 0, a, b, c, d);
    expect(b & (1u << 5), "CPUID lost AVX2");
    expect(!(b & (1u << 16)), "CPUID still shows AVX512F");
    expect(!(c & (1u << 11)), "CPUID still shows AVX512_VNNI");
    expect(!(d & (1u << 25)), "CPUID still shows AMX_INT8");
    __cpuid_count(7, 1, a, b, c, d);
    expect(!!(a & (1u << 4)) == (keepVnni && kernelLists("avx_vnni")),
           keepVnni ? "CPUID lost AVX-VNNI" : "CPUID still shows AVX-VNNI");
    __builtin_cpu_init();
    expect(!__builtin_cpu_supports("avx512f"), "__builtin_cpu_supports still sees AVX512F");
    expect(__builtin_cpu_supports("avx2"), "__builtin_cpu_supports lost AVX2");

    struct sigaction own;
    memset(&own, 0, sizeof own);
    own.sa_handler = onOwnFault;
    sigemptyset(&own.sa_mask);
    sigaction(SIGSEGV, &own, NULL);
    if (sigsetjmp(landed, 1) == 0) {
        *(volatile int*)(argv[0] - (long)argv[0]) = 1;  // a store to address 0
        expect(0, "a store to address 0 did not fault");
    }
    __cpuid_count(7, 0, a, b, c, d);  // after the program's handler went in
    expect(!(b & (1u << 16)), "CPUID shows AVX512F once the program has its own SIGSEGV handler");
    if (failures == 0) printf("cpu_as_check: %s masked as expected\n", argv[1]);
    return failures ? 1 : 0;
}
