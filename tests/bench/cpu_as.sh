#!/usr/bin/env bash
# Runs COMMAND as if this x86 CPU had AVX2 and FMA but no AVX-512, VNNI or AMX (avx2: Haswell
# to Zen 3), or that plus AVX-VNNI (avx2-vnni: Intel client cores since Alder Lake). Every
# library in it, ONNX Runtime's MLAS included, then picks the kernels such a CPU would;
# cpu_as.c says how. The cores stay this machine's: figures taken so are a proxy for that
# instruction set, not for another machine's speed.
# usage: tests/bench/cpu_as.sh BUILD_DIR avx2|avx2-vnni COMMAND [ARGS...]
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: cpu_as.sh BUILD_DIR avx2|avx2-vnni COMMAND [ARGS...]" >&2; exit 64; }
build=$(cd "$1" && pwd)
mode=$2
shift 2
lib="$build/tests/bench/libfsc_cpu_as.so"
[ -f "$lib" ] || { echo "cpu_as.sh: $lib is missing (ninja fsc_cpu_as)" >&2; exit 2; }
grep -qw cpuid_fault /proc/cpuinfo ||
  { echo "cpu_as.sh: this CPU or VM cannot fault CPUID (no cpuid_fault flag in /proc/cpuinfo)" >&2; exit 77; }
# glibc picked its string functions before the library loads; these tunables unpick AVX-512.
tunables=glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD,-AVX512ER,-AVX512PF
exec env FSC_CPU_AS="$mode" LD_AUDIT="$lib" LD_PRELOAD="$lib" \
  GLIBC_TUNABLES="$tunables${GLIBC_TUNABLES:+:$GLIBC_TUNABLES}" "$@"
