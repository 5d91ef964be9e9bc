#!/usr/bin/env bash
# Builds the compiler fuzzer with clang (ASan + UBSan, libFuzzer) and fuzzes it, starting
# from the saved findings, for RUNS inputs. Findings land in BUILD/compile-found as
# crash-* files; keep one in tests/fuzz/compile_findings/ once its bug is fixed, so every
# build's tst_fuzz_compile replays it.
#   run_fuzz_compile.sh SOURCE_DIR BUILD_DIR RUNS [SEED]
set -euo pipefail
src=$1 build=$2 runs=$3 seed=${4:-20261124}
cmake -S "$src" -B "$build" -G Ninja -DFUSESCOPE_FUZZ=ON -DFUSESCOPE_CUDA=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 >/dev/null
cmake --build "$build" --target fuzz_compile
corpus="$build/compile-corpus" found="$build/compile-found"
mkdir -p "$corpus" "$found"
cp "$src"/tests/fuzz/compile_findings/* "$corpus/"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$found"
"$build/tests/fuzz/fuzz_compile" "$corpus" -runs="$runs" -seed="$seed" -timeout=30 -rss_limit_mb=4096 \
  -max_len=512 -print_final_stats=1 2>&1 | tail -15
echo "fuzz_compile: no finding in $runs runs (seed $seed)"
