#!/usr/bin/env bash
# README command 2: install, build, and run the whole test suite (every label); then a
# CPU-only build's tests, the unit and CLI tests again under ASan + UBSan (every malformed
# model included), and the importer fuzzer for a bounded time under ASan + UBSan.
#   FUSESCOPE_FUZZ_RUNS=300000 (default) sets how many inputs the fuzzer tries; 0 skips it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --test
jobs=$(nproc)

cmake --preset dev >/dev/null
cmake --build --preset dev -j "$jobs"
ctest --preset dev -j "$jobs"

# The same sources without the CUDA toolkit must build and pass too.
if [ -d /usr/local/cuda ] || command -v nvcc >/dev/null; then
  cmake --preset nocuda -DFUSESCOPE_GUI=OFF >/dev/null
  cmake --build --preset nocuda -j "$jobs"
  ctest --preset nocuda -j "$jobs"
fi

cmake --preset asan >/dev/null
cmake --build --preset asan -j "$jobs"
ctest --preset asan -j "$jobs"

runs=${FUSESCOPE_FUZZ_RUNS:-300000}
if [ "$runs" != 0 ]; then
  bash tests/fuzz/run_fuzz.sh "$PWD" "$PWD/build-fuzz" "$PWD/build/tests/fixtures" "$runs"
fi
