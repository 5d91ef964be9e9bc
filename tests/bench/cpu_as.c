// Runs a program as if this x86 CPU lacked its newer vector extensions, so that every
// library in the process picks the kernels an older CPU would: ONNX Runtime's MLAS (which
// has no switch for it, unlike oneDNN's ONEDNN_MAX_CPU_ISA), oneDNN, and our own CPUID
// checks and target_clones. Linux's CPUID faulting (arch_prctl ARCH_SET_CPUID; the CPU flag
// cpuid_fault) turns each CPUID instruction into a SIGSEGV; the handler here runs the real
// instruction and clears the masked feature bits from its answer.
//
// FSC_CPU_AS picks what is masked:
//   avx2       AVX2 and FMA, no AVX-512, no VNNI, no AMX (Haswell to Zen 3 machines)
//   avx2-vnni  the same with AVX-VNNI (Intel client cores since Alder Lake)
//
// It is loaded twice (tests/bench/cpu_as.sh does it): as an LD_AUDIT module, which the
// dynamic loader runs before it relocates the program, so before IFUNC resolvers ask
// CPUID; and as an LD_PRELOAD library, whose sigaction stands in for the program's own
// for SIGSEGV (Node installs one), so that the handler stays first and passes on the faults
// that are not CPUID. glibc's own string functions have asked CPUID before either runs;
// cpu_as.sh masks them with GLIBC_TUNABLES instead.
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <cpuid.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#ifndef ARCH_SET_CPUID
#define ARCH_SET_CPUID 0x1012
#endif

enum { kLeaf7Ebx, kLeaf7Ecx, kLeaf7Edx, kLeaf7Sub1Eax, kLeaf7Sub1Edx, kMaskWords };

// Bits of CPUID leaf 7 an AVX2 machine lacks.
static const uint32_t kAvx2Mask[kMaskWords] = {
    // EBX: AVX512F, DQ, IFMA, PF, ER, CD, BW, VL
    (1u << 16) | (1u << 17) | (1u << 21) | (1u << 26) | (1u << 27) | (1u << 28) | (1u << 30) |
        (1u << 31),
    // ECX: AVX512_VBMI, VBMI2, GFNI, VAES, VPCLMULQDQ, AVX512_VNNI, BITALG, VPOPCNTDQ
    (1u << 1) | (1u << 6) | (1u << 8) | (1u << 9) | (1u << 10) | (1u << 11) | (1u << 12) |
        (1u << 14),
    // EDX: AVX512_4VNNIW, 4FMAPS, VP2INTERSECT, AMX_BF16, AVX512_FP16, AMX_TILE, AMX_INT8
    (1u << 2) | (1u << 3) | (1u << 8) | (1u << 22) | (1u << 23) | (1u << 24) | (1u << 25),
    // subleaf 1 EAX: AVX_VNNI, AVX512_BF16, AMX_FP16, AVX_IFMA
    (1u << 4) | (1u << 5) | (1u << 21) | (1u << 23),
    // subleaf 1 EDX: AVX_VNNI_INT8, AVX_NE_CONVERT, AMX_COMPLEX, AVX_VNNI_INT16, AVX10
    (1u << 4) | (1u << 5) | (1u << 8) | (1u << 10) | (1u << 19),
};
static const uint32_t kAvxVnniBit = 1u << 4;  // subleaf 1 EAX

static uint32_t mask[kMaskWords];
static int masking;
static struct sigaction programs;  // the program's own SIGSEGV action, if it set one

// glibc's own, which the wrappers at the end stand in front of.
extern int __sigaction(int, const struct sigaction*, struct sigaction*);

static long setCpuidFaulting(int on) { return syscall(SYS_arch_prctl, ARCH_SET_CPUID, on ? 0 : 1); }

