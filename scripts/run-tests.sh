#!/usr/bin/env bash
# README command 2: install, build, and run the whole test suite (every label); then a
# CPU-only build's tests, the unit and CLI tests again under ASan + UBSan (every malformed
# model included), and the importer fuzzer for a bounded time under ASan + UBSan.
#   FUSESCOPE_FUZZ_RUNS=300000 (default) sets how many inputs the fuzzer tries; 0 skips it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --test
jobs=$(nproc)

# QtTest and SKIP_RETURN_CODE report a skip as a pass: every build's skips are compared with
# tests/expected_skips.txt, and a skip it does not list fails the run.
run_ctest() {  # PRESET (its build folder: build, build-nocuda, build-asan)
  local dir=build
  [ "$1" = dev ] || dir=build-$1
  local junit="$PWD/$dir/ctest-junit.xml"
  ctest --preset "$1" -j "$jobs" --output-junit "$junit" --test-output-size-passed 100000000
  python3 tests/check_skips.py "$junit" tests/expected_skips.txt "$1"
}

cmake --preset dev >/dev/null
cmake --build --preset dev -j "$jobs"
run_ctest dev

# The same sources without the CUDA toolkit must build and pass too.
if [ -d /usr/local/cuda ] || command -v nvcc >/dev/null; then
  cmake --preset nocuda -DFUSESCOPE_GUI=OFF >/dev/null
  cmake --build --preset nocuda -j "$jobs"
  run_ctest nocuda
fi

cmake --preset asan >/dev/null
cmake --build --preset asan -j "$jobs"
run_ctest asan

runs=${FUSESCOPE_FUZZ_RUNS:-300000}
if [ "$runs" != 0 ]; then
  bash tests/fuzz/run_fuzz.sh "$PWD" "$PWD/build-fuzz" "$PWD/build/tests/fixtures" "$runs"
fi