static void answerCpuid(ucontext_t* uc) {
    greg_t* r = uc->uc_mcontext.gregs;
    const uint32_t leaf = (uint32_t)r[REG_RAX], subleaf = (uint32_t)r[REG_RCX];
    uint32_t a, b, c, d;
    setCpuidFaulting(0);
    __cpuid_count(leaf, subleaf, a, b, c, d);
    setCpuidFaulting(1);
    if (leaf == 7 && subleaf == 0) {
        b &= ~mask[kLeaf7Ebx];
        c &= ~mask[kLeaf7Ecx];
        d &= ~mask[kLeaf7Edx];
    } else if (leaf == 7 && subleaf == 1) {
        a &= ~mask[kLeaf7Sub1Eax];
        d &= ~mask[kLeaf7Sub1Edx];
    }
    r[REG_RAX] = a;
    r[REG_RBX] = b;
    r[REG_RCX] = c;
    r[REG_RDX] = d;
    r[REG_RIP] += 2;
}

static void onSegv(int sig, siginfo_t* info, void* context) {
    ucontext_t* uc = context;
    const unsigned char* ip = (const unsigned char*)uc->uc_mcontext.gregs[REG_RIP];
    if (info->si_code == SI_KERNEL && ip[0] == 0x0f && ip[1] == 0xa2) {
        answerCpuid(uc);
        return;
    }
    // Not a CPUID: the program's own handler, else the default action when the fault recurs.
    if (programs.sa_flags & SA_SIGINFO) {
        if (programs.sa_sigaction) programs.sa_sigaction(sig, info, context);
        return;
    }
    if (programs.sa_handler != SIG_DFL && programs.sa_handler != SIG_IGN && programs.sa_handler) {
        programs.sa_handler(sig);
        return;
    }
    struct sigaction byDefault;
    memset(&byDefault, 0, sizeof byDefault);
    byDefault.sa_handler = SIG_DFL;
    __sigaction(SIGSEGV, &byDefault, NULL);
}

// Reads FSC_CPU_AS; 0 when it names nothing to mask.
static int chooseMask(void) {
    const char* as = getenv("FSC_CPU_AS");
    if (!as || !*as) return 0;
    memcpy(mask, kAvx2Mask, sizeof mask);
    if (strcmp(as, "avx2-vnni") == 0)
        mask[kLeaf7Sub1Eax] &= ~kAvxVnniBit;
    else if (strcmp(as, "avx2") != 0) {
        fprintf(stderr, "cpu_as: FSC_CPU_AS=%s: expected avx2 or avx2-vnni\n", as);
        _exit(64);
    }
    return 1;
}

static void start(const char* role) {
    if (!chooseMask()) return;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = onSegv;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    if (__sigaction(SIGSEGV, &action, NULL) != 0 || setCpuidFaulting(1) != 0) {
        fprintf(stderr, "cpu_as (%s): this kernel or CPU cannot fault CPUID (no cpuid_fault flag)\n", role);
        _exit(70);
    }
    masking = 1;
}

// As an LD_AUDIT module: the dynamic loader calls this first.
unsigned int la_version(unsigned int version) {
    start("audit");
    return version;
}

// As an LD_PRELOAD library: take over from the audit module's copy, which lives in another
// namespace, so that the program's SIGSEGV action is known here.
__attribute__((constructor)) static void startPreloaded(void) { start("preload"); }

int sigaction(int sig, const struct sigaction* action, struct sigaction* old) {
    if (sig != SIGSEGV || !masking) return __sigaction(sig, action, old);
    if (old) *old = programs;
    if (action) programs = *action;
    return 0;
}

// signal() would reach glibc's sigaction inside glibc, past the wrapper above (perf uses it).
sighandler_t signal(int sig, sighandler_t handler) {
    if (sig != SIGSEGV || !masking) {
        struct sigaction action, old;
        memset(&action, 0, sizeof action);
        action.sa_handler = handler;
        action.sa_flags = SA_RESTART;
        sigemptyset(&action.sa_mask);
        return __sigaction(sig, &action, &old) == 0 ? old.sa_handler : SIG_ERR;
    }
    const sighandler_t old = (programs.sa_flags & SA_SIGINFO) ? SIG_DFL : programs.sa_handler;
    memset(&programs, 0, sizeof programs);
    programs.sa_handler = handler;
    return old;
}
